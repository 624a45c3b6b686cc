// GPTBigCodeForCausalLM (transformers 5.17 models/gpt_bigcode/modeling_gpt_bigcode.py; SantaCoder, StarCoder),
// training forward + causal-LM loss, or one inference pass with the DynamicCache.
//   GPTBigCodeModel.forward: inputs_embeds = wte(ids); position_ids (arange); create_causal_mask (eager: a
//     materialised [B, 1, S, S] mask; SDPA skips it); position_embeds = wpe(position_ids); hidden = inputs_embeds +
//     position_embeds (both bound until forward returns); drop (embd_pdrop); the blocks; ln_f.
//   GPTBigCodeBlock: residual = h; n1 = ln_1(h); attn_output, _ = attn(n1); h1 = attn_output + residual (n1 bound
//     until then); n2 = ln_2(h1); ff = mlp(n2); out = h1 + ff (n2 bound until then; attn_output, the attention
//     weights and ff until the block returns).
//   GPTBigCodeAttention: c_attn is an nn.Linear (addmm with bias, unlike GPT-2's Conv1D). multi_query:
//     c_attn(x).unsqueeze(1).split((H, hd, hd), dim=3), q viewed [B, S, nh, hd] and transposed: strided views of one
//     [B, S, H + 2 hd] buffer, k / v [B, 1, S, hd]; otherwise c_attn(x).view(B, S, nh, 3 hd).transpose(1, 2)
//     .split(hd, dim=3) (its gradient comes back [B, nh, S, 3 hd] and the transposed view's reshape copies it, as
//     gpt_neox's fused projection). Then the cache update (inference), SDPA (the single KV head through
//     enable_gqa, llama_parts.h attention_core) or eager_attention_forward: repeat_kv (one KV head: expand +
//     reshape, a stride-0 view), q @ k^T (torch.matmul copies each operand whose batch and head dims cannot
//     merge: q always, k / v in training and, expanded, with multi_query), * scaling, + mask, softmax in fp32,
//     .to(q dtype), dropout, @ v, transpose(1, 2).contiguous(); c_proj, resid_dropout.
//   GPTBigCodeMLP: c_fc -> ACT2FN[activation_function] (gelu_pytorch_tanh) -> c_proj -> dropout.
// Registration order: wte, wpe, per block ln_1, attn.c_attn, attn.c_proj, ln_2, mlp.c_fc, mlp.c_proj, then ln_f,
// the model's non-persistent `bias` buffer (a bool [n_positions, n_positions] tril the 5.17 code never reads, moved
// to the GPU with the model), and lm_head (tied to wte unless tie_word_embeddings is false).
#include "engine/arch/builders.h"

#include "engine/arch/decoders/parts/llama_parts.h"
#include "engine/arch/decoders/parts/gpt_parts.h"
#include "engine/arch/decoders/parts/phi_parts.h"

namespace memplan {

namespace {

struct BigCodeLayer {
  TensorId ln1_w, ln1_b, attn_w, attn_b, proj_w, proj_b, ln2_w, ln2_b, fc_w, fc_b, fc2_w, fc2_b;
};

BigCodeLayer bigcode_layer_params(GraphBuilder& b, const TransformerSpec& s, int64_t i, bool train) {
  const int64_t H = s.hidden_size, I = s.intermediate_size, qkv = H + 2 * s.num_kv_heads * s.head_dim;
  const std::string p = "transformer.h." + std::to_string(i) + ".";
  auto param = [&](const std::string& n, Shape shape) { return b.param(p + n, std::move(shape), train); };
  BigCodeLayer w;
  w.ln1_w = param("ln_1.weight", {H});
  w.ln1_b = param("ln_1.bias", {H});
  w.attn_w = param("attn.c_attn.weight", {qkv, H});
  w.attn_b = param("attn.c_attn.bias", {qkv});
  w.proj_w = param("attn.c_proj.weight", {H, H});
  w.proj_b = param("attn.c_proj.bias", {H});
  w.ln2_w = param("ln_2.weight", {H});
  w.ln2_b = param("ln_2.bias", {H});
  w.fc_w = param("mlp.c_fc.weight", {I, H});
  w.fc_b = param("mlp.c_fc.bias", {I});
  w.fc2_w = param("mlp.c_proj.weight", {H, I});
  w.fc2_b = param("mlp.c_proj.bias", {H});
  return w;
}

// eager_attention_forward of modeling_gpt_bigcode.py from the (cached) q / k / v on. k and v: [B, nkv, Lk, hd],
// views of c_attn's output in training, the cache's cat outputs in inference.
TensorId eager_attention(GraphBuilder& b, const TransformerSpec& s, TensorId q, TensorId k, TensorId v, TensorId mask,
                         TensorId& weights) {
  const auto& cfg = b.config();
  const bool inf = !b.training();
  const int64_t B = cfg.batch_size, S = inf ? b.pass().new_tokens : cfg.seq_len, nh = s.num_heads,
                nkv = s.num_kv_heads, hd = s.head_dim, Lk = b.shape(k)[2];
  // repeat_kv with one KV head: expand(B, 1, nh, L, hd) + reshape merges the size-1 dim with the stride-0 one, a
  // view whose backward sums the heads' gradients into a fresh [B, 1, L, hd] (the replay's rule for a view larger
  // than its base). With nh KV heads it is k itself.
  const bool expanded = nkv != nh;
  TensorId kr = expanded ? b.view(k, {B, nh, Lk, hd}) : k;
  TensorId vr = expanded ? b.view(v, {B, nh, Lk, hd}) : v;
  b.hold(kr);  // key_states / value_states: bound until the function returns
  b.hold(vr);
  // matmul copies an operand whose batch and head dims cannot merge: q (a strided view of c_attn's output),
  // k^T and v when they are views of c_attn's output (training) or expanded (one KV head); the cache's cat
  // outputs of nh heads merge.
  const bool copy_kv = !inf || expanded;
  TensorId scores = b.scalar_op("mul_scalar", b.matmul(q, kr, {B, nh, S, Lk}, true, copy_kv), false);
  TensorId masked = mask != kNoTensor ? b.add(scores, mask) : scores;
  // softmax(x, dim=-1, dtype=float32).to(query.dtype): one statement, the masked scores bound through it.
  b.hold(masked);
  TensorId probs = b.to(b.softmax_last(b.to(masked, DType::f32)), b.dtype(q));
  b.drop(masked);
  probs = b.dropout(probs, s.attn_dropout);
  weights = probs;
  b.hold(weights);  // `attn_output, _ = self.attn(...)`: bound until the block returns
  TensorId ctx = b.matmul(probs, vr, {B, nh, S, hd}, false, copy_kv);
  ctx = b.contiguous_copy(ctx, {B, S, nh, hd}, /*grad_copied=*/true);  // transpose(1, 2).contiguous()
  b.drop(kr);
  b.drop(vr);
  return ctx;
}

TensorId bigcode_attention(GraphBuilder& b, const TransformerSpec& s, const BigCodeLayer& w, TensorId x, TensorId mask,
                           TensorId& weights) {
  weights = kNoTensor;
  const auto& cfg = b.config();
  const bool inf = !b.training();
  const int64_t B = cfg.batch_size, S = inf ? b.pass().new_tokens : cfg.seq_len, H = s.hidden_size,
                nh = s.num_heads, nkv = s.num_kv_heads, hd = s.head_dim;
  TensorId q, k, v;
  std::vector<TensorId> parts;
  if (s.multi_query) {
    // unsqueeze(1).split((H, kv, kv), dim=3): SplitWithSizesBackward writes the three gradients into one fresh
    // [B, 1, S, H + 2 kv] buffer; q's head view and transpose are views of its slice.
    const TensorId qkv = b.linear(x, w.attn_w, w.attn_b);
    parts = b.split(qkv, {{B, nh, S, hd}, {B, nkv, S, hd}, {B, nkv, S, hd}});
    // Eager attention's bmm hands q a contiguous [B, nh, S, hd] gradient, which the reshape back through the
    // transposed head view copies (the fused kernels return it in q's own layout): a split with one part is a
    // view whose backward writes a fresh gradient of its base's shape.
    q = cfg.attn == AttnImpl::eager ? b.split(parts[0], 1, {B, nh, S, hd})[0] : parts[0];
    k = parts[1];
    v = parts[2];
  } else {
    const TensorId qkv = b.view_copying_grad(b.linear(x, w.attn_w, w.attn_b), {B, nh, S, 3 * hd});
    parts = b.split(qkv, 3, {B, nh, S, hd});
    q = parts[0];
    k = parts[1];
    v = parts[2];
  }
  // `query, key, value = ...` stay bound until the attention returns (the cache update rebinds key / value).
  b.hold(q);
  b.hold(k);
  const TensorId v_bound = v;
  b.hold(v_bound);
  TensorId ctx;
  if (cfg.attn == AttnImpl::sdpa) {
    ctx = attention_core(b, s, q, k, v, v_bound, mask, 0, weights);
  } else {
    if (inf) {
      rebind_kv_to_cache(b, k, v);  // v is v_bound until here
    }
    ctx = eager_attention(b, s, q, k, v, mask, weights);
  }
  TensorId out = b.dropout(b.linear(b.view(ctx, {B, S, H}), w.proj_w, w.proj_b), s.resid_dropout);
  // The locals die when forward returns, after resid_dropout (fp32 eager stream: c_attn's output freed after it).
  b.drop(q);
  b.drop(k);
  b.drop(v);
  if (!inf) b.drop(v_bound);
  return out;
}

}  // namespace

void build_gpt_bigcode(GraphBuilder& b, const TransformerSpec& s) {
  const auto& cfg = b.config();
  const bool inf = !b.training();
  const int64_t B = cfg.batch_size, S = inf ? b.pass().new_tokens : cfg.seq_len, H = s.hidden_size, V = s.vocab_size;
  const int64_t P = inf && b.pass().from_generate ? B : 1;  // position_ids rows
  const GptModelParams<BigCodeLayer> mp = gpt_model_params<BigCodeLayer>(b, s, true, bigcode_layer_params);
  const TensorId wte = mp.wte, wpe = mp.wpe;
  b.buffer("transformer.bias", {s.max_position_embeddings, s.max_position_embeddings}, DType::boolean);
  const TensorId head = s.tie_word_embeddings ? b.tied_param("lm_head.weight", wte, !cfg.freeze_embeddings) : b.param("lm_head.weight", {V, H}, !cfg.freeze_embeddings);

  const TensorId ids = b.input({B, S}, DType::i64);
  const TensorId inputs_embeds = b.embedding(ids, wte);
  b.hold(inputs_embeds);  // bound until GPTBigCodeModel.forward returns
  const TensorId position_ids = b.input({P, S}, DType::i64);
  // create_causal_mask runs before the position embedding: SDPA skips it (no padding, query == kv length),
  // eager materialises [B, 1, S, kv] in the embeddings' dtype.
  const TensorId mask = full_and_sliding_masks(b, s, true, false, b.dtype(inputs_embeds)).full;  // held
  const TensorId position_embeds = b.embedding(position_ids, wpe);
  b.hold(position_embeds);
  TensorId h = b.dropout(b.add(inputs_embeds, position_embeds), s.embd_dropout);

  for (int64_t i = 0; i < s.num_layers; ++i) {
    const BigCodeLayer& w = mp.layers[static_cast<size_t>(i)];
    b.begin_layer("transformer.h." + std::to_string(i), layer_checkpointed(cfg, i));
    const TensorId block_in = h;
    b.hold(block_in);  // the model's loop variable holds the block input until the block returns
    const TensorId n1 = b.layer_norm(h, w.ln1_w, w.ln1_b);
    b.hold(n1);
    TensorId attn_weights = kNoTensor;
    const TensorId a = bigcode_attention(b, s, w, n1, mask, attn_weights);
    b.hold(a);  // attn_output: bound until the block returns
    const TensorId h1 = b.add(a, h);
    b.drop(n1);
    const TensorId n2 = b.layer_norm(h1, w.ln2_w, w.ln2_b);
    b.hold(n2);
    const TensorId m = fc_act_proj_mlp(b, s, n2, w.fc_w, w.fc_b, w.fc2_w, w.fc2_b);
    b.hold(m);
    h = b.add(h1, m);
    b.drop(n2);
    b.drop(a);
    b.drop(m);
    if (attn_weights != kNoTensor) b.drop(attn_weights);
    b.drop(block_in);
    b.end_layer();
  }
  const TensorId hf = gpt_final_norm(b, h, mp.lnf_w, mp.lnf_b, {inputs_embeds, position_embeds, mask});
  // nn.Linear creates lm_head's own weight before tie_weights() replaces it with wte (built on the device).
  causal_lm_head_forward(b, s, hf, wte, head, ids);
}

}  // namespace memplan
