// BambaForCausalLM (transformers 5.17 models/bamba/modeling_bamba.py: Bamba-9B), training forward + causal-LM loss
// or one inference pass (prefill / decode step of generate()), on the PyTorch paths (no mamba_ssm / causal_conv1d
// kernels: a run with them allocates differently and is not modelled).
//   BambaModel.forward (hybrid_parts.h hybrid_causal_lm): embed_tokens, DynamicCache(config) in inference,
//     position_ids, create_causal_mask / create_recurrent_attention_mask, the rotary embedding over rotary_dim =
//     int(head_dim * partial_rotary_factor) (0.5, the config's __post_init__), the layers, final_layernorm.
//     The loop unpacks `hidden_states, attn_weights = decoder_layer(...)`: eager attention's probabilities stay
//     bound until the next layer's return rebinds them (the last ones until the forward returns).
//   BambaDecoderLayer.forward:
//     residual = h; h = input_layernorm(h)            bound until the mixer / attention returns
//     h = mamba(h) (BambaMixer is Mamba2Mixer.forward statement for statement: mamba_parts.h mamba2_mixer) or
//       h, self_attn_weights = self_attn(h) (Llama's attention with the partial rotary embedding: q[..., :rot]
//       rotated and cat with q[..., rot:], the same for k; hybrid_parts.h hybrid_attention)
//     h = residual + h; residual = h; h = pre_ff_layernorm(h)   bound until feed_forward returns
//     h = feed_forward(h) (BambaMLP: down(silu(gate(x)) * up(x))); h = residual + h
//   BambaForCausalLM: lm_head over hidden_states[:, -logits_to_keep:], ForCausalLMLoss; z_loss_coefficient > 0
//     (logsumexp z-loss) is refused by the importer.
// Parameters per layer, registration order (BambaDecoderLayer.__init__): feed_forward.{gate,up,down}_proj (biases
// with mlp_bias), input_layernorm, pre_ff_layernorm, then mamba (conv1d, in_proj, dt_bias, A_log, norm, D,
// out_proj: mamba2_mixer_params) or self_attn (q, k, v, o, biases with attention_bias). Model: embed_tokens,
// layers, final_layernorm; lm_head.
#include "engine/arch/builders.h"

#include "engine/arch/decoders/parts/llama_parts.h"
#include "engine/arch/ssm/hybrid_parts.h"
#include "engine/arch/ssm/mamba_parts.h"
#include "engine/errors.h"

namespace memplan {

namespace {

struct Layer {
  bool attention = false;
  FfnParams ffn;
  TensorId in_norm = kNoTensor, ff_norm = kNoTensor;
  Mamba2MixerParams mamba;
  LlamaLayerParams attn{};
};

Layer layer_params(GraphBuilder& b, const TransformerSpec& s, int64_t i, const std::string& p, bool train) {
  const int64_t H = s.hidden_size, I = s.intermediate_size;
  Layer w;
  w.attention = s.hybrid_attention_layers[static_cast<size_t>(i)] != 0;
  auto linear = [&](const std::string& n, int64_t out, int64_t in, TensorId& wt, TensorId& bias) {
    wt = b.param(p + "feed_forward." + n + ".weight", {out, in}, train);
    if (s.mlp_bias) bias = b.param(p + "feed_forward." + n + ".bias", {out}, train);
  };
  linear("gate_proj", I, H, w.ffn.gate, w.ffn.gate_b);
  linear("up_proj", I, H, w.ffn.up, w.ffn.up_b);
  linear("down_proj", H, I, w.ffn.down, w.ffn.down_b);
  w.in_norm = b.param(p + "input_layernorm.weight", {H}, train);
  w.ff_norm = b.param(p + "pre_ff_layernorm.weight", {H}, train);
  if (w.attention) {
    attention_projection_params(b, s, p, train, s.attention_bias, s.attention_bias, w.attn);
  } else {
    w.mamba = mamba2_mixer_params(b, s, p + "mamba.", train);
  }
  return w;
}

TensorId decoder_layer(GraphBuilder& b, const TransformerSpec& s, const Layer& w, TensorId h, const HybridContext& c,
                       TensorId& weights) {
  const TensorId n1 = rms_norm(b, h, w.in_norm);
  b.hold(n1);  // bound to hidden_states until the mixer / self_attn returns
  weights = kNoTensor;
  const TensorId a = w.attention ? hybrid_attention(b, s, w.attn, n1, c, weights) : mamba2_mixer(b, s, w.mamba, n1);
  b.drop(n1);
  b.hold(a);
  const TensorId h1 = b.add(h, a);
  b.drop(a);
  const TensorId n2 = rms_norm(b, h1, w.ff_norm);
  b.hold(n2);  // the feed_forward call's argument until it returns
  const FfnParams& f = w.ffn;
  const TensorId m = swiglu_mlp(b, n2, f.gate, f.up, f.down, f.gate_b, f.up_b, f.down_b);
  b.drop(n2);
  b.hold(m);
  const TensorId out = b.add(h1, m);
  b.drop(m);
  return out;
}

}  // namespace

void build_bamba(GraphBuilder& b, const TransformerSpec& s) {
  if (s.ssm_num_heads < 1 || s.ssm_head_dim < 1 || s.ssm_groups < 1 || s.ssm_chunk_size < 1 ||
      s.ssm_state_size < 1 || s.ssm_conv_kernel < 1 || s.ssm_num_heads * s.ssm_head_dim != s.ssm_inner_size ||
      s.ssm_num_heads % s.ssm_groups != 0)
    throw InputError("model.ssm_num_heads", std::to_string(s.ssm_num_heads),
                     "bamba's mamba layers need positive heads, head_dim, groups, chunk_size, state_size and "
                     "conv_kernel, heads x head_dim == the mamba intermediate size and groups dividing the heads");
  if (s.sliding_window > 0 || s.num_experts > 0)
    throw InputError("model.sliding_window", std::to_string(s.sliding_window),
                     "bamba has no sliding-window attention or experts");
  if (!s.hybrid_rope || s.rotary_dim < 2 || s.rotary_dim > s.head_dim || s.rotary_dim % 2 != 0)
    throw InputError("model.rotary_dim", std::to_string(s.rotary_dim),
                     "bamba rotates an even number of dimensions in [2, head_dim]");
  HybridModelSpec m;
  m.final_norm = "final_layernorm";
  m.embedding_multiplier = false;
  m.layer = [&b, &s](int64_t i, const std::string& p, bool train) -> HybridLayerFn {
    const Layer w = layer_params(b, s, i, p, train);
    return [&b, &s, w](TensorId h, const HybridContext& c, TensorId& weights) {
      return decoder_layer(b, s, w, h, c, weights);
    };
  };
  hybrid_causal_lm(b, s, m);
}

}  // namespace memplan
