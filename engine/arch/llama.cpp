// LlamaForCausalLM and its relatives (transformers 5.17: llama, mistral, qwen2, mixtral), training forward +
// causal-LM loss.
//   embed_tokens -> rotary cos/sin [1, S, D] (in the hidden dtype) -> N x DecoderLayer -> norm -> lm_head -> loss
//   DecoderLayer: h + o_proj(attn(rope(q), rope(k), v)) over input_layernorm(h), then h + mlp(post_attention_layernorm(h)).
//   RMSNorm: x.to(f32); pow(2).mean(-1); x * rsqrt(var + eps); weight * x.to(input_dtype).
//   RoPE: q * cos + cat(-q2, q1) * sin (q bf16 times cos f32 promotes to f32 under autocast).
//   MoE (mixtral): router linear -> softmax(f32) -> topk -> per-expert gather, SwiGLU expert, weighted index_add.
#include "engine/arch/builders.h"

#include "engine/checked.h"

namespace memplan {

TensorId rms_norm(GraphBuilder& b, TensorId x, TensorId w) {
  const DType in_dt = b.dtype(x);
  TensorId x32 = b.to(x, DType::f32);
  TensorId sq = b.unary("pow", x32, true, false, true);
  TensorId var = b.reduce_last("mean", sq, false);
  TensorId ve = b.scalar_op("add_scalar", var, false);
  TensorId r = b.unary("rsqrt", ve, false, true, true);
  TensorId n = b.mul(x32, r);
  return b.mul(w, b.to(n, in_dt));
}

namespace {

TensorId rotate_half(GraphBuilder& b, TensorId x) {
  Shape half = b.shape(x);
  half.back() /= 2;
  TensorId x1 = b.view(x, half);
  TensorId x2 = b.view(x, half);
  TensorId neg = b.unary("neg", x2, false, false);
  return b.cat_last("cat", {neg, x1});
}

TensorId rope(GraphBuilder& b, TensorId x, TensorId cos, TensorId sin) {
  TensorId a = b.mul(x, cos);
  TensorId c = b.mul(rotate_half(b, x), sin);
  return b.add(a, c);
}

TensorId swiglu_mlp(GraphBuilder& b, TensorId x, TensorId gate, TensorId up, TensorId down) {
  TensorId g = b.linear(x, gate);
  TensorId act = b.unary("silu", g, true, false);
  TensorId u = b.linear(x, up);
  TensorId prod = b.mul(act, u);
  return b.linear(prod, down);
}

struct LayerParams {
  TensorId in_norm, post_norm, q, k, v, o, qb, kb, vb, ob;
};

TensorId attention(GraphBuilder& b, const TransformerSpec& s, const LayerParams& w, TensorId x, TensorId cos,
                   TensorId sin, TensorId mask) {
  const auto& cfg = b.config();
  const int64_t B = cfg.batch_size, S = cfg.seq_len, nh = s.num_heads, nkv = s.num_kv_heads, hd = s.head_dim;
  TensorId q = b.view(b.linear(x, w.q, w.qb), {B, nh, S, hd});
  TensorId k = b.view(b.linear(x, w.k, w.kb), {B, nkv, S, hd});
  TensorId v = b.view(b.linear(x, w.v, w.vb), {B, nkv, S, hd});
  TensorId qe = rope(b, q, cos, sin);
  b.hold(qe);  // query_states / key_states stay bound until the attention module returns
  TensorId ke = rope(b, k, cos, sin);
  b.hold(ke);
  TensorId ctx;
  if (cfg.attn == AttnImpl::sdpa) {
    ctx = b.sdpa(qe, ke, v, s.attn_dropout, true);  // GQA handled in the kernel (enable_gqa), no repeat_kv
  } else {
    TensorId kr = ke, vr = v;
    if (nkv != nh) {  // repeat_kv: expand + reshape materialises the repeated heads
      kr = b.contiguous_copy(ke, {B, nh, S, hd});
      vr = b.contiguous_copy(v, {B, nh, S, hd});
    }
    TensorId scores = b.scalar_op("mul_scalar", b.matmul(qe, kr, {B, nh, S, S}), false);
    TensorId masked = b.add(scores, mask);
    TensorId probs = b.to(b.softmax_last(b.to(masked, DType::f32)), b.dtype(qe));
    probs = b.dropout(probs, s.attn_dropout);
    ctx = b.contiguous_copy(b.matmul(probs, vr, {B, nh, S, hd}), {B, S, nh, hd});
  }
  TensorId out = b.linear(b.view(ctx, {B, S, nh * hd}), w.o, w.ob);
  b.drop(qe);
  b.drop(ke);
  return out;
}

TensorId moe(GraphBuilder& b, const TransformerSpec& s, const std::string& p, bool trainable, TensorId x) {
  // transformers 5.17 MixtralSparseMoeBlock: a TopK router (linear, f32 softmax, topk, renormalise) and
  // MixtralExperts holding 3-d weights gate_up_proj [E, 2I, H] and down_proj [E, H, I]. Per expert hit:
  // gather its tokens, linear with gate_up_proj[e] (a slice: autocast casts it afresh, not cached), chunk,
  // silu(gate) * up, linear with down_proj[e], scale by the routing weight, index_add_ into a zeroed f32/
  // model-dtype output. Backward of each slice (SelectBackward) materialises a zero-filled gradient of the
  // whole 3-d parameter; backward of each token gather materialises a full [T, H] gradient.
  // Uniform routing is assumed: each of the E experts sees T * k / E rows.
  const auto& cfg = b.config();
  const int64_t B = cfg.batch_size, S = cfg.seq_len, H = s.hidden_size, I = s.intermediate_size;
  const int64_t E = s.num_experts, K = s.num_experts_per_tok, T = checked_mul(B, S);
  TensorId flat = b.view(x, {T, H});
  TensorId router = b.param(p + "gate.weight", {E, H}, trainable);
  TensorId gate_up = b.param(p + "experts.gate_up_proj", {E, 2 * I, H}, trainable);
  TensorId down = b.param(p + "experts.down_proj", {E, H, I}, trainable);
  TensorId logits = b.linear(flat, router);
  TensorId probs = b.softmax_last(b.to(logits, DType::f32));
  TensorId topw = b.generic({"topk", {probs}, {{{T, K}, DType::f32}, {{T, K}, DType::i64}}, {0}, {1}, {}, {}})[0];
  TensorId weights = b.binary("div", topw, b.reduce_last("sum", topw, false), true, true);
  TensorId out = b.generic({"zeros_like", {}, {{{T, H}, b.dtype(flat)}}, {}, {}, {}, {}})[0];
  b.generic({"one_hot", {}, {{{E, K, T}, DType::i64}}, {}, {}, {}, {}});
  const int64_t rows = std::max<int64_t>(1, checked_mul(T, K) / E);
  for (int64_t e = 0; e < E; ++e) {
    TensorId xe = b.generic({"index", {flat}, {{{rows, H}, b.dtype(flat)}}, {}, {}, {}, {}})[0];
    TensorId gu_w = b.select_param(gate_up, {2 * I, H});
    TensorId gu = b.linear(xe, gu_w);
    TensorId g = b.view(gu, {rows, I});
    TensorId u = b.view(gu, {rows, I});
    TensorId act = b.mul(b.unary("silu", g, true, false), u);
    TensorId d_w = b.select_param(down, {H, I});
    TensorId ye = b.linear(act, d_w);
    TensorId we = b.generic({"index", {weights}, {{{rows, 1}, b.dtype(weights)}}, {}, {}, {}, {}})[0];
    TensorId scaled = b.to(b.mul(ye, we), b.dtype(out));
    out = b.inplace("index_add_", out, false, {scaled});
  }
  return b.view(out, {B, S, H});
}

}  // namespace

void build_llama(GraphBuilder& b, const TransformerSpec& s) {
  const auto& cfg = b.config();
  const int64_t B = cfg.batch_size, S = cfg.seq_len, H = s.hidden_size, V = s.vocab_size, hd = s.head_dim;
  const int64_t nh = s.num_heads, nkv = s.num_kv_heads, I = s.intermediate_size;
  const bool emb_train = !cfg.freeze_embeddings;
  TensorId embed = b.param("embed_tokens.weight", {V, H}, emb_train);
  TensorId ids = b.input({B, S}, DType::i64);
  TensorId h = b.embedding(ids, embed);
  // Rotary embedding: computed in f32 under autocast-disabled, returned in the hidden dtype.
  TensorId cos = b.to(b.generic({"rope_cos", {}, {{{1, 1, S, hd}, DType::f32}}, {}, {}, {}, {}})[0], b.dtype(h));
  TensorId sin = b.to(b.generic({"rope_sin", {}, {{{1, 1, S, hd}, DType::f32}}, {}, {}, {}, {}})[0], b.dtype(h));
  TensorId mask = cfg.attn == AttnImpl::eager
                      ? b.generic({"causal_mask", {}, {{{B, 1, S, S}, b.dtype(h)}}, {}, {}, {}, {}})[0]
                      : kNoTensor;

  for (int64_t i = 0; i < s.num_layers; ++i) {
    const std::string p = "layers." + std::to_string(i) + ".";
    const bool train = !layer_frozen(cfg, i);
    LayerParams w{};
    w.in_norm = b.param(p + "input_layernorm.weight", {H}, train);
    w.q = b.param(p + "self_attn.q_proj.weight", {nh * hd, H}, train);
    w.qb = s.qkv_bias ? b.param(p + "self_attn.q_proj.bias", {nh * hd}, train) : kNoTensor;
    w.k = b.param(p + "self_attn.k_proj.weight", {nkv * hd, H}, train);
    w.kb = s.qkv_bias ? b.param(p + "self_attn.k_proj.bias", {nkv * hd}, train) : kNoTensor;
    w.v = b.param(p + "self_attn.v_proj.weight", {nkv * hd, H}, train);
    w.vb = s.qkv_bias ? b.param(p + "self_attn.v_proj.bias", {nkv * hd}, train) : kNoTensor;
    w.o = b.param(p + "self_attn.o_proj.weight", {H, nh * hd}, train);
    w.ob = s.o_bias ? b.param(p + "self_attn.o_proj.bias", {H}, train) : kNoTensor;
    w.post_norm = b.param(p + "post_attention_layernorm.weight", {H}, train);

    b.begin_layer("layers." + std::to_string(i), layer_checkpointed(cfg, i));
    TensorId n1 = rms_norm(b, h, w.in_norm);
    b.hold(n1);  // bound to hidden_states until self_attn returns
    TensorId a = attention(b, s, w, n1, cos, sin, mask);
    b.drop(n1);
    TensorId h1 = b.add(h, a);
    TensorId n2 = rms_norm(b, h1, w.post_norm);
    b.hold(n2);
    TensorId m;
    if (s.num_experts > 0) {
      m = moe(b, s, p + "block_sparse_moe.", train, n2);
    } else {
      TensorId gate = b.param(p + "mlp.gate_proj.weight", {I, H}, train);
      TensorId up = b.param(p + "mlp.up_proj.weight", {I, H}, train);
      TensorId down = b.param(p + "mlp.down_proj.weight", {H, I}, train);
      m = swiglu_mlp(b, n2, gate, up, down);
    }
    b.drop(n2);
    h = b.add(h1, m);
    b.end_layer();
  }
  TensorId hn = rms_norm(b, h, b.param("norm.weight", {H}, emb_train));
  TensorId head = s.tie_word_embeddings ? embed : b.param("lm_head.weight", {V, H}, emb_train);
  TensorId logits = b.linear(hn, head);
  b.mark_model_end();
  TensorId loss = causal_lm_loss(b, logits, ids);
  b.exit_autocast();
  b.set_loss(loss);
}

}  // namespace memplan
