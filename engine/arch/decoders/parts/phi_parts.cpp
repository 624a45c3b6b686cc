// Shared pieces of the phi3 / gpt_neox / starcoder2 builders (engine/arch/decoders/parts/phi_parts.h). Each mirrors the
// statements transformers 5.17 runs (modeling_phi3.py, modeling_gpt_neox.py, modeling_starcoder2.py), written
// here because llama.cpp's versions differ: the final norm can be nn.LayerNorm, the embedding can go through a
// dropout, and the rotary embedding may cover only part of each head.
#include "engine/arch/decoders/parts/phi_parts.h"

#include "engine/arch/decoders/parts/llama_parts.h"
#include "engine/arch/nested_sliding_mask.h"
#include "engine/errors.h"

namespace memplan {

bool is_single_kernel_activation(const std::string& name) {
  return name == "gelu" || name == "gelu_pytorch_tanh" || name == "silu" || name == "swish" || name == "relu";
}

TensorId relu_squared(GraphBuilder& b, TensorId x) {
  b.hold(x);  // forward's argument until it returns
  const TensorId r = b.unary("relu", x, false, /*save_out=*/true);
  b.hold(r);  // relu_applied
  const TensorId sq = b.pow_scalar(r);  // torch.square
  b.drop(r);
  b.drop(x);
  return sq;
}

TensorId relu_squared_mlp(GraphBuilder& b, TensorId x, TensorId up_w, TensorId up_b, TensorId down_w,
                          TensorId down_b) {
  const TensorId sq = relu_squared(b, b.linear(x, up_w, up_b));
  b.hold(sq);  // down's argument until it returns
  const TensorId out = b.linear(sq, down_w, down_b);
  b.drop(sq);
  return out;
}

TensorId activation(GraphBuilder& b, const std::string& name, TensorId x) {
  if (name == "relu") return b.unary("relu", x, false, /*save_out=*/true);  // threshold_backward(grad, result)
  if (!is_single_kernel_activation(name)) throw InputError("model.hidden_act", name, "is not modelled");
  return b.unary(name, x, /*save_in=*/true, false);
}

TensorId activation_or_gelu_new(GraphBuilder& b, const std::string& name, TensorId x) {
  return name == "gelu_new" ? gelu_new(b, x) : activation(b, name, x);
}

TensorId fc_act_proj_mlp(GraphBuilder& b, const TransformerSpec& s, TensorId x, TensorId fc_w, TensorId fc_b,
                         TensorId proj_w, TensorId proj_b) {
  TensorId fc = b.linear(x, fc_w, fc_b);
  b.hold(fc);
  TensorId act = activation_or_gelu_new(b, s.hidden_act, fc);
  b.drop(fc);
  b.hold(act);
  const TensorId out = b.linear(act, proj_w, proj_b);
  b.drop(act);
  return b.dropout(out, s.resid_dropout);
}

TensorId partial_rope(GraphBuilder& b, TensorId x, TensorId cos, TensorId sin, int64_t rot, bool cat_now,
                      TensorId* pass) {
  Shape rs = b.shape(x);
  const int64_t D = rs.back();
  Shape ps = rs;
  rs.back() = rot;
  ps.back() = D - rot;
  // x[..., :rot] and x[..., rot:]: views whose SliceBackward writes the gradient into a zero-filled tensor of
  // x's size (split with one part: a view with a fresh gradient of x's shape).
  const TensorId xr = b.split(x, 1, rs)[0];
  const TensorId xp = b.split(x, 1, ps)[0];
  const TensorId r = rope(b, xr, cos, sin);
  if (!cat_now) {
    *pass = xp;
    return r;
  }
  return cat_rotary(b, r, xp);
}

TensorId cat_rotary(GraphBuilder& b, TensorId rotated, TensorId pass) { return b.cat_last("cat", {rotated, pass}); }

TensorId cat_rotary_attention(GraphBuilder& b, const TransformerSpec& s, TensorId qe, TensorId& ke, TensorId& v,
                              TensorId v_proj, TensorId mask, int64_t window, TensorId& weights) {
  const auto& cfg = b.config();
  if (cfg.attn == AttnImpl::sdpa) return attention_core(b, s, qe, ke, v, v_proj, mask, window, weights);
  weights = kNoTensor;
  const bool inf = !b.training();
  const int64_t B = cfg.batch_size, S = inf ? b.pass().new_tokens : cfg.seq_len, nh = s.num_heads,
                nkv = s.num_kv_heads, hd = s.head_dim;
  int64_t Lk = S;
  const bool cached = b.kv_cached();
  if (cached) {  // key_states / value_states rebind to what the cache returns
    auto [kc, vc] = kv_update(b, ke, v, window);
    b.drop(ke);
    b.drop(v_proj);
    ke = kc;
    v = vc;
    Lk = b.shape(kc)[2];
  }
  TensorId kr = ke, vr = v;
  if (nkv != nh) {  // repeat_kv: expand + reshape materialises the repeated heads
    kr = b.contiguous_copy(ke, {B, nh, Lk, hd});
    vr = b.contiguous_copy(v, {B, nh, Lk, hd});
  }
  b.hold(kr);
  b.hold(vr);
  TensorId scores = b.scalar_op("mul_scalar", b.matmul(qe, kr, {B, nh, S, Lk}, false, false), false);
  TensorId masked = b.add(scores, mask);
  b.hold(masked);  // softmax(x, dtype=float32).to(query.dtype): one statement
  TensorId probs = b.to(b.softmax_last(b.to(masked, DType::f32)), b.dtype(qe));
  b.drop(masked);
  probs = b.dropout(probs, s.attn_dropout);
  weights = probs;
  b.hold(weights);
  // matmul's backward reshapes the transposed [B, H, S, D] gradient to [B * H, S, D]: a copy, except for B == 1,
  // where the size-1 batch dim merges as a view (whole-run glm4_moe fp32 eager stream, b1).
  TensorId ctx = b.contiguous_copy(b.matmul(probs, vr, {B, nh, S, hd}, false, vr == v && !cached), {B, S, nh, hd},
                                   /*grad_copied=*/B > 1);
  b.drop(kr);
  b.drop(vr);
  return ctx;
}

TensorId cudnn_output_copy(GraphBuilder& b, TensorId ctx, TensorId mask) {
  if (b.config().attn != AttnImpl::sdpa) return ctx;
  (void)mask;  // masked inference runs cuDNN too (observed backend; whole-run phi3 streams past the window)
  if (!b.autocast() && b.dtype(ctx) == DType::f32) return ctx;  // fp32: memory-efficient (or math) kernel
  return b.contiguous_copy(ctx, b.shape(ctx));
}

SlicedRotaryAttention sliced_rotary_attention(GraphBuilder& b, const TransformerSpec& s, TensorId q, TensorId k,
                                              TensorId v, TensorId v_proj, const SkeletonContext& c, int64_t rot,
                                              TensorId& weights) {
  b.hold(q);  // query_pass / key_pass are views of these, bound until the attention returns
  b.hold(k);
  TensorId q_pass = kNoTensor, k_pass = kNoTensor;
  TensorId qr = partial_rope(b, q, c.cos, c.sin, rot, false, &q_pass);
  TensorId kr = partial_rope(b, k, c.cos, c.sin, rot, false, &k_pass);
  b.hold(qr);  // `query_rot, key_rot = apply_rotary_pos_emb(...)`: bound until the attention returns
  b.hold(kr);
  TensorId qe = cat_rotary(b, qr, q_pass);
  b.hold(qe);
  TensorId ke = cat_rotary(b, kr, k_pass);
  b.hold(ke);
  SlicedRotaryAttention a;
  a.ctx = cudnn_output_copy(b, cat_rotary_attention(b, s, qe, ke, v, v_proj, c.mask, c.window, weights), c.mask);
  a.locals = {qe, ke};
  if (!b.kv_cached()) a.locals.push_back(v_proj);  // else the cache update rebound it
  a.locals.insert(a.locals.end(), {q, k, qr, kr});
  return a;
}

TensorId cat_rotary_o_proj(GraphBuilder& b, const TransformerSpec& s, TensorId qe, TensorId ke, TensorId v,
                           TensorId v_proj, const SkeletonContext& c, TensorId o, TensorId ob, TensorId& weights) {
  const auto& cfg = b.config();
  const bool inf = !b.training();
  const int64_t B = cfg.batch_size, S = inf ? b.pass().new_tokens : cfg.seq_len;
  TensorId ctx = cudnn_output_copy(b, cat_rotary_attention(b, s, qe, ke, v, v_proj, c.mask, c.window, weights), c.mask);
  TensorId out = b.linear(b.view(ctx, {B, S, s.num_heads * s.head_dim}), o, ob);
  b.drop(qe);
  b.drop(ke);
  if (!b.kv_cached()) b.drop(v_proj);  // the cache's update rebound (and so dropped) it
  return out;
}

void release_attention_locals(GraphBuilder& b, const SlicedRotaryAttention& a) {
  for (TensorId t : a.locals) b.drop(t);
}

void build_causal_lm_skeleton(GraphBuilder& b, const TransformerSpec& s, const SkeletonSpec& k) {
  const auto& cfg = b.config();
  const bool inf = !b.training();
  const int64_t B = cfg.batch_size, S = inf ? b.pass().new_tokens : cfg.seq_len, H = s.hidden_size,
                V = s.vocab_size;
  const int64_t rot = s.rotary_dim > 0 ? s.rotary_dim : s.head_dim;
  const bool emb_train = !cfg.freeze_embeddings;
  hf_construction_scalar(b);
  TensorId embed = b.param(k.embed_name, {V, H}, emb_train);
  TensorId ids = b.input({B, S}, DType::i64);
  // position_ids: [1, S] from cache_position in a plain forward, [B, S] from the attention mask in generate().
  const int64_t P = inf && b.pass().from_generate ? B : 1;
  if (P > 1) b.input({B, S}, DType::i64);
  TensorId h = b.embedding(ids, embed);
  if (k.embed_op && !k.embed_op_after_mask) h = k.embed_op(b, h);

  // The mask is made before the embedding dropout and the rotary embedding (every *Model.forward here).
  // create_sliding_window_causal_mask when the config sets sliding_window (phi3, starcoder2): every layer
  // then slides, and the DynamicCache makes every layer a sliding one (cache_utils get_layer_types_and_kwargs).
  SkeletonContext ctx;
  ctx.window = k.sliding_mask_function ? s.sliding_window : 0;
  if (!inf) {
    if (cfg.attn == AttnImpl::eager) {
      ctx.mask = eager_mask(b, 1, S, S, b.dtype(h));
    } else if (ctx.window > 0 && S >= ctx.window) {
      // _ignore_causal_mask_sdpa holds only while kv_length < the window: then a [1, 1, S, S] bool mask.
      ctx.mask = nested_sliding_sdpa_mask(b, 1, S, S);
    }
  } else if (ctx.window > 0 && cfg.attn == AttnImpl::sdpa) {
    // As inference_mask (common.cpp) decides, with the mask built as sdpa_mask evaluates it.
    const auto& p = b.pass();
    const int64_t w = ctx.window, kv = std::min(p.past_len, w - 1) + p.new_tokens;
    const bool skip = (p.new_tokens == 1 || kv == p.new_tokens) && kv < w;
    if (!skip) ctx.mask = nested_sliding_sdpa_mask(b, P, p.new_tokens, kv);
  } else {
    ctx.mask = inference_mask(b, ctx.window, b.dtype(h));
  }
  if (ctx.mask != kNoTensor) b.hold(ctx.mask);  // causal_mask lives until the model's forward returns
  if (k.embed_op && k.embed_op_after_mask) h = k.embed_op(b, h);
  const TensorId inputs_embeds = h;

  h = b.dropout(h, s.embd_dropout);  // gpt_neox emb_dropout, starcoder2 embedding_dropout (phi3: 0)
  const std::pair<TensorId, TensorId> cos_sin = rotary_cos_sin(b, P, S, rot, b.dtype(h));
  const TensorId cos = cos_sin.first, sin = cos_sin.second;  // named, not a structured binding: clang 14 cannot capture those
  ctx.cos = cos;
  ctx.sin = sin;
  b.hold(inputs_embeds);  // bound until the model's forward returns, as are cos / sin
  b.hold(cos);
  b.hold(sin);
  for (int64_t i = 0; i < s.num_layers; ++i) {
    b.begin_layer("layers." + std::to_string(i), layer_checkpointed(cfg, i));
    const TensorId layer_in = h;
    b.hold(layer_in);  // the model's loop variable holds the layer input until the layer returns
    h = k.layer(b, s, i, h, ctx);
    if (layer_in != inputs_embeds) b.drop(layer_in);
    b.end_layer();
  }
  b.hold(h);  // `hidden_states = self.norm(hidden_states)` rebinds only once the norm has returned
  const std::string np = k.norm_prefix;
  TensorId hn;
  if (k.final_norm) {
    hn = k.final_norm(b, h, b.param(np + ".weight", {H}, emb_train));
  } else if (k.layer_norm_final) {
    TensorId w = b.param(np + ".weight", {H}, emb_train);
    TensorId bias = b.param(np + ".bias", {H}, emb_train);
    hn = b.layer_norm(h, w, bias);
  } else {
    hn = rms_norm(b, h, b.param(np + ".weight", {H}, emb_train));
  }
  for (TensorId t : {h, inputs_embeds, cos, sin, ctx.mask})
    if (t != kNoTensor) b.drop(t);
  causal_lm_tail(b, s, hn, embed, ids, s.lm_head_bias /* phi */, k.logits_op);
}

}  // namespace memplan
