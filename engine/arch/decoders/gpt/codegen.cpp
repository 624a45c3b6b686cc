// CodeGenForCausalLM (transformers 5.17 models/codegen/modeling_codegen.py, the installed file), training forward +
// causal-LM loss, or one inference pass with the DynamicCache. Eager attention only: CodeGen's own _attn, no
// ALL_ATTENTION_FUNCTIONS path and _supports_sdpa False, so from_config refuses attn_implementation "sdpa" (the
// default None falls back to eager) and the builder refuses it too.
// Where it differs from GPT-J (gptj.cpp), whose block, MLP and rotary helpers it copies:
//   - one fused qkv_proj [3H, H] (no bias): qkv = qkv_proj(x) [B, S, 3H] (a local, bound until forward returns);
//     qkv.reshape(B, S, mp_num = 4, 3H / 4) (a view); torch.split(.., H / 4, -1) into query, value, key (in that
//     order; one SplitBackward, whose backward writes one fresh [B, S, 3H] gradient); _split_heads reshapes each to
//     (n_head / 4, head_dim) (a view) then to [B, S, n_head, head_dim], which merges the shard dim (stride 3H / 4)
//     with the heads (n_head / 4 * head_dim = H / 4): not a view unless n_head is 4, so reshape clones each part,
//     query's, key's then value's ([B, S, nh, hd] contiguous copies; q_pass / k_pass views and `value` keep them
//     until forward returns). value.permute(0, 2, 1, 3) is a view whose gradient (contiguous from the bmm) the first
//     reshape's backward copies back (merging heads with head_dim across the permuted strides), as GPT-J's v.
//   - sincos = embed_positions[position_ids]: an fp32 [P, S, rot] gather of the fp32 table (no cast to the keys'
//     dtype, unlike GPT-J), split into sin / cos views. A 16-bit model's rotated slices therefore come out fp32
//     (bf16 x times fp32 cos / sin), and torch.cat([k_rot, k_pass]) / ([q_rot, q_pass]) promotes: key and query are
//     fp32 [B, S, nh, hd] whatever the model dtype (the cat's backward casts k_pass's / q_pass's gradient back).
//   - inference: layer_past.update(key.to(hidden_states.dtype), value): the cache holds keys in the hidden states'
//     dtype (a temporary cast of the fp32 key), query stays fp32.
//   - _attn: query.to(fp32) / key.to(fp32) (no-ops on the promoted tensors in training; key's cached 16-bit copy is
//     cast in inference), matmul(query, key^T) (autocast casts both to the low dtype, keeping the permuted order;
//     matmul's reshape then copies an operand whose batch and head dims cannot merge: B > 1 and S > 1), then
//     + attention_mask (before the scaling, unlike GPT-J: the sum is fp32 with an fp32 mask under amp, or with the
//     fp32 scores of a 16-bit model), / scale_attn, nn.Softmax (fp32 in, fp32 out, saves its output),
//     .to(value.dtype), attn_dropout, matmul with value; _merge_heads (permute.contiguous()), out_proj,
//     resid_dropout. Every local stays bound until forward returns.
// Shared with GPT-J, statement for statement ("Copied from"): CodeGenBlock (n = ln_1(h); attn(n); mlp(n);
// attn_outputs + ff + residual, the block's locals bound until it returns, (out, attn_weights) returned),
// CodeGenMLP (fc_in, gelu_new, fc_out, dropout; fc_act_proj_mlp), apply_rotary_pos_emb / rotate_every_two
// (gptj_apply_rotary), CodeGenModel.forward (inputs_embeds bound to the end; arange position ids [1, S] or
// generate()'s [B, S]; the eager causal mask [B, 1, S, kv] in the embeddings' dtype; drop; each block's returned
// tuple bound to `outputs` until the next block returns; ln_f) and the head: lm_head with bias, loss_function
// (ForCausalLMLoss's fp32 upcast).
// Registration order: transformer.wte, per block ln_1, attn.qkv_proj, attn.out_proj, the attention's non-persistent
// embed_positions buffer (fp32 [n_positions, rot]: create_sinusoidal_positions ends in .float(), and the harness's
// default-dtype construction does not cast it), mlp.fc_in, mlp.fc_out; transformer.ln_f; lm_head (weight, bias; the
// weight tied to wte only when tie_word_embeddings).
#include <algorithm>
#include <string>

#include "engine/arch/builders.h"
#include "engine/arch/decoders/parts/gpt_parts.h"
#include "engine/arch/decoders/parts/phi_parts.h"
#include "engine/errors.h"

namespace memplan {

namespace {

constexpr int64_t kMpNum = 4;  // CodeGenAttention.forward's mp_num (TPU-v4 shards the checkpoints were trained on)

struct CodegenLayer {
  TensorId ln_w, ln_b, qkv, o, table, fc_in, fc_in_b, fc_out, fc_out_b;
};

CodegenLayer codegen_layer_params(GraphBuilder& b, const TransformerSpec& s, int64_t i, bool train) {
  const int64_t H = s.hidden_size, I = s.intermediate_size;
  const std::string p = "transformer.h." + std::to_string(i) + ".";
  auto param = [&](const std::string& n, Shape shape) { return b.param(p + n, std::move(shape), train); };
  CodegenLayer w;
  w.ln_w = param("ln_1.weight", {H});
  w.ln_b = param("ln_1.bias", {H});
  w.qkv = param("attn.qkv_proj.weight", {3 * H, H});
  w.o = param("attn.out_proj.weight", {H, H});
  w.table = b.buffer(p + "attn.embed_positions", {s.max_position_embeddings, s.rotary_dim}, DType::f32);
  w.fc_in = param("mlp.fc_in.weight", {I, H});
  w.fc_in_b = param("mlp.fc_in.bias", {I});
  w.fc_out = param("mlp.fc_out.weight", {H, I});
  w.fc_out_b = param("mlp.fc_out.bias", {H});
  return w;
}

// CodeGenAttention.forward on the normed input x; `weights` receives _attn's attention weights (returned to the
// block).
TensorId codegen_attention(GraphBuilder& b, const TransformerSpec& s, const CodegenLayer& w, TensorId x,
                           TensorId position_ids, TensorId mask, TensorId& weights) {
  const auto& cfg = b.config();
  const bool inf = !b.training();
  const int64_t B = cfg.batch_size, S = inf ? b.pass().new_tokens : cfg.seq_len, H = s.hidden_size,
                nh = s.num_heads, hd = s.head_dim, rot = s.rotary_dim;
  const int64_t P = b.shape(position_ids)[0];
  std::vector<TensorId> locals;  // bound until forward returns
  auto bound = [&](TensorId t) {
    b.hold(t);
    locals.push_back(t);
    return t;
  };
  const TensorId qkv = bound(b.linear(x, w.qkv));
  const TensorId qkv_split = b.view(qkv, {B, S, kMpNum, 3 * H / kMpNum});
  const std::vector<TensorId> parts = b.split(qkv_split, 3, {B, S, kMpNum, H / kMpNum});  // query, value, key
  // _split_heads' second reshape clones unless n_head / 4 is 1 (then the merge of the size-1 dim is a view).
  const bool head_copy = nh / kMpNum > 1;
  auto split_heads = [&](TensorId part) {
    return bound(head_copy ? b.contiguous_copy(part, {B, S, nh, hd}) : b.view(part, {B, S, nh, hd}));
  };
  const TensorId query = split_heads(parts[0]);
  const TensorId key = split_heads(parts[2]);
  TensorId value = split_heads(parts[1]);
  TensorId v = inf ? b.view(value, {B, nh, S, hd}) : b.view_copying_grad(value, {B, nh, S, hd});
  // sincos = embed_positions[position_ids] (fp32), sin / cos its halves (views).
  const TensorId sincos =
      bound(b.generic_one("index", {w.table, position_ids}, {P, S, rot}, b.dtype(w.table)));
  const TensorId sin = b.view(sincos, {P, S, rot / 2});
  const TensorId cos = b.view(sincos, {P, S, rot / 2});
  const Shape rs{B, S, nh, rot}, ps{B, S, nh, hd - rot};
  // k[..., :rot], k[..., rot:], then q's: views whose SliceBackward zero-fills a gradient of the whole head.
  TensorId k_rot = b.split(key, 1, rs)[0];
  const TensorId k_pass = b.split(key, 1, ps)[0];
  TensorId q_rot = b.split(query, 1, rs)[0];
  const TensorId q_pass = b.split(query, 1, ps)[0];
  k_rot = bound(gptj_apply_rotary(b, k_rot, sin, cos));
  q_rot = bound(gptj_apply_rotary(b, q_rot, sin, cos));
  TensorId key_cat = bound(b.cat("cat", {k_rot, k_pass}, -1, std::nullopt, /*cast_part_grads=*/true));
  const TensorId query_cat = bound(b.cat("cat", {q_rot, q_pass}, -1, std::nullopt, /*cast_part_grads=*/true));
  // key / query.permute(0, 2, 1, 3): views [B, nh, S, hd].
  TensorId kq = b.view(key_cat, {B, nh, S, hd});
  const TensorId qq = b.view(query_cat, {B, nh, S, hd});
  int64_t Lk = S;
  bool k_permuted = true;
  if (inf) {
    // key, value = layer_past.update(key.to(hidden_states.dtype), value): the cast is the statement's temporary;
    // rebinding frees the fp32 key cat and value's clone (q_pass / k_pass keep query's and key's clones).
    auto [kc, vc] = kv_update(b, b.to(kq, b.dtype(x)), v, 0);
    for (TensorId t : {key_cat, value}) {
      locals.erase(std::find(locals.begin(), locals.end(), t));
      b.drop(t);
    }
    kq = bound(kc);
    v = bound(vc);
    Lk = b.shape(kc)[2];
    k_permuted = false;
  }
  // matmul's reshape of a [B, nh, L, hd] view in [B, L, nh, hd] memory order to [B * nh, L, hd] copies it unless
  // B or L is 1 (the batch and head dims then merge).
  const bool fold_copies = B > 1 && S > 1;
  // _attn: query.to(fp32), key.to(fp32) (locals of _attn), scores = matmul(query, key^T).
  const TensorId q32 = b.to(qq, DType::f32);
  b.hold(q32);
  const TensorId k32 = b.to(kq, DType::f32);
  b.hold(k32);
  TensorId scores = b.matmul(q32, k32, {B, nh, S, Lk}, fold_copies, fold_copies && k_permuted);
  if (mask != kNoTensor) scores = b.add(scores, mask);
  scores = b.scalar_op("div_scalar", scores, false);  // / self.scale_attn
  TensorId probs = b.to(b.softmax_last(scores), b.dtype(v));
  probs = b.dropout(probs, s.attn_dropout);
  weights = probs;
  b.hold(weights);
  TensorId ctx = b.matmul(probs, v, {B, nh, S, hd}, false, fold_copies && !inf);
  b.drop(q32);
  b.drop(k32);
  ctx = b.contiguous_copy(ctx, {B, S, nh, hd}, /*grad_copied=*/true);  // _merge_heads: permute.contiguous()
  TensorId out = b.linear(b.view(ctx, {B, S, H}), w.o);
  for (TensorId t : locals) b.drop(t);
  return b.dropout(out, s.resid_dropout);
}

}  // namespace

void build_codegen(GraphBuilder& b, const TransformerSpec& s) {
  const auto& cfg = b.config();
  if (cfg.attn != AttnImpl::eager)
    throw InputError("attn", std::string(attn_name(cfg.attn)),
                     "CodeGen has no SDPA attention in transformers 5.17 (from_config refuses it): use eager");
  const GptModelParams<CodegenLayer> mp = gpt_model_params<CodegenLayer>(b, s, false, codegen_layer_params);
  parallel_block_causal_lm(b, s, mp, [&](const CodegenLayer& w, TensorId n, TensorId position_ids, TensorId mask,
                                         TensorId& weights) {
    return codegen_attention(b, s, w, n, position_ids, mask, weights);
  });
}

}  // namespace memplan
