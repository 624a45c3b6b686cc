// MllamaForConditionalGeneration and MllamaForCausalLM (transformers 5.17 models/mllama/modeling_mllama.py, the
// installed file read): a training step with images (the harness plugin calibrate/harness_kinds/mllama.py), a
// text-only training step (no pixel_values: the cross-attention layers are skipped), or one text-only inference
// pass.
//
// Stages, as the model runs them (B samples, k = images_per_sample, T = max_num_tiles, C channels, R = image_size,
// P = patch_size, n = (R / P)^2 patches, N = n + 1 with the class position, L = N rounded up to a multiple of 8,
// Hv the vision width, H the text width):
//   Batch: input_ids [B, S], pixel_values [B, k, T, C, R, R] in the model's dtype (the processor pads every image to
//     max_num_tiles), aspect_ratio_ids [B, k], aspect_ratio_mask [B, k, T], cross_attention_mask [B, S, k, T]
//     (all int64), labels [B, S] (the <|image|> tokens set to -100). Text only: input_ids, also the labels.
//   MllamaVisionModel.forward (its locals all bound until it returns): the bias-free patch Conv2d over the B*k*T
//     tiles (patch_embeds), flatten(2).transpose(1, 2) (views); pre_tile_positional_embedding: embedding(ids)
//     [Bk, 1, T * Hv] reshaped [Bk, T, 1, Hv], times gate.tanh(), added (a fresh [Bk, T, n, Hv], promoted to the
//     fp32 embedding's dtype under autocast); cat(class_embedding.expand, h) [BkT, N, Hv];
//     gated_positional_embedding: (1 - gate.tanh()) * embedding [N, Hv], added; tile_embedding(ids) [Bk, 1,
//     T * N * Hv] reshaped, times gate.tanh(), added; layernorm_pre; F.pad to L positions; the aspect-ratio mask
//     (_prepare_aspect_ratio_attention_mask: [Bk, T, 1, 1] to the model dtype, repeat to [Bk, T, L, 1], 1 - m,
//     then m @ m^T * finfo.min: an additive [Bk, 1, T * L, T * L] mask, 16-bit under autocast since matmul
//     runs there); the local transformer over [Bk, T * L, Hv] (num_hidden_layers MllamaVisionEncoderLayers, CLIP's
//     statements: clip_parts.h, every output kept in the encoder's hidden_states tuple), layernorm_post,
//     post_tile_positional_embedding, the global transformer (num_global_layers gated layers: gate.tanh() times
//     the attention's and the MLP's output), the padding sliced off and reshaped (views), the intermediate layer
//     outputs stacked [Bk, T * L, Hv, m] (a fresh tensor), sliced and reshaped (views), and cat along the
//     features: [B, k, T, N, Hv * (1 + m)], which MllamaModel binds (vision_outputs) until it returns.
//   multi_modal_projector (Linear with bias) to [B, k, T, N, H], reshaped [B * k * T, N, H]: the cross-attention
//     states.
//   _prepare_cross_attention_mask (dtype = the model's): repeat_interleave(N, dim=3) (int64 [B, S, k, T * N]),
//     1.0 - m (fp32), .to(dtype), masked_fill(m.to(bool), finfo.min) (fresh), the full-row mask (!= min, any,
//     type_as) [B, 1, S, 1], m *= row mask in place; then both indexed with current_pos (fresh copies).
//   MllamaTextModel.forward: embed_tokens (vocab_size + 8 rows), the Llama layers (llama_parts.h, llama_text_model)
//     and, at cross_attention_layers, MllamaCrossAttentionDecoderLayer: input_layernorm; q_proj, view, transpose,
//     q_norm (RMSNorm over head_dim: fp32 out under autocast, the weight's dtype); k_proj / v_proj over the
//     cross-attention states viewed [B, k * T * N, Hkv, D], k_norm; attention with the cross mask (SDPA: a mask
//     disables enable_gqa, so repeat_kv copies K and V; autocast casts the mask, v, k, q to 16-bit; eager: the
//     fp32 mask added to the scores promotes them); o_proj; residual + cross_attn_attn_gate.tanh() * h;
//     post_attention_layernorm, the SwiGLU MLP, full_text_row_masked_out_mask[:, 0] * h, residual +
//     cross_attn_mlp_gate.tanh() * h. The final norm, lm_head over every position, ForCausalLMLoss (logits
//     .float()) against the labels.
//   Text only: no vision forward, no masks, the cross-attention layers skipped (their parameters, the vision
//     model's and the projector's get no gradient).
// Checkpointing wraps the text decoder layers only (GradientCheckpointingLayer); MllamaVisionEncoderLayer is a
// plain nn.Module. LoRA (peft's q_proj / v_proj match the vision attention, the self- and the cross-attention):
// the adapters come from GraphBuilder::linear.
#include <algorithm>
#include <tuple>

#include "engine/arch/builders.h"
#include "engine/arch/decoders/parts/llama_parts.h"
#include "engine/arch/vlm/clip_parts.h"
#include "engine/checked.h"
#include "engine/errors.h"

namespace memplan {

namespace {

struct Geometry {
  int64_t k = 0, tiles = 0, side = 0, n = 0, N = 0, L = 0, images = 0;
};

struct VisionParams {
  clip::Tower t;
  TensorId patch = kNoTensor, cls = kNoTensor;
  TensorId pos_gate = kNoTensor, pos_emb = kNoTensor, tile_emb = kNoTensor;
  TensorId pre_emb = kNoTensor, pre_gate = kNoTensor, post_emb = kNoTensor, post_gate = kNoTensor;
  TensorId ln_pre_w = kNoTensor, ln_pre_b = kNoTensor, ln_post_w = kNoTensor, ln_post_b = kNoTensor;
  std::vector<clip::LayerParams> local, global;
};

struct CrossParams {
  TensorId q = kNoTensor, k = kNoTensor, v = kNoTensor, o = kNoTensor, q_norm = kNoTensor, k_norm = kNoTensor;
  TensorId in_norm = kNoTensor, attn_gate = kNoTensor, post_norm = kNoTensor, mlp_gate = kNoTensor;
  FfnParams ffn;
};

// MllamaVisionEncoderLayer's parameters (gated: gate_attn, gate_ffn after the modules in __init__).
clip::LayerParams vision_layer_params(GraphBuilder& b, const clip::Tower& t, const std::string& p, bool gated,
                                      bool train) {
  const int64_t H = t.hidden, I = t.inter;
  clip::LayerParams w;
  w.q = clip::linear_params(b, p + "self_attn.q_proj", H, H, false, train);
  w.k = clip::linear_params(b, p + "self_attn.k_proj", H, H, false, train);
  w.v = clip::linear_params(b, p + "self_attn.v_proj", H, H, false, train);
  w.o = clip::linear_params(b, p + "self_attn.o_proj", H, H, false, train);
  w.fc1 = clip::linear_params(b, p + "mlp.fc1", I, H, true, train);
  w.fc2 = clip::linear_params(b, p + "mlp.fc2", H, I, true, train);
  w.ln1_w = b.param(p + "input_layernorm.weight", {H}, train);
  w.ln1_b = b.param(p + "input_layernorm.bias", {H}, train);
  w.ln2_w = b.param(p + "post_attention_layernorm.weight", {H}, train);
  w.ln2_b = b.param(p + "post_attention_layernorm.bias", {H}, train);
  if (gated) {
    w.gate_attn = b.param(p + "gate_attn", {1}, train);
    w.gate_ffn = b.param(p + "gate_ffn", {1}, train);
  }
  return w;
}

// A module whose forward never runs (a text-only step): no .grad, and LoRA's adapters still injected.
void unreached_vision_layer(GraphBuilder& b, const clip::LayerParams& l) {
  for (const clip::Lin* lin : {&l.q, &l.k, &l.v, &l.o, &l.fc1, &l.fc2}) {
    b.unreached_linear(lin->w);
    if (lin->b != kNoTensor) b.unreached_param(lin->b);
  }
  for (TensorId t : {l.ln1_w, l.ln1_b, l.ln2_w, l.ln2_b, l.gate_attn, l.gate_ffn})
    if (t != kNoTensor) b.unreached_param(t);
}

VisionParams vision_params(GraphBuilder& b, const TransformerSpec& s, const Geometry& g, bool train) {
  VisionParams w;
  w.t = clip::vision_tower(s);
  w.t.float_mask = true;
  const int64_t Hv = w.t.hidden, C = s.vision_num_channels, P = s.vision_patch_size, T = s.mllama_max_tiles,
                A = s.mllama_aspect_ratios + 1;
  const std::string p = "vision_model.";
  // MllamaVisionModel.__init__ order: patch_embedding, class_embedding, gated_positional_embedding (gate,
  // embedding, tile_embedding), pre / post tile embeddings (embedding, gate), layernorm_pre / _post, transformer,
  // global_transformer. Built on the CPU and moved (weights_load to_device), Module._apply moves each module's
  // children before its own parameters: the tile embedding before the gate and the position table, the class
  // embedding after the global transformer.
  const bool on_device = b.config().weights_load == WeightsLoad::on_device;
  const Shape tile_shape{A, checked_mul(checked_mul(T, g.N, "max_num_tiles"), Hv, "max_num_tiles")};
  w.patch = b.param(p + "patch_embedding.weight", {Hv, C, P, P}, train);
  if (on_device) w.cls = b.param(p + "class_embedding", {Hv}, train);
  if (!on_device) w.tile_emb = b.param(p + "gated_positional_embedding.tile_embedding.weight", tile_shape, train);
  w.pos_gate = b.param(p + "gated_positional_embedding.gate", {1}, train);
  w.pos_emb = b.param(p + "gated_positional_embedding.embedding", {g.N, Hv}, train);
  if (on_device) w.tile_emb = b.param(p + "gated_positional_embedding.tile_embedding.weight", tile_shape, train);
  w.pre_emb = b.param(p + "pre_tile_positional_embedding.embedding.weight", {A, T * Hv}, train);
  w.pre_gate = b.param(p + "pre_tile_positional_embedding.gate", {1}, train);
  w.post_emb = b.param(p + "post_tile_positional_embedding.embedding.weight", {A, T * Hv}, train);
  w.post_gate = b.param(p + "post_tile_positional_embedding.gate", {1}, train);
  w.ln_pre_w = b.param(p + "layernorm_pre.weight", {Hv}, train);
  w.ln_pre_b = b.param(p + "layernorm_pre.bias", {Hv}, train);
  w.ln_post_w = b.param(p + "layernorm_post.weight", {Hv}, train);
  w.ln_post_b = b.param(p + "layernorm_post.bias", {Hv}, train);
  for (int64_t i = 0; i < s.vision_num_layers; ++i)
    w.local.push_back(vision_layer_params(b, w.t, p + "transformer.layers." + std::to_string(i) + ".", false, train));
  for (int64_t i = 0; i < s.mllama_global_layers; ++i)
    w.global.push_back(
        vision_layer_params(b, w.t, p + "global_transformer.layers." + std::to_string(i) + ".", true, train));
  if (!on_device) w.cls = b.param(p + "class_embedding", {Hv}, train);
  if (!train && b.training() && b.config().lora.enabled()) {
    for (const auto& l : w.local) unreached_vision_layer(b, l);
    for (const auto& l : w.global) unreached_vision_layer(b, l);
  }
  return w;
}

CrossParams cross_params(GraphBuilder& b, const TransformerSpec& s, const std::string& p, bool train) {
  const int64_t H = s.hidden_size, I = s.intermediate_size, nh = s.num_heads, nkv = s.num_kv_heads, hd = s.head_dim;
  CrossParams w;
  // MllamaCrossAttentionDecoderLayer.__init__: cross_attn (q, k, v, o, q_norm, k_norm), input_layernorm,
  // cross_attn_attn_gate, mlp, post_attention_layernorm, cross_attn_mlp_gate.
  w.q = b.param(p + "cross_attn.q_proj.weight", {nh * hd, H}, train);
  w.k = b.param(p + "cross_attn.k_proj.weight", {nkv * hd, H}, train);
  w.v = b.param(p + "cross_attn.v_proj.weight", {nkv * hd, H}, train);
  w.o = b.param(p + "cross_attn.o_proj.weight", {H, nh * hd}, train);
  w.q_norm = b.param(p + "cross_attn.q_norm.weight", {hd}, train);
  w.k_norm = b.param(p + "cross_attn.k_norm.weight", {hd}, train);
  // Moved by Module._apply (to_device), the layer's own gates come after its children.
  const bool on_device = b.config().weights_load == WeightsLoad::on_device;
  w.in_norm = b.param(p + "input_layernorm.weight", {H}, train);
  if (on_device) w.attn_gate = b.param(p + "cross_attn_attn_gate", {1}, train);
  w.ffn.gate = b.param(p + "mlp.gate_proj.weight", {I, H}, train);
  w.ffn.up = b.param(p + "mlp.up_proj.weight", {I, H}, train);
  w.ffn.down = b.param(p + "mlp.down_proj.weight", {H, I}, train);
  w.post_norm = b.param(p + "post_attention_layernorm.weight", {H}, train);
  if (!on_device) w.attn_gate = b.param(p + "cross_attn_attn_gate", {1}, train);
  w.mlp_gate = b.param(p + "cross_attn_mlp_gate", {1}, train);
  if (!train && b.training()) {  // requires_grad, never reached (a text-only step)
    for (TensorId t : {w.q, w.k, w.v, w.o, w.ffn.gate, w.ffn.up, w.ffn.down}) b.unreached_linear(t);
    for (TensorId t : {w.q_norm, w.k_norm, w.in_norm, w.attn_gate, w.post_norm, w.mlp_gate}) b.unreached_param(t);
  }
  return w;
}

// MllamaPrecomputedAspectRatioEmbedding (is_gated): embedding(ids) reshaped [Bk, T, 1, Hv], times gate.tanh(),
// added to h [Bk, T, *, Hv]. The locals die as it returns.
TensorId aspect_ratio_embedding(GraphBuilder& b, TensorId h, TensorId ids, TensorId emb, TensorId gate, int64_t Bk,
                                int64_t T, int64_t Hv) {
  const TensorId e = b.view(b.embedding(ids, emb), {Bk, T, 1, Hv});
  const TensorId ge = b.mul(e, b.unary("tanh", gate, false, true));
  return b.add(h, ge);
}

// MllamaVisionModel.forward on pixel_values [B, k, T, C, R, R]; returns the concatenated features
// [B, k, T, N, Hv * (1 + m)] (held: MllamaModel's vision_outputs).
TensorId vision_forward(GraphBuilder& b, const TransformerSpec& s, const VisionParams& w, const Geometry& g,
                        TensorId pixels, TensorId ar_ids, TensorId ar_mask) {
  const auto& cfg = b.config();
  const int64_t B = cfg.batch_size, k = g.k, T = g.tiles, Bk = g.images, Hv = w.t.hidden, n = g.n, N = g.N,
                L = g.L, C = s.vision_num_channels, R = s.vision_image_size, P = s.vision_patch_size,
                BkT = checked_mul(Bk, T, "images_per_sample"), TL = checked_mul(T, L, "max_num_tiles");
  const int64_t m = static_cast<int64_t>(s.mllama_intermediate_layers.size());
  std::vector<TensorId> locals;  // the forward's locals: released as it returns
  const TensorId pv = b.view(pixels, {BkT, C, R, R});
  const TensorId ids = b.view(ar_ids, {Bk, 1});
  // patch_embeds stays bound until the forward returns; hidden_state is its flatten(2).transpose(1, 2) view.
  const TensorId patch_embeds = b.conv2d(pv, w.patch, kNoTensor, P, 0, {BkT, Hv, g.side, g.side});
  b.hold(patch_embeds);
  locals.push_back(patch_embeds);
  TensorId h = b.view(patch_embeds, {Bk, T, n, Hv});
  h = aspect_ratio_embedding(b, h, ids, w.pre_emb, w.pre_gate, Bk, T, Hv);
  // apply_class_embedding: cat([class_embedding.expand(BkT, 1, Hv), h], dim=1).
  h = b.cat("cat", {b.view(w.cls, {BkT, 1, Hv}), b.view(h, {BkT, n, Hv})}, 1);
  h = b.view(h, {Bk, T, N, Hv});
  {  // MllamaPrecomputedPositionEmbedding
    const TensorId one_minus = b.scalar_op("rsub_scalar", b.unary("tanh", w.pos_gate, false, true), false);
    const TensorId gated_pos = b.mul(one_minus, w.pos_emb);
    h = b.add(h, b.view(gated_pos, {1, 1, N, Hv}));
    const TensorId tile = b.view(b.embedding(ids, w.tile_emb), {Bk, T, N, Hv});
    const TensorId gated_tile = b.mul(b.unary("tanh", w.pos_gate, false, true), tile);
    h = b.add(h, gated_tile);
  }
  h = b.layer_norm(h, w.ln_pre_w, w.ln_pre_b);
  // F.pad to L positions: a fresh tensor; its backward crops the gradient (a fresh copy).
  h = b.generic_one("constant_pad_nd", {h}, {Bk, T, L, Hv}, b.dtype(h));
  // _prepare_aspect_ratio_attention_mask, in the model's dtype (matmul runs 16-bit under autocast).
  const DType model_dt = b.param_dtype();
  TensorId am = b.to(b.view(ar_mask, {Bk, T, 1, 1}), model_dt);
  am = b.generic_one("repeat", {am}, {Bk, T, L, 1}, model_dt);
  am = b.generic_one("rsub_scalar", {am}, {Bk, T, L, 1}, model_dt);
  TensorId mm_a = b.view(am, {Bk, TL, 1});
  const DType mask_dt = b.autocast() ? b.low_dtype() : model_dt;
  if (b.autocast()) mm_a = b.generic_one("to_copy", {mm_a}, {Bk, TL, 1}, mask_dt);  // autocast casts other, self
  TensorId mask = b.generic_one("bmm", {mm_a}, {Bk, TL, TL}, mask_dt);
  mask = b.generic_one("mul_scalar", {mask}, {Bk, 1, TL, TL}, mask_dt);
  b.hold(mask);
  locals.push_back(mask);

  h = b.view(h, {Bk, TL, Hv});
  // The local transformer: its hidden_states tuple (every layer's output) lives until the forward returns.
  const std::string lp = "vision_model.transformer.layers.";
  std::vector<TensorId> local_out;
  for (int64_t i = 0; i < s.vision_num_layers; ++i) {
    h = clip::encoder_layer(b, w.t, w.local[static_cast<size_t>(i)], lp + std::to_string(i), false, h, mask, false);
    b.hold(h);
    local_out.push_back(h);
    locals.push_back(h);
  }
  h = b.layer_norm(h, w.ln_post_w, w.ln_post_b);
  h = aspect_ratio_embedding(b, b.view(h, {Bk, T, L, Hv}), ids, w.post_emb, w.post_gate, Bk, T, Hv);
  h = b.view(h, {Bk, TL, Hv});
  const std::string gp = "vision_model.global_transformer.layers.";
  for (int64_t i = 0; i < s.mllama_global_layers; ++i) {
    h = clip::encoder_layer(b, w.t, w.global[static_cast<size_t>(i)], gp + std::to_string(i), false, h, mask, false);
    b.hold(h);  // global_output's hidden_states tuple
    locals.push_back(h);
  }
  // x.reshape(Bk, T, L, d)[:, :, :slice_index].reshape(B, k, T, N, d): with padding (L > N) the slice's view
  // (its backward a fresh zero-filled full-size gradient), then a view again: the last reshape only splits dim 0,
  // which the sliced strides allow (whole-run bf16 streams, eager and sdpa: torch.cat's output is the first
  // allocation after the stack, no copy of either slice). Without padding, views.
  auto unpad = [&](TensorId x, int64_t d) {
    if (L == N) return b.view(x, {B, k, T, N, d});
    return b.view(b.view_copying_grad(x, {Bk, T, N, d}, b.info(x).bytes), {B, k, T, N, d});
  };
  const TensorId last = unpad(h, Hv);
  // torch.stack(dim=-1) of the intermediate outputs (a fresh [Bk, T * L, Hv, m]), then the same slice.
  std::vector<TensorId> picked;
  for (int64_t i : s.mllama_intermediate_layers) picked.push_back(b.view(local_out[static_cast<size_t>(i)], {Bk, TL, Hv, 1}));
  const TensorId inter = unpad(b.cat_list("stack", picked, 3), Hv * m);
  const TensorId out = b.cat("cat", {last, inter}, 4);
  b.hold(out);
  for (TensorId t : locals) b.drop(t);
  return out;
}

// _prepare_cross_attention_mask and the current_pos indexing: returns (cross_attention_mask [B, 1, S, k*T*N],
// full_text_row_masked_out_mask [B, 1, S, 1]), both held (MllamaModel's locals).
std::pair<TensorId, TensorId> cross_masks(GraphBuilder& b, const Geometry& g, TensorId cam) {
  const auto& cfg = b.config();
  const int64_t B = cfg.batch_size, S = cfg.seq_len, KN = checked_mul(checked_mul(g.k, g.tiles, "images"), g.N,
                                                                       "images");
  const DType dt = b.param_dtype();
  const Shape full{B, 1, S, KN};
  const TensorId rep = b.generic_one("repeat_interleave", {cam}, full, DType::i64);
  b.hold(rep);  // cross_attention_mask until masked_fill rebinds it
  // 1.0 - mask: the default float dtype, the model's where the run set it (a 16-bit model built with its dtype as
  // the default), fp32 under amp; .to(dtype) then copies only under amp (whole-run bf16 stream: one [B, 1, S, KN]
  // bf16 allocation at __rsub__, none at .to).
  TensorId inv = b.generic_one("rsub_scalar", {rep}, full, b.param_dtype());
  inv = b.to(inv, dt);
  b.hold(inv);  // inverted_cross_attn_mask until the function returns
  const TensorId as_bool = b.generic_one("to_copy", {inv}, full, DType::boolean);
  TensorId cm = b.generic_one("masked_fill", {inv, as_bool}, full, dt);
  b.drop(rep);
  const TensorId ne = b.generic_one("ne_scalar", {cm}, full, DType::boolean);
  const TensorId any = b.generic_one("any", {ne}, {B, 1, S}, DType::boolean);
  const TensorId row = b.generic_one("type_as", {any}, {B, 1, S, 1}, dt);
  b.hold(row);
  b.hold(cm);  // `cross_attention_mask *= full_text_row_masked_out_mask`: in place, no allocation
  b.drop(inv);
  // cross_attention_mask[:, :, current_pos]: advanced indexing copies (current_pos an int64 [S]).
  const TensorId pos = b.generic_one("arange", {}, {S}, DType::i64);
  const TensorId cm2 = b.generic_one("index", {cm, pos}, full, dt);
  b.hold(cm2);
  b.drop(cm);
  const TensorId row2 = b.generic_one("index", {row, pos}, {B, 1, S, 1}, dt);
  b.hold(row2);
  b.drop(row);
  return {cm2, row2};
}

// MllamaTextCrossAttention.forward on the normed x [B, S, H] against the cross-attention states [BkT, N, H].
// `weights`: eager attention's probabilities, held (bound to attn_weights until the layer returns); else kNoTensor.
TensorId cross_attention(GraphBuilder& b, const TransformerSpec& s, const CrossParams& w, TensorId x, TensorId states,
                         TensorId mask, int64_t KN, TensorId& weights) {
  const auto& cfg = b.config();
  const int64_t B = cfg.batch_size, S = cfg.seq_len, nh = s.num_heads, nkv = s.num_kv_heads, hd = s.head_dim;
  const bool eager = cfg.attn == AttnImpl::eager;
  std::vector<TensorId> locals;
  TensorId q = b.view_copying_grad(b.linear(x, w.q), {B, nh, S, hd});
  b.hold(q);
  TensorId qn = rms_norm(b, q, w.q_norm);
  b.hold(qn);
  b.drop(q);
  TensorId kp = b.view_copying_grad(b.linear(states, w.k), {B, nkv, KN, hd});
  b.hold(kp);
  const TensorId vp = b.linear(states, w.v);
  const TensorId v = b.view_copying_grad(vp, {B, nkv, KN, hd});
  b.hold(v);
  TensorId kn = rms_norm(b, kp, w.k_norm);
  b.hold(kn);
  b.drop(kp);
  // repeat_kv (a mask disables enable_gqa): expand + reshape copies K and V to every head.
  TensorId kr = kn, vr = v;
  if (nkv != nh) {
    kr = b.contiguous_copy(kn, {B, nh, KN, hd});
    vr = b.contiguous_copy(v, {B, nh, KN, hd});
  }
  b.hold(kr);
  b.hold(vr);
  TensorId ctx;
  weights = kNoTensor;
  if (!eager) {
    ctx = b.sdpa(qn, kr, vr, 0.0, false, mask, /*float_mask=*/true);
  } else {
    const bool copies = B > 1;
    TensorId scores = b.scalar_op("mul_scalar", b.matmul(qn, kr, {B, nh, S, KN}, copies, copies && nkv == nh), false);
    b.hold(scores);
    const TensorId masked = b.add(scores, mask);  // the fp32 mask promotes 16-bit scores
    b.drop(scores);
    b.hold(masked);
    TensorId probs = b.to(b.softmax_last(b.to(masked, DType::f32)), b.dtype(qn));
    b.drop(masked);
    weights = probs;
    b.hold(weights);
    ctx = b.contiguous_copy(b.matmul(probs, vr, {B, nh, S, hd}, false, copies && nkv == nh), {B, S, nh, hd},
                            /*grad_copied=*/copies);
  }
  b.drop(kr);
  b.drop(vr);
  const TensorId out = b.linear(b.view(ctx, {B, S, nh * hd}), w.o);
  for (TensorId t : {qn, kn, v}) b.drop(t);
  return out;
}

// MllamaCrossAttentionDecoderLayer.forward as layer `i`.
TensorId cross_layer(GraphBuilder& b, const TransformerSpec& s, int64_t i, const CrossParams& w, TensorId h,
                     TensorId inputs_embeds, TensorId states, TensorId mask, TensorId row, int64_t KN) {
  b.begin_layer("layers." + std::to_string(i), layer_checkpointed(b.config(), i));
  const TensorId layer_in = h;
  b.hold(layer_in);
  TensorId n1 = rms_norm(b, h, w.in_norm);
  b.hold(n1);
  TensorId weights = kNoTensor;
  TensorId a = cross_attention(b, s, w, n1, states, mask, KN, weights);
  b.drop(n1);
  a = b.mul(b.unary("tanh", w.attn_gate, false, true), a);
  const TensorId h1 = b.add(h, a);
  b.hold(h1);
  TensorId n2 = rms_norm(b, h1, w.post_norm);
  b.hold(n2);
  TensorId m = swiglu_mlp(b, n2, w.ffn.gate, w.ffn.up, w.ffn.down);
  b.drop(n2);
  m = b.mul(b.view(row, {b.config().batch_size, b.config().seq_len, 1}), m);  // full_text_row_masked_out_mask[:, 0]
  m = b.mul(b.unary("tanh", w.mlp_gate, false, true), m);
  const TensorId out = b.add(h1, m);
  b.drop(h1);
  if (weights != kNoTensor) b.drop(weights);
  if (layer_in != inputs_embeds) b.drop(layer_in);
  b.end_layer();
  return out;
}

}  // namespace

void build_mllama(GraphBuilder& b, const TransformerSpec& s) {
  const auto& cfg = b.config();
  const bool causal_lm = s.model_type == "mllama_text_model";
  const std::string& type = s.model_type;
  if (cfg.quant.enabled())
    throw InputError("quantization", "set", "a quantised base (QLoRA) of a " + type + " model is not modelled");
  if (!cfg.frozen_layers.empty())
    throw InputError("frozen_layers", std::to_string(cfg.frozen_layers.size()) + " layers",
                     "freezing layers of a " + type + " model is not modelled");
  if (cfg.freeze_embeddings) throw InputError("freeze_embeddings", "true", "is not modelled for a " + type + " model");
  if (!cfg.checkpoint_layers.empty())
    throw InputError("grad_checkpointing_layers", std::to_string(cfg.checkpoint_layers.size()) + " layers",
                     "a subset of checkpointed layers is not modelled for " + type);
  if (cfg.task != Task::lm) throw InputError("task", std::string(task_name(cfg.task)), "is not modelled for " + type);
  if (!cfg.image_grid.empty())
    throw InputError("image_grid", "set", "is a qwen2_vl / qwen3_vl input, not " + type + "'s");
  if (!cfg.image_hw.empty()) throw InputError("image_hw", "set", "applies to llava_next and llava_onevision only, not " + type);
  if (!cfg.image_splits.empty()) throw InputError("image_splits", "set", "applies to idefics3 / smolvlm only, not " + type);
  if (cfg.max_num_patches != 0) throw InputError("max_num_patches", "set", "applies to siglip2 only, not " + type);

  Geometry g;
  g.k = causal_lm ? 0 : cfg.images_per_sample;
  if (causal_lm && cfg.images_per_sample > 0)
    throw InputError("images_per_sample", std::to_string(cfg.images_per_sample),
                     "MllamaForCausalLM has no vision model (model_type mllama takes images)");
  const bool with_images = g.k > 0;
  if (with_images && !b.training())
    throw InputError("images_per_sample", std::to_string(g.k),
                     "inference with images is not modelled for " + type + " (text-only prompts are)");
  if (with_images && cfg.lora.enabled() && cfg.grad_checkpointing)
    throw InputError("grad_checkpointing", "true",
                     "with LoRA and images is not modelled for " + type +
                         " (enable_input_require_grads hooks embed_tokens, which runs after the vision embeddings)");
  // The harness lays out one <|image|> token per image after a 1-token prefix (calibrate/harness_kinds/mllama.py).
  if (with_images && cfg.seq_len < g.k + 2)
    throw InputError("seq_len", std::to_string(cfg.seq_len),
                     "is too short for " + std::to_string(g.k) + " <|image|> tokens (needs " +
                         std::to_string(g.k + 2) + ": the harness's layout)");
  if (!causal_lm) {
    g.tiles = s.mllama_max_tiles;
    g.side = s.vision_image_size / s.vision_patch_size;
    g.n = g.side * g.side;
    g.N = g.n + 1;
    g.L = (g.N + 7) / 8 * 8;
    g.images = checked_mul(cfg.batch_size, g.k, "images_per_sample");
  }
  const bool inf = !b.training();
  const int64_t B = cfg.batch_size, S = inf ? b.pass().new_tokens : cfg.seq_len, H = s.hidden_size;
  const int64_t KN = checked_mul(checked_mul(g.k, g.tiles, "images_per_sample"), g.N, "images_per_sample");

  hf_construction_scalar(b);
  // Parameters: model.vision_model, (language_model: embed_tokens, then each layer as the loop reaches it, norm),
  // multi_modal_projector, lm_head. The projector is registered before the text model here (its forward runs
  // first; llama_text_model creates the layers' parameters as it reaches them).
  VisionParams vis;
  clip::Lin proj;
  if (!causal_lm) {
    vis = vision_params(b, s, g, with_images);
    proj = clip::linear_params(b, "multi_modal_projector", H, s.vision_hidden_size *
                                   (1 + static_cast<int64_t>(s.mllama_intermediate_layers.size())), true, with_images);
  }
  const TensorId embed = b.param("embed_tokens.weight", {s.vocab_size + 8, H});

  // The batch, as the plugin draws it.
  const TensorId ids = b.input({B, S}, DType::i64);
  const int64_t P = inf && b.pass().from_generate ? B : 1;
  if (P > 1) b.input({B, S}, DType::i64);
  TensorId labels = ids, pixels = kNoTensor, ar_ids = kNoTensor, ar_mask = kNoTensor, cam = kNoTensor;
  if (with_images) {
    pixels = b.input({B, g.k, g.tiles, s.vision_num_channels, s.vision_image_size, s.vision_image_size},
                     b.param_dtype());
    ar_ids = b.input({B, g.k}, DType::i64);
    ar_mask = b.input({B, g.k, g.tiles}, DType::i64);
    cam = b.input({B, S, g.k, g.tiles}, DType::i64);
    labels = b.input({B, S}, DType::i64);
  }

  TensorId features = kNoTensor, states = kNoTensor, cmask = kNoTensor, row = kNoTensor;
  if (with_images) {
    features = vision_forward(b, s, vis, g, pixels, ar_ids, ar_mask);  // vision_outputs.last_hidden_state
    states = b.view(clip::apply(b, proj, features), {checked_mul(g.images, g.tiles, "images"), g.N, H});
    b.hold(states);
    std::tie(cmask, row) = cross_masks(b, g, cam);
  }
  const TensorId h0 = b.embedding(ids, embed);
  std::vector<CrossParams> cross;
  const TensorId hn = llama_text_model(b, s, h0, P, /*batch_aware_eager=*/true, [&](int64_t i, TensorId& h) {
    if (std::find(s.mllama_cross_layers.begin(), s.mllama_cross_layers.end(), i) == s.mllama_cross_layers.end())
      return false;
    const CrossParams w = cross_params(b, s, "layers." + std::to_string(i) + ".", with_images);
    // Text only: `continue` (no cross-attention states, an empty cache).
    if (with_images) h = cross_layer(b, s, i, w, h, h0, states, cmask, row, KN);
    return true;
  });
  for (const char* nm : {"rotary_emb.inv_freq", "rotary_emb.original_inv_freq"})
    b.buffer(nm, {s.head_dim / 2}, DType::f32);
  // MllamaModel.forward returns: vision_outputs, the cross-attention states and masks go.
  for (TensorId t : {features, states, cmask, row})
    if (t != kNoTensor) b.drop(t);
  if (!with_images) {
    // MllamaForCausalLM: `self.lm_head(hidden_states[:, slice_indices, :]).float()`, bound as logits.
    causal_lm_tail(b, s, hn, embed, ids, false,
                   causal_lm ? +[](GraphBuilder& g, TensorId x) { return g.to(x, DType::f32); } : nullptr);
    return;
  }
  const TensorId head = b.param("lm_head.weight", {s.vocab_size, H});
  causal_lm_training_head(b, hn, head, labels);
}

}  // namespace memplan
