// Gemma3nForCausalLM, gemma3n_text (transformers 5.17 models/gemma3n/modeling_gemma3n.py; Gemma 3n E2B / E4B text
// decoder), training forward + causal-LM loss, or one inference pass (generate()'s prefill and decode steps). The
// multimodal gemma3n config is refused by the importer (models/hf_config.cpp says why).
//
// Stages of Gemma3nTextModel.forward, each mirrored below with its Python bindings:
//   embed_tokens(ids) * embed_scale -> get_per_layer_inputs: embed_tokens_per_layer(ids) * its embed_scale,
//   reshaped [B, S, L, P] -> project_per_layer_inputs: per_layer_model_projection(inputs_embeds), `*=` its scale
//   buffer in place, reshaped, per_layer_projection_norm, (+ the token part) * per_layer_input_scale ->
//   position_ids -> causal_mask_mapping (create_causal_mask and create_sliding_window_causal_mask, every forward)
//   -> the AltUp streams: target_magnitude = mean(h0^2)^0.5, then for each of the K - 1 altup_projections a
//   magnitude-matched projection of h0 (bound in temp_hidden_states until the list is rebound after the layers),
//   torch.stack -> [K, B, S, H] -> one rotary call per layer type -> N x Gemma3nTextDecoderLayer (layer i reads
//   per_layer_inputs[:, :, i, :]) -> the same magnitude matching through altup_unembed_projections, stack,
//   mean over the K streams -> norm -> lm_head -> final softcapping.
//   Gemma3nTextDecoderLayer on the [K, B, S, H] streams:
//     predictions = altup.predict(h): router modalities of h[0] (router_norm, * router_input_scale,
//       modality_router, tanh in fp32), prediction_coefs -> [B, S, K, K], matmul(h.permute(1, 2, 3, 0), coefs),
//       permuted back, `+= h` in place, .contiguous().type_as(h);
//     active = predictions[0]; normed = input_layernorm(active); laurel = normed + post_laurel_norm(
//       linear_right(linear_left(normed))); attn = post_attention_layernorm(self_attn(normed));
//     attn_laurel = (active + attn + laurel) / sqrt(2) (two statements); ffw = post_feedforward_layernorm(mlp(
//       pre_feedforward_layernorm(attn_laurel))); activated = attn_laurel + ffw;
//     corrected = altup.correct(predictions, activated): (activated - predictions[0]).repeat(K, 1, 1, 1) *
//       (correction_coefs(modalities(activated)) + 1), `+= predictions`;
//     first = corrected[0].clone() (* correct_output_scale), per_layer_input_gate, act, * per_layer_input,
//       per_layer_projection, post_per_layer_input_norm; `corrected[1:] += first` (CopySlices) -> returned.
//   Gemma3nTextMLP: gate_proj, on the activation_sparsity layers _gaussian_topk (mean, std, relu(x - cutoff)),
//     act, * up_proj, down_proj.
//   Gemma3nTextAttention: q_proj -> view -> q_norm -> rotary -> transpose; unless KV-shared: k_proj -> view ->
//     k_norm -> rotary -> transpose, then v_proj -> view -> v_norm (no scale) -> transpose; the cache update (not
//     on shared layers); the last non-shared layer of each type stores its (key, value) in shared_kv_states
//     (whether or not any layer shares), which the shared layers read; attention with scaling 1.0; o_proj.
// The norm, softcapping, activation and the attention function come from gemma_ple_parts (shared with gemma4).
#include "engine/arch/builders.h"

#include <string>
#include <utility>
#include <vector>

#include "engine/arch/decoders/parts/gemma_ple_parts.h"
#include "engine/arch/decoders/parts/llama_parts.h"
#include "engine/checked.h"
#include "engine/errors.h"

namespace memplan {

namespace {

using gemma_ple::SharedKv;

struct G3nLayer {
  bool sliding = false, shared = false, store_kv = false, sparse = false;
  int64_t inter = 0;
  TensorId q, qb = kNoTensor, q_norm, k = kNoTensor, kb = kNoTensor, v = kNoTensor, vb = kNoTensor,
              k_norm = kNoTensor, o, ob = kNoTensor;
  TensorId gate, up, down;
  TensorId in_norm, post_attn_norm, pre_ffn_norm, post_ffn_norm;
  TensorId correct_scale, correction_coefs, prediction_coefs, modality_router, router_norm, router_scale;
  TensorId laurel_left, laurel_right, laurel_norm;
  TensorId ple_gate, ple_proj, ple_norm;
};

// Gemma3nTextDecoderLayer.__init__ in construction order (the parameters' allocation order): self_attn (q_proj,
// q_norm; unless KV-shared k_proj, v_proj, k_norm (v_norm has no weight); o_proj), mlp (gate, up, down), the four
// norms, altup (correct_output_scale [H], correction_coefs [K, K], prediction_coefs [K^2, K], modality_router
// [K, H], router_norm, the router_input_scale buffer), laurel (linear_left [R, H], linear_right [H, R],
// post_laurel_norm), per_layer_input_gate [P, H], per_layer_projection [H, P], post_per_layer_input_norm.
G3nLayer layer_params(GraphBuilder& b, const TransformerSpec& s, int64_t i, int64_t first_shared) {
  const std::string p = "layers." + std::to_string(i) + ".";
  const bool train = !layer_frozen(b.config(), i);
  const int64_t H = s.hidden_size, nh = s.num_heads, hd = s.head_dim, nkv = s.num_kv_heads,
                K = s.gemma3n_altup_inputs, R = s.gemma3n_laurel_rank, P = s.gemma4_ple_size;
  G3nLayer w;
  w.sliding = layer_is_sliding(s, i);
  w.shared = first_shared > 0 && i >= first_shared;
  w.sparse = s.gemma3n_sparse_layers[static_cast<size_t>(i)] != 0;
  w.inter = s.gemma3n_intermediate[static_cast<size_t>(i)];
  auto lin = [&](const std::string& name, int64_t out, int64_t in, bool bias, TensorId& wt, TensorId& bt) {
    wt = b.param(p + name + ".weight", {out, in}, train);
    if (bias) bt = b.param(p + name + ".bias", {out}, train);
  };
  TensorId none = kNoTensor;
  const bool ab = s.attention_bias;
  lin("self_attn.q_proj", nh * hd, H, ab, w.q, w.qb);
  w.q_norm = b.param(p + "self_attn.q_norm.weight", {hd}, train);
  if (!w.shared) {
    lin("self_attn.k_proj", nkv * hd, H, ab, w.k, w.kb);
    lin("self_attn.v_proj", nkv * hd, H, ab, w.v, w.vb);
    w.k_norm = b.param(p + "self_attn.k_norm.weight", {hd}, train);
  }
  lin("self_attn.o_proj", H, nh * hd, ab, w.o, w.ob);
  lin("mlp.gate_proj", w.inter, H, false, w.gate, none);
  lin("mlp.up_proj", w.inter, H, false, w.up, none);
  lin("mlp.down_proj", H, w.inter, false, w.down, none);
  w.in_norm = b.param(p + "input_layernorm.weight", {H}, train);
  w.post_attn_norm = b.param(p + "post_attention_layernorm.weight", {H}, train);
  w.pre_ffn_norm = b.param(p + "pre_feedforward_layernorm.weight", {H}, train);
  w.post_ffn_norm = b.param(p + "post_feedforward_layernorm.weight", {H}, train);
  w.correct_scale = b.param(p + "altup.correct_output_scale", {H}, train);
  lin("altup.correction_coefs", K, K, false, w.correction_coefs, none);
  lin("altup.prediction_coefs", K * K, K, false, w.prediction_coefs, none);
  lin("altup.modality_router", K, H, false, w.modality_router, none);
  w.router_norm = b.param(p + "altup.router_norm.weight", {H}, train);
  w.router_scale = b.buffer(p + "altup.router_input_scale", {}, b.param_dtype());
  lin("laurel.linear_left", R, H, false, w.laurel_left, none);
  lin("laurel.linear_right", H, R, false, w.laurel_right, none);
  w.laurel_norm = b.param(p + "laurel.post_laurel_norm.weight", {H}, train);
  lin("per_layer_input_gate", P, H, false, w.ple_gate, none);
  lin("per_layer_projection", H, P, false, w.ple_proj, none);
  w.ple_norm = b.param(p + "post_per_layer_input_norm.weight", {H}, train);
  return w;
}

// Gemma3nTextAltUp.compute_router_modalities(x): router_norm(x) * router_input_scale (a 0-dim buffer),
// modality_router -> [B, S, K], torch.tanh(routed.float()).type_as(x).
TensorId router_modalities(GraphBuilder& b, const G3nLayer& w, TensorId x) {
  const TensorId ri = b.mul(gemma_ple::norm(b, x, w.router_norm), w.router_scale);
  const TensorId routed = b.linear(ri, w.modality_router);
  return b.to(b.unary("tanh", b.to(routed, DType::f32), false, true), b.dtype(x));
}

// The magnitude-matched stream of the text model's two AltUp loops (one iteration): proj = linear(src, W),
// .to(h0 dtype); new_magnitude = sqrt(maximum(mean(cur^2), eps)); cur * target_magnitude / new_magnitude.
// `proj_var`: the variable binding the projection (altup_proj / altup_unemb_proj), rebound each iteration and
// left bound after the loop; updated here. Returns the stream (the list element).
TensorId magnitude_matched(GraphBuilder& b, TensorId src, TensorId wt, DType dt, TensorId target, TensorId& proj_var) {
  const TensorId proj = b.linear(src, wt);
  b.hold(proj);
  if (proj_var != kNoTensor) b.drop(proj_var);
  proj_var = proj;
  const TensorId cur = b.to(proj, dt);
  TensorId nm = b.reduce_last("mean", b.pow_scalar(cur), false);
  nm = b.unary("sqrt", b.unary("maximum", nm, true, false), false, true);  // maximum(x, eps): eps is 0-dim
  return b.binary("div", b.mul(cur, target), nm, true, true);
}

// target_magnitude = torch.mean(x ** 2, dim=-1, keepdim=True) ** 0.5
TensorId target_magnitude(GraphBuilder& b, TensorId x) {
  return b.pow_scalar(b.reduce_last("mean", b.pow_scalar(x), false));
}

// Gemma3nTextAttention.forward on the normed active prediction x.
TensorId attention(GraphBuilder& b, const TransformerSpec& s, const G3nLayer& w, TensorId x, TensorId cos, TensorId sin,
                   TensorId mask, SharedKv& kv, TensorId& weights) {
  const auto& cfg = b.config();
  const bool inf = !b.training();
  const int64_t B = cfg.batch_size, S = inf ? b.pass().new_tokens : cfg.seq_len, nh = s.num_heads,
                hd = s.head_dim, nkv = s.num_kv_heads;
  // query_states: projection view, q_norm, rotary, transpose (each statement rebinding the variable).
  const TensorId q = gemma_ple::norm_rebinding(b, b.view(b.linear(x, w.q, w.qb), {B, S, nh, hd}), w.q_norm);
  b.hold(q);
  TensorId qe = rope(b, q, cos, sin);
  b.drop(q);
  qe = b.view(qe, {B, nh, S, hd});
  b.hold(qe);
  TensorId k, v;
  if (w.shared) {  // shared_kv_states[kv_shared_layer_index] (.to(device) is a no-op on one device)
    k = w.sliding ? kv.k_sliding : kv.k_full;
    v = w.sliding ? kv.v_sliding : kv.v_full;
  } else {
    const TensorId kn = gemma_ple::norm_rebinding(b, b.view(b.linear(x, w.k, w.kb), {B, S, nkv, hd}), w.k_norm);
    b.hold(kn);
    k = b.view(rope(b, kn, cos, sin), {B, nkv, S, hd});
    b.drop(kn);
    b.hold(k);
    v = b.view(gemma_ple::norm_rebinding(b, b.view(b.linear(x, w.v, w.vb), {B, S, nkv, hd}), kNoTensor),
               {B, nkv, S, hd});
    b.hold(v);
    if (inf) {  // past_key_values.update rebinds both to the cache's full tensors
      auto [kc, vc] = kv_update(b, k, v, w.sliding ? s.sliding_window : 0);
      b.drop(k);
      b.drop(v);
      k = kc;
      v = vc;
      b.hold(k);
      b.hold(v);
    }
    if (w.store_kv) {  // shared_kv_states[layer_idx] = key_states, value_states
      (w.sliding ? kv.k_sliding : kv.k_full) = k;
      (w.sliding ? kv.v_sliding : kv.v_full) = v;
    }
  }
  const TensorId ctx = gemma_ple::attention_core(b, s, hd, nkv, qe, k, v, mask, weights);
  const TensorId out = b.linear(b.view(ctx, {B, S, nh * hd}), w.o, w.ob);
  b.drop(qe);
  if (!w.shared && !w.store_kv) {  // stored states stay bound in shared_kv_states
    b.drop(k);
    b.drop(v);
  }
  return out;
}

// Gemma3nTextMLP.forward: gate_proj; on a sparse layer _gaussian_topk(gate_proj): inputs_mean = mean(x, -1),
// inputs_std = std(x, -1, unbiased=False) (StdBackward keeps x and the result; var_backward evaluates
// `2 / N * grad * (x - x.mean(-1))`, one x-sized temporary beside the gradient), cutoff = mean + std *
// std_multiplier (a 0-dim tensor), relu(x - cutoff) (saves its result); then act, * up_proj, down_proj.
TensorId mlp(GraphBuilder& b, const TransformerSpec& s, const G3nLayer& w, TensorId x) {
  TensorId g = b.linear(x, w.gate);
  if (w.sparse) {
    const TensorId mean = b.reduce_last("mean", g, false);
    Shape rs = b.shape(g);
    rs.back() = 1;
    const int64_t gbytes = checked_mul(b.numel(g), dtype_bytes(b.dtype(g)));
    GraphBuilder::GenericOp std_op{"std", {g}, {{rs, b.dtype(g)}}, {0}, {0}, {}, {}};
    std_op.bwd_pre_temp_bytes = {gbytes};
    const TensorId sd = b.generic(std_op)[0];
    const TensorId cutoff = b.add(mean, b.scalar_op("mul", sd, false));
    g = b.unary("relu", b.sub(g, cutoff), false, true);
  }
  const TensorId act = gemma_ple::activation(b, s.hidden_act, g);
  return b.linear(b.mul(act, b.linear(x, w.up)), w.down);
}

}  // namespace

void build_gemma3n(GraphBuilder& b, const TransformerSpec& s) {
  const auto& cfg = b.config();
  const bool inf = !b.training();
  const int64_t B = cfg.batch_size, S = inf ? b.pass().new_tokens : cfg.seq_len, H = s.hidden_size,
                V = s.vocab_size, L = s.num_layers, Pd = s.gemma4_ple_size, K = s.gemma3n_altup_inputs;
  if (s.sliding_window <= 0)
    throw InputError("model.sliding_window", std::to_string(s.sliding_window),
                     "must be positive (create_sliding_window_causal_mask raises without a window)");
  for (const auto& [n, what] : {std::pair{s.sliding_layers.size(), "model.sliding_layers"},
                                std::pair{s.gemma3n_intermediate.size(), "model.gemma3n_intermediate"},
                                std::pair{s.gemma3n_sparse_layers.size(), "model.gemma3n_sparse_layers"}})
    if (static_cast<int64_t>(n) != L)
      throw InputError(what, std::to_string(n) + " entries",
                       "must have one entry per layer (" + std::to_string(L) + ")");
  if (K < 2 || Pd <= 0 || s.gemma3n_laurel_rank <= 0 || s.head_dim % 2 != 0)
    throw InputError("model.gemma3n_altup_inputs", std::to_string(K),
                     "gemma3n needs altup_num_inputs >= 2, positive per-layer input and laurel sizes, even head_dim");
  if (s.gemma4_kv_shared_layers < 0 || s.gemma4_kv_shared_layers >= L)
    throw InputError("model.gemma4_kv_shared_layers", std::to_string(s.gemma4_kv_shared_layers),
                     "must be in [0, num_layers)");
  const bool emb_train = !cfg.freeze_embeddings;
  const int64_t first_shared = L - s.gemma4_kv_shared_layers;

  // Parameters in construction order: embed_tokens (+ its embed_scale buffer), the layers, norm, then the PLE
  // modules and the AltUp (un)embedding projections, then the two scale buffers.
  hf_construction_scalar(b);
  const TensorId embed = b.param("embed_tokens.weight", {V, H}, emb_train);
  b.buffer("embed_tokens.embed_scale", {}, b.param_dtype());
  std::vector<G3nLayer> layers;
  layers.reserve(static_cast<size_t>(L));
  for (int64_t i = 0; i < L; ++i) layers.push_back(layer_params(b, s, i, first_shared));
  gemma_ple::mark_kv_sharing(layers, s.gemma4_kv_shared_layers, /*store_without_sharing=*/true);
  const TensorId norm_w = b.param("norm.weight", {H}, emb_train);
  const TensorId ple_embed = b.param("embed_tokens_per_layer.weight", {s.gemma4_ple_vocab, L * Pd}, emb_train);
  b.buffer("embed_tokens_per_layer.embed_scale", {}, b.param_dtype());
  const TensorId ple_model_proj = b.param("per_layer_model_projection.weight", {L * Pd, H}, emb_train);
  const TensorId ple_proj_norm = b.param("per_layer_projection_norm.weight", {Pd}, emb_train);
  std::vector<TensorId> altup_proj, altup_unembed;
  for (int64_t i = 1; i < K; ++i)
    altup_proj.push_back(b.param("altup_projections." + std::to_string(i - 1) + ".weight", {H, H}, emb_train));
  for (int64_t i = 1; i < K; ++i)
    altup_unembed.push_back(
        b.param("altup_unembed_projections." + std::to_string(i - 1) + ".weight", {H, H}, emb_train));
  const TensorId ple_proj_scale = b.buffer("per_layer_projection_scale", {}, b.param_dtype());
  const TensorId ple_input_scale = b.buffer("per_layer_input_scale", {}, b.param_dtype());

  const TensorId ids = b.input({B, S}, DType::i64);
  const int64_t P = inf && b.pass().from_generate ? B : 1;  // position_ids rows (generate: from the mask)
  if (P > 1) b.input({B, S}, DType::i64);
  // Gemma3nTextScaledWordEmbedding: embedding(ids) * embed_scale.to(weight dtype) (a 0-dim buffer).
  const TensorId inputs_embeds = b.scalar_op("mul", b.embedding(ids, embed), false);
  b.hold(inputs_embeds);  // also hidden_states_0, and mask_kwargs' inputs_embeds: bound until forward returns
  const DType dt = b.dtype(inputs_embeds);

  // get_per_layer_inputs: the packed table's rows * sqrt(P), viewed [B, S, L, P]; bound as per_layer_inputs until
  // project_per_layer_inputs returns and its result rebinds the name.
  const TensorId tok = b.view(b.scalar_op("mul", b.embedding(ids, ple_embed), false), {B, S, L, Pd});
  b.hold(tok);
  // project_per_layer_inputs: `per_layer_projection *= scale.to(dtype)` in place on the projection, reshape, norm
  // (rebinding), then (projection + per_layer_inputs) * per_layer_input_scale.to(dtype) (a 0-dim tensor product).
  TensorId proj = b.inplace_fresh_grad("mul_", b.linear(inputs_embeds, ple_model_proj), {ple_proj_scale});
  proj = gemma_ple::norm_rebinding(b, b.view(proj, {B, S, L, Pd}), ple_proj_norm);
  b.hold(proj);
  const TensorId ple = b.mul(b.add(proj, tok), ple_input_scale);
  b.drop(proj);
  b.drop(tok);
  b.hold(ple);

  const CausalMasks masks = full_and_sliding_masks(b, s, true, true, dt);

  // The AltUp streams: hidden_states_0 and K - 1 magnitude-matched projections of it, stacked.
  TensorId target = target_magnitude(b, inputs_embeds);
  b.hold(target);
  TensorId altup_proj_var = kNoTensor;
  std::vector<TensorId> temp_hidden{inputs_embeds};
  for (int64_t i = 1; i < K; ++i) {
    const TensorId cur = magnitude_matched(b, inputs_embeds, altup_proj[static_cast<size_t>(i - 1)], dt, target,
                                           altup_proj_var);
    b.hold(cur);  // temp_hidden_states holds it
    temp_hidden.push_back(cur);
  }
  TensorId h = b.view(b.cat_list("stack", temp_hidden, 0), {K, B, S, H});

  // position_embeddings[layer_type] for each type in set(layer_types), cast to the hidden dtype.
  bool any_sliding = false, any_full = false;
  for (const G3nLayer& w : layers) (w.sliding ? any_sliding : any_full) = true;
  std::pair<TensorId, TensorId> cs_sliding{kNoTensor, kNoTensor}, cs_full{kNoTensor, kNoTensor};
  if (any_sliding) cs_sliding = rotary_cos_sin(b, P, S, s.head_dim, dt);
  if (any_full) cs_full = rotary_cos_sin(b, P, S, s.head_dim, dt);
  const std::vector<TensorId> rotary = {cs_sliding.first, cs_sliding.second, cs_full.first, cs_full.second};
  for (TensorId t : rotary)
    if (t != kNoTensor) b.hold(t);

  SharedKv kv;
  const int64_t stream_numel = checked_mul(checked_mul(B, S), H);
  // x[i] of a [K, B, S, H] stack: a view whose SelectBackward writes the slice's gradient into zeros of the whole
  // stack (a fresh K-stream buffer in backward). Every Python indexing is a select of its own.
  auto stream = [&](TensorId x) {
    return b.view_copying_grad(x, {B, S, H}, checked_mul(checked_mul(K, stream_numel), dtype_bytes(b.dtype(x))));
  };
  for (int64_t i = 0; i < L; ++i) {
    const G3nLayer& w = layers[static_cast<size_t>(i)];
    // per_layer_inputs[:, :, i, :]: SelectBackward writes the slice's gradient into zeros of the whole tensor.
    const TensorId pli = b.view_copying_grad(ple, {B, S, Pd}, b.info(ple).bytes);
    b.begin_layer("layers." + std::to_string(i), layer_checkpointed(cfg, i));
    const TensorId layer_in = h;
    b.hold(layer_in);
    std::vector<TensorId> locals;  // the layer's variables, bound until it returns
    auto bind = [&](TensorId t) {
      b.hold(t);
      locals.push_back(t);
      return t;
    };
    const DType hdt = b.dtype(h);
    // altup.predict: matmul([B, S, H, K] view, coefs [B, S, K, K]) (no copy: the permuted operand reshapes to
    // [B*S, H, K] as a view; autocast casts it first), permuted back, `+= hidden_states` on that view of the bmm
    // output (CopySlices over the whole base), .contiguous(), .type_as(hidden_states).
    const TensorId mod = router_modalities(b, w, stream(h));
    const TensorId coefs = b.view(b.linear(mod, w.prediction_coefs), {B, S, K, K});
    const TensorId pm = b.matmul(b.view(h, {B, S, H, K}), coefs, {B, S, H, K});
    const int64_t pm_bytes = checked_mul(b.numel(pm), dtype_bytes(b.dtype(pm)));
    const TensorId summed = b.inplace_add(b.view(pm, {K, B, S, H}), h, pm_bytes);
    const TensorId predictions = bind(b.to(b.contiguous_copy(summed, {K, B, S, H}), hdt));
    const TensorId active = stream(predictions);  // predictions[altup_active_idx]
    const TensorId normed = bind(gemma_ple::norm(b, active, w.in_norm));
    // laurel(normed): linear_left, linear_right (bound until laurel returns), post_laurel_norm, + normed.
    const TensorId lr = b.linear(b.linear(normed, w.laurel_left), w.laurel_right);
    b.hold(lr);
    const TensorId laurel = bind(b.add(normed, gemma_ple::norm(b, lr, w.laurel_norm)));
    b.drop(lr);
    const auto& cs = w.sliding ? cs_sliding : cs_full;
    const Shape cshape{P, S, 1, s.head_dim};  // cos.unsqueeze(2) against the [B, S, heads, hd] views
    TensorId attn_weights = kNoTensor;
    TensorId a = attention(b, s, w, normed, b.view(cs.first, cshape), b.view(cs.second, cshape),
                           w.sliding ? masks.sliding : masks.full, kv, attn_weights);
    a = bind(gemma_ple::norm_rebinding(b, a, w.post_attn_norm));
    const TensorId gated = bind(b.add(active, a));
    const TensorId attn_laurel = bind(b.scalar_op("div_scalar", b.add(gated, laurel), false));
    const TensorId ffn_in = bind(gemma_ple::norm(b, attn_laurel, w.pre_ffn_norm));
    const TensorId ffw = bind(mlp(b, s, w, ffn_in));
    const TensorId ffw_norm = bind(gemma_ple::norm(b, ffw, w.post_ffn_norm));
    const TensorId activated = bind(b.add(attn_laurel, ffw_norm));
    // altup.correct(predictions, activated).
    const TensorId mod2 = router_modalities(b, w, activated);
    const TensorId diff = b.sub(activated, stream(predictions));  // innovation, rebound by .repeat(K, 1, 1, 1)
    const TensorId innovation = b.generic_one("repeat", {diff}, {K, B, S, H}, b.dtype(diff));
    const TensorId all_coefs = b.view(b.add_scalar(b.linear(mod2, w.correction_coefs)), {K, B, S, 1});
    TensorId corrected = b.inplace_add(b.mul(innovation, all_coefs), predictions);
    corrected = b.to(corrected, b.dtype(activated));  // .contiguous().type_as(activated)
    bind(corrected);
    // first_prediction: clone of stream 0, * correct_output_scale, the per-layer input gate and projection.
    TensorId first = b.contiguous_copy(stream(corrected), {B, S, H});
    if (s.gemma3n_altup_correct_scale) {
      const TensorId cos_p = w.correct_scale;
      first = b.to(b.mul(b.to(first, b.dtype(cos_p)), cos_p), b.dtype(first));
    }
    first = gemma_ple::activation(b, s.hidden_act, b.linear(first, w.ple_gate));
    first = b.linear(b.mul(first, pli), w.ple_proj);
    first = gemma_ple::norm_rebinding(b, first, w.ple_norm);
    // corrected_predictions[1:] += first_prediction: CopySlices (a fresh gradient of the whole stack, a clone of
    // the slice's part).
    const int64_t slice_bytes = checked_mul(checked_mul(K - 1, stream_numel), dtype_bytes(b.dtype(corrected)));
    h = b.inplace_add(corrected, first, slice_bytes);
    if (attn_weights != kNoTensor) b.drop(attn_weights);
    for (TensorId t : locals) b.drop(t);
    b.drop(layer_in);
    b.end_layer();
  }

  // Per-layer inputs to a single output: magnitudes matched to stream 0 through altup_unembed_projections (the
  // first loop's list is rebound once the new target magnitude exists), stacked, averaged over the streams.
  b.hold(h);
  const TensorId target2 = target_magnitude(b, stream(h));
  const TensorId h0 = stream(h);  // temp_hidden_states = [hidden_states[0]]
  b.hold(target2);
  b.drop(target);
  for (size_t i = 1; i < temp_hidden.size(); ++i) b.drop(temp_hidden[i]);
  TensorId unembed_var = kNoTensor;
  std::vector<TensorId> temp2{h0};
  for (int64_t i = 1; i < K; ++i) {
    const TensorId cur = magnitude_matched(b, stream(h), altup_unembed[static_cast<size_t>(i - 1)], dt,
                                           target2, unembed_var);
    b.hold(cur);
    temp2.push_back(cur);
  }
  const TensorId stacked = b.view(b.cat_list("stack", temp2, 0), {K, B, S, H});
  const TensorId mean = b.generic_one("mean_dim0", {stacked}, {B, S, H}, b.dtype(stacked));  // torch.mean(dim=0)
  b.drop(h);
  b.hold(mean);  // `hidden_states = self.norm(hidden_states)` rebinds only once the norm has returned
  const TensorId hn = gemma_ple::norm(b, mean, norm_w);
  for (TensorId t : {mean, inputs_embeds, ple, target2, altup_proj_var, unembed_var, masks.full, masks.sliding,
                     kv.k_sliding, kv.v_sliding, kv.k_full, kv.v_full})
    if (t != kNoTensor) b.drop(t);
  for (size_t i = 1; i < temp2.size(); ++i) b.drop(temp2[i]);
  for (TensorId t : rotary)
    if (t != kNoTensor) b.drop(t);
  TensorId (*logits_op)(GraphBuilder&, TensorId) = nullptr;
  if (s.final_logit_softcapping > 0.0) logits_op = &gemma_ple::softcap;
  // lm_head: as gemma4's (no tied head's construction temporary: the same PreTrainedModel tying path).
  const TensorId head = s.tie_word_embeddings ? b.tied_param("lm_head.weight", embed, emb_train)
                                              : b.param("lm_head.weight", {V, H}, emb_train);
  if (!inf)
    causal_lm_training_head(b, hn, head, ids, kNoTensor, logits_op);
  else
    inference_head(b, hn, head, kNoTensor, logits_op);
}

}  // namespace memplan
