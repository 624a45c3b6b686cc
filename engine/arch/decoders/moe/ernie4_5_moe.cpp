// Ernie4_5_MoeForCausalLM (transformers 5.17 models/ernie4_5_moe/modeling_ernie4_5_moe.py), training forward +
// causal-LM loss, or one inference pass (generate()'s prefill and decode steps).
//
// The model is Ernie4_5's (ernie4_5.cpp): embedding, causal mask, rotary cos / sin kept in fp32, N x decoder layer
// (input_layernorm, ernie_attention with its interleaved fp32 rotary embedding, residual, post_attention_layernorm,
// feed-forward, residual), norm, lm_head (tied by default), loss. Only the feed-forward differs: layer i carries
// Ernie4_5_MoeSparseMoeBlock where spec.moe_layers[i] is set ((i + 1) % moe_layer_interval == 0 and
// moe_layer_start_index <= i <= moe_layer_end_index), else Ernie4_5_MoeMLP (SwiGLU of intermediate_size).
//
// Ernie4_5_MoeSparseMoeBlock.forward, over flat = x.view(-1, H) [T, H]:
//   shared_output = shared_experts(flat)        SwiGLU of moe_intermediate_size * num_shared_experts, bound to the
//                                               end of the block (absent with no shared experts)
//   _, top_k_weights, top_k_index = gate(flat)  the router below; all three bound to the end of the block
//   final = experts(flat, top_k_index, top_k_weights)   grouped_mm (qwen_moe_experts; batched_mm in decode steps)
//   final = final + shared_output; reshape(B, S, H); .to(flat.dtype) (a no-op: the sum has flat's dtype)
// Ernie4_5_MoeTopKRouter.forward runs with autocast disabled, on its fp32 weight (created fp32 whatever the
// default dtype; _keep_in_fp32_modules_strict keeps it so):
//   router_logits = F.linear(hidden.float(), weight.float())   an fp32 copy of a 16-bit input, which the GEMM saves
//   routing_weights = softmax(router_logits, dim=1, dtype=float)
//   _, selected = topk(moe_statics(routing_weights), k)    moe_statics: + e_score_correction_bias [1, E] (a
//                                                          parameter with requires_grad False), a fresh [T, E]
//   routing_weights = gather(routing_weights, -1, selected)
//   routing_weights = routing_weights / clamp(routing_weights.sum(-1, keepdim=True), min=moe_norm_min)
//   return router_logits, routing_weights.to(hidden.dtype), selected
// So unlike Mixtral's / Qwen3's router the GEMM is fp32 even under amp, and the weights reach the experts in the
// hidden dtype. Registration order per layer: self_attn q, k, v, o (biases with use_bias), mlp (gate.weight,
// gate.moe_statics.e_score_correction_bias, experts.gate_up_proj, experts.down_proj, shared_experts gate / up /
// down; or gate / up / down), input_layernorm, post_attention_layernorm.
#include "engine/arch/builders.h"

#include "engine/arch/decoders/parts/ernie_parts.h"
#include "engine/arch/decoders/parts/llama_parts.h"
#include "engine/arch/decoders/parts/qwen_parts.h"
#include "engine/checked.h"
#include "engine/errors.h"

namespace memplan {

namespace {

struct ErnieMoeLayerParams {
  LlamaLayerParams attn;
  FfnParams dense;                                                     // Ernie4_5_MoeMLP on a dense layer
  TensorId router = kNoTensor, score_bias = kNoTensor;                 // sparse layer: gate.weight, moe_statics
  TensorId gate_up = kNoTensor, down = kNoTensor;                      // experts
  FfnParams shared;                                                    // shared_experts (gate kNoTensor: none)
};

ErnieMoeLayerParams layer_params(GraphBuilder& b, const TransformerSpec& s, int64_t i, bool train) {
  const std::string p = "layers." + std::to_string(i) + ".";
  const int64_t H = s.hidden_size;
  ErnieMoeLayerParams w;
  attention_projection_params(b, s, p, train, s.qkv_bias, s.o_bias, w.attn);
  auto mlp = [&](const std::string& m, int64_t I, FfnParams& f) {  // Ernie4_5_MoeMLP, in nn.Linear order
    auto lin = [&](const char* name, int64_t out, int64_t in, TensorId& wt, TensorId& bt) {
      wt = b.param(m + name + ".weight", {out, in}, train);
      if (s.mlp_bias) bt = b.param(m + name + ".bias", {out}, train);
    };
    lin("gate_proj", I, H, f.gate, f.gate_b);
    lin("up_proj", I, H, f.up, f.up_b);
    lin("down_proj", H, I, f.down, f.down_b);
  };
  const bool sparse = !s.moe_layers.empty() && s.moe_layers[static_cast<size_t>(i)] != 0;
  if (sparse) {
    const int64_t E = s.num_experts, I = s.moe_intermediate_size;
    // The router's weight and the correction bias are fp32 in every precision; the bias never trains.
    w.router = b.param(p + "mlp.gate.weight", {E, H}, train, DType::f32);
    w.score_bias = b.param(p + "mlp.gate.moe_statics.e_score_correction_bias", {1, E}, false, DType::f32);
    w.gate_up = b.param(p + "mlp.experts.gate_up_proj", {E, 2 * I, H}, train);
    w.down = b.param(p + "mlp.experts.down_proj", {E, H, I}, train);
    if (s.num_shared_experts > 0) mlp(p + "mlp.shared_experts.", checked_mul(I, s.num_shared_experts), w.shared);
  } else {
    mlp(p + "mlp.", s.intermediate_size, w.dense);
  }
  w.attn.in_norm = b.param(p + "input_layernorm.weight", {H}, train);
  w.attn.post_norm = b.param(p + "post_attention_layernorm.weight", {H}, train);
  return w;
}

// F.linear(x, w) with autocast disabled: MmBackward computes the weight's gradient (from x) before the input's
// (from w); each operand is saved only when the other one needs a gradient.
TensorId linear_no_autocast(GraphBuilder& b, TensorId x, TensorId w) {
  std::vector<int> saved;  // indices into the reads {w, x}
  if (b.info(w).requires_grad) saved.push_back(1);
  if (b.info(x).requires_grad) saved.push_back(0);
  const int64_t T = b.shape(x)[0], E = b.shape(w)[0];
  return b.generic({"linear", {w, x}, {{{T, E}, b.dtype(x)}}, saved, {}, {}, {}})[0];
}

// Ernie4_5_MoeTopKRouter.forward over flat [T, H]: (router_logits fp32, routing_weights in flat's dtype,
// selected_experts), each held: the block binds them until release_route.
QwenMoeRoute ernie_router(GraphBuilder& b, const TransformerSpec& s, const ErnieMoeLayerParams& w, TensorId flat) {
  const int64_t T = b.shape(flat)[0], K = s.num_experts_per_tok, E = s.num_experts;
  const DType dt = b.dtype(flat);
  // hidden_states.float(): a copy of a 16-bit input, which the GEMM saves for the weight's gradient.
  const TensorId logits = linear_no_autocast(b, b.to(flat, DType::f32), w.router);
  b.hold(logits);
  const TensorId probs = b.softmax_last(logits);
  b.hold(probs);  // routing_weights, until rebound to the gathered top-k
  // moe_statics: probs + e_score_correction_bias.squeeze(), a fresh [T, E] that topk reads and drops.
  const TensorId scores = b.add(probs, b.view(w.score_bias, {E}));
  auto top = b.generic({"topk", {scores}, {{{T, K}, DType::f32}, {{T, K}, DType::i64}}, {}, {1}, {}, {}});
  b.hold(top[0]);  // bound to `_` until the router returns
  b.hold(top[1]);
  const TensorId gathered = b.generic_one("gather", {probs, top[1]}, {T, K}, DType::f32, {1});
  b.drop(probs);
  b.hold(gathered);
  const TensorId denom = b.unary("clamp", b.reduce_last("sum", gathered, false), /*save_in=*/true, false);
  const TensorId normed = b.binary("div", gathered, denom, true, true);
  b.drop(gathered);
  const TensorId weights = b.to(normed, dt);  // after the autocast-free block, rebinding routing_weights
  b.hold(weights);
  b.drop(top[0]);
  return {logits, weights, top[1]};
}

// Ernie4_5_MoeSparseMoeBlock.forward on the normed input x [B, S, H].
TensorId sparse_moe_block(GraphBuilder& b, const TransformerSpec& s, const ErnieMoeLayerParams& w, TensorId x) {
  const int64_t H = s.hidden_size;
  const int64_t B = b.config().batch_size, Sq = b.training() ? b.config().seq_len : b.pass().new_tokens;
  const TensorId flat = b.view(x, {checked_mul(B, Sq), H});
  TensorId shared = kNoTensor;
  if (w.shared.gate != kNoTensor) {
    const FfnParams& f = w.shared;
    shared = swiglu_mlp(b, flat, f.gate, f.up, f.down, f.gate_b, f.up_b, f.down_b);
    b.hold(shared);  // shared_output, bound until the block returns
  }
  const QwenMoeRoute route = ernie_router(b, s, w, flat);
  TensorId out = qwen_moe_experts(b, s, w.gate_up, w.down, flat, route);
  if (shared != kNoTensor) out = b.add(out, shared);
  out = b.view(out, {B, Sq, H});
  if (shared != kNoTensor) b.drop(shared);
  release_route(b, route);
  return out;
}

}  // namespace

void build_ernie4_5_moe(GraphBuilder& b, const TransformerSpec& s) {
  const auto& cfg = b.config();
  const bool inf = !b.training();
  const int64_t S = inf ? b.pass().new_tokens : cfg.seq_len, H = s.hidden_size, hd = s.head_dim;
  if (s.sliding_window > 0)
    throw InputError("model.sliding_window", std::to_string(s.sliding_window),
                     "ernie4_5_moe has no sliding-window attention");
  if (hd % 2 != 0)
    throw InputError("model.head_dim", std::to_string(hd), "must be even (the rotary embedding pairs dimensions)");
  if (!s.moe_layers.empty() &&
      (s.num_experts <= 0 || s.moe_intermediate_size <= 0 || s.num_experts_per_tok <= 0 ||
       s.num_experts_per_tok > s.num_experts || s.moe_layers.size() != static_cast<size_t>(s.num_layers)))
    throw InputError("model.num_experts", std::to_string(s.num_experts),
                     "ernie4_5_moe's MoE layers need num_experts >= num_experts_per_tok > 0 and moe_intermediate_size");
  const bool emb_train = !cfg.freeze_embeddings;
  auto [embed, ids, h, P] = llama_inputs(b, s);  // position_ids rows P: B inside generate(), else 1
  const TensorId inputs_embeds = h;
  const TensorId mask = full_and_sliding_masks(b, s, true, false, b.dtype(h)).full;
  const std::pair<TensorId, TensorId> cos_sin = rotary_cos_sin(b, P, S, hd, DType::f32);
  const TensorId cos = cos_sin.first, sin = cos_sin.second;  // named: clang 14 cannot capture structured bindings
  b.hold(inputs_embeds);
  b.hold(cos);
  b.hold(sin);
  for (int64_t i = 0; i < s.num_layers; ++i) {
    const ErnieMoeLayerParams w = layer_params(b, s, i, !layer_frozen(cfg, i));
    b.begin_layer("layers." + std::to_string(i), layer_checkpointed(cfg, i));
    const TensorId layer_in = h;
    b.hold(layer_in);  // the model's loop variable holds the layer input until the layer returns
    h = llama_residual_blocks(
        b, h, w.attn.in_norm, w.attn.post_norm,
        [&](TensorId x, TensorId& weights) { return ernie_attention(b, s, w.attn, x, cos, sin, mask, weights); },
        [&](TensorId x) {
          if (w.router != kNoTensor) return sparse_moe_block(b, s, w, x);
          const FfnParams& f = w.dense;
          return swiglu_mlp(b, x, f.gate, f.up, f.down, f.gate_b, f.up_b, f.down_b);
        });
    if (layer_in != inputs_embeds) b.drop(layer_in);
    b.end_layer();
  }
  b.hold(h);  // `hidden_states = self.norm(hidden_states)` rebinds only once the norm has returned
  TensorId hn = rms_norm(b, h, b.param("norm.weight", {H}, emb_train));
  for (TensorId t : {h, inputs_embeds, cos, sin, mask})
    if (t != kNoTensor) b.drop(t);
  causal_lm_tail(b, s, hn, embed, ids);
}

}  // namespace memplan
