// GraniteMoeHybridForCausalLM (transformers 5.17 models/granitemoehybrid/modeling_granitemoehybrid.py: IBM Granite
// 4.0-H), training forward + causal-LM loss or one inference pass (prefill / decode step of generate()), on the
// PyTorch paths (no mamba_ssm / causal_conv1d kernels: a run with them allocates differently and is not modelled).
//   GraniteMoeHybridModel.forward (hybrid_parts.h hybrid_causal_lm): embed_tokens, `inputs_embeds *
//     embedding_multiplier` (before the masks), DynamicCache(config) in inference (a LinearAttentionLayer per
//     "linear_attention" layer, a DynamicLayer per "full_attention" layer), create_causal_mask and
//     create_recurrent_attention_mask, the rotary embedding only when position_embedding_type == "rope"
//     (Granite 4.0-H says "nope": no rotary module, q / k unrotated), the layers, norm.
//   GraniteMoeHybridDecoderLayer.forward:
//     residual = h; h = input_layernorm(h)            bound until the mixer / attention returns
//     h = mamba(h) (Mamba2Mixer.forward's statements: mamba_parts.h mamba2_mixer; its gated RMSNorm and the
//       chunked SSD in broadcast products) or h, _ = self_attn(h) (Llama's attention with scaling =
//       attention_multiplier, a Python float; hybrid_parts.h hybrid_attention)
//     h = residual + h * residual_multiplier           (granite_parts.h granite_scaled_residual)
//     residual = h; h = post_attention_layernorm(h)     bound until the feed-forward's last statement rebinds it
//     with experts (num_local_experts > 0): moe = block_sparse_moe(h) (bound until the layer returns);
//       h = moe + shared_mlp(h)
//     without: h = shared_mlp(h)
//     h = residual + h * residual_multiplier
//   GraniteMoeHybridMoE / TopKRouter / Experts / MLP are granitemoeshared's (granitemoe.cpp's header): the router's
//     logits .float(), topk, softmax(top-k logits).type_as(flat), all three bound until the block returns; the
//     experts through @use_experts_implementation (grouped_mm; batched_mm in generate()'s decode steps); the shared
//     MLP input_linear [2 Is] chunked in two, silu(a) * b, output_linear.
//   GraniteMoeHybridForCausalLM: lm_head (the embedding when tie_word_embeddings), `logits / logits_scaling`,
//     ForCausalLMLoss. output_router_logits (the auxiliary loss) is refused by the importer.
// Parameters per layer, registration order (GraniteMoeHybridDecoderLayer.__init__): input_layernorm,
// post_attention_layernorm, block_sparse_moe.router.weight [E, H], .experts.gate_up_proj [E, 2I, H], .down_proj
// [E, H, I] (with experts), shared_mlp.input_linear [2 Is, H], .output_linear [H, Is], then mamba (conv1d, in_proj,
// dt_bias, A_log, norm, D, out_proj: mamba2_mixer_params) or self_attn (q, k, v, o). Model: embed_tokens, layers,
// norm; lm_head.
#include "engine/arch/builders.h"

#include "engine/arch/decoders/parts/granite_parts.h"
#include "engine/arch/decoders/parts/llama_parts.h"
#include "engine/arch/decoders/parts/qwen_parts.h"
#include "engine/arch/ssm/hybrid_parts.h"
#include "engine/arch/ssm/mamba_parts.h"
#include "engine/checked.h"
#include "engine/errors.h"

namespace memplan {

namespace {

struct Layer {
  bool attention = false;
  TensorId in_norm = kNoTensor, post_norm = kNoTensor;
  TensorId router = kNoTensor, gate_up = kNoTensor, down = kNoTensor;
  TensorId shared_in = kNoTensor, shared_out = kNoTensor;
  Mamba2MixerParams mamba;
  LlamaLayerParams attn{};
};

Layer layer_params(GraphBuilder& b, const TransformerSpec& s, int64_t i, const std::string& p, bool train) {
  const int64_t H = s.hidden_size, E = s.num_experts, I = s.moe_intermediate_size,
                Is = s.granite_shared_intermediate_size;
  Layer w;
  w.attention = s.hybrid_attention_layers[static_cast<size_t>(i)] != 0;
  w.in_norm = b.param(p + "input_layernorm.weight", {H}, train);
  w.post_norm = b.param(p + "post_attention_layernorm.weight", {H}, train);
  if (E > 0) {
    w.router = b.param(p + "block_sparse_moe.router.weight", {E, H}, train);
    w.gate_up = b.param(p + "block_sparse_moe.experts.gate_up_proj", {E, 2 * I, H}, train);
    w.down = b.param(p + "block_sparse_moe.experts.down_proj", {E, H, I}, train);
  }
  w.shared_in = b.param(p + "shared_mlp.input_linear.weight", {2 * Is, H}, train);
  w.shared_out = b.param(p + "shared_mlp.output_linear.weight", {H, Is}, train);
  if (w.attention) {
    attention_projection_params(b, s, p, train, s.attention_bias, s.attention_bias, w.attn);
  } else {
    w.mamba = mamba2_mixer_params(b, s, p + "mamba.", train);
  }
  return w;
}

// GraniteMoeHybridMoE.forward on x [B, S, H].
TensorId moe_block(GraphBuilder& b, const TransformerSpec& s, const Layer& w, TensorId x) {
  const int64_t H = s.hidden_size;
  const int64_t B = b.config().batch_size, Sq = b.training() ? b.config().seq_len : b.pass().new_tokens;
  const TensorId flat = b.view(x, {checked_mul(B, Sq), H});
  const QwenMoeRoute route = granite_topk_router(b, s, w.router, flat);
  const TensorId out = b.view(qwen_moe_experts(b, s, w.gate_up, w.down, flat, route), {B, Sq, H});
  release_route(b, route);
  return out;
}

// GraniteMoeHybridMLP.forward on x [B, S, H]: the input_linear output's two chunks stay bound as a tuple until
// the MLP returns.
TensorId shared_mlp(GraphBuilder& b, const TransformerSpec& s, const Layer& w, TensorId x) {
  const int64_t B = b.config().batch_size, Sq = b.training() ? b.config().seq_len : b.pass().new_tokens,
                Is = s.granite_shared_intermediate_size;
  const TensorId proj = b.linear(x, w.shared_in);
  const auto halves = b.split(proj, 2, {B, Sq, Is});
  for (TensorId t : halves) b.hold(t);
  const TensorId prod = b.mul(b.unary("silu", halves[0], true, false), halves[1]);
  const TensorId out = b.linear(prod, w.shared_out);
  for (TensorId t : halves) b.drop(t);
  return out;
}

TensorId decoder_layer(GraphBuilder& b, const TransformerSpec& s, const Layer& w, TensorId h,
                       const HybridContext& c) {
  const TensorId n1 = rms_norm(b, h, w.in_norm);
  b.hold(n1);  // bound to hidden_states until the mixer / self_attn returns
  TensorId attn_weights = kNoTensor;
  const TensorId a = w.attention ? hybrid_attention(b, s, w.attn, n1, c, attn_weights) : mamba2_mixer(b, s, w.mamba, n1);
  b.drop(n1);
  const TensorId h1 = granite_scaled_residual(b, h, a);
  const TensorId n2 = rms_norm(b, h1, w.post_norm);
  b.hold(n2);  // hidden_states until the feed-forward's statement rebinds it
  TensorId m, moe_out = kNoTensor;
  if (w.router != kNoTensor) {
    moe_out = moe_block(b, s, w, n2);
    b.hold(moe_out);  // moe_hidden_states, a local bound until the layer returns
    m = b.add(moe_out, shared_mlp(b, s, w, n2));
  } else {
    m = shared_mlp(b, s, w, n2);
  }
  b.drop(n2);
  const TensorId out = granite_scaled_residual(b, h1, m);
  if (moe_out != kNoTensor) b.drop(moe_out);
  if (attn_weights != kNoTensor) b.drop(attn_weights);  // `hidden_states, _ = self.self_attn(...)`
  return out;
}

}  // namespace

void build_granitemoehybrid(GraphBuilder& b, const TransformerSpec& s) {
  if (s.ssm_num_heads < 1 || s.ssm_head_dim < 1 || s.ssm_groups < 1 || s.ssm_chunk_size < 1 ||
      s.ssm_state_size < 1 || s.ssm_conv_kernel < 1 || s.ssm_num_heads * s.ssm_head_dim != s.ssm_inner_size ||
      s.ssm_num_heads % s.ssm_groups != 0)
    throw InputError("model.ssm_num_heads", std::to_string(s.ssm_num_heads),
                     "granitemoehybrid's mamba layers need positive heads, head_dim, groups, chunk_size, state_size "
                     "and conv_kernel, heads x head_dim == the mamba intermediate size and groups dividing the heads");
  if (s.granite_shared_intermediate_size < 1)
    throw InputError("model.shared_intermediate_size", std::to_string(s.granite_shared_intermediate_size),
                     "granitemoehybrid's shared MLP needs a positive width");
  if (s.num_experts > 0 && (s.num_experts_per_tok < 1 || s.num_experts_per_tok > s.num_experts ||
                            s.moe_intermediate_size < 1))
    throw InputError("model.num_experts_per_tok", std::to_string(s.num_experts_per_tok),
                     "must be in [1, num_local_experts] with a positive expert width (intermediate_size)");
  if (s.sliding_window > 0)
    throw InputError("model.sliding_window", std::to_string(s.sliding_window),
                     "granitemoehybrid has no sliding-window attention");
  HybridModelSpec m;
  m.final_norm = "norm";
  m.embedding_multiplier = true;
  m.logits_op = granite_logits_scaling;
  m.layer = [&b, &s](int64_t i, const std::string& p, bool train) -> HybridLayerFn {
    const Layer w = layer_params(b, s, i, p, train);
    return [&b, &s, w](TensorId h, const HybridContext& c, TensorId&) { return decoder_layer(b, s, w, h, c); };
  };
  hybrid_causal_lm(b, s, m);
}

}  // namespace memplan
