// DeepseekV32ForCausalLM (transformers 5.17 models/deepseek_v32/modeling_deepseek_v32.py): DeepSeek-V3's multi-head
// latent attention and MoE (engine/arch/decoders/parts/deepseek_parts.h: layer parameters, RMSNorm, interleaved
// rotary, router, experts) with DeepSeek Sparse Attention: a lightning indexer picks index_topk keys per query and
// the attention masks every other key.
//
// Stages: embed_tokens -> position_ids -> create_causal_mask(allow_is_causal_skip=False: always materialised, SDPA
// too: a bool [P, 1, S, T]; eager: the float [B, 1, S, T]) -> rotary cos / sin [P, S, rope] -> N x decoder layer ->
// norm -> lm_head -> loss (training) or the last logits (inference).
// Per layer: DeepseekV3RMSNorm, DeepseekV32Attention (engine/arch/decoders/parts/dsa_parts.h: MLA plus the
// DeepseekV32Indexer under no_grad, whose rotary is apply_rotary_pos_emb's rotate_half form, and the top-k mask;
// the top-k dies as the attention returns), residual, norm, the dense MLP or the MoE (deepseek_mlp_half), residual.
#include <string>
#include <vector>

#include "engine/arch/decoders/parts/dsa_parts.h"
#include "engine/arch/decoders/parts/llama_parts.h"
#include "engine/errors.h"

namespace memplan {

void build_deepseek_v32(GraphBuilder& b, const TransformerSpec& s) {
  const auto& cfg = b.config();
  const bool inf = !b.training();
  if (s.kv_lora_rank <= 0 || s.qk_rope_head_dim <= 0 || s.q_lora_rank <= 0)
    throw InputError("model.q_lora_rank", std::to_string(s.q_lora_rank),
                     "DeepSeek sparse attention needs q_lora_rank, kv_lora_rank and qk_rope_head_dim > 0");
  if (s.num_kv_heads != s.num_heads)
    throw InputError("config.num_key_value_heads", std::to_string(s.num_kv_heads),
                     "must equal num_attention_heads (" + std::to_string(s.num_heads) + ") for multi-head latent attention");
  const int64_t B = cfg.batch_size, S = inf ? b.pass().new_tokens : cfg.seq_len, H = s.hidden_size, V = s.vocab_size;
  const bool emb_train = !cfg.freeze_embeddings;
  hf_construction_scalar(b);
  TensorId embed = b.param("embed_tokens.weight", {V, H}, emb_train);
  std::vector<DsaLayer> layers;
  for (int64_t i = 0; i < s.num_layers; ++i) {
    DsaLayer L;
    const bool train = !layer_frozen(cfg, i);
    L.d = deepseek_layer_params(b, s, i, train, [&]() { L.idx = dsa_indexer_params(b, s, i, train); });
    layers.push_back(L);
  }
  TensorId norm_w = b.param("norm.weight", {H}, emb_train);
  TensorId head = s.tie_word_embeddings ? b.tied_param("lm_head.weight", embed, emb_train)
                                        : b.param("lm_head.weight", {V, H}, emb_train);
  if (s.tie_word_embeddings) b.construction_temp(b.info(embed).bytes);

  TensorId ids = b.input({B, S}, DType::i64);
  const int64_t P = inf && b.pass().from_generate ? B : 1;
  if (P > 1) b.input({B, S}, DType::i64);  // generate() passes position_ids [B, S]
  TensorId h = b.embedding(ids, embed);
  const TensorId inputs_embeds = h;
  TensorId position_ids = kNoTensor;
  if (P == 1) {  // arange(S) + past_seen_tokens, unsqueezed (bound until the model's forward returns)
    const TensorId ar = b.generic_one("arange", {}, {S}, DType::i64);
    position_ids = b.generic_one("add", {ar}, {1, S}, DType::i64);
    b.hold(position_ids);
  }
  const int64_t kv = (inf ? b.pass().past_len : 0) + S;
  const TensorId mask = dsa_mask(b, inf ? P : 1, S, kv, b.dtype(h));
  b.hold(mask);
  auto cs = rotary_cos_sin(b, P, S, s.qk_rope_head_dim, b.dtype(h));
  const TensorId cos = cs.first, sin = cs.second;
  b.hold(inputs_embeds);
  b.hold(cos);
  b.hold(sin);
  for (int64_t i = 0; i < s.num_layers; ++i) {
    const DsaLayer& L = layers[static_cast<size_t>(i)];
    const DeepseekLayer& d = L.d;
    b.begin_layer("layers." + std::to_string(i), layer_checkpointed(cfg, i));
    const TensorId layer_in = h;
    b.hold(layer_in);
    TensorId n1 = ds_rms_norm(b, h, d.in_norm);
    b.hold(n1);
    TensorId attn_weights = kNoTensor;
    TensorId a = dsa_attention(b, s, L, n1, mask, cos, sin, P, rope, kNoTensor, nullptr, attn_weights);
    b.drop(n1);
    TensorId h1 = b.add(h, a);
    TensorId n2 = ds_rms_norm(b, h1, d.post_norm);
    b.hold(n2);
    const TensorId m = deepseek_mlp_half(b, s, d, n2, deepseek_route_bound);
    b.drop(n2);
    h = b.add(h1, m);
    if (attn_weights != kNoTensor) b.drop(attn_weights);
    if (layer_in != inputs_embeds) b.drop(layer_in);
    b.end_layer();
  }
  b.hold(h);
  TensorId hn = ds_rms_norm(b, h, norm_w);
  for (TensorId t : {h, inputs_embeds, cos, sin, mask, position_ids})
    if (t != kNoTensor) b.drop(t);
  if (inf) {
    inference_head(b, hn, head);
    return;
  }
  causal_lm_training_head(b, hn, head, ids);
}

}  // namespace memplan
