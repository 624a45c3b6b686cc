// MiniCPM3ForCausalLM (transformers 5.17 models/minicpm3/modeling_minicpm3.py): DeepSeek-V3's multi-head latent
// attention (MiniCPM3Attention is DeepseekV3Attention with the non-interleaved apply_rotary_pos_emb: the same
// statements, deepseek_parts.h mla_attention with s.rope_interleave false), a SwiGLU MLP in every layer, and
// MiniCPM's three scalings, each a fresh tensor whatever its value:
//   - MiniCPM3ScaledWordEmbedding: embedding(ids) * embed_scale.to(weight.dtype); the lookup dies at the product.
//     embed_scale is nn.Buffer(torch.tensor(scale_emb)): int64 for an integer scale_emb (the class default 12 and
//     the published config), which model.to(dtype) does not cast, so .to() makes a 0-dim tensor each forward,
//     kept by MulBackward when the rows need a gradient; a float scale_emb's buffer has the weights' dtype.
//   - MiniCPM3DecoderLayer: hidden_states = residual + hidden_states * residual_scale (scale_depth /
//     sqrt(num_hidden_layers)) after the attention and after the MLP: the branch's output and its scaled copy
//     each die at the add, nothing saved (a Python float).
//   - MiniCPM3ForCausalLM: hidden_states = outputs.last_hidden_state / logits_scaling (hidden_size /
//     dim_model_base) before lm_head: the norm's output stays bound by `outputs` until forward returns, the
//     quotient is lm_head's input (saved by the head's backward).
// Stages: embed_tokens * scale -> causal mask (eager: materialised; SDPA training: none) -> rotary cos / sin over
// qk_rope_head_dim (MiniCPM3RotaryEmbedding is LlamaRotaryEmbedding with head_dim = qk_rope_head_dim) -> N x
// (input norm, MLA, scaled residual, post norm, MLP, scaled residual) -> norm -> / logits_scaling -> lm_head ->
// loss (training) or the kept logits (inference). Parameter order (MiniCPM3DecoderLayer.__init__): self_attn
// (q_a_proj, q_a_layernorm, q_b_proj or q_proj; kv_a_proj_with_mqa, kv_a_layernorm, kv_b_proj, o_proj), mlp, norms:
// deepseek_layer_params with every layer dense.
#include "engine/arch/builders.h"
#include "engine/arch/decoders/dense/minicpm3_fields.h"
#include "engine/arch/decoders/parts/deepseek_parts.h"
#include "engine/arch/family_fields.h"
#include "engine/errors.h"

namespace memplan {

void build_minicpm3(GraphBuilder& b, const TransformerSpec& s) {
  const MiniCPM3Fields& f = family_fields<MiniCPM3Fields>(s);
  const auto& cfg = b.config();
  const bool inf = !b.training();
  if (s.kv_lora_rank <= 0 || s.qk_rope_head_dim <= 0)
    throw InputError("model.kv_lora_rank", std::to_string(s.kv_lora_rank), "multi-head latent attention needs it > 0");
  if (s.num_kv_heads != s.num_heads)
    throw InputError("config.num_key_value_heads", std::to_string(s.num_kv_heads),
                     "must equal num_attention_heads (" + std::to_string(s.num_heads) +
                         ") for multi-head latent attention: transformers repeats the expanded keys otherwise");
  if (s.rope_interleave)
    throw InputError("model.rope_interleave", "true", "MiniCPM3Attention applies the non-interleaved rotary");
  if (s.num_experts > 0 || s.first_dense_layers != s.num_layers || !s.moe_layers.empty())
    throw InputError("model.num_experts", std::to_string(s.num_experts), "MiniCPM3 has a dense MLP in every layer");
  const int64_t B = cfg.batch_size, S = inf ? b.pass().new_tokens : cfg.seq_len, H = s.hidden_size,
                V = s.vocab_size;
  const bool emb_train = !cfg.freeze_embeddings;
  hf_construction_scalar(b);
  const TensorId embed = b.param("embed_tokens.weight", {V, H}, emb_train);
  // The 0-dim embed_scale buffer (registered after the weight, non-persistent).
  const TensorId scale_buf = b.buffer("embed_tokens.embed_scale", {}, f.scale_emb_integer ? DType::i64 : b.param_dtype());
  std::vector<DeepseekLayer> layers;
  for (int64_t i = 0; i < s.num_layers; ++i) layers.push_back(deepseek_layer_params(b, s, i, !layer_frozen(cfg, i)));
  const TensorId norm_w = b.param("norm.weight", {H}, emb_train);
  const TensorId head = s.tie_word_embeddings ? b.tied_param("lm_head.weight", embed, emb_train)
                                              : b.param("lm_head.weight", {V, H}, emb_train);
  if (s.tie_word_embeddings) b.construction_temp(b.info(embed).bytes);

  const TensorId ids = b.input({B, S}, DType::i64);
  const int64_t P = inf && b.pass().from_generate ? B : 1;
  if (P > 1) b.input({B, S}, DType::i64);  // generate() passes position_ids [B, S]
  // super().forward(input_ids) * self.embed_scale.to(self.weight.dtype): the lookup, then the cast (a fresh 0-dim
  // tensor unless the buffer already has the weights' dtype), then the product.
  const TensorId rows = b.embedding(ids, embed);
  const TensorId scale = b.to(scale_buf, b.dtype(embed));
  const TensorId inputs_embeds = b.mul(rows, scale);
  TensorId h = inputs_embeds;
  TensorId position_ids = kNoTensor;
  // position_ids = arange(S) + past_seen_tokens, unsqueezed, when the caller passes none (training and the
  // harness's prefill): the arange dies once the sum exists, the sum stays bound until forward returns.
  if (P == 1) {
    const TensorId ar = b.generic({"arange", {}, {{{S}, DType::i64}}, {}, {}, {}, {}})[0];
    position_ids = b.generic({"add", {ar}, {{{1, S}, DType::i64}}, {}, {}, {}, {}})[0];
    b.hold(position_ids);
  }
  TensorId mask = kNoTensor;
  if (!inf) {
    if (cfg.attn == AttnImpl::eager) mask = eager_mask(b, 1, S, S, b.dtype(h));
  } else {
    mask = inference_mask(b, 0, b.dtype(h));
  }
  if (mask != kNoTensor) b.hold(mask);
  MlaRotary rot = mla_rotary(b, s, P, S, b.dtype(h));
  rot.rows = P;
  b.hold(inputs_embeds);
  for (TensorId t : {rot.freqs_cis, rot.cos, rot.sin})
    if (t != kNoTensor) b.hold(t);
  const MlaVariant v{};
  for (int64_t i = 0; i < s.num_layers; ++i) {
    const DeepseekLayer& d = layers[static_cast<size_t>(i)];
    b.begin_layer("layers." + std::to_string(i), layer_checkpointed(cfg, i));
    const TensorId layer_in = h;
    b.hold(layer_in);  // residual
    TensorId n1 = ds_rms_norm(b, h, d.in_norm);
    b.hold(n1);
    TensorId attn_weights = kNoTensor;
    const TensorId a = mla_attention(b, s, v, d.attn, rot, n1, mask, attn_weights);
    b.drop(n1);
    // residual + hidden_states * residual_scale
    const TensorId h1 = b.add(h, b.scalar_op("mul_scalar", a, false));  // also the MLP half's residual
    TensorId n2 = ds_rms_norm(b, h1, d.post_norm);
    b.hold(n2);
    const TensorId m = deepseek_mlp_half(b, s, d, n2, v.route);
    b.drop(n2);
    h = b.add(h1, b.scalar_op("mul_scalar", m, false));
    if (attn_weights != kNoTensor) b.drop(attn_weights);
    if (layer_in != inputs_embeds) b.drop(layer_in);
    b.end_layer();
  }
  b.hold(h);
  const TensorId hn = ds_rms_norm(b, h, norm_w);
  b.hold(hn);  // outputs.last_hidden_state: bound until the CausalLM forward returns
  for (TensorId t : {h, inputs_embeds, rot.freqs_cis, rot.cos, rot.sin, mask, position_ids})
    if (t != kNoTensor) b.drop(t);
  // hidden_states = hidden_states / self.config.logits_scaling
  const TensorId scaled = b.scalar_op("div_scalar", hn, false);
  if (inf) {
    b.hold(scaled);
    inference_head(b, scaled, head);
    b.drop(scaled);
    b.drop(hn);
    return;
  }
  b.hold(scaled);
  const TensorId logits = b.linear(scaled, head);
  b.mark_model_end();
  const TensorId loss = causal_lm_loss(b, logits, ids);
  b.drop(scaled);
  b.drop(hn);
  b.exit_autocast();
  b.set_loss(loss);
}

}  // namespace memplan
