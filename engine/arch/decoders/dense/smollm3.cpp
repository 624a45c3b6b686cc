// SmolLM3ForCausalLM (transformers 5.17 models/smollm3/modeling_smollm3.py), training forward + causal-LM loss or
// one inference pass. LlamaForCausalLM's statements (the RMSNorm, the SwiGLU MLP, the rotary embedding returning
// cos / sin in the hidden dtype, the attention from the cache update on: llama_parts.h) with one difference:
//   SmolLM3Attention: `if self.use_rope:` (config.no_rope_layers[layer_idx]) guards apply_rotary_pos_emb. A NoPE
//   layer passes the projections' transposed head views to the cache update and the attention as they are: no
//   rotated copies, and q / k get their gradients from the attention kernel in their own layout (as v does), so
//   the head views copy nothing back where v's copies nothing (unmasked SDPA).
// SmolLM3Model.forward: the causal mask, plus the sliding-window mask when any layer_types entry is
// "sliding_attention" (the config derives those from the NoPE layers when use_sliding_window and sliding_window
// are set), both before the rotary embedding, which runs once for every layer (NoPE layers included).
#include "engine/arch/builders.h"

#include <tuple>

#include "engine/arch/decoders/parts/llama_parts.h"
#include "engine/errors.h"

namespace memplan {

namespace {

bool layer_uses_rope(const TransformerSpec& s, int64_t i) {
  return s.rope_layers.empty() || s.rope_layers[static_cast<size_t>(i)] != 0;
}

// SmolLM3Attention.forward. `weights`: eager attention's probabilities, held (see attention_core).
TensorId smollm3_attention(GraphBuilder& b, const TransformerSpec& s, const LlamaLayerParams& w, TensorId x,
                           TensorId cos, TensorId sin, bool use_rope, TensorId mask, int64_t window,
                           TensorId& weights) {
  const auto& cfg = b.config();
  const bool inf = !b.training();
  const int64_t B = cfg.batch_size, S = inf ? b.pass().new_tokens : cfg.seq_len, nh = s.num_heads,
                nkv = s.num_kv_heads, hd = s.head_dim;
  // As in llama_attention: the rotary backward hands q and k contiguous [B, H, S, D] gradients, which the
  // transposed head views copy back; without the rotary embedding q and k are like v, whose gradient comes in
  // its own layout from the fused SDPA kernel and as a contiguous tensor from a bmm or repeat_kv's sum. Fused
  // means unmasked SDPA but for fp32 with grouped KV heads, which runs the math backend (GraphBuilder::sdpa):
  // its q gradient comes from the scaled copy's backward and k's / v's from repeat_kv's sum, all contiguous.
  const bool math_backend = b.dtype(x) == DType::f32 && !b.autocast() && nkv != nh;
  const bool grad_in_layout = cfg.attn == AttnImpl::sdpa && mask == kNoTensor && !math_backend;
  auto head_view = [&](TensorId t, int64_t heads, bool copying) {
    return copying ? b.view_copying_grad(t, {B, heads, S, hd}) : b.view(t, {B, heads, S, hd});
  };
  TensorId q = head_view(b.linear(x, w.q, w.qb), nh, use_rope || !grad_in_layout);
  TensorId k = head_view(b.linear(x, w.k, w.kb), nkv, use_rope || !grad_in_layout);
  TensorId v = head_view(b.linear(x, w.v, w.vb), nkv, !grad_in_layout);
  const TensorId v_proj = v;
  b.hold(v_proj);  // value_states stays bound until the attention module returns (or the cache rebinds it)
  TensorId qe = q, ke = k;
  if (use_rope) {
    b.hold(q);  // apply_rotary_pos_emb(q, k, ...): the caller rebinds q and k only once both are rotated
    b.hold(k);
    std::tie(qe, ke) = rope_qk(b, q, k, cos, sin);
  } else {
    b.hold(qe);  // query_states / key_states: the head views, bound until the attention module returns
    b.hold(ke);
  }
  TensorId out = attention_o_proj(b, s, qe, ke, v, v_proj, mask, window, w.o, w.ob, weights);
  return out;
}

}  // namespace

void build_smollm3(GraphBuilder& b, const TransformerSpec& s) {
  const auto& cfg = b.config();
  const bool inf = !b.training();
  const int64_t S = inf ? b.pass().new_tokens : cfg.seq_len, H = s.hidden_size, hd = s.head_dim;
  if (s.num_experts > 0) throw InputError("model.num_experts", std::to_string(s.num_experts), "smollm3 has no experts");
  if (!s.rope_layers.empty() && static_cast<int64_t>(s.rope_layers.size()) < s.num_layers)
    throw InputError("model.no_rope_layers", std::to_string(s.rope_layers.size()) + " entries",
                     "must cover every layer (" + std::to_string(s.num_layers) + ")");
  const bool emb_train = !cfg.freeze_embeddings;
  auto [embed, ids, h, P] = llama_inputs(b, s);  // position_ids rows P: B inside generate(), else 1
  const TensorId inputs_embeds = h;
  // causal_mask_mapping: "full_attention" always, "sliding_attention" when a layer slides; as build_llama
  // materialises them (the same masking_utils calls).
  bool any_sliding = false, any_full = false;
  for (int64_t i = 0; i < s.num_layers; ++i) (layer_is_sliding(s, i) ? any_sliding : any_full) = true;
  TensorId mask = kNoTensor, sliding_mask = kNoTensor;
  if (!inf) {
    if (cfg.attn == AttnImpl::eager) {
      mask = eager_mask(b, 1, S, S, b.dtype(h));
      if (any_sliding) sliding_mask = eager_mask(b, 1, S, S, b.dtype(h));
    } else if (any_sliding && S >= s.sliding_window) {
      sliding_mask = b.generic({"sdpa_mask", {}, {{{1, 1, S, S}, DType::boolean}}, {}, {}, {S * S}, {}})[0];
    }
  } else {
    mask = any_full ? inference_mask(b, 0, b.dtype(h)) : kNoTensor;
    sliding_mask = any_sliding ? inference_mask(b, s.sliding_window, b.dtype(h)) : kNoTensor;
  }
  for (TensorId m : {mask, sliding_mask})
    if (m != kNoTensor) b.hold(m);  // causal_mask_mapping lives until SmolLM3Model.forward returns

  const std::pair<TensorId, TensorId> cos_sin = rotary_cos_sin(b, P, S, hd, b.dtype(h));
  const TensorId cos = cos_sin.first, sin = cos_sin.second;  // named, not a structured binding: clang 14 cannot capture those
  b.hold(inputs_embeds);  // bound until the model's forward returns, as are the position embeddings
  b.hold(cos);
  b.hold(sin);
  for (int64_t i = 0; i < s.num_layers; ++i) {
    const std::string p = "layers." + std::to_string(i) + ".";
    const bool train = !layer_frozen(cfg, i);
    const LlamaDecoderParams d = llama_decoder_params(b, s, p, train);
    const bool sliding = layer_is_sliding(s, i);
    h = llama_decoder_layer(b, s, i, d, h, inputs_embeds, [&](TensorId x, TensorId& weights) {
      return smollm3_attention(b, s, d.attn, x, cos, sin, layer_uses_rope(s, i), sliding ? sliding_mask : mask,
                               sliding ? s.sliding_window : 0, weights);
    });
  }
  b.hold(h);  // `hidden_states = self.norm(hidden_states)` rebinds only once the norm has returned
  TensorId hn = rms_norm(b, h, b.param("norm.weight", {H}, emb_train));
  for (TensorId t : {h, inputs_embeds, cos, sin, mask, sliding_mask})
    if (t != kNoTensor) b.drop(t);
  causal_lm_tail(b, s, hn, embed, ids);
}

}  // namespace memplan
