// BloomForCausalLM (transformers 5.17 models/bloom/modeling_bloom.py), eager attention only (transformers 5.17
// has no SDPA path for BLOOM: from_config refuses it), training forward + loss or one inference pass.
//
// BloomModel.forward: inputs_embeds = word_embeddings(ids) (bound until the forward returns);
//   hidden_states = word_embeddings_layernorm(inputs_embeds); attention_mask = torch.ones(B, past + S) of the
//   default dtype when none is passed (generate() passes its int64 mask); alibi = build_alibi_tensor(mask)
//   (slopes, the cumsum positions, slopes * positions [B, nh, L] in fp32, .to(hidden_states.dtype)); the causal
//   mask from create_causal_mask with that 2-d mask as padding mask (a bool copy of it, and_masks of the causal
//   and padding functions: [1, 1, S, L] then [B, 1, S, L] bools, then the float [B, 1, S, L] of eager_mask);
//   the layers (the loop's `outputs` keeps each layer's attention probabilities until the next layer returns);
//   ln_f; lm_head (tied).
// BloomBlock: ln = input_layernorm(h); residual = ln if apply_residual_connection_post_layernorm else h;
//   attention_output, attn_weights = self_attention(ln, residual, ...); ln = post_attention_layernorm(
//   attention_output); residual = ln or attention_output; output = mlp(ln, residual).
// BloomAttention: fused_qkv = query_key_value(x) [B, S, 3H], viewed [B, S, nh, 3, hd], q / k / v three selects
//   (each SelectBackward a zero-filled fused-sized gradient) transposed to [B, nh, S, hd]; the cache update;
//   q / k / v reshaped to [B * nh, S, hd] (copies of the strided selects; views of cache tensors);
//   attention_scores = alibi.baddbmm(q, k^T, beta=1, alpha=1/sqrt(hd)) [B * nh, S, L] (saves q and k^T);
//   attn_weights = scores.view(B, nh, S, L) + mask; softmax(attn_weights, dtype=float32) (an fp32 copy of the
//   input first unless it is fp32), .to(q.dtype); dropout; bmm with v; _merge_heads (a copy); dense;
//   dropout_add(out, residual). attention_scores and attn_weights stay bound until the attention returns.
// BloomMLP: dense_4h_to_h(bloom_gelu(dense_h_to_4h(x))), then dropout_add with the residual. bloom_gelu is
//   GeLUFunction (saves its input; forward and backward evaluate the tanh formula term by term, each term a
//   temporary of the input's size).
// Registration order: word_embeddings, word_embeddings_layernorm, per layer input_layernorm,
// self_attention.query_key_value, self_attention.dense, post_attention_layernorm, mlp.dense_h_to_4h,
// mlp.dense_4h_to_h (weights then biases), ln_f; lm_head tied to the embedding.
#include <cmath>

#include "engine/arch/builders.h"
#include "engine/errors.h"

namespace memplan {

namespace {

struct BloomLayerParams {
  TensorId ln1_w, ln1_b, qkv, qkv_b, dense, dense_b, ln2_w, ln2_b, fc1, fc1_b, fc2, fc2_b;
};

BloomLayerParams bloom_layer_params(GraphBuilder& b, const TransformerSpec& s, const std::string& p, bool train) {
  const int64_t H = s.hidden_size, F = s.intermediate_size;
  BloomLayerParams w{};
  auto param = [&](const std::string& n, Shape shape) { return b.param(p + n, std::move(shape), train); };
  w.ln1_w = param("input_layernorm.weight", {H});
  w.ln1_b = param("input_layernorm.bias", {H});
  w.qkv = param("self_attention.query_key_value.weight", {3 * H, H});
  w.qkv_b = param("self_attention.query_key_value.bias", {3 * H});
  w.dense = param("self_attention.dense.weight", {H, H});
  w.dense_b = param("self_attention.dense.bias", {H});
  w.ln2_w = param("post_attention_layernorm.weight", {H});
  w.ln2_b = param("post_attention_layernorm.bias", {H});
  w.fc1 = param("mlp.dense_h_to_4h.weight", {F, H});
  w.fc1_b = param("mlp.dense_h_to_4h.bias", {F});
  w.fc2 = param("mlp.dense_4h_to_h.weight", {H, F});
  w.fc2_b = param("mlp.dense_4h_to_h.bias", {H});
  return w;
}

// A temporary no autograd node records (GeLUFunction's forward and backward run their formula without grad).
TensorId temp(GraphBuilder& b, std::string_view name, std::vector<TensorId> reads, const Shape& shape, DType dt) {
  return b.generic_one(name, std::move(reads), shape, dt);
}

// GeLUFunction.apply(x): bloom_gelu_forward's terms, evaluated as Python does
// x * 0.5 * (1.0 + torch.tanh(0.79788456 * x * (1 + 0.044715 * x * x))): t1 = x*0.5, t2 = 0.798*x,
// t3 = 0.0447*x, t4 = t3*x, t5 = 1+t4, t6 = t2*t5, t7 = tanh, t8 = 1+t7, out = t1*t8 (at most four temporaries
// live at once). Saved: x. Backward (bloom_gelu_back): tanh_out recomputed, then ff's terms (five x-sized
// temporaries at most), ff * g; tanh_out and ff are alive while the gradient is written.
TensorId bloom_gelu(GraphBuilder& b, TensorId x) {
  const Shape sh = b.shape(x);
  const DType dt = b.dtype(x);
  const TensorId t1 = temp(b, "mul_scalar", {}, sh, dt);
  const TensorId t2 = temp(b, "mul_scalar", {}, sh, dt);
  const TensorId t3 = temp(b, "mul_scalar", {}, sh, dt);
  const TensorId t4 = temp(b, "mul", {t3}, sh, dt);
  const TensorId t5 = temp(b, "add_scalar", {t4}, sh, dt);
  const TensorId t6 = temp(b, "mul", {t2, t5}, sh, dt);
  const TensorId t7 = temp(b, "tanh", {t6}, sh, dt);
  const TensorId t8 = temp(b, "add_scalar", {t7}, sh, dt);
  const int64_t n = b.info(x).bytes;
  auto outs = b.generic({"bloom_gelu", {x, t1, t8}, {{sh, dt}}, {0}, {}, {}, {4 * n}});
  return outs[0];
}

// The layer's attention; `probs` receives the probabilities it returns (bound by the caller).
TensorId bloom_attention(GraphBuilder& b, const TransformerSpec& s, const BloomLayerParams& w, TensorId x,
                         TensorId residual, TensorId alibi, TensorId mask, TensorId& probs) {
  const auto& cfg = b.config();
  const bool inf = !b.training();
  const int64_t B = cfg.batch_size, S = inf ? b.pass().new_tokens : cfg.seq_len, H = s.hidden_size,
                nh = s.num_heads, hd = s.head_dim;
  const TensorId fused = b.linear(x, w.qkv, w.qkv_b);
  b.hold(fused);  // fused_qkv: bound until the attention returns
  TensorId q = b.split(fused, 1, {B, nh, S, hd})[0];
  TensorId k = b.split(fused, 1, {B, nh, S, hd})[0];
  TensorId v = b.split(fused, 1, {B, nh, S, hd})[0];
  int64_t L = S;
  bool kv_views = false;  // cache tensors are contiguous: their reshape is a view
  if (inf) {
    auto [kc, vc] = kv_update(b, k, v, 0);
    k = kc;
    v = vc;
    L = b.shape(kc)[2];
    kv_views = true;
  }
  // reshape(B * nh, -1, hd) of a select of [B, S, nh, 3, hd]: batch and heads merge only when one of B and S is 1
  // (a view then; the GEMMs take the strided rows), else a copy. Cache tensors are contiguous cat outputs.
  const bool merge = B == 1 || S == 1;
  const TensorId qr = merge ? b.view(q, {B * nh, S, hd}) : b.contiguous_copy(q, {B * nh, S, hd});
  b.hold(qr);
  const TensorId kr = kv_views || merge ? b.view(k, {B * nh, hd, L}) : b.contiguous_copy(k, {B * nh, hd, L});
  b.hold(kr);
  const TensorId vr = kv_views || merge ? b.view(v, {B * nh, L, hd}) : b.contiguous_copy(v, {B * nh, L, hd});
  b.hold(vr);
  // alibi.baddbmm(batch1=q, batch2=k^T): autocast casts its arguments (alibi under amp), the output takes the
  // operands' dtype; BaddbmmBackward saves batch1 and batch2 (alibi needs no gradient).
  const TensorId kc = b.autocast_low(kr), qc = b.autocast_low(qr), ac = b.autocast_low(alibi);
  const DType sdt = b.dtype(qc);
  auto sc = b.generic({"baddbmm", {qc, kc, ac}, {{{B * nh, S, L}, sdt}}, {0, 1}, {}, {}, {}});
  const TensorId scores = sc[0];
  b.hold(scores);  // attention_scores: bound until the attention returns
  if (ac != alibi) b.drop(ac);
  const TensorId weights = b.add(b.view(scores, {B, nh, S, L}), mask);
  b.hold(weights);  // attn_weights: bound until the attention returns
  TensorId p32 = b.softmax_last(b.to(weights, DType::f32));
  probs = b.to(p32, b.dtype(qr));
  probs = b.dropout(probs, s.attn_dropout);
  b.hold(probs);
  TensorId pc = b.autocast_low(probs), vcst = b.autocast_low(vr);
  auto ctx = b.generic({"matmul", {pc, vcst}, {{{B * nh, S, hd}, b.dtype(pc)}}, {0, 1}, {}, {}, {}});
  // _merge_heads: view, permute, reshape: a copy of the [B, nh, S, hd] context into [B, S, H].
  const TensorId merged = b.contiguous_copy(ctx[0], {B, S, H}, /*grad_copied=*/true);
  b.hold(merged);  // context_layer: bound until the attention returns
  TensorId out = b.linear(merged, w.dense, w.dense_b);
  out = b.add(residual, b.dropout(out, s.resid_dropout));
  for (TensorId t : {fused, qr, kr, vr, scores, weights, merged}) b.drop(t);
  return out;
}

}  // namespace

void build_bloom(GraphBuilder& b, const TransformerSpec& s) {
  const auto& cfg = b.config();
  if (cfg.attn != AttnImpl::eager)
    throw InputError("attn", "sdpa",
                     "bloom has no SDPA attention in transformers 5.17 (BloomForCausalLM does not support "
                     "scaled_dot_product_attention: from_config raises); use eager");
  const bool inf = !b.training();
  const int64_t B = cfg.batch_size, S = inf ? b.pass().new_tokens : cfg.seq_len, H = s.hidden_size,
                V = s.vocab_size, nh = s.num_heads;
  const int64_t past = inf ? b.pass().past_len : 0, L = past + S;
  const bool emb_train = !cfg.freeze_embeddings;
  hf_construction_scalar(b);
  TensorId embed = b.param("transformer.word_embeddings.weight", {V, H}, emb_train);
  const TensorId eln_w = b.param("transformer.word_embeddings_layernorm.weight", {H}, emb_train);
  const TensorId eln_b = b.param("transformer.word_embeddings_layernorm.bias", {H}, emb_train);
  TensorId ids = b.input({B, S}, DType::i64);
  const bool gen = inf && b.pass().from_generate;
  const TensorId gen_mask = gen ? b.input({B, L}, DType::i64) : kNoTensor;
  const TensorId inputs_embeds = b.embedding(ids, embed);
  b.hold(inputs_embeds);  // bound until the model's forward returns
  TensorId h = b.layer_norm(inputs_embeds, eln_w, eln_b);
  const DType hdt = b.dtype(h);

  // attention_mask = torch.ones(B, L) of the default dtype (the model's dtype where the run set it; fp32 under
  // amp), or generate()'s int64 mask; build_alibi_tensor; both bound until the forward returns.
  auto op = [&](std::string_view name, std::vector<TensorId> reads, Shape shape, DType dt) {
    return b.generic_one(name, std::move(reads), std::move(shape), dt);
  };
  const TensorId attention_mask = gen ? gen_mask : op("ones", {}, {B, L}, b.param_dtype());
  b.hold(attention_mask);
  const DType mdt = b.dtype(attention_mask);
  const int64_t cp2 = int64_t{1} << static_cast<int>(std::floor(std::log2(static_cast<double>(nh))));
  TensorId slopes = op("pow", {op("full", {}, {}, DType::f32), op("arange", {}, {cp2}, DType::i32)}, {cp2}, DType::f32);
  if (cp2 != nh) {
    const int64_t extra = std::min(cp2, nh - cp2);
    TensorId more = op("pow", {op("full", {}, {}, DType::f32), op("arange", {}, {extra}, DType::i32)}, {extra},
                       DType::f32);
    slopes = op("cat", {slopes, more}, {nh}, DType::f32);
  }
  TensorId positions = op("cumsum", {attention_mask}, {B, L}, mdt);
  positions = op("sub_scalar", {positions}, {B, L}, mdt);
  positions = op("mul", {positions, attention_mask}, {B, L}, mdt);
  TensorId alibi = op("mul", {slopes, positions}, {B, nh, L}, DType::f32);
  alibi = b.to(b.view(alibi, {B * nh, 1, L}), hdt);
  b.hold(alibi);

  // create_causal_mask: the 2-d mask as bool, and_masks(causal, padding), eager_mask's float mask.
  const TensorId pad = op("to_bool", {attention_mask}, {B, L}, DType::boolean);
  b.hold(pad);
  TensorId allowed = op("and", {op("le", {}, {1, 1, S, L}, DType::boolean)}, {1, 1, S, L}, DType::boolean);
  allowed = op("and", {allowed, op("index", {pad}, {B, 1, 1, L}, DType::boolean)}, {B, 1, S, L}, DType::boolean);
  const TensorId mask = op("where", {allowed}, {B, 1, S, L}, b.dtype(inputs_embeds));
  b.hold(mask);
  b.drop(pad);

  TensorId prev_probs = kNoTensor;  // the loop's `outputs` tuple holds the last layer's attention probabilities
  for (int64_t i = 0; i < s.num_layers; ++i) {
    const std::string p = "transformer.h." + std::to_string(i) + ".";
    const BloomLayerParams w = bloom_layer_params(b, s, p, !layer_frozen(cfg, i));
    b.begin_layer("transformer.h." + std::to_string(i), layer_checkpointed(cfg, i));
    const TensorId layer_in = h;
    b.hold(layer_in);  // the loop variable holds the layer input until the layer returns
    TensorId ln1 = b.layer_norm(h, w.ln1_w, w.ln1_b);
    b.hold(ln1);  // layernorm_output: bound until rebound after the attention
    const TensorId residual1 = s.residual_post_layernorm ? ln1 : layer_in;
    TensorId probs = kNoTensor;
    const TensorId a = bloom_attention(b, s, w, ln1, residual1, alibi, mask, probs);
    b.hold(a);  // attention_output: bound until the layer returns
    TensorId ln2 = b.layer_norm(a, w.ln2_w, w.ln2_b);
    b.drop(ln1);
    b.hold(ln2);
    const TensorId residual2 = s.residual_post_layernorm ? ln2 : a;
    const TensorId act = bloom_gelu(b, b.linear(ln2, w.fc1, w.fc1_b));
    b.hold(act);  // BloomMLP's hidden_states: bound until the MLP returns
    TensorId m = b.linear(act, w.fc2, w.fc2_b);
    const TensorId out = b.add(residual2, b.dropout(m, s.resid_dropout));
    b.drop(act);
    b.drop(ln2);
    b.drop(a);
    if (prev_probs != kNoTensor) b.drop(prev_probs);
    prev_probs = probs;
    if (layer_in != inputs_embeds) b.drop(layer_in);
    b.end_layer();
    h = out;
  }
  b.hold(h);  // `hidden_states = self.ln_f(hidden_states)` rebinds once the norm returns
  const TensorId fw = b.param("transformer.ln_f.weight", {H}, emb_train);
  const TensorId fb = b.param("transformer.ln_f.bias", {H}, emb_train);
  TensorId hn = b.layer_norm(h, fw, fb);
  for (TensorId t : {h, inputs_embeds, attention_mask, alibi, mask, prev_probs})
    if (t != kNoTensor) b.drop(t);
  causal_lm_tail(b, s, hn, embed, ids);
}

}  // namespace memplan
