// LlamaForCausalLM and its relatives (transformers 5.17: llama, mistral, qwen2, mixtral), training forward +
// causal-LM loss.
//   embed_tokens -> rotary cos/sin [1, S, D] (in the hidden dtype) -> N x DecoderLayer -> norm -> lm_head -> loss
//   DecoderLayer: h + o_proj(attn(rope(q), rope(k), v)) over input_layernorm(h), then h + mlp(post_attention_layernorm(h)).
//   RMSNorm: x.to(f32); pow(2).mean(-1); x * rsqrt(var + eps); weight * x.to(input_dtype).
//   RoPE: q * cos + cat(-q2, q1) * sin (q bf16 times cos f32 promotes to f32 under autocast).
//   MoE (mixtral): router linear -> softmax(f32) -> topk -> per-expert gather, SwiGLU expert, weighted index_add.
// Inference (cfg.mode == inference, one InferencePass): no loss; K/V go through the DynamicCache update
// (kv_update in common.cpp); sliding-window layers get a materialised bool mask once the window is reached
// (then SDPA cannot use enable_gqa and HF's repeat_kv copies K/V to all heads); the final norm runs over
// every position and lm_head over the last logits_to_keep positions only.
#include "engine/arch/builders.h"

#include "engine/arch/decoders/parts/deepseek_parts.h"
#include "engine/arch/decoders/parts/llama_parts.h"
#include "engine/checked.h"

namespace memplan {

TensorId rms_norm(GraphBuilder& b, TensorId x, TensorId w, bool held_input) {
  const DType in_dt = b.dtype(x);
  if (held_input) b.hold(x);
  TensorId x32 = b.to(x, DType::f32);
  TensorId sq = b.pow_scalar(x32);
  TensorId var = b.reduce_last("mean", sq, false);
  b.hold(var);  // `variance` stays bound until forward returns (whole-run qwen3 / deepseek inference streams)
  TensorId ve = b.add_scalar(var);
  TensorId r = b.unary("rsqrt", ve, false, true, true);
  TensorId n = b.mul(x32, r);
  b.hold(n);  // `hidden_states` (fp32) stays bound until forward returns, after the weight product
  TensorId y = b.mul(w, b.to(n, in_dt));
  b.drop(n);
  b.drop(var);
  if (held_input) b.drop(x);
  return y;
}

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

TensorId swiglu_mlp(GraphBuilder& b, TensorId x, TensorId gate, TensorId up, TensorId down, TensorId gate_b,
                    TensorId up_b, TensorId down_b) {
  TensorId g = b.linear(x, gate, gate_b);
  TensorId act = b.unary("silu", g, true, false);
  TensorId u = b.linear(x, up, up_b);
  TensorId prod = b.mul(act, u);
  return b.linear(prod, down, down_b);
}

TensorId attention_core(GraphBuilder& b, const TransformerSpec& s, TensorId qe, TensorId& ke, TensorId& v,
                        TensorId v_proj, TensorId mask, int64_t window, TensorId& weights) {
  weights = kNoTensor;
  const auto& cfg = b.config();
  const bool inf = !b.training();
  const int64_t B = cfg.batch_size, S = inf ? b.pass().new_tokens : cfg.seq_len, nh = s.num_heads,
                nkv = s.num_kv_heads, hd = s.head_dim;
  int64_t Lk = S;
  const bool cached = b.kv_cached();
  if (cached) {  // key_states / value_states rebind to what the cache returns; the rope output goes
    auto [kc, vc] = kv_update(b, ke, v, window);
    b.drop(ke);
    b.drop(v_proj);
    ke = kc;
    v = vc;
    Lk = b.shape(kc)[2];
  }
  TensorId ctx;
  if (cfg.attn == AttnImpl::sdpa && mask == kNoTensor) {
    ctx = b.sdpa(qe, ke, v, s.attn_dropout, true);  // GQA handled in the kernel (enable_gqa), no repeat_kv
    // The math backend (fp32 q with grouped KV heads; under amp SDPA gets the bf16 cast) returns [B, H, S, D]
    // contiguous, so sdpa_attention_forward's transpose(1, 2).contiguous() copies it; in backward the gradient
    // reaching the context bmm is a transposed view, copied again (whole-run fp32 Qwen2 training stream).
    if (b.dtype(qe) == DType::f32 && nkv != nh && (inf || !b.autocast()))
      ctx = b.contiguous_copy(ctx, {B, S, nh, hd}, /*grad_copied=*/true);
  } else if (cfg.attn == AttnImpl::sdpa) {
    // A mask disables enable_gqa (use_gqa_in_sdpa): repeat_kv materialises K and V for every head.
    // One KV head: expand(B, 1, n, L, D) + reshape merges the size-1 dim with the stride-0 one, a view (gemma
    // engineer, whole-run gemma3 stream; gemma_parts.cpp attention_core_gemma), whose backward sums the gradient.
    auto repeat = [&](TensorId x) {
      if (nkv == nh) return x;
      return nkv == 1 ? b.view_copying_grad(x, {B, nh, Lk, hd}) : b.contiguous_copy(x, {B, nh, Lk, hd});
    };
    TensorId kr = repeat(ke);
    TensorId vr = repeat(v);
    // Training (a sliding window shorter than the sequence): cuDNN saves the repeated K and V and the float
    // bias made from the mask for its backward (whole-run Mistral-shape stream: two [B, H, S, D] copies and a
    // [B, 1, S, S] bias per layer live until backward, the GQA backward's second dq accumulator gone).
    ctx = inf ? b.sdpa_masked_inference(qe, kr, vr, mask) : b.sdpa(qe, kr, vr, s.attn_dropout, false, mask);
  } else {
    TensorId kr = ke, vr = v;
    if (nkv != nh) {  // repeat_kv: expand + reshape materialises the repeated heads
      kr = b.contiguous_copy(ke, {B, nh, Lk, hd});
      vr = b.contiguous_copy(v, {B, nh, Lk, hd});
    }
    // key_states / value_states (after repeat_kv) stay bound until eager_attention_forward returns.
    b.hold(kr);
    b.hold(vr);
    // torch.matmul copies an operand whose batch and head dims cannot merge: the rotated q keeps the
    // projection's [B, S, H, D] memory order, and so do k and v when nothing copied them (training without
    // repeat_kv); cached K/V are cat outputs (whole-run stream, Llama-3.2-1B eager inference: a [B, H, S, D]
    // copy of q before each scores bmm, freed after it; under amp the copy is of autocast's bf16 cast).
    TensorId scores = b.scalar_op("mul_scalar", b.matmul(qe, kr, {B, nh, S, Lk}, true, kr == ke && !cached), false);
    TensorId masked = b.add(scores, mask);
    // `attn_weights = softmax(attn_weights, dim=-1, dtype=float32).to(query.dtype)`: one statement, so the
    // masked scores stay bound through the fp32 copy, the softmax and the cast (whole-run stream, Llama-3.2-1B
    // eager inference: [B, H, S, S] bf16 + two fp32 copies live at once).
    b.hold(masked);
    TensorId probs = b.to(b.softmax_last(b.to(masked, DType::f32)), b.dtype(qe));
    b.drop(masked);
    probs = b.dropout(probs, s.attn_dropout);
    weights = probs;
    b.hold(weights);
    ctx = b.contiguous_copy(b.matmul(probs, vr, {B, nh, S, hd}, false, vr == v && !cached), {B, S, nh, hd},
                            /*grad_copied=*/true);
    b.drop(kr);
    b.drop(vr);
  }
  return ctx;
}

LlamaDecoderParams llama_decoder_params(GraphBuilder& b, const TransformerSpec& s, const std::string& p, bool train) {
  const int64_t H = s.hidden_size, I = s.intermediate_size;
  LlamaDecoderParams d;
  LlamaLayerParams& w = d.attn;
  auto linear_bias = [&](const std::string& name, int64_t n, bool has) {
    return has ? b.param(p + name + ".bias", {n}, train) : kNoTensor;
  };
  attention_projection_params(b, s, p, train, s.qkv_bias, s.o_bias, w);
  FfnParams& f = d.ffn;
  if (s.num_experts > 0) {
    const int64_t E = s.num_experts;
    f.gate = b.param(p + "block_sparse_moe.gate.weight", {E, H}, train);
    f.up = b.param(p + "block_sparse_moe.experts.gate_up_proj", {E, 2 * I, H}, train);
    f.down = b.param(p + "block_sparse_moe.experts.down_proj", {E, H, I}, train);
  } else {
    f.gate = b.param(p + "mlp.gate_proj.weight", {I, H}, train);
    f.gate_b = linear_bias("mlp.gate_proj", I, s.mlp_bias);
    f.up = b.param(p + "mlp.up_proj.weight", {I, H}, train);
    f.up_b = linear_bias("mlp.up_proj", I, s.mlp_bias);
    f.down = b.param(p + "mlp.down_proj.weight", {H, I}, train);
    f.down_b = linear_bias("mlp.down_proj", H, s.mlp_bias);
  }
  w.in_norm = b.param(p + "input_layernorm.weight", {H}, train);
  w.post_norm = b.param(p + "post_attention_layernorm.weight", {H}, train);
  return d;
}

std::pair<TensorId, TensorId> rope_qk(GraphBuilder& b, TensorId q, TensorId k, TensorId cos, TensorId sin) {
  const TensorId qe = rope(b, q, cos, sin);
  b.hold(qe);
  const TensorId ke = rope(b, k, cos, sin);
  b.hold(ke);
  b.drop(q);
  b.drop(k);
  return {qe, ke};
}

std::pair<TensorId, TensorId> rope_cast_back(GraphBuilder& b, TensorId q, TensorId k, TensorId cos, TensorId sin) {
  const DType q_dt = b.dtype(q), k_dt = b.dtype(k);
  TensorId qe32 = rope(b, q, cos, sin);
  b.hold(qe32);
  TensorId ke32 = rope(b, k, cos, sin);
  b.hold(ke32);
  TensorId qe = b.to(qe32, q_dt);
  b.hold(qe);
  TensorId ke = b.to(ke32, k_dt);
  b.hold(ke);
  if (qe32 != qe) b.drop(qe32);
  if (ke32 != ke) b.drop(ke32);
  b.drop(q);
  b.drop(k);
  return {qe, ke};
}

LlamaInputs llama_inputs(GraphBuilder& b, const TransformerSpec& s) {
  const auto& cfg = b.config();
  const bool inf = !b.training();
  const int64_t B = cfg.batch_size, S = inf ? b.pass().new_tokens : cfg.seq_len;
  hf_construction_scalar(b);
  const TensorId embed = b.param("embed_tokens.weight", {s.vocab_size, s.hidden_size}, !cfg.freeze_embeddings);
  const TensorId ids = b.input({B, S}, DType::i64);
  const int64_t P = inf && b.pass().from_generate ? B : 1;
  if (P > 1) b.input({B, S}, DType::i64);
  return {embed, ids, b.embedding(ids, embed), P};
}

TensorId llama_attention(GraphBuilder& b, const TransformerSpec& s, const LlamaLayerParams& w, TensorId x, TensorId cos,
                   TensorId sin, TensorId mask, int64_t window, TensorId& weights) {
  auto [q, k, v] = llama_qkv_views(b, s, w, x, mask);
  const TensorId v_proj = v;  // value_states (held) until the module returns or the cache rebinds it
  b.hold(q);  // apply_rotary_pos_emb(q, k, ...): the caller rebinds q and k only once both are rotated
  b.hold(k);
  auto [qe, ke] = rope_qk(b, q, k, cos, sin);
  TensorId out = attention_o_proj(b, s, qe, ke, v, v_proj, mask, window, w.o, w.ob, weights);
  return out;
}

TensorId eager_attention_o_proj(GraphBuilder& b, const TransformerSpec& s, TensorId qe, TensorId ke, TensorId v,
                                TensorId v_proj, TensorId mask, int64_t window, TensorId o, TensorId ob,
                                TensorId& weights) {
  const bool inf = !b.training();
  const int64_t B = b.config().batch_size, S = inf ? b.pass().new_tokens : b.config().seq_len, nh = s.num_heads,
                nkv = s.num_kv_heads, hd = s.head_dim;
  weights = kNoTensor;
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
  b.hold(kr);  // bound until eager_attention_forward returns
  b.hold(vr);
  const bool batch_dims_copy = B > 1;
  TensorId scores = b.scalar_op(
      "mul_scalar", b.matmul(qe, kr, {B, nh, S, Lk}, batch_dims_copy, batch_dims_copy && kr == ke && !cached), false);
  TensorId masked = b.add(scores, mask);
  b.hold(masked);  // softmax(x, dtype=float32).to(query.dtype): one statement
  TensorId probs = b.to(b.softmax_last(b.to(masked, DType::f32)), b.dtype(qe));
  b.drop(masked);
  probs = b.dropout(probs, s.attn_dropout);
  weights = probs;
  b.hold(weights);
  TensorId ctx = b.contiguous_copy(b.matmul(probs, vr, {B, nh, S, hd}, false, batch_dims_copy && vr == v && !cached),
                                   {B, S, nh, hd}, /*grad_copied=*/batch_dims_copy);
  b.drop(kr);
  b.drop(vr);
  TensorId out = b.linear(b.view(ctx, {B, S, nh * hd}), o, ob);
  b.drop(qe);
  b.drop(ke);  // key_states: the rotated k in training, the cache's tensor in inference
  if (!cached) b.drop(v_proj);
  return out;
}

TensorId attention_o_proj(GraphBuilder& b, const TransformerSpec& s, TensorId qe, TensorId ke, TensorId v,
                          TensorId v_proj, TensorId mask, int64_t window, TensorId o, TensorId ob, TensorId& weights) {
  const auto& cfg = b.config();
  const bool inf = !b.training();
  const int64_t B = cfg.batch_size, S = inf ? b.pass().new_tokens : cfg.seq_len;
  TensorId ctx = attention_core(b, s, qe, ke, v, v_proj, mask, window, weights);
  TensorId out = b.linear(b.view(ctx, {B, S, s.num_heads * s.head_dim}), o, ob);
  b.drop(qe);
  b.drop(ke);
  if (!b.kv_cached()) b.drop(v_proj);  // the cache's update rebound (and so dropped) it
  return out;
}

TensorId llama_decoder_layer(GraphBuilder& b, const TransformerSpec& s, int64_t i, const LlamaDecoderParams& d,
                             TensorId h, TensorId inputs_embeds, const LlamaAttentionFn& attention) {
  const LlamaLayerParams& w = d.attn;
  b.begin_layer("layers." + std::to_string(i), layer_checkpointed(b.config(), i));
  const TensorId layer_in = h;
  b.hold(layer_in);  // the model's loop variable holds the layer input until the layer returns
  const FfnParams& f = d.ffn;
  h = llama_residual_blocks(b, h, w.in_norm, w.post_norm, attention, [&](TensorId n2) {
    return s.num_experts > 0 ? moe_grouped_mm(b, s, f, n2)
                             : swiglu_mlp(b, n2, f.gate, f.up, f.down, f.gate_b, f.up_b, f.down_b);
  });
  if (layer_in != inputs_embeds) b.drop(layer_in);
  b.end_layer();
  return h;
}

TensorId llama_residual_blocks(GraphBuilder& b, TensorId h, TensorId in_norm, TensorId post_norm,
                               const LlamaAttentionFn& attention, const LlamaMlpFn& mlp) {
  TensorId n1 = rms_norm(b, h, in_norm);
  b.hold(n1);  // bound to hidden_states until self_attn returns
  TensorId attn_weights = kNoTensor;
  TensorId a = attention(n1, attn_weights);
  b.drop(n1);
  TensorId h1 = b.add(h, a);
  TensorId n2 = rms_norm(b, h1, post_norm);
  b.hold(n2);  // bound to hidden_states until the MLP returns
  TensorId m = mlp(n2);
  b.drop(n2);
  TensorId out = b.add(h1, m);
  if (attn_weights != kNoTensor) b.drop(attn_weights);
  return out;
}

// transformers 5.17 MixtralSparseMoeBlock with its default experts_implementation "grouped_mm"
// (integrations/moe.py grouped_mm_experts_forward, read from the installed package on the H200): the TopK router
// (linear, fp32 softmax, topk, renormalised in place; the routing weights stay fp32), then, over the R = T * k
// routed rows: sort the expert ids, gather hidden[perm // k] [R, H], masked_fill_ the sentinel rows, grouped_mm
// with gate_up_proj [R, 2I] and an out-of-place masked_fill, chunk, silu(gate) * up [R, I], grouped_mm with
// down_proj [R, H], masked_fill, times the fp32 routing weight (so fp32 [R, H] for 16-bit models), gathered back
// to token order, view(T, k, H).sum(1) and cast to the input dtype. grouped_mm is not autocast: under amp the
// experts run in fp32 on the fp32 residual stream. Its backward returns the input gradient and a gradient of the
// whole 3-d weight; the gathers' backward scatters into a zero-filled tensor of the source's size.
TensorId moe_grouped_mm(GraphBuilder& b, const TransformerSpec& s, const FfnParams& w, TensorId x) {
  const int64_t H = s.hidden_size, I = s.intermediate_size, E = s.num_experts, K = s.num_experts_per_tok;
  const int64_t B = b.config().batch_size, Sq = b.training() ? b.config().seq_len : b.pass().new_tokens;
  const int64_t T = checked_mul(B, Sq), R = checked_mul(T, K);
  const DType dt = b.dtype(x);
  TensorId flat = b.view(x, {T, H});
  const TensorId router = w.gate, gate_up = w.up, down = w.down;
  // Router.
  TensorId logits = b.linear(flat, router);
  TensorId probs = b.softmax_last(b.to(logits, DType::f32));
  auto top = b.generic({"topk", {probs}, {{{T, K}, DType::f32}, {{T, K}, DType::i64}}, {}, {1}, {}, {}});
  TensorId weights = b.binary("div", top[0], b.reduce_last("sum", top[0], false), true, true);  // fp32
  if (!b.training() && b.pass().from_generate && b.pass().past_len > 0) {
    // generate()'s decode steps run batched_mm_experts_forward (GenerationMixin._optimize_model_for_decode swaps
    // grouped_mm for batched_mm on CUDA after the prefill): per-row copies of the routed experts' weights
    // (deepseek_parts.cpp experts_batched_mm, reached through experts_grouped_mm's decode dispatch).
    ExpertsParams e;
    e.experts = E;
    e.top_k = K;
    e.inter = I;
    e.gate_up = gate_up;
    e.down = down;
    return b.view(experts_grouped_mm(b, e, flat, weights, top[1]), {B, Sq, H});
  }
  // Routing bookkeeping (int64 / int32 vectors of R or E entries).
  auto sorted = b.generic({"sort", {top[1]}, {{{R}, DType::i64}, {{R}, DType::i64}}, {}, {}, {}, {}});
  TensorId perm = sorted[1];
  b.hold(perm);
  b.hold(sorted[0]);
  TensorId rows = b.generic_one("floor_divide", {perm}, {R}, DType::i64);
  const TensorId selected_g = b.generic_one("index", {flat, rows}, {R, H}, dt, {1});
  b.hold(selected_g);  // selected_hidden_states_g: a local until the function returns
  TensorId sample_w = b.generic_one("index", {b.view(weights, {R}), perm}, {R}, DType::f32, {1});
  b.hold(sample_w);
  TensorId offsets = b.generic_one("cumsum", {b.generic_one("histc", {sorted[0]}, {E}, DType::i32)}, {E}, DType::i32);
  b.hold(offsets);
  TensorId sentinel = b.generic_one("sentinel_mask", {sorted[0]}, {R, 1}, DType::boolean);
  b.hold(sentinel);
  const TensorId selected = b.inplace_fresh_grad("masked_fill_", selected_g, {sentinel});
  // Experts: proj_out is rebound at every step, so each intermediate goes once the next exists (unless saved).
  // Reads weight first: its backward computes the weight gradient before the input's (whole-run stream).
  TensorId proj = b.generic_one("grouped_mm", {gate_up, selected, offsets}, {R, 2 * I}, dt, {0, 1});
  proj = b.generic_one("masked_fill", {proj, sentinel}, {R, 2 * I}, dt);
  const auto halves = b.split(proj, 2, {R, I});
  proj = b.mul(b.unary("silu", halves[0], true, false), halves[1]);
  proj = b.generic_one("grouped_mm", {down, proj, offsets}, {R, H}, dt, {0, 1});
  proj = b.generic_one("masked_fill", {proj, sentinel}, {R, H}, dt);
  b.hold(proj);  // not rebound after the weighting: bound until the function returns
  TensorId weighted = b.mul(proj, b.view(sample_w, {R, 1}));
  TensorId inv_perm = b.generic_one("inv_perm", {perm}, {R}, DType::i64);
  weighted = b.generic_one("index", {weighted, inv_perm}, {R, H}, b.dtype(weighted), {1});
  b.hold(weighted);
  TensorId summed = b.generic_one("sum_topk", {weighted}, {T, H}, b.dtype(weighted));  // view(T, k, H).sum(1)
  TensorId out = b.to(summed, dt);
  for (TensorId t : {weighted, proj, selected_g, sample_w, offsets, sentinel, perm, sorted[0]}) b.drop(t);
  return b.view(out, {B, Sq, H});
}

std::pair<TensorId, TensorId> rotary_cos_sin(GraphBuilder& b, int64_t positions_rows, int64_t seq, int64_t rot_dim,
                                             DType out_dtype) {
  const int64_t P = positions_rows, S = seq;
  auto f32 = [&](std::string_view name, std::vector<TensorId> reads, Shape shape) {
    return b.generic({name, std::move(reads), {{std::move(shape), DType::f32}}, {}, {}, {}, {}})[0];
  };
  const TensorId positions = f32("to_copy", {}, {P, 1, S});
  const TensorId freqs = f32("matmul", {positions}, {P, rot_dim / 2, S});
  const TensorId emb = f32("cat", {freqs}, {P, 1, S, rot_dim});
  const TensorId cos32 = f32("mul_scalar", {f32("cos", {emb}, {P, 1, S, rot_dim})}, {P, 1, S, rot_dim});
  const TensorId sin32 = f32("mul_scalar", {f32("sin", {emb}, {P, 1, S, rot_dim})}, {P, 1, S, rot_dim});
  for (TensorId t : {positions, freqs, emb, cos32, sin32}) b.hold(t);
  TensorId cos = b.to(cos32, out_dtype);
  TensorId sin = b.to(sin32, out_dtype);
  for (TensorId t : {positions, freqs, emb, cos32, sin32})
    if (t != cos && t != sin) b.drop(t);
  return {cos, sin};
}

TensorId llama_text_model(GraphBuilder& b, const TransformerSpec& s, TensorId h, int64_t P, bool batch_aware_eager,
                          const OtherLayerFn& other_layer) {
  const auto& cfg = b.config();
  const bool inf = !b.training();
  const int64_t S = inf ? b.pass().new_tokens : cfg.seq_len, H = s.hidden_size, hd = s.head_dim;
  const bool emb_train = !cfg.freeze_embeddings;
  const TensorId inputs_embeds = h;
  // The attention masks come before the rotary embedding (LlamaModel.forward; whole-run stream of an eager
  // Llama: bool + float mask, then the rotary GEMM and its cuBLAS workspace).
  TensorId mask = kNoTensor, sliding_mask = kNoTensor;
  if (!inf) {
    if (cfg.attn == AttnImpl::eager) {
      mask = eager_mask(b, 1, S, S, b.dtype(h));
    } else if (s.sliding_window > 0 && S >= s.sliding_window) {
      // SDPA cannot express a sliding window with is_causal: transformers materialises a [1, 1, S, S] bool
      // mask (sdpa_mask, with a temporary of its size) once the window is shorter than the sequence.
      sliding_mask = b.generic({"sdpa_mask", {}, {{{1, 1, S, S}, DType::boolean}}, {}, {}, {S * S}, {}})[0];
    }
  } else {
    bool any_full = false;
    for (int64_t i = 0; i < s.num_layers; ++i) any_full = any_full || !layer_is_sliding(s, i);
    mask = any_full ? inference_mask(b, 0, b.dtype(h)) : kNoTensor;
    sliding_mask = s.sliding_window > 0 ? inference_mask(b, s.sliding_window, b.dtype(h)) : kNoTensor;
  }
  for (TensorId m : {mask, sliding_mask})
    if (m != kNoTensor) b.hold(m);  // causal_mask(_mapping) lives until LlamaModel.forward returns

  // LlamaRotaryEmbedding (llama_parts.h): fp32 locals, then cos / sin in the hidden dtype.
  const std::pair<TensorId, TensorId> cos_sin = rotary_cos_sin(b, P, S, hd, b.dtype(h));
  const TensorId cos = cos_sin.first, sin = cos_sin.second;  // named, not a structured binding: clang 14 cannot capture those
  // LlamaModel.forward keeps inputs_embeds and position_embeddings bound until it returns (after the norm).
  b.hold(inputs_embeds);
  b.hold(cos);
  b.hold(sin);
  for (int64_t i = 0; i < s.num_layers; ++i) {
    if (other_layer && other_layer(i, h)) continue;
    const std::string p = "layers." + std::to_string(i) + ".";
    const bool train = !layer_frozen(cfg, i);
    const LlamaDecoderParams d = llama_decoder_params(b, s, p, train);
    const bool sliding = sliding_mask != kNoTensor && layer_is_sliding(s, i);
    const TensorId m = sliding ? sliding_mask : mask;
    const int64_t window = sliding ? s.sliding_window : 0;
    h = llama_decoder_layer(b, s, i, d, h, inputs_embeds, [&](TensorId x, TensorId& weights) {
      if (!batch_aware_eager || cfg.attn != AttnImpl::eager) return llama_attention(b, s, d.attn, x, cos, sin, m, window, weights);
      auto [q, k, v] = llama_qkv_views(b, s, d.attn, x, m);
      const TensorId v_proj = v;
      b.hold(q);
      b.hold(k);
      auto [qe, ke] = rope_qk(b, q, k, cos, sin);
      return eager_attention_o_proj(b, s, qe, ke, v, v_proj, m, window, d.attn.o, d.attn.ob, weights);
    });
  }
  b.hold(h);  // `hidden_states = self.norm(hidden_states)` rebinds only once the norm has returned
  TensorId hn = rms_norm(b, h, b.param("norm.weight", {H}, emb_train));
  for (TensorId t : {h, inputs_embeds, cos, sin, mask, sliding_mask})
    if (t != kNoTensor) b.drop(t);
  return hn;
}

void build_llama(GraphBuilder& b, const TransformerSpec& s) {
  auto [embed, ids, h, P] = llama_inputs(b, s);  // position_ids rows P: B inside generate(), else 1
  causal_lm_tail(b, s, llama_text_model(b, s, h, P), embed, ids);
}

}  // namespace memplan
