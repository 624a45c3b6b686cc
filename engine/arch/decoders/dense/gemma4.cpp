// Gemma4ForCausalLM, gemma4_text (transformers 5.17 models/gemma4/modeling_gemma4.py; Gemma 4 E2B / E4B / 31B /
// 26B-A4B), training forward + causal-LM loss, or one inference pass (generate()'s prefill and decode steps). The
// multimodal gemma4 config is imported as its text_config's decoder (models/hf/import_gemma4.cpp).
//
// Stages of Gemma4TextModel.forward, each mirrored below with its Python bindings:
//   embed_tokens(ids) * embed_scale -> per-layer inputs (PLE, hidden_size_per_layer_input > 0):
//     get_per_layer_inputs: embed_tokens_per_layer(ids) * its embed_scale, reshaped [B, S, L, P];
//     project_per_layer_inputs: per_layer_model_projection(inputs_embeds) * hidden**-0.5, reshaped, RMSNorm over
//     P, (+ the token part) * 2**-0.5 -> position_ids -> causal_mask_mapping (create_causal_mask and
//     create_sliding_window_causal_mask, both every forward) -> one rotary call per layer type present (sliding:
//     default rope over head_dim; full: proportional rope over global_head_dim, inv_freq zero-padded, so cos / sin
//     cover the whole head) -> N x Gemma4TextDecoderLayer (layer i reads per_layer_inputs[:, :, i, :], a select
//     view whose backward writes a zero-filled [B, S, L, P] gradient) -> norm -> lm_head -> final softcapping.
//   Gemma4TextDecoderLayer: h + post_attention_layernorm(attn(input_layernorm(h))); then
//     m = mlp(pre_feedforward_layernorm(.)); with enable_moe_block also post_feedforward_layernorm_1(m) +
//     post_feedforward_layernorm_2(experts(pre_feedforward_layernorm_2(residual), router(residual))) (the router
//     and the experts read the residual stream, not the MLP's input); + post_feedforward_layernorm(.); with PLE
//     + post_per_layer_input_norm(per_layer_projection(act(per_layer_input_gate(h)) * per_layer_input)); finally
//     `hidden_states *= layer_scalar` in place (a [1] buffer).
//   Gemma4TextAttention: q_proj -> [B, S, nh, hd] view -> q_norm -> rotary (unsqueeze_dim=2) -> transpose; keys and
//     values (not on a KV-shared layer): k_proj, v_proj (attention_k_eq_v on a full layer: value_states is k_proj's
//     view) -> k_norm -> rotary -> transpose, v_norm (RMSNorm without weight) -> transpose; the cache update; the
//     last non-shared layer of each type stores its (key, value) in shared_kv_states, which the KV-shared layers
//     read instead of computing their own; attention with scaling 1.0; o_proj.
//   Gemma4RMSNorm: x.float(), x * pow(mean(x^2) + eps, -0.5), * weight.float() (no 1 + weight), .type_as(x).
#include "engine/arch/builders.h"
#include "engine/arch/decoders/parts/gemma_ple_parts.h"

#include <algorithm>
#include <string>
#include <vector>

#include "engine/arch/decoders/parts/llama_parts.h"
#include "engine/arch/decoders/parts/qwen_parts.h"
#include "engine/checked.h"
#include "engine/errors.h"

namespace memplan {

namespace {

using gemma_ple::SharedKv;

struct G4Layer {
  bool sliding = false, shared = false, store_kv = false;
  int64_t hd = 0, nkv = 0, inter = 0;
  TensorId q, qb = kNoTensor, q_norm, k_norm = kNoTensor, k = kNoTensor, kb = kNoTensor, v = kNoTensor,
              vb = kNoTensor, o, ob = kNoTensor;
  TensorId gate, up, down;
  TensorId in_norm, post_attn_norm, pre_ffn_norm, post_ffn_norm, layer_scalar;
  TensorId ple_gate = kNoTensor, ple_proj = kNoTensor, ple_norm = kNoTensor;
  TensorId router_proj = kNoTensor, router_scale = kNoTensor, expert_scale = kNoTensor, gate_up = kNoTensor,
           experts_down = kNoTensor, post_ffn_norm1 = kNoTensor, post_ffn_norm2 = kNoTensor,
           pre_ffn_norm2 = kNoTensor;
};

// Gemma4TextDecoderLayer.__init__ in construction order (the allocation order of the parameters): self_attn
// (q_proj, q_norm; unless KV-shared: k_norm, k_proj, v_proj (not on a k_eq_v full layer); o_proj), mlp (gate, up,
// down), the four norms, the layer_scalar buffer, the PLE gate / projection / norm, then with the MoE block the
// router (proj, scale, per_expert_scale), the experts (gate_up_proj [E, 2I, H], down_proj [E, H, I]) and
// post_feedforward_layernorm_1 / _2, pre_feedforward_layernorm_2.
G4Layer layer_params(GraphBuilder& b, const TransformerSpec& s, int64_t i, int64_t first_shared) {
  const std::string p = "layers." + std::to_string(i) + ".";
  const bool train = !layer_frozen(b.config(), i);
  const int64_t H = s.hidden_size, nh = s.num_heads;
  G4Layer w;
  w.sliding = layer_is_sliding(s, i);
  w.shared = i >= first_shared;
  w.hd = w.sliding ? s.head_dim : s.gemma4_global_head_dim;
  w.nkv = w.sliding ? s.num_kv_heads : s.gemma4_global_kv_heads;
  w.inter = s.intermediate_size * (s.gemma4_double_wide_mlp && w.shared && first_shared > 0 ? 2 : 1);
  auto lin = [&](const std::string& name, int64_t out, int64_t in, bool bias, TensorId& wt, TensorId& bt) {
    wt = b.param(p + name + ".weight", {out, in}, train);
    if (bias) bt = b.param(p + name + ".bias", {out}, train);
  };
  const bool ab = s.attention_bias;
  lin("self_attn.q_proj", nh * w.hd, H, ab, w.q, w.qb);
  w.q_norm = b.param(p + "self_attn.q_norm.weight", {w.hd}, train);
  if (!w.shared) {
    w.k_norm = b.param(p + "self_attn.k_norm.weight", {w.hd}, train);
    lin("self_attn.k_proj", w.nkv * w.hd, H, ab, w.k, w.kb);
    if (!(s.gemma4_k_eq_v && !w.sliding)) lin("self_attn.v_proj", w.nkv * w.hd, H, ab, w.v, w.vb);
  }
  lin("self_attn.o_proj", H, nh * w.hd, ab, w.o, w.ob);
  TensorId none = kNoTensor;
  lin("mlp.gate_proj", w.inter, H, false, w.gate, none);
  lin("mlp.up_proj", w.inter, H, false, w.up, none);
  lin("mlp.down_proj", H, w.inter, false, w.down, none);
  w.in_norm = b.param(p + "input_layernorm.weight", {H}, train);
  w.post_attn_norm = b.param(p + "post_attention_layernorm.weight", {H}, train);
  w.pre_ffn_norm = b.param(p + "pre_feedforward_layernorm.weight", {H}, train);
  w.post_ffn_norm = b.param(p + "post_feedforward_layernorm.weight", {H}, train);
  w.layer_scalar = b.buffer(p + "layer_scalar", {1}, b.param_dtype());
  if (s.gemma4_ple_size > 0) {
    const int64_t P = s.gemma4_ple_size;
    lin("per_layer_input_gate", P, H, false, w.ple_gate, none);
    lin("per_layer_projection", H, P, false, w.ple_proj, none);
    w.ple_norm = b.param(p + "post_per_layer_input_norm.weight", {H}, train);
  }
  if (s.gemma4_moe) {
    const int64_t E = s.num_experts, I = s.moe_intermediate_size;
    w.router_proj = b.param(p + "router.proj.weight", {E, H}, train);
    w.router_scale = b.param(p + "router.scale", {H}, train);
    w.expert_scale = b.param(p + "router.per_expert_scale", {E}, train);
    w.gate_up = b.param(p + "experts.gate_up_proj", {E, 2 * I, H}, train);
    w.experts_down = b.param(p + "experts.down_proj", {E, H, I}, train);
    w.post_ffn_norm1 = b.param(p + "post_feedforward_layernorm_1.weight", {H}, train);
    w.post_ffn_norm2 = b.param(p + "post_feedforward_layernorm_2.weight", {H}, train);
    w.pre_ffn_norm2 = b.param(p + "pre_feedforward_layernorm_2.weight", {H}, train);
  }
  return w;
}

// Gemma4TextAttention.forward on the normed input x.
TensorId attention(GraphBuilder& b, const TransformerSpec& s, const G4Layer& w, TensorId x, TensorId cos, TensorId sin,
                   TensorId mask, SharedKv& kv, TensorId& weights) {
  const auto& cfg = b.config();
  const bool inf = !b.training();
  const int64_t B = cfg.batch_size, S = inf ? b.pass().new_tokens : cfg.seq_len, nh = s.num_heads, hd = w.hd,
                nkv = w.nkv;
  // query_states: projection view, q_norm, rotary, transpose (each statement rebinding the variable).
  TensorId q = gemma_ple::norm_rebinding(b, b.view(b.linear(x, w.q, w.qb), {B, S, nh, hd}), w.q_norm);
  b.hold(q);
  TensorId qe = rope(b, q, cos, sin);
  b.drop(q);
  qe = b.view(qe, {B, nh, S, hd});
  b.hold(qe);
  TensorId k, v;
  if (w.shared) {
    k = w.sliding ? kv.k_sliding : kv.k_full;
    v = w.sliding ? kv.v_sliding : kv.v_full;
  } else {
    const TensorId kp = b.view(b.linear(x, w.k, w.kb), {B, S, nkv, hd});
    const TensorId vp = w.v != kNoTensor ? b.view(b.linear(x, w.v, w.vb), {B, S, nkv, hd}) : kp;
    b.hold(kp);  // key_states
    b.hold(vp);  // value_states (the same tensor under attention_k_eq_v)
    TensorId kn = gemma_ple::norm(b, kp, w.k_norm);
    if (vp != kp) b.drop(kp);
    b.hold(kn);
    k = b.view(rope(b, kn, cos, sin), {B, nkv, S, hd});
    b.drop(kn);
    b.hold(k);
    v = b.view(gemma_ple::norm(b, vp, kNoTensor), {B, nkv, S, hd});
    b.drop(vp);
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
    if (w.store_kv) {  // shared_kv_states[layer_type] = key_states, value_states
      b.hold(k);
      b.hold(v);
      (w.sliding ? kv.k_sliding : kv.k_full) = k;
      (w.sliding ? kv.v_sliding : kv.v_full) = v;
    }
  }
  const TensorId ctx = gemma_ple::attention_core(b, s, w.hd, w.nkv, qe, k, v, mask, weights);
  const TensorId out = b.linear(b.view(ctx, {B, S, nh * hd}), w.o, w.ob);
  b.drop(qe);
  if (!w.shared && !w.store_kv) {  // stored states stay bound in shared_kv_states
    b.drop(k);
    b.drop(v);
  }
  return out;
}

// Gemma4TextRouter.forward over flat [T, H]: norm (no weight), * scale * hidden**-0.5, proj, softmax in fp32, topk,
// top_k_weights /= their sum (in place: the node keeps a clone of the values; modelled as the out-of-place quotient,
// the same bytes), * per_expert_scale[top_k_index]. Returns (router_probabilities, top_k_weights, top_k_index),
// each held (the layer binds them until it returns).
QwenMoeRoute router(GraphBuilder& b, const TransformerSpec& s, const G4Layer& w, TensorId flat) {
  const int64_t T = b.shape(flat)[0], K = s.num_experts_per_tok;
  TensorId x = gemma_ple::norm(b, flat, kNoTensor);
  x = b.scalar_op("mul_scalar", b.mul(x, w.router_scale), false);
  const TensorId scores = b.linear(x, w.router_proj);
  b.hold(scores);  // expert_scores, bound until the router returns
  // softmax(expert_scores, dim=-1, dtype=torch.float32): one kernel writing fp32 probabilities from the 16-bit
  // scores (saved for its backward); under autocast softmax's fp32 policy casts the scores first.
  const TensorId sin = b.autocast() ? b.autocast_fp32(scores) : scores;
  const TensorId probs = b.generic({"softmax", {sin}, {{{T, s.num_experts}, DType::f32}}, {}, {0}, {}, {}})[0];
  b.hold(probs);
  auto top = b.generic({"topk", {probs}, {{{T, K}, b.dtype(probs)}, {{T, K}, DType::i64}}, {}, {1}, {}, {}});
  b.hold(top[1]);
  b.hold(top[0]);
  const TensorId sum = b.reduce_last("sum", top[0], false);
  const TensorId normed = b.binary("div", top[0], sum, true, true);
  b.drop(top[0]);
  b.hold(normed);
  const TensorId scale = b.generic_one("index", {w.expert_scale, top[1]}, {T, K}, b.dtype(w.expert_scale), {1});
  const TensorId weights = b.mul(normed, scale);
  b.hold(weights);
  b.drop(normed);
  b.drop(scores);
  return {probs, weights, top[1]};
}

}  // namespace

void build_gemma4(GraphBuilder& b, const TransformerSpec& s) {
  const auto& cfg = b.config();
  const bool inf = !b.training();
  const int64_t B = cfg.batch_size, S = inf ? b.pass().new_tokens : cfg.seq_len, H = s.hidden_size,
                V = s.vocab_size, L = s.num_layers, Pd = s.gemma4_ple_size;
  if (s.sliding_window <= 0)
    throw InputError("model.sliding_window", std::to_string(s.sliding_window),
                     "must be positive (create_sliding_window_causal_mask raises without a window)");
  if (static_cast<int64_t>(s.sliding_layers.size()) != L)
    throw InputError("model.sliding_layers", std::to_string(s.sliding_layers.size()) + " entries",
                     "must have one entry per layer (" + std::to_string(L) + ")");
  if (s.head_dim % 2 != 0 || s.gemma4_global_head_dim % 2 != 0 || s.gemma4_global_head_dim <= 0 ||
      s.gemma4_global_kv_heads <= 0 || s.num_heads % s.gemma4_global_kv_heads != 0)
    throw InputError("model.gemma4_global_head_dim", std::to_string(s.gemma4_global_head_dim),
                     "gemma4 needs even head dims and global KV heads dividing the heads");
  if (s.gemma4_kv_shared_layers < 0 || s.gemma4_kv_shared_layers >= L)
    throw InputError("model.gemma4_kv_shared_layers", std::to_string(s.gemma4_kv_shared_layers),
                     "must be in [0, num_layers)");
  if (s.gemma4_moe && (s.num_experts <= 0 || s.num_experts_per_tok <= 0 || s.num_experts_per_tok > s.num_experts ||
                       s.moe_intermediate_size <= 0))
    throw InputError("model.num_experts", std::to_string(s.num_experts),
                     "gemma4's MoE block needs num_experts >= top_k_experts > 0 and moe_intermediate_size");
  const bool emb_train = !cfg.freeze_embeddings;
  const int64_t first_shared = L - s.gemma4_kv_shared_layers;

  // Parameters in construction order: embed_tokens (+ its embed_scale buffer), the layers, norm, then the PLE
  // modules (Gemma4TextModel.__init__ creates them after the rotary embedding).
  hf_construction_scalar(b);
  const TensorId embed = b.param("embed_tokens.weight", {V, H}, emb_train);
  b.buffer("embed_tokens.embed_scale", {}, b.param_dtype());
  std::vector<G4Layer> layers;
  layers.reserve(static_cast<size_t>(L));
  for (int64_t i = 0; i < L; ++i) layers.push_back(layer_params(b, s, i, first_shared));
  gemma_ple::mark_kv_sharing(layers, s.gemma4_kv_shared_layers, /*store_without_sharing=*/false);
  const TensorId norm_w = b.param("norm.weight", {H}, emb_train);
  TensorId ple_embed = kNoTensor, ple_model_proj = kNoTensor, ple_proj_norm = kNoTensor;
  if (Pd > 0) {
    ple_embed = b.param("embed_tokens_per_layer.weight", {s.gemma4_ple_vocab, L * Pd}, emb_train);
    b.buffer("embed_tokens_per_layer.embed_scale", {}, b.param_dtype());
    ple_model_proj = b.param("per_layer_model_projection.weight", {L * Pd, H}, emb_train);
    ple_proj_norm = b.param("per_layer_projection_norm.weight", {Pd}, emb_train);
  }

  const TensorId ids = b.input({B, S}, DType::i64);
  const int64_t P = inf && b.pass().from_generate ? B : 1;  // position_ids rows (generate: from the mask)
  if (P > 1) b.input({B, S}, DType::i64);
  // Gemma4TextScaledWordEmbedding: embedding(ids) * embed_scale.to(weight dtype) (a 0-dim buffer).
  const TensorId inputs_embeds = b.scalar_op("mul", b.embedding(ids, embed), false);
  b.hold(inputs_embeds);
  const DType dt = b.dtype(inputs_embeds);
  TensorId ple = kNoTensor;
  if (Pd > 0) {
    // get_per_layer_inputs: the packed table's rows * sqrt(P), viewed [B, S, L, P]; bound as per_layer_inputs
    // until project_per_layer_inputs returns and rebinds it.
    const TensorId tok = b.view(b.scalar_op("mul", b.embedding(ids, ple_embed), false), {B, S, L, Pd});
    b.hold(tok);
    TensorId proj = b.scalar_op("mul_scalar", b.linear(inputs_embeds, ple_model_proj), false);
    // per_layer_projection = norm(...) stays bound until the function returns, after the scaled sum.
    proj = gemma_ple::norm_rebinding(b, b.view(proj, {B, S, L, Pd}), ple_proj_norm);
    b.hold(proj);
    ple = b.scalar_op("mul_scalar", b.add(proj, tok), false);
    b.drop(proj);
    b.drop(tok);
    b.hold(ple);
  }

  const CausalMasks masks = full_and_sliding_masks(b, s, true, true, dt);
  // position_embeddings[layer_type] for each type in set(layer_types), cast to the hidden dtype.
  bool any_sliding = false, any_full = false;
  for (const G4Layer& w : layers) (w.sliding ? any_sliding : any_full) = true;
  std::pair<TensorId, TensorId> cs_sliding{kNoTensor, kNoTensor}, cs_full{kNoTensor, kNoTensor};
  if (any_sliding) cs_sliding = rotary_cos_sin(b, P, S, s.head_dim, dt);
  if (any_full) cs_full = rotary_cos_sin(b, P, S, s.gemma4_global_head_dim, dt);
  const std::vector<TensorId> rotary = {cs_sliding.first, cs_sliding.second, cs_full.first, cs_full.second};
  for (TensorId t : rotary)
    if (t != kNoTensor) b.hold(t);

  SharedKv kv;
  TensorId h = inputs_embeds;
  for (int64_t i = 0; i < L; ++i) {
    const G4Layer& w = layers[static_cast<size_t>(i)];
    // per_layer_inputs[:, :, i, :]: SelectBackward writes the slice's gradient into zeros of the whole tensor.
    const TensorId pli = Pd > 0 ? b.view_copying_grad(ple, {B, S, Pd}, b.info(ple).bytes) : kNoTensor;
    b.begin_layer("layers." + std::to_string(i), layer_checkpointed(cfg, i));
    const TensorId layer_in = h;
    b.hold(layer_in);  // residual
    std::vector<TensorId> locals;  // bound until the layer returns
    const auto& cs = w.sliding ? cs_sliding : cs_full;
    // cos.unsqueeze(2): [P, S, 1, hd] against the [B, S, heads, hd] views
    const Shape cshape{P, S, 1, w.hd};
    const TensorId cos = b.view(cs.first, cshape), sin = b.view(cs.second, cshape);
    const TensorId n1 = gemma_ple::norm(b, h, w.in_norm);
    b.hold(n1);
    TensorId attn_weights = kNoTensor;
    TensorId a = attention(b, s, w, n1, cos, sin, w.sliding ? masks.sliding : masks.full, kv, attn_weights);
    b.drop(n1);
    a = gemma_ple::norm_rebinding(b, a, w.post_attn_norm);
    const TensorId h1 = b.add(h, a);
    const TensorId n2 = gemma_ple::norm(b, h1, w.pre_ffn_norm);
    b.hold(n2);
    // down_proj(act_fn(gate_proj(x)) * up_proj(x)), evaluated left to right (autograd then runs up_proj's
    // backward before the activation's: the later node first).
    const TensorId act = gemma_ple::activation(b, s.hidden_act, b.linear(n2, w.gate));
    TensorId m = b.linear(b.mul(act, b.linear(n2, w.up)), w.down);
    b.drop(n2);
    if (s.gemma4_moe) {
      b.hold(m);  // hidden_states (the MLP's output) until `hidden_states = hidden_states_1 + hidden_states_2`
      const TensorId m1 = gemma_ple::norm(b, m, w.post_ffn_norm1);
      b.hold(m1);
      locals.push_back(m1);
      const TensorId flat = b.view(h1, {B * S, H});
      if (attn_weights != kNoTensor) {  // `_` rebinds to the router's probabilities
        b.drop(attn_weights);
        attn_weights = kNoTensor;
      }
      const QwenMoeRoute route = router(b, s, w, flat);
      locals.push_back(route.logits);
      locals.push_back(route.weights);
      locals.push_back(route.selected);
      const TensorId x2 = gemma_ple::norm(b, flat, w.pre_ffn_norm2);
      b.hold(x2);  // hidden_states_2 until the experts return
      const TensorId e = qwen_moe_experts(b, s, w.gate_up, w.experts_down, x2, route);
      b.drop(x2);
      const TensorId e2 = gemma_ple::norm_rebinding(b, b.view(e, {B, S, H}), w.post_ffn_norm2);
      b.hold(e2);
      locals.push_back(e2);
      const TensorId sum = b.add(m1, e2);
      b.drop(m);
      m = sum;
    }
    m = gemma_ple::norm_rebinding(b, m, w.post_ffn_norm);
    h = b.add(h1, m);
    if (Pd > 0) {
      TensorId g = gemma_ple::activation(b, s.hidden_act, b.linear(h, w.ple_gate));
      g = b.linear(b.mul(g, pli), w.ple_proj);
      g = gemma_ple::norm_rebinding(b, g, w.ple_norm);
      h = b.add(h, g);
    }
    h = b.inplace_fresh_grad("mul_", h, {w.layer_scalar});  // hidden_states *= self.layer_scalar
    if (attn_weights != kNoTensor) b.drop(attn_weights);
    for (TensorId t : locals) b.drop(t);
    if (layer_in != inputs_embeds) b.drop(layer_in);
    b.end_layer();
  }
  b.hold(h);  // `hidden_states = self.norm(hidden_states)` rebinds only once the norm has returned
  const TensorId hn = gemma_ple::norm(b, h, norm_w);
  for (TensorId t : {h, inputs_embeds, ple, masks.full, masks.sliding, kv.k_sliding, kv.v_sliding, kv.k_full,
                     kv.v_full})
    if (t != kNoTensor) b.drop(t);
  for (TensorId t : rotary)
    if (t != kNoTensor) b.drop(t);
  TensorId (*logits_op)(GraphBuilder&, TensorId) = nullptr;
  if (s.final_logit_softcapping > 0.0) logits_op = &gemma_ple::softcap;
  // lm_head: causal_lm_tail's statements without its tied head's construction temporary (the whole-run recordings
  // show no lm_head-sized allocation at construction).
  const TensorId head = s.tie_word_embeddings ? b.tied_param("lm_head.weight", embed, emb_train) : b.param("lm_head.weight", {V, H}, emb_train);
  if (!inf)
    causal_lm_training_head(b, hn, head, ids, kNoTensor, logits_op);
  else
    inference_head(b, hn, head, kNoTensor, logits_op);
}

}  // namespace memplan
