// OPTForCausalLM (transformers 5.17 models/opt/modeling_opt.py), training forward + loss or one inference pass.
//
// OPTDecoder.forward:
//   inputs_embeds = embed_tokens(ids) [B, S, P] (P = word_embed_proj_dim);
//   attention_mask = torch.ones(B, past + S) when none is passed (the default dtype: fp32), position_ids =
//   (cumsum(mask, 1) * mask - 1).long()[:, past:], each a kernel; both bound until the decoder returns;
//   the causal mask (SDPA skips it: the padding mask is all ones; eager materialises [B, 1, S, kv]);
//   pos_embeds = embed_positions(position_ids + 2) [B, S, H]; project_in when P != H;
//   hidden_states = inputs_embeds + pos_embeds; inputs_embeds and pos_embeds stay bound to the end;
//   the layers, final_layer_norm (do_layer_norm_before), project_out.
// OPTDecoderLayer (pre-LN: do_layer_norm_before; post-LN, OPT-350M, normalises after each residual add):
//   residual = h; h = self_attn_layer_norm(h); h = dropout(self_attn(h)); h = residual + h;
//   h = h.reshape(-1, H); residual = h; h = final_layer_norm(h); h = dropout(fc2(act(fc1(h)))); h = residual + h.
// OPTAttention: query = q_proj(x) * scaling (the projection's output a temporary), then head views of q, k, v
//   [B, nh, S, hd] (transposes of the projections' [B, S, H] outputs), the attention with scaling 1.0
//   (llama_parts.h attention_core: SDPA, or eager's matmul * 1.0, softmax in fp32, cast, matmul, contiguous),
//   out_proj.
// Registration order: embed_tokens, embed_positions [max + 2, H], project_out, project_in, final_layer_norm,
// then the layers (k, v, q, out_proj, self_attn_layer_norm, fc1, fc2, final_layer_norm); lm_head tied.
#include "engine/arch/builders.h"
#include "engine/arch/decoders/parts/llama_parts.h"
#include "engine/arch/decoders/parts/phi_parts.h"

namespace memplan {

namespace {

struct OptLayerParams {
  TensorId k, kb, v, vb, q, qb, o, ob, attn_ln_w, attn_ln_b, fc1, fc1_b, fc2, fc2_b, ffn_ln_w, ffn_ln_b;
};

OptLayerParams opt_layer_params(GraphBuilder& b, const TransformerSpec& s, const std::string& p, bool train) {
  const int64_t H = s.hidden_size, F = s.intermediate_size;
  const bool bias = s.attention_bias;
  auto linear = [&](const std::string& name, int64_t out, int64_t in, TensorId& w, TensorId& wb) {
    w = b.param(p + name + ".weight", {out, in}, train);
    wb = bias ? b.param(p + name + ".bias", {out}, train) : kNoTensor;
  };
  // layer_norm_elementwise_affine false leaves the norms without parameters.
  auto norm = [&](const std::string& name, TensorId& w, TensorId& wb) {
    w = s.norm_affine ? b.param(p + name + ".weight", {H}, train) : kNoTensor;
    wb = s.norm_affine ? b.param(p + name + ".bias", {H}, train) : kNoTensor;
  };
  OptLayerParams w;
  linear("self_attn.k_proj", H, H, w.k, w.kb);
  linear("self_attn.v_proj", H, H, w.v, w.vb);
  linear("self_attn.q_proj", H, H, w.q, w.qb);
  linear("self_attn.out_proj", H, H, w.o, w.ob);
  norm("self_attn_layer_norm", w.attn_ln_w, w.attn_ln_b);
  linear("fc1", F, H, w.fc1, w.fc1_b);
  linear("fc2", H, F, w.fc2, w.fc2_b);
  norm("final_layer_norm", w.ffn_ln_w, w.ffn_ln_b);
  return w;
}

TensorId opt_attention(GraphBuilder& b, const TransformerSpec& s, const OptLayerParams& w, TensorId x, TensorId mask,
                       TensorId& weights) {
  const auto& cfg = b.config();
  const bool inf = !b.training();
  const int64_t B = cfg.batch_size, S = inf ? b.pass().new_tokens : cfg.seq_len, nh = s.num_heads, hd = s.head_dim;
  // SDPA returns each gradient in its input's layout, so the transposed head views take theirs without a copy;
  // eager attention's bmm returns contiguous [B, nh, S, hd] gradients, which the views copy back.
  const bool grad_in_layout = cfg.attn == AttnImpl::sdpa && mask == kNoTensor;
  auto heads = [&](TensorId t) {
    return grad_in_layout ? b.view(t, {B, nh, S, hd}) : b.view_copying_grad(t, {B, nh, S, hd});
  };
  TensorId q = heads(b.scalar_op("mul_scalar", b.linear(x, w.q, w.qb), false));
  b.hold(q);  // query_states, key_states and value_states are bound until the attention returns
  TensorId k = heads(b.linear(x, w.k, w.kb));
  b.hold(k);
  TensorId v = heads(b.linear(x, w.v, w.vb));
  const TensorId v_proj = v;
  b.hold(v_proj);
  TensorId out = attention_o_proj(b, s, q, k, v, v_proj, mask, 0, w.o, w.ob, weights);
  return out;
}

}  // namespace

void build_opt(GraphBuilder& b, const TransformerSpec& s) {
  const auto& cfg = b.config();
  const bool inf = !b.training();
  const int64_t B = cfg.batch_size, S = inf ? b.pass().new_tokens : cfg.seq_len, H = s.hidden_size,
                V = s.vocab_size, P = s.word_embed_proj_dim > 0 ? s.word_embed_proj_dim : H;
  const int64_t past = inf ? b.pass().past_len : 0;
  const bool emb_train = !cfg.freeze_embeddings;
  const bool pre_ln = !s.post_layer_norm;
  const bool final_norm = pre_ln && !s.no_final_norm;
  hf_construction_scalar(b);
  TensorId embed = b.param("decoder.embed_tokens.weight", {V, P}, emb_train);
  TensorId pos_w = b.param("decoder.embed_positions.weight", {s.max_position_embeddings + 2, H}, emb_train);
  TensorId project_out = P != H ? b.param("decoder.project_out.weight", {P, H}, emb_train) : kNoTensor;
  TensorId project_in = P != H ? b.param("decoder.project_in.weight", {H, P}, emb_train) : kNoTensor;
  TensorId final_w = kNoTensor, final_b = kNoTensor;
  if (final_norm && s.norm_affine) {
    final_w = b.param("decoder.final_layer_norm.weight", {H}, emb_train);
    final_b = b.param("decoder.final_layer_norm.bias", {H}, emb_train);
  }
  TensorId ids = b.input({B, S}, DType::i64);
  TensorId inputs_embeds = b.embedding(ids, embed);
  b.hold(inputs_embeds);
  // attention_mask = torch.ones(B, past + S) and the position ids made from it: locals of the forward.
  const int64_t L = past + S;
  TensorId attention_mask = b.generic_one("ones", {}, {B, L}, DType::f32);
  b.hold(attention_mask);
  TensorId positions = b.generic_one("cumsum", {attention_mask}, {B, L}, DType::f32);
  positions = b.generic_one("mul", {positions, attention_mask}, {B, L}, DType::f32);
  positions = b.generic_one("sub_scalar", {positions}, {B, L}, DType::f32);
  const TensorId position_ids = b.generic_one("to_long", {positions}, {B, L}, DType::i64);
  b.hold(position_ids);
  TensorId mask = kNoTensor;
  if (cfg.attn == AttnImpl::eager) mask = inf ? inference_mask(b, 0, b.dtype(inputs_embeds))
                                              : eager_mask(b, B, S, S, b.dtype(inputs_embeds));
  else if (inf) mask = inference_mask(b, 0, b.dtype(inputs_embeds));
  if (mask != kNoTensor) b.hold(mask);
  // OPTLearnedPositionalEmbedding: embedding(position_ids + offset), the sum a temporary the embedding saves.
  TensorId pos_embeds = b.embedding(b.generic_one("add_scalar", {position_ids}, {B, S}, DType::i64), pos_w);
  b.hold(pos_embeds);
  if (project_in != kNoTensor) {  // `inputs_embeds = self.project_in(inputs_embeds)`: rebound, still a local
    const TensorId projected = b.linear(inputs_embeds, project_in);
    b.hold(projected);
    b.drop(inputs_embeds);
    inputs_embeds = projected;
  }
  TensorId h = b.add(inputs_embeds, pos_embeds);

  for (int64_t i = 0; i < s.num_layers; ++i) {
    const std::string p = "decoder.layers." + std::to_string(i) + ".";
    const OptLayerParams w = opt_layer_params(b, s, p, !layer_frozen(cfg, i));
    b.begin_layer("decoder.layers." + std::to_string(i), layer_checkpointed(cfg, i));
    const TensorId layer_in = h;
    b.hold(layer_in);  // the decoder's loop variable (and `residual`) hold the layer input until it returns
    TensorId n1 = pre_ln ? b.layer_norm(h, w.attn_ln_w, w.attn_ln_b) : h;
    if (n1 != h) b.hold(n1);  // bound to hidden_states until self_attn returns
    TensorId attn_weights = kNoTensor;
    TensorId a = b.dropout(opt_attention(b, s, w, n1, mask, attn_weights), s.resid_dropout);
    if (n1 != h) b.drop(n1);
    TensorId h1 = b.add(h, a);
    if (!pre_ln) h1 = b.layer_norm(h1, w.attn_ln_w, w.attn_ln_b);
    const TensorId residual = b.view(h1, {B * S, H});
    b.hold(residual);  // `residual = hidden_states` (the reshaped view) until the sum
    TensorId n2 = pre_ln ? b.layer_norm(residual, w.ffn_ln_w, w.ffn_ln_b) : residual;
    TensorId m = activation(b, s.hidden_act, b.linear(n2, w.fc1, w.fc1_b));
    m = b.dropout(b.linear(m, w.fc2, w.fc2_b), s.resid_dropout);
    h = b.view(b.add(residual, m), {B, S, H});
    b.drop(residual);
    if (!pre_ln) h = b.layer_norm(h, w.ffn_ln_w, w.ffn_ln_b);
    if (attn_weights != kNoTensor) b.drop(attn_weights);
    b.drop(layer_in);
    b.end_layer();
  }
  if (final_norm) {
    b.hold(h);  // `hidden_states = self.final_layer_norm(hidden_states)` rebinds once the norm returns
    TensorId hn = b.layer_norm(h, final_w, final_b);
    b.drop(h);
    h = hn;
  }
  if (project_out != kNoTensor) h = b.linear(h, project_out);
  for (TensorId t : {inputs_embeds, pos_embeds, attention_mask, position_ids, mask})
    if (t != kNoTensor) b.drop(t);
  TensorId head = s.tie_word_embeddings ? b.tied_param("lm_head.weight", embed, emb_train) : b.param("lm_head.weight", {V, P}, emb_train);
  if (inf) {
    inference_head(b, h, head);
    return;
  }
  causal_lm_training_head(b, h, head, ids);
}

}  // namespace memplan
