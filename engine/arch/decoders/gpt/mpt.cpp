// MptForCausalLM (transformers 5.17 models/mpt/modeling_mpt.py, read from the installed file after family set 49
// was predicted from the code index's 4.4x-era copy; MPT's own eager attention with ALiBi, no SDPA path), training
// forward + causal-LM loss, or one inference pass.
//
// MptModel.forward: inputs_embeds = wte(ids) (bound, as hidden_states' first value, until the forward returns);
//   alibi = build_mpt_alibi_tensor(n_heads, max_seq_len): arange(1 - max_seq_len, 1) int32 times fp32 slopes
//   (1 / 2^(i * 8 / n), the power-of-two rule), an fp32 [n_heads, 1, max_seq_len]; causal_mask =
//   create_causal_mask(...).to(torch.bool) (eager: the float [B, 1, S, L] mask, a temporary, then its bool copy,
//   bound to the end); the blocks, each call's returned (output, attn_weights) bound to `outputs` until the next
//   block has returned; norm_f. No position table: HF's MPT ignores learned_pos_emb and always adds ALiBi.
// MptBlock: layernorm_output = norm_1(h) (nn.LayerNorm with its bias set to None); residual = h; attn_outputs,
//   attn_weights = attn(...) (bound until the block returns); h = resid_attn_dropout(attn_outputs) + residual
//   (p = attn_config.attn_pdrop); layernorm_output = norm_2(h); residual = h; output = ffn(layernorm_output,
//   residual): down_proj(GELU(up_proj(x))) (exact gelu, no biases), F.dropout (attn_pdrop), + residual; the
//   GELU output and down_proj's are the MLP's locals, bound until it returns (the checkpointed row's stream with
//   frames, recordings/families35s: the recompute frees them after the residual add).
// MptAttention: mixed_qkv = Wqkv(h) [B, S, 3H] (no bias; clip_qkv clamps it into a new tensor), bound until the
//   attention returns; chunk(3) and reshape(B, S, nh, hd).transpose(1, 2): strided views of it (inference: key and
//   value rebound to the cache update's cat); attention_scores = matmul(q, k^T) * softmax_scale (matmul copies each
//   view whose batch and head dims cannot merge, B > 1, and bmm saves the copies; the product a new tensor);
//   + position_bias (the fp32 alibi slice [nh, 1, L]: the sum is fp32 whatever the model dtype); masked_fill(
//   causal_mask, finfo(q.dtype).min) (a new fp32 tensor, bound to attention_scores until the attention returns;
//   MaskedFillBackward keeps the mask); softmax(scores.float()) (fp32, saves its output), .to(value.dtype) (a copy
//   unless fp32), dropout; matmul with v (a copy of the view for bmm); permute(0, 2, 1, 3).contiguous() (a copy);
//   out_proj (no bias).
// MptForCausalLM: lm_head (no bias, tied to wte), loss_function (ForCausalLMLoss).
// Registration order: transformer.wte, per block norm_1.weight, attn.Wqkv, attn.out_proj, norm_2.weight,
// ffn.up_proj, ffn.down_proj; transformer.norm_f.weight; lm_head (tied).
#include <cmath>
#include <string>

#include "engine/arch/builders.h"
#include "engine/errors.h"

namespace memplan {

namespace {

struct MptLayer {
  TensorId ln1, qkv, out, ln2, up, down;
};

MptLayer mpt_layer_params(GraphBuilder& b, const TransformerSpec& s, int64_t i, bool train) {
  const int64_t H = s.hidden_size, F = s.intermediate_size;
  const std::string p = "transformer.blocks." + std::to_string(i) + ".";
  MptLayer w;
  w.ln1 = b.param(p + "norm_1.weight", {H}, train);
  w.qkv = b.param(p + "attn.Wqkv.weight", {3 * H, H}, train);
  w.out = b.param(p + "attn.out_proj.weight", {H, H}, train);
  w.ln2 = b.param(p + "norm_2.weight", {H}, train);
  w.up = b.param(p + "ffn.up_proj.weight", {F, H}, train);
  w.down = b.param(p + "ffn.down_proj.weight", {H, F}, train);
  return w;
}

// MptAttention.forward on the normed input x. Returns attn_output; `probs` receives attn_weights (returned: the
// block binds them until it returns, the model's `outputs` until the next block has returned).
TensorId mpt_attention(GraphBuilder& b, const TransformerSpec& s, const MptLayer& w, TensorId x, TensorId alibi,
                       TensorId mask, TensorId& probs) {
  const auto& cfg = b.config();
  const bool inf = !b.training();
  const int64_t B = cfg.batch_size, S = inf ? b.pass().new_tokens : cfg.seq_len, H = s.hidden_size,
                nh = s.num_heads, hd = s.head_dim;
  std::vector<TensorId> locals;  // bound until the attention returns
  auto bound = [&](TensorId t) {
    b.hold(t);
    locals.push_back(t);
    return t;
  };
  TensorId qkv = bound(b.linear(x, w.qkv));  // mixed_qkv
  if (s.mpt_clip_qkv > 0) qkv = bound(b.generic_one("clamp", {qkv}, b.shape(qkv), b.dtype(qkv), {0}));
  const auto parts = b.split(qkv, 3, {B, nh, S, hd});  // chunk(3, dim=2), reshape, transpose: views
  TensorId q = parts[0], k = parts[1], v = parts[2];
  // A head-split view of [B, S, 3H] merges its batch and head dims only when B is 1; cache tensors always do.
  const bool strided = B > 1;
  bool kv_strided = strided;
  int64_t L = S;
  if (inf && b.pass().use_cache) {  // key_states, value_states = past_key_values.update(...): the cache's cat outputs
    const auto [kc, vc] = kv_update(b, k, v, 0);
    k = bound(kc);
    v = bound(vc);
    L = b.shape(kc)[2];
    kv_strided = false;
  }
  // attention_scores is rebound by each statement (matmul * scale, + position_bias, masked_fill), so each
  // earlier value dies at the next; the last, the fp32 masked scores, stays bound until the attention returns.
  TensorId scores = b.scalar_op("mul_scalar", b.matmul(q, k, {B, nh, S, L}, strided, kv_strided), false);
  scores = b.add(scores, b.view(alibi, {nh, 1, L}));  // the fp32 alibi slice: an fp32 sum
  scores = bound(b.generic_one("masked_fill", {scores, mask}, b.shape(scores), b.dtype(scores), {1}));
  probs = b.to(b.softmax_last(b.to(scores, DType::f32)), b.dtype(v));
  probs = b.dropout(probs, s.attn_dropout);
  b.hold(probs);
  const TensorId ctx = b.matmul(probs, v, {B, nh, S, hd}, false, kv_strided);
  const TensorId merged = b.contiguous_copy(ctx, {B, S, nh, hd}, /*grad_copied=*/true);  // permute.contiguous()
  const TensorId out = b.linear(b.view(merged, {B, S, H}), w.out);
  for (TensorId t : locals) b.drop(t);
  return out;
}

}  // namespace

void build_mpt(GraphBuilder& b, const TransformerSpec& s) {
  const auto& cfg = b.config();
  if (cfg.attn != AttnImpl::eager)
    throw InputError("attn", std::string(attn_name(cfg.attn)),
                     "MPT has only its own eager attention with ALiBi in transformers (no SDPA path): use eager");
  const bool inf = !b.training();
  const int64_t B = cfg.batch_size, S = inf ? b.pass().new_tokens : cfg.seq_len, H = s.hidden_size,
                V = s.vocab_size, nh = s.num_heads;
  const int64_t past = inf ? b.pass().past_len : 0, L = past + S, Lmax = s.max_position_embeddings;
  const bool emb_train = !cfg.freeze_embeddings;
  hf_construction_scalar(b);
  const TensorId wte = b.param("transformer.wte.weight", {V, H}, emb_train);
  std::vector<MptLayer> layers;
  for (int64_t i = 0; i < s.num_layers; ++i) layers.push_back(mpt_layer_params(b, s, i, !layer_frozen(cfg, i)));
  const TensorId norm_f = b.param("transformer.norm_f.weight", {H}, emb_train);

  const TensorId ids = b.input({B, S}, DType::i64);
  const TensorId inputs_embeds = b.embedding(ids, wte);
  b.hold(inputs_embeds);  // bound until the forward returns
  auto op = [&](std::string_view name, std::vector<TensorId> reads, Shape shape, DType dt) {
    return b.generic_one(name, std::move(reads), std::move(shape), dt);
  };
  // build_mpt_alibi_tensor: the int32 distances, the fp32 slopes of the next power of two of heads (reordered and
  // cut to n_heads when that differs), their product [1, nh, 1, max_seq_len] squeezed.
  const int64_t n2 = int64_t{1} << static_cast<int>(std::ceil(std::log2(static_cast<double>(nh))));
  const TensorId dist = op("arange", {}, {1, 1, 1, Lmax}, DType::i32);
  TensorId slopes = op("arange", {}, {n2}, DType::f32);
  slopes = op("mul_scalar", {slopes}, {n2}, DType::f32);
  slopes = op("reciprocal_pow", {slopes}, {n2}, DType::f32);
  if (n2 != nh) slopes = op("cat", {slopes}, {nh}, DType::f32);
  const TensorId alibi = op("mul", {dist, slopes}, {nh, 1, Lmax}, DType::f32);
  b.hold(alibi);
  // create_causal_mask(...) (eager: the float mask in the embeddings' dtype), .to(torch.bool): the float mask is a
  // temporary of the statement. In training no attention mask is passed and MptModel makes none, so sdpa_mask's
  // boolean mask is [1, 1, S, L], expanded (the checkpointed bf16 row's stream: a 4 MiB block at b3 s2048).
  const TensorId float_mask = inf ? inference_mask(b, 0, b.dtype(inputs_embeds))
                                  : eager_mask(b, 1, S, L, b.dtype(inputs_embeds));
  const TensorId mask = op("to_bool", {float_mask}, {B, 1, S, L}, DType::boolean);
  b.hold(mask);

  TensorId h = inputs_embeds;
  TensorId prev_probs = kNoTensor;  // the model's `outputs` keeps the last block's attn_weights
  for (int64_t i = 0; i < s.num_layers; ++i) {
    const MptLayer& w = layers[static_cast<size_t>(i)];
    b.begin_layer("transformer.blocks." + std::to_string(i), layer_checkpointed(cfg, i));
    const TensorId layer_in = h;
    b.hold(layer_in);  // the model's hidden_states and the block's `residual`, until the block returns
    const TensorId n1 = b.layer_norm(h, w.ln1, kNoTensor);
    b.hold(n1);  // layernorm_output: bound until rebound to norm_2's output
    TensorId probs = kNoTensor;
    const TensorId a = mpt_attention(b, s, w, n1, alibi, mask, probs);
    b.hold(a);  // attn_outputs: bound until the block returns
    const TensorId h1 = b.add(b.dropout(a, s.attn_dropout), layer_in);
    b.hold(h1);  // `residual` of the MLP, until the block returns
    const TensorId n2 = b.layer_norm(h1, w.ln2, kNoTensor);
    b.drop(n1);
    b.hold(n2);
    // MptMLP.forward: hidden_states = act(up_proj(x)) and intermediate_output = down_proj(...) are bound until it
    // returns, past the residual add.
    const TensorId g = b.unary("gelu", b.linear(n2, w.up), true, false);
    b.hold(g);
    const TensorId f = b.dropout(b.linear(g, w.down), s.attn_dropout);
    const TensorId out = b.add(f, h1);
    b.drop(g);
    b.drop(n2);
    b.drop(a);
    b.drop(h1);
    if (layer_in != inputs_embeds) b.drop(layer_in);
    b.end_layer();
    if (prev_probs != kNoTensor) b.drop(prev_probs);  // `outputs = block(...)` rebinds once the block returns
    prev_probs = probs;
    h = out;
  }
  b.hold(h);  // `hidden_states = self.norm_f(hidden_states)` rebinds once the norm returns
  const TensorId hn = b.layer_norm(h, norm_f, kNoTensor);
  b.drop(h);
  for (TensorId t : {inputs_embeds, alibi, mask, prev_probs})
    if (t != kNoTensor) b.drop(t);
  const TensorId head = s.tie_word_embeddings ? b.tied_param("lm_head.weight", wte, emb_train)
                                              : b.param("lm_head.weight", {V, H}, emb_train);
  if (inf) {
    inference_head(b, hn, head);
    return;
  }
  causal_lm_training_head(b, hn, head, ids);
}

}  // namespace memplan
