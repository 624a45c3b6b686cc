// The shared encoder layer of CLIP / SigLIP / SigLIP 2 (transformers 5.17 modeling_clip.py CLIPEncoderLayer,
// modeling_siglip.py SiglipEncoderLayer, modeling_siglip2.py Siglip2EncoderLayer: the same statements).
//   residual = h; h = layer_norm1(h); h, _ = self_attn(h, mask); h = residual + h;
//   residual = h; h = layer_norm2(h); h = mlp(h) (fc1, act, fc2); h = residual + h.
// Attention: q / k / v projections each viewed [B, S, heads, head_dim].transpose(1, 2) (bound until the module
// returns), sdpa_attention_forward (no dropout: attention_dropout 0) or eager_attention_forward (matmul * scaling,
// + mask, softmax(dtype=float32).to(q.dtype), matmul, transpose.contiguous), reshape, out_proj. The eager
// probabilities are returned and bound to `_` in the layer until it returns.
// Under autocast the residual stream is fp32 (the embeddings are fp32), the projections' outputs 16-bit; each
// residual add promotes.
#include "engine/arch/vlm/clip_parts.h"

#include "engine/arch/builders.h"
#include "engine/errors.h"

namespace memplan::clip {

Tower text_tower(const TransformerSpec& s) {
  return {s.hidden_size, s.num_heads, s.head_dim, s.intermediate_size, s.num_layers, s.hidden_act};
}

Tower vision_tower(const TransformerSpec& s) {
  return {s.vision_hidden_size, s.vision_num_heads, s.vision_hidden_size / s.vision_num_heads,
          s.vision_intermediate_size, s.vision_num_layers, s.vision_hidden_act};
}

Lin linear_params(GraphBuilder& b, const std::string& name, int64_t out, int64_t in, bool bias, bool train) {
  Lin l;
  l.w = b.param(name + ".weight", {out, in}, train);
  if (bias) l.b = b.param(name + ".bias", {out}, train);
  return l;
}

TensorId apply(GraphBuilder& b, const Lin& l, TensorId x) { return b.linear(x, l.w, l.b); }

LayerParams layer_params(GraphBuilder& b, const Tower& t, const std::string& p, bool siglip_order, bool train) {
  const int64_t H = t.hidden, I = t.inter;
  LayerParams w;
  auto attn = [&] {
    w.k = linear_params(b, p + "self_attn.k_proj", H, H, true, train);
    w.v = linear_params(b, p + "self_attn.v_proj", H, H, true, train);
    w.q = linear_params(b, p + "self_attn.q_proj", H, H, true, train);
    w.o = linear_params(b, p + "self_attn.out_proj", H, H, true, train);
  };
  auto ln = [&](const char* n, TensorId& wt, TensorId& bs) {
    wt = b.param(p + n + ".weight", {H}, train);
    bs = b.param(p + n + ".bias", {H}, train);
  };
  auto mlp = [&] {
    w.fc1 = linear_params(b, p + "mlp.fc1", I, H, true, train);
    w.fc2 = linear_params(b, p + "mlp.fc2", H, I, true, train);
  };
  if (siglip_order) {
    ln("layer_norm1", w.ln1_w, w.ln1_b);
    attn();
    ln("layer_norm2", w.ln2_w, w.ln2_b);
    mlp();
  } else {
    attn();
    ln("layer_norm1", w.ln1_w, w.ln1_b);
    mlp();
    ln("layer_norm2", w.ln2_w, w.ln2_b);
  }
  return w;
}

TensorId activation(GraphBuilder& b, const std::string& act, TensorId x) {
  if (act == "quick_gelu") {
    const TensorId scaled = b.scalar_op("mul_scalar", x, false);  // 1.702 * input
    const TensorId sig = b.unary("sigmoid", scaled, false, /*save_out=*/true);
    return b.mul(x, sig);
  }
  if (act == "gelu" || act == "gelu_pytorch_tanh") return b.unary(act, x, /*save_in=*/true, false);
  throw InputError("model.hidden_act", act, "is not modelled for the contrastive towers");
}

namespace {

// CLIPAttention / SiglipAttention.forward on the normed input x [B, S, H]; `weights` receives eager attention's
// probabilities (kNoTensor for SDPA).
TensorId attention(GraphBuilder& b, const Tower& t, const LayerParams& w, TensorId x, TensorId mask, bool causal,
                   TensorId& weights) {
  const Shape xs = b.shape(x);
  const int64_t B = xs[0], S = xs[1], nh = t.heads, hd = t.head_dim;
  const bool eager = b.config().attn == AttnImpl::eager;
  weights = kNoTensor;
  // SDPA's fused backward writes each gradient in its input's layout; eager's bmm gradients are contiguous
  // [B, heads, S, hd] tensors the transposed view copies back.
  auto heads = [&](const Lin& l) {
    const TensorId p = apply(b, l, x);
    return eager ? b.view_copying_grad(p, {B, nh, S, hd}) : b.view(p, {B, nh, S, hd});
  };
  const TensorId q = heads(w.q);
  const TensorId k = heads(w.k);
  const TensorId v = heads(w.v);
  for (TensorId tt : {q, k, v}) b.hold(tt);  // queries / keys / values until the module returns
  TensorId ctx;
  if (!eager) {
    ctx = b.sdpa(q, k, v, 0.0, causal, mask, t.float_mask);
  } else {
    // torch.matmul copies the head-split views (their batch and head dims cannot merge) unless the batch is 1 (a
    // size-1 dim merges with anything: whole-run llava SigLIP fp32 eager stream, one image); bmm saves the copies.
    const bool copies = B > 1;
    TensorId scores = b.scalar_op("mul_scalar", b.matmul(q, k, {B, nh, S, S}, copies, copies), false);
    if (mask != kNoTensor) {
      b.hold(scores);  // attn_weights until `attn_weights + attention_mask` rebinds it
      const TensorId masked = b.add(scores, mask);
      b.drop(scores);
      scores = masked;
    }
    b.hold(scores);  // attn_weights until the softmax statement rebinds it
    TensorId probs = b.to(b.softmax_last(b.to(scores, DType::f32)), b.dtype(q));
    b.drop(scores);
    weights = probs;
    b.hold(weights);
    ctx = b.contiguous_copy(b.matmul(probs, v, {B, nh, S, hd}, false, copies), {B, S, nh, hd}, /*grad_copied=*/copies);
  }
  const TensorId out = apply(b, w.o, b.view(ctx, {B, S, nh * hd}));
  for (TensorId tt : {q, k, v}) b.drop(tt);
  return out;
}

}  // namespace

TensorId encoder_layer(GraphBuilder& b, const Tower& t, const LayerParams& w, const std::string& name,
                       bool checkpointed, TensorId h, TensorId mask, bool causal, bool strided) {
  b.begin_layer(name, checkpointed);
  const TensorId layer_in = h;
  b.hold(layer_in);  // the encoder's loop variable and `residual` until the layer returns
  const TensorId a = b.layer_norm(h, w.ln1_w, w.ln1_b, strided);
  b.hold(a);  // hidden_states until the attention's return rebinds it
  TensorId weights = kNoTensor;
  TensorId att = attention(b, t, w, a, mask, causal, weights);
  b.drop(a);
  if (w.gate_attn != kNoTensor) att = b.mul(b.unary("tanh", w.gate_attn, false, true), att);
  const TensorId h1 = b.add(layer_in, att);
  b.hold(h1);  // residual until the layer returns
  const TensorId n2 = b.layer_norm(h1, w.ln2_w, w.ln2_b, strided);
  b.hold(n2);  // the layer's hidden_states until the MLP returns
  const TensorId f1 = apply(b, w.fc1, n2);
  b.hold(f1);  // the MLP's hidden_states until the activation's return rebinds it
  const TensorId act = activation(b, t.act, f1);
  b.drop(f1);
  b.hold(act);  // until fc2 returns
  TensorId m = apply(b, w.fc2, act);
  b.drop(act);
  b.drop(n2);
  if (w.gate_ffn != kNoTensor) m = b.mul(b.unary("tanh", w.gate_ffn, false, true), m);
  const TensorId out = b.add(h1, m);
  for (TensorId tt : {h1, weights, layer_in})
    if (tt != kNoTensor) b.drop(tt);
  b.end_layer();
  return out;
}

TensorId normalise(GraphBuilder& b, TensorId x, bool clip_style) {
  const Shape xs = b.shape(x);
  TensorId norm;
  if (clip_style) {
    // torch.pow(t, 2), torch.sum(-1, keepdim=True), torch.pow(sum, 0.5): fp32 under autocast (pow's policy).
    norm = b.pow_scalar(b.reduce_last("sum", b.pow_scalar(x), false));
  } else {
    // linalg_vector_norm: saves its input and its result.
    const TensorId xc = b.autocast() ? b.autocast_fp32(x) : x;
    norm = b.generic({"linalg_vector_norm", {xc}, {{{xs[0], 1}, b.dtype(xc)}}, {0}, {0}, {}, {}})[0];
  }
  return b.binary("div", x, norm, true, true);
}

void check_run(const GraphBuilder& b, const TransformerSpec& s, const std::string& type) {
  const auto& cfg = b.config();
  if (cfg.lora.enabled() || cfg.quant.enabled())
    throw InputError("lora", "set", "LoRA / quantization of a " + type + " model is not modelled");
  if (!cfg.frozen_layers.empty())
    throw InputError("frozen_layers", std::to_string(cfg.frozen_layers.size()) + " layers",
                     "freezing layers of a " + type + " model is not modelled");
  if (cfg.freeze_embeddings)
    throw InputError("freeze_embeddings", "true", "is not modelled for a " + type + " model");
  if (!cfg.checkpoint_layers.empty())
    throw InputError("grad_checkpointing_layers", std::to_string(cfg.checkpoint_layers.size()) + " layers",
                     "a subset of checkpointed layers is not modelled for " + type +
                         " (gradient_checkpointing_enable wraps every layer of both towers)");
  if (cfg.task != Task::lm)
    throw InputError("task", std::string(task_name(cfg.task)),
                     "is not modelled for " + type + " (its training step is the contrastive loss, return_loss=True)");
  if (cfg.seq_len > s.max_position_embeddings)
    throw InputError("seq_len", std::to_string(cfg.seq_len),
                     "exceeds the text tower's max_position_embeddings (" + std::to_string(s.max_position_embeddings) +
                         "): the text embeddings raise");
}

}  // namespace memplan::clip
