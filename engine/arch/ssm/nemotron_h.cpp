// NemotronHForCausalLM (transformers 5.17 models/nemotron_h/modeling_nemotron_h.py) on its PyTorch path: training
// forward + causal-LM loss, or one inference pass (prefill / decode step of generate()). Without mamba_ssm /
// causal_conv1d the Mamba2 blocks run the torch fallbacks (mamba_parts.h mamba2_mixer_variant); a run with the CUDA
// kernels allocates differently and is not modelled.
//   inputs_embeds = embeddings(ids) (bound until the forward returns) -> position_ids, create_causal_mask,
//   create_recurrent_attention_mask (mamba_parts.h hybrid_positions_and_masks; no rotary embedding: the attention
//   has no positions) -> N x NemotronHBlock -> norm_f -> lm_head(h).float() -> ForCausalLMLoss, or the last logits
//   (fp32).
//   NemotronHBlock (a GradientCheckpointingLayer), one mixer per block by s.hybrid_pattern:
//     residual = h; h = norm(h.to(norm.weight.dtype)); h = mixer(h) (the normed input bound until the mixer
//     returns; an attention block binds eager's probabilities to `_` until the block returns); residual + h.
//   'M' NemotronHMamba2Mixer: Mamba2Mixer's statements with the grouped gated norm (Zamba2RMSNormGated).
//   '*' NemotronHAttention: q / k / v projections viewed [B, heads, S, head_dim], no rotary embedding, the cache
//     update in inference, SDPA (causal) / eager, o_proj; no biases.
//   '-' NemotronHMLP: down_proj(relu2(up_proj(x))), relu2 = relu (saves its result) then torch.square (pow 2,
//     autocast's fp32 policy); act_fn's argument and relu_applied bound until it returns, the square until
//     down_proj returns.
// Generate: per Mamba2 block the conv state [B, I + 2GN, K] and the fp32 recurrent state [B, h, hd, N]; per
// attention block K and V (DynamicLayer's cats); the MLP blocks' cache layers stay empty.
// Parameters: embeddings, per block norm.weight then its mixer (Mamba2: conv1d, in_proj, dt_bias, A_log,
// norm.weight, D, out_proj; attention: q, k, v, o; MLP: up_proj, down_proj), norm_f, lm_head (never tied).
#include <string>

#include "engine/arch/builders.h"
#include "engine/arch/decoders/parts/llama_parts.h"
#include "engine/arch/decoders/parts/phi_parts.h"
#include "engine/arch/ssm/mamba_parts.h"
#include "engine/errors.h"

namespace memplan {

namespace {

struct Block {
  char kind = 'M';
  TensorId norm = kNoTensor;
  Mamba2MixerParams mamba;
  TensorId q = kNoTensor, k = kNoTensor, v = kNoTensor, o = kNoTensor;
  TensorId up = kNoTensor, down = kNoTensor, up_b = kNoTensor, down_b = kNoTensor;
};

Block block_params(GraphBuilder& b, const TransformerSpec& s, int64_t i, bool train) {
  const int64_t H = s.hidden_size, I = s.intermediate_size, nh = s.num_heads, nkv = s.num_kv_heads,
                hd = s.head_dim;
  const std::string p = "layers." + std::to_string(i) + ".";
  Block w;
  w.kind = s.hybrid_pattern[static_cast<size_t>(i)];
  w.norm = b.param(p + "norm.weight", {H}, train);
  const std::string m = p + "mixer.";
  if (w.kind == 'M') {
    w.mamba = mamba2_mixer_params(b, s, m, train);
  } else if (w.kind == '*') {
    w.q = b.param(m + "q_proj.weight", {nh * hd, H}, train);
    w.k = b.param(m + "k_proj.weight", {nkv * hd, H}, train);
    w.v = b.param(m + "v_proj.weight", {nkv * hd, H}, train);
    w.o = b.param(m + "o_proj.weight", {H, nh * hd}, train);
  } else {
    w.up = b.param(m + "up_proj.weight", {I, H}, train);
    if (s.mlp_bias) w.up_b = b.param(m + "up_proj.bias", {I}, train);
    w.down = b.param(m + "down_proj.weight", {H, I}, train);
    if (s.mlp_bias) w.down_b = b.param(m + "down_proj.bias", {H}, train);
  }
  return w;
}

// NemotronHAttention.forward on the normed input x. Without a rotary embedding the fused SDPA kernels hand q, k and
// v their gradients in the projections' own layout; eager's bmm, a mask, or SDPA's math backend (fp32 with grouped
// KV heads) give contiguous ones that the transposed views copy back.
TensorId attention(GraphBuilder& b, const TransformerSpec& s, const Block& w, TensorId x, TensorId mask,
                   TensorId& weights) {
  const auto& cfg = b.config();
  const int64_t B = cfg.batch_size, S = b.training() ? cfg.seq_len : b.pass().new_tokens, hd = s.head_dim;
  const TensorId qp = b.linear(x, w.q);
  const bool math_sdpa = b.dtype(qp) == DType::f32 && s.num_kv_heads != s.num_heads;
  const bool in_layout = cfg.attn == AttnImpl::sdpa && mask == kNoTensor && !math_sdpa;
  auto heads = [&](TensorId t, int64_t n) {
    const Shape hs{B, n, S, hd};
    return in_layout ? b.view(t, hs) : b.view_copying_grad(t, hs);
  };
  const TensorId q = heads(qp, s.num_heads);
  const TensorId k = heads(b.linear(x, w.k), s.num_kv_heads);
  const TensorId v = heads(b.linear(x, w.v), s.num_kv_heads);
  for (TensorId t : {q, k, v}) b.hold(t);  // query_states / key_states / value_states until the module returns
  return attention_o_proj(b, s, q, k, v, v, mask, 0, w.o, kNoTensor, weights);
}

// NemotronHMLP.forward: down_proj(act_fn(up_proj(x))) with ACT2FN["relu2"] written out.
TensorId mlp(GraphBuilder& b, const Block& w, TensorId x) {
  return relu_squared_mlp(b, x, w.up, w.up_b, w.down, w.down_b);
}

TensorId float_logits(GraphBuilder& b, TensorId logits) { return b.to(logits, DType::f32); }

void check_spec(const GraphBuilder& b, const TransformerSpec& s) {
  if (static_cast<int64_t>(s.hybrid_pattern.size()) != s.num_layers)
    throw InputError("model.hybrid_pattern", std::to_string(s.hybrid_pattern.size()) + " blocks",
                     "must have one entry per layer (" + std::to_string(s.num_layers) + ")");
  for (char c : s.hybrid_pattern)
    if (c != 'M' && c != '*' && c != '-')
      throw InputError("model.hybrid_pattern", s.hybrid_pattern,
                       "holds '" + std::string(1, c) + "': only M (Mamba2), * (attention) and - (MLP) are modelled");
  if (s.hybrid_pattern.find('M') != std::string::npos &&
      (s.ssm_num_heads < 1 || s.ssm_head_dim < 1 || s.ssm_groups < 1 || s.ssm_chunk_size < 1 ||
       s.ssm_state_size < 1 || s.ssm_conv_kernel < 1 || s.ssm_num_heads * s.ssm_head_dim != s.ssm_inner_size ||
       s.ssm_num_heads % s.ssm_groups != 0))
    throw InputError("model.ssm_num_heads", std::to_string(s.ssm_num_heads),
                     "nemotron_h's Mamba2 blocks need positive heads, head dim, groups, chunk size, state size and "
                     "conv kernel, heads x head dim == the mixer width and groups dividing the heads");
  if (s.sliding_window > 0 || s.num_experts > 0)
    throw InputError("model.sliding_window", std::to_string(s.sliding_window),
                     "nemotron_h is modelled without sliding-window attention or experts");
  // DynamicCache.get_seq_length (position_ids in a plain forward, generate()) looks for an attention layer and
  // raises when there is none.
  if (!b.training() && s.hybrid_pattern.find('*') == std::string::npos)
    throw InputError("model.hybrid_pattern", s.hybrid_pattern,
                     "has no attention block: transformers' DynamicCache.get_seq_length raises in inference");
}

}  // namespace

void build_nemotron_h(GraphBuilder& b, const TransformerSpec& s) {
  check_spec(b, s);
  const auto& cfg = b.config();
  const bool inf = !b.training();
  const int64_t B = cfg.batch_size, S = inf ? b.pass().new_tokens : cfg.seq_len, H = s.hidden_size;
  hf_construction_scalar(b);
  const TensorId embed = b.param("embeddings.weight", {s.vocab_size, H}, !cfg.freeze_embeddings);
  const TensorId ids = b.input({B, S}, DType::i64);
  if (inf && b.pass().from_generate && B > 1) b.input({B, S}, DType::i64);  // generate()'s position_ids
  const TensorId inputs_embeds = b.embedding(ids, embed);
  b.hold(inputs_embeds);
  const HybridPrelude pre = hybrid_positions_and_masks(b, s, b.dtype(inputs_embeds));
  Mamba2MixerVariant variant;
  variant.norm = Mamba2MixerVariant::Norm::grouped;
  TensorId h = inputs_embeds;
  for (int64_t i = 0; i < s.num_layers; ++i) {
    const Block w = block_params(b, s, i, !layer_frozen(cfg, i));
    b.begin_layer("layers." + std::to_string(i), layer_checkpointed(cfg, i));
    const TensorId layer_in = h;
    b.hold(layer_in);  // the model's loop variable holds the block input until the block returns
    const TensorId cast = b.to(h, b.dtype(w.norm));
    const TensorId n = rms_norm(b, cast, w.norm, cast != h);
    b.hold(n);  // hidden_states until the mixer returns
    TensorId attn_weights = kNoTensor;
    TensorId out;
    if (w.kind == 'M')
      out = mamba2_mixer_variant(b, s, w.mamba, n, variant);
    else if (w.kind == '*')
      out = attention(b, s, w, n, pre.mask, attn_weights);
    else
      out = mlp(b, w, n);
    b.drop(n);
    h = b.add(layer_in, out);
    if (attn_weights != kNoTensor) b.drop(attn_weights);  // `hidden_states, _ = self.mixer(...)`
    if (layer_in != inputs_embeds) b.drop(layer_in);
    b.end_layer();
  }
  b.hold(h);  // `hidden_states = self.norm_f(hidden_states)` rebinds only once the norm has returned
  const TensorId hn = rms_norm(b, h, b.param("norm_f.weight", {H}, !cfg.freeze_embeddings));
  for (TensorId t : {h, inputs_embeds, pre.mask, pre.positions})
    if (t != kNoTensor) b.drop(t);
  causal_lm_tail(b, s, hn, embed, ids, false, float_logits);
}

}  // namespace memplan
