// FalconH1ForCausalLM (transformers 5.17 models/falcon_h1/modeling_falcon_h1.py) on its PyTorch path: training
// forward + causal-LM loss, or one inference pass (prefill / decode step of generate()). Without mamba_ssm /
// causal_conv1d the mixer runs the torch fallbacks (mamba_parts.h mamba2_mixer_variant); a run with the CUDA kernels
// allocates differently and is not modelled.
//   inputs_embeds = embed_tokens(ids) * embedding_multiplier (the lookup dies with the product; bound until the
//   forward returns) -> position_ids, create_causal_mask, create_recurrent_attention_mask (mamba_parts.h
//   hybrid_positions_and_masks) -> rotary cos / sin (Llama's) -> N x DecoderLayer -> final_layernorm ->
//   lm_head(h) * lm_head_multiplier (the head's output dies with the product) -> ForCausalLMLoss, or the last logits.
//   DecoderLayer (a GradientCheckpointingLayer), every layer both mixers on the same normed input:
//     residual = h; h = input_layernorm(h)                       bound until the two mixers' sum rebinds it
//     m = mamba(h) * ssm_out_multiplier                          bound until the layer returns
//     a, _ = self_attn(h * attention_in_multiplier)              the scaled input bound while self_attn runs
//     a = a * attention_out_multiplier                           bound until the layer returns (and `_`, eager's
//                                                                probabilities)
//     h = m + a; h = residual + h; residual = h; h = pre_ff_layernorm(h); h = feed_forward(h); residual + h
//   FalconH1Attention: Llama's with `k_proj(x).view().transpose(1, 2) * key_multiplier` (a product between the k
//     and v projections); SDPA or eager; cache update in inference (a hybrid cache layer: DynamicLayer's cats).
//   FalconH1Mixer: Mamba2's with hidden_states * ssm_in_multiplier before in_proj, projected * mup_vector (a
//     non-persistent [1, 1, 2 I + 2 G N + h] buffer of the model's dtype: under amp the product and everything split
//     from it is fp32), and after the scan FalconH1RMSNormGated (mamba_rms_norm) or y * silu(gate).
//   FalconH1MLP: y = up_proj(x) * silu(gate_proj(x) * gate_multiplier); y = down_proj(y) * down_multiplier (the
//     product y bound until the second statement rebinds it).
// Generate: per layer the conv state [B, I + 2GN, K] (model dtype; fp32 under amp) and the fp32 recurrent state
// [B, h, hd, N] (the mixer runs first), then K and V of the attention.
// Parameters per layer, registration order: feed_forward gate / up / down, the mixer (conv1d, in_proj, dt_bias,
// A_log, norm with mamba_rms_norm, D, out_proj; its mup_vector buffer), self_attn q / k / v / o, input_layernorm,
// pre_ff_layernorm.
#include <string>

#include "engine/arch/builders.h"
#include "engine/arch/decoders/parts/llama_parts.h"
#include "engine/arch/ssm/mamba_parts.h"
#include "engine/errors.h"

namespace memplan {

namespace {

struct FalconLayer {
  TensorId gate = kNoTensor, up = kNoTensor, down = kNoTensor, gate_b = kNoTensor, up_b = kNoTensor,
           down_b = kNoTensor;
  Mamba2MixerParams mamba;
  TensorId mup = kNoTensor;
  LlamaLayerParams attn{};
  TensorId ff_norm = kNoTensor;
};

FalconLayer layer_params(GraphBuilder& b, const TransformerSpec& s, const std::string& p, bool train) {
  const int64_t H = s.hidden_size, I = s.intermediate_size, Im = s.ssm_inner_size, nh = s.ssm_num_heads,
                K = s.ssm_conv_kernel, conv_dim = Im + 2 * s.ssm_groups * s.ssm_state_size;
  FalconLayer w;
  auto bias = [&](const std::string& name, int64_t n, bool has) {
    return has ? b.param(p + name + ".bias", {n}, train) : kNoTensor;
  };
  w.gate = b.param(p + "feed_forward.gate_proj.weight", {I, H}, train);
  w.gate_b = bias("feed_forward.gate_proj", I, s.mlp_bias);
  w.up = b.param(p + "feed_forward.up_proj.weight", {I, H}, train);
  w.up_b = bias("feed_forward.up_proj", I, s.mlp_bias);
  w.down = b.param(p + "feed_forward.down_proj.weight", {H, I}, train);
  w.down_b = bias("feed_forward.down_proj", H, s.mlp_bias);
  const std::string m = p + "mamba.";
  Mamba2MixerParams& x = w.mamba;
  x.train = train;
  x.conv_w = b.param(m + "conv1d.weight", {conv_dim, 1, K}, train);
  if (s.ssm_conv_bias) x.conv_b = b.param(m + "conv1d.bias", {conv_dim}, train);
  x.in_w = b.param(m + "in_proj.weight", {Im + conv_dim + nh, H}, train);
  if (s.ssm_bias) x.in_b = b.param(m + "in_proj.bias", {Im + conv_dim + nh}, train);
  x.dt_bias = b.param(m + "dt_bias", {nh}, train);
  x.a_log = b.param(m + "A_log", {nh}, train);
  if (s.ssm_rms_norm) x.norm_w = b.param(m + "norm.weight", {Im}, train);
  x.d = b.param(m + "D", {nh}, train);
  x.out_w = b.param(m + "out_proj.weight", {H, Im}, train);
  if (s.ssm_out_bias) x.out_b = b.param(m + "out_proj.bias", {H}, train);
  w.mup = b.buffer(m + "mup_vector", {1, 1, Im + conv_dim + nh}, b.param_dtype());
  attention_projection_params(b, s, p, train, s.qkv_bias, s.o_bias, w.attn);
  w.attn.in_norm = b.param(p + "input_layernorm.weight", {H}, train);
  w.ff_norm = b.param(p + "pre_ff_layernorm.weight", {H}, train);
  return w;
}

// FalconH1Attention.forward on its (scaled) input x: q_proj, k_proj times key_multiplier, v_proj (each head view
// as llama_qkv_views makes them), the rotary embedding, the cache update in inference, SDPA / eager, o_proj.
TensorId falcon_attention(GraphBuilder& b, const TransformerSpec& s, const LlamaLayerParams& w, TensorId x,
                          TensorId cos, TensorId sin, TensorId mask, TensorId& weights) {
  const auto& cfg = b.config();
  const int64_t B = cfg.batch_size, S = b.training() ? cfg.seq_len : b.pass().new_tokens, hd = s.head_dim;
  const TensorId qp = b.linear(x, w.q, w.qb);
  const bool math_sdpa = b.dtype(qp) == DType::f32 && s.num_kv_heads != s.num_heads;
  const bool v_grad_in_layout = cfg.attn == AttnImpl::sdpa && mask == kNoTensor && !math_sdpa;
  const TensorId q = b.view_copying_grad(qp, {B, s.num_heads, S, hd});
  const TensorId k0 = b.view_copying_grad(b.linear(x, w.k, w.kb), {B, s.num_kv_heads, S, hd});
  const TensorId k = b.scalar_op("mul_scalar", k0, false);  // * self.key_multiplier
  const TensorId vp = b.linear(x, w.v, w.vb);
  const Shape vs{B, s.num_kv_heads, S, hd};
  const TensorId v = v_grad_in_layout ? b.view(vp, vs) : b.view_copying_grad(vp, vs);
  b.hold(v);  // value_states until the module returns or the cache update rebinds it
  b.hold(q);  // apply_rotary_pos_emb(q, k, ...): rebound only once both are rotated
  b.hold(k);
  auto [qe, ke] = rope_qk(b, q, k, cos, sin);
  return attention_o_proj(b, s, qe, ke, v, v, mask, 0, w.o, w.ob, weights);
}

// FalconH1MLP.forward: up_proj(x) (the left operand, made first) * silu(gate_proj(x) * gate_multiplier), bound to y
// until `y = self.down_proj(y) * self.down_multiplier` rebinds it.
TensorId falcon_mlp(GraphBuilder& b, const FalconLayer& w, TensorId x) {
  const TensorId up = b.linear(x, w.up, w.up_b);
  const TensorId g = b.scalar_op("mul_scalar", b.linear(x, w.gate, w.gate_b), false);
  const TensorId y = b.mul(up, b.unary("silu", g, true, false));
  b.hold(y);
  const TensorId out = b.scalar_op("mul_scalar", b.linear(y, w.down, w.down_b), false);
  b.drop(y);
  return out;
}

TensorId scale_logits(GraphBuilder& b, TensorId logits) { return b.scalar_op("mul_scalar", logits, false); }

void check_spec(const TransformerSpec& s) {
  if (s.ssm_num_heads < 1 || s.ssm_head_dim < 1 || s.ssm_groups < 1 || s.ssm_chunk_size < 1 ||
      s.ssm_state_size < 1 || s.ssm_conv_kernel < 1 || s.ssm_num_heads * s.ssm_head_dim != s.ssm_inner_size ||
      s.ssm_num_heads % s.ssm_groups != 0 || s.ssm_inner_size % s.ssm_groups != 0)
    throw InputError("model.ssm_num_heads", std::to_string(s.ssm_num_heads),
                     "falcon_h1 needs positive Mamba heads, head dim, groups, chunk size, state size and conv "
                     "kernel, heads x head dim == mamba_d_ssm and groups dividing the heads");
  if (s.sliding_window > 0 || s.num_experts > 0)
    throw InputError("model.sliding_window", std::to_string(s.sliding_window),
                     "falcon_h1 has no sliding-window attention or experts");
  if (s.head_dim < 2 || s.head_dim % 2 != 0)
    throw InputError("model.head_dim", std::to_string(s.head_dim), "must be a positive even number (rotate_half)");
}

}  // namespace

void build_falcon_h1(GraphBuilder& b, const TransformerSpec& s) {
  check_spec(s);
  const auto& cfg = b.config();
  const bool inf = !b.training();
  const int64_t S = inf ? b.pass().new_tokens : cfg.seq_len, H = s.hidden_size;
  auto [embed, ids, looked_up, P] = llama_inputs(b, s);  // position_ids rows P: B inside generate(), else 1
  const TensorId inputs_embeds = b.scalar_op("mul_scalar", looked_up, false);  // * embedding_multiplier
  b.hold(inputs_embeds);
  const HybridPrelude pre = hybrid_positions_and_masks(b, s, b.dtype(inputs_embeds));
  const std::pair<TensorId, TensorId> cos_sin = rotary_cos_sin(b, P, S, s.head_dim, b.dtype(inputs_embeds));
  const TensorId cos = cos_sin.first, sin = cos_sin.second;
  b.hold(cos);
  b.hold(sin);
  Mamba2MixerVariant variant;
  variant.norm = s.ssm_rms_norm ? Mamba2MixerVariant::Norm::falcon : Mamba2MixerVariant::Norm::silu_gate;
  variant.norm_before_gate = s.ssm_norm_before_gate;
  TensorId h = inputs_embeds;
  for (int64_t i = 0; i < s.num_layers; ++i) {
    const std::string p = "layers." + std::to_string(i) + ".";
    const FalconLayer w = layer_params(b, s, p, !layer_frozen(cfg, i));
    variant.mup = w.mup;
    b.begin_layer("layers." + std::to_string(i), layer_checkpointed(cfg, i));
    const TensorId layer_in = h;
    b.hold(layer_in);  // the model's loop variable holds the layer input until the layer returns
    const TensorId n1 = rms_norm(b, h, w.attn.in_norm);
    b.hold(n1);  // hidden_states until `hidden_states = mamba_hidden_states + attention_hidden_states`
    const TensorId m = b.scalar_op("mul_scalar", mamba2_mixer_variant(b, s, w.mamba, n1, variant), false);
    b.hold(m);  // mamba_hidden_states until the layer returns
    const TensorId scaled_in = b.scalar_op("mul_scalar", n1, false);  // hidden_states * attention_in_multiplier
    b.hold(scaled_in);
    TensorId attn_weights = kNoTensor;
    const TensorId a0 = falcon_attention(b, s, w.attn, scaled_in, cos, sin, pre.mask, attn_weights);
    b.drop(scaled_in);
    const TensorId a = b.scalar_op("mul_scalar", a0, false);
    b.hold(a);  // attention_hidden_states until the layer returns
    const TensorId mixed = b.add(m, a);
    b.drop(n1);
    const TensorId h1 = b.add(h, mixed);
    const TensorId n2 = rms_norm(b, h1, w.ff_norm);
    b.hold(n2);  // hidden_states until the feed-forward returns
    const TensorId f = falcon_mlp(b, w, n2);
    b.drop(n2);
    h = b.add(h1, f);
    b.drop(m);
    b.drop(a);
    if (attn_weights != kNoTensor) b.drop(attn_weights);
    if (layer_in != inputs_embeds) b.drop(layer_in);
    b.end_layer();
  }
  b.hold(h);  // `hidden_states = self.final_layernorm(hidden_states)` rebinds only once the norm has returned
  const TensorId hn = rms_norm(b, h, b.param("final_layernorm.weight", {H}, !cfg.freeze_embeddings));
  for (TensorId t : {h, inputs_embeds, cos, sin, pre.mask, pre.positions})
    if (t != kNoTensor) b.drop(t);
  causal_lm_tail(b, s, hn, embed, ids, false, scale_logits);
}

}  // namespace memplan
