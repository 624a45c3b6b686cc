// GPTNeoForCausalLM (transformers 5.17 models/gpt_neo/modeling_gpt_neo.py), training forward + causal-LM loss, or
// one inference pass with the DynamicCache. Eager attention only: GPT_NEO_ATTENTION_CLASSES has eager and
// flash_attention_2 and the class leaves _supports_sdpa False, so from_config refuses "sdpa" and so does the builder.
//   GPTNeoModel.forward: inputs_embeds = wte(ids); position_ids (arange); create_causal_mask (eager: a float
//     [B, 1, S, kv] mask in the embeddings' dtype, from a bool one freed at once); position_embeds = wpe(ids);
//     inputs_embeds + position_embeds (all three bound until forward returns); drop (embed_dropout); the blocks,
//     each call's returned tuple (hidden_states, attn_weights) bound to `outputs` until the next block has
//     returned (the last one until forward returns); ln_f.
//   GPTNeoBlock: residual = h; n = ln_1(h); attn_output, attn_weights = attn(n); h1 = attn_output + residual (n
//     freed); n2 = ln_2(h1); ff = mlp(n2); out = h1 + ff (n2 freed); attn_output, attn_weights, h1 and ff bound
//     until the block returns. The model's loop variable keeps the block's input until then.
//   GPTNeoSelfAttention.forward: q_proj, k_proj, v_proj (no bias) of n, each viewed [B, S, nh, hd] and permuted to
//     [B, nh, S, hd] (bound until forward returns); the cache update (inference: key / value rebound to the cat
//     outputs); _attn: query.to(fp32), key.to(fp32) (locals of _attn), matmul(query, key^T) with no 1 / sqrt(d)
//     scaling, torch.where(bias[..., kv - q : kv, :kv], scores, torch.tensor(finfo.min)) (the bool buffer slice is
//     a view; the 0-dim fill value a tensor of the scores' dtype, bound until _attn returns), + the causal mask,
//     softmax, .to(value dtype), dropout (attention_dropout), matmul with value; _merge_heads (permute.contiguous),
//     out_proj (biased), resid_dropout.
//   GPTNeoMLP: c_fc -> ACT2FN[activation_function] (gelu_new) -> c_proj -> dropout(resid_dropout), nn.Linear with bias.
// Registration order (module order; model.to("cuda") moves module by module, children first, a module's own
// buffers after its children's parameters): wte, wpe, per block ln_1, attn.attention k_proj, v_proj, q_proj,
// out_proj (weight, bias), the attention's non-persistent bool `bias` buffer [1, 1, P, P] (P =
// max_position_embeddings; local layers xor a lower band out of it, same size), ln_2, mlp c_fc, c_proj, then
// ln_f, lm_head (tied to wte unless tie_word_embeddings is false). The measured runs build the model on the CPU and
// move it (load "to_device"), so their streams hold no construction tensors.
// Local and global layers run the same ops on same-sized tensors, and DynamicCache(config=...) gives every layer a
// full DynamicLayer (GPTNeoConfig has no sliding_window / layer_types): the local layers' cache keeps every token.
#include "engine/arch/builders.h"

#include <string>
#include <vector>

#include "engine/arch/decoders/parts/gpt_parts.h"
#include "engine/arch/decoders/parts/phi_parts.h"
#include "engine/errors.h"

namespace memplan {

namespace {

struct GptNeoLayer {
  TensorId ln1_w, ln1_b, k, v, q, o, o_b, mask_buf, ln2_w, ln2_b, fc, fc_b, proj, proj_b;
};

GptNeoLayer gpt_neo_layer_params(GraphBuilder& b, const TransformerSpec& s, int64_t i, bool train) {
  const int64_t H = s.hidden_size, I = s.intermediate_size, P = s.max_position_embeddings;
  const std::string p = "transformer.h." + std::to_string(i) + ".";
  auto param = [&](const std::string& n, Shape shape) { return b.param(p + n, std::move(shape), train); };
  GptNeoLayer w;
  w.ln1_w = param("ln_1.weight", {H});
  w.ln1_b = param("ln_1.bias", {H});
  w.k = param("attn.attention.k_proj.weight", {H, H});
  w.v = param("attn.attention.v_proj.weight", {H, H});
  w.q = param("attn.attention.q_proj.weight", {H, H});
  w.o = param("attn.attention.out_proj.weight", {H, H});
  w.o_b = param("attn.attention.out_proj.bias", {H});
  w.mask_buf = b.buffer(p + "attn.attention.bias", {1, 1, P, P}, DType::boolean);
  w.ln2_w = param("ln_2.weight", {H});
  w.ln2_b = param("ln_2.bias", {H});
  w.fc = param("mlp.c_fc.weight", {I, H});
  w.fc_b = param("mlp.c_fc.bias", {I});
  w.proj = param("mlp.c_proj.weight", {H, I});
  w.proj_b = param("mlp.c_proj.bias", {H});
  return w;
}

// GPTNeoSelfAttention.forward on the normed input x; `weights` receives _attn's attention weights (returned to
// the block, then held by the model's `outputs`).
TensorId gpt_neo_attention(GraphBuilder& b, const TransformerSpec& s, const GptNeoLayer& w, TensorId x,
                           TensorId mask, TensorId& weights) {
  const auto& cfg = b.config();
  const bool inf = !b.training();
  const int64_t B = cfg.batch_size, S = inf ? b.pass().new_tokens : cfg.seq_len, H = s.hidden_size,
                nh = s.num_heads, hd = s.head_dim;
  // _split_heads: view [B, S, nh, hd] then permute(0, 2, 1, 3). In training each head view's gradient comes back
  // contiguous [B, nh, S, hd] (from matmul's copies, through query / key's ToCopyBackward), so ViewBackward's
  // reshape of the permuted gradient copies it.
  auto split_heads = [&](TensorId t) {
    return inf ? b.view(t, {B, nh, S, hd}) : b.view_copying_grad(t, {B, nh, S, hd});
  };
  // Each projection is emitted with its head split (q_proj, view, k_proj, view, ...), where Python runs the three
  // projections first: views allocate nothing in forward, and the backward order this gives (each view's
  // gradient copy, then its projection's backward) is one event off autograd's (two copies, a projection, the
  // third copy, two projections); emitting Python's order puts all three copies first, one event further off
  // (fp32 row -0.03 % instead of -0.01 %).
  const TensorId q = split_heads(b.linear(x, w.q));
  b.hold(q);
  TensorId k = split_heads(b.linear(x, w.k));
  b.hold(k);
  TensorId v = split_heads(b.linear(x, w.v));
  b.hold(v);
  int64_t Lk = S;
  if (inf) {
    // `key, value = layer_past.update(key, value, self.layer_id)` rebinds both: the projections die with it.
    Lk = rebind_kv_to_cache(b, k, v);
  }
  // _attn. query / key .to(fp32): copies that keep the permuted strides (a no-op for fp32), so matmul copies them
  // again for bmm, except a cached key (a contiguous cat output, transposed: a plain bmm operand).
  const TensorId q32 = b.to(q, DType::f32);
  b.hold(q32);
  const TensorId k32 = b.to(k, DType::f32);
  b.hold(k32);
  // With one query position (a decode step) the permuted [B, nh, 1, hd] views merge their batch and head dims
  // without a copy, and _merge_heads' permute of the [B, nh, 1, hd] context is already contiguous (whole-run
  // generate() stream: no q-sized copy before the scores bmm, none in _merge_heads).
  const bool one = S == 1;
  const TensorId scores = b.matmul(q32, k32, {B, nh, S, Lk}, !one, !inf && !one);
  // mask_value = torch.tensor(finfo(scores.dtype).min, dtype=scores.dtype): a 0-dim tensor bound until _attn
  // returns. torch.where's backward keeps only the condition (the buffer slice) and writes fresh gradients.
  const TensorId fill = b.generic_one("tensor", {}, {}, b.dtype(scores));
  b.hold(fill);
  TensorId t = b.generic_one("where", {w.mask_buf, scores, fill}, b.shape(scores), b.dtype(scores), {0});
  if (mask != kNoTensor) t = b.add(t, mask);  // fp32 under amp: fp16 scores + the fp32 model's mask
  TensorId probs = b.to(b.softmax_last(t), b.dtype(v));
  probs = b.dropout(probs, s.attn_dropout);
  weights = probs;
  b.hold(weights);
  TensorId ctx = b.matmul(probs, v, {B, nh, S, hd}, false, !inf && !one);
  b.drop(q32);
  b.drop(k32);
  b.drop(fill);
  ctx = one ? b.view(ctx, {B, S, nh, hd})  // _merge_heads: permute.contiguous()
            : b.contiguous_copy(ctx, {B, S, nh, hd}, /*grad_copied=*/true);
  const TensorId out = b.linear(b.view(ctx, {B, S, H}), w.o, w.o_b);
  b.drop(q);
  b.drop(k);
  b.drop(v);
  return b.dropout(out, s.resid_dropout);
}

}  // namespace

void build_gpt_neo(GraphBuilder& b, const TransformerSpec& s) {
  const auto& cfg = b.config();
  if (cfg.attn != AttnImpl::eager)
    throw InputError("attn", std::string(attn_name(cfg.attn)),
                     "GPT-Neo has no SDPA attention in transformers 5.17 (from_config refuses it): use eager");
  const bool inf = !b.training();
  const int64_t B = cfg.batch_size, S = inf ? b.pass().new_tokens : cfg.seq_len, H = s.hidden_size, V = s.vocab_size;
  const int64_t P = inf && b.pass().from_generate ? B : 1;  // position_ids rows
  // Built under torch.device("cuda") (RunConfig::weights_load on_device, not measured for gpt_neo): transformers'
  // default-dtype scalar and, at the head, the tied lm_head's own weight until tie_weights(), as the other HF
  // builders.
  // The bias masks' construction temporaries (ones, tril, and for local layers tril and xor, again in
  // _init_weights) are not replayed. model.to("cuda") (the default, every measured row) moves parameters and
  // buffers alone, and the replay then ignores both.
  const GptModelParams<GptNeoLayer> mp = gpt_model_params<GptNeoLayer>(b, s, true, gpt_neo_layer_params);
  const TensorId wte = mp.wte, wpe = mp.wpe;
  const TensorId head = s.tie_word_embeddings ? b.tied_param("lm_head.weight", wte, !cfg.freeze_embeddings) : b.param("lm_head.weight", {V, H}, !cfg.freeze_embeddings);

  const TensorId ids = b.input({B, S}, DType::i64);
  const TensorId inputs_embeds = b.embedding(ids, wte);
  b.hold(inputs_embeds);  // bound until GPTNeoModel.forward returns
  const TensorId position_ids = b.input({P, S}, DType::i64);
  const TensorId mask = inf ? inference_mask(b, 0, b.dtype(inputs_embeds))
                            : eager_mask(b, 1, S, S, b.dtype(inputs_embeds));
  b.hold(mask);
  const TensorId position_embeds = b.embedding(position_ids, wpe);
  b.hold(position_embeds);
  TensorId h = b.dropout(b.add(inputs_embeds, position_embeds), s.embd_dropout);

  TensorId prev_weights = kNoTensor;  // the previous block's attn_weights, held by `outputs`
  for (int64_t i = 0; i < s.num_layers; ++i) {
    const GptNeoLayer& w = mp.layers[static_cast<size_t>(i)];
    b.begin_layer("transformer.h." + std::to_string(i), layer_checkpointed(cfg, i));
    const TensorId block_in = h;
    b.hold(block_in);  // the model's loop variable holds the block input until the block returns
    const TensorId n = b.layer_norm(h, w.ln1_w, w.ln1_b);
    b.hold(n);
    TensorId weights = kNoTensor;
    const TensorId a = gpt_neo_attention(b, s, w, n, mask, weights);
    b.hold(a);
    const TensorId h1 = b.add(a, h);
    b.drop(n);  // `hidden_states = attn_output + residual` rebinds the norm's output
    b.hold(h1);
    const TensorId n2 = b.layer_norm(h1, w.ln2_w, w.ln2_b);
    b.hold(n2);
    const TensorId m = fc_act_proj_mlp(b, s, n2, w.fc, w.fc_b, w.proj, w.proj_b);
    b.hold(m);
    h = b.add(h1, m);
    b.drop(n2);
    b.drop(a);
    b.drop(h1);
    b.drop(m);
    b.drop(block_in);
    b.end_layer();
    if (prev_weights != kNoTensor) b.drop(prev_weights);  // `outputs = block(...)` rebinds once the block returns
    prev_weights = weights;
  }
  const TensorId hf = gpt_final_norm(b, h, mp.lnf_w, mp.lnf_b, {inputs_embeds, mask, position_embeds, prev_weights});
  causal_lm_head_forward(b, s, hf, wte, head, ids);
}

}  // namespace memplan
