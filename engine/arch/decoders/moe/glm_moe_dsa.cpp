// GlmMoeDsaForCausalLM (transformers 5.17 models/glm_moe_dsa/modeling_glm_moe_dsa.py; GLM-5): DeepSeek-V3.2's
// decoder (MLA, the DSA lightning indexer under no_grad, the noaux_tc MoE with shared experts) with two changes,
// both in the attention (engine/arch/decoders/parts/dsa_parts.h):
//   - GlmMoeDsaIndexer rotates with apply_rotary_pos_emb_interleave (cat(x1 cos - x2 sin, x2 cos + x1 sin) over the
//     even / odd slices and half-width cos / sin views) where DeepSeek-V3.2's indexer uses rotate_half;
//   - cross-layer top-k sharing: config.indexer_types[i] == "shared" builds no indexer (no wq_b / wk / k_norm /
//     weights_proj, no indexer keys in the cache) and reuses the previous layer's topk_indices. Every attention
//     returns its topk_indices through the decoder layer to the model's loop (`hidden_states, topk_indices =
//     decoder_layer(..., prev_topk_indices=topk_indices)`), so a full layer's [B, S, k] int32 top-k lives until
//     the next full layer has returned (and after the last layer until the model's forward returns), where
//     DeepSeek-V3.2's dies inside its attention. Under checkpointing every layer's frame keeps the top-k it was
//     passed until its backward.
//
// Stages: embed_tokens -> position_ids -> create_causal_mask(allow_is_causal_skip=False: always materialised, SDPA
// too: a bool [P, 1, S, T]; eager: the float [B, 1, S, T]) -> rotary cos / sin [P, S, rope] -> N x decoder layer
// (DeepseekV3RMSNorm, the DSA attention, residual, norm, the dense MLP or the MoE by first_k_dense_replace,
// residual) -> norm -> lm_head -> loss (training) or the last logits (inference). The MTP layer
// (num_nextn_predict_layers) is not built by from_config.
#include <string>
#include <vector>

#include "engine/arch/decoders/parts/dsa_parts.h"
#include "engine/arch/decoders/parts/llama_parts.h"
#include "engine/errors.h"

namespace memplan {

void build_glm_moe_dsa(GraphBuilder& b, const TransformerSpec& s) {
  const auto& cfg = b.config();
  const bool inf = !b.training();
  if (s.kv_lora_rank <= 0 || s.qk_rope_head_dim <= 0 || s.q_lora_rank <= 0)
    throw InputError("model.q_lora_rank", std::to_string(s.q_lora_rank),
                     "DeepSeek sparse attention needs q_lora_rank, kv_lora_rank and qk_rope_head_dim > 0");
  if (!s.index_shared_layers.empty() && static_cast<int64_t>(s.index_shared_layers.size()) != s.num_layers)
    throw InputError("model.index_shared_layers", std::to_string(s.index_shared_layers.size()) + " entries",
                     "must list every layer (" + std::to_string(s.num_layers) + ")");
  if (!s.index_shared_layers.empty() && s.index_shared_layers[0] != 0)
    throw InputError("config.indexer_types", "[\"shared\", ...]",
                     "layer 0 has no previous full layer whose top-k it could reuse");
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
    L.shared = !s.index_shared_layers.empty() && s.index_shared_layers[static_cast<size_t>(i)] != 0;
    // self.indexer = None if self.skip_topk else GlmMoeDsaIndexer(...): created last in the attention's __init__
    L.d = deepseek_layer_params(b, s, i, train, [&]() {
      if (!L.shared) L.idx = dsa_indexer_params(b, s, i, train);
    });
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
  // topk_indices: the model loop's variable, None before layer 0, rebound by each layer's return
  TensorId topk = kNoTensor;
  for (int64_t i = 0; i < s.num_layers; ++i) {
    const DsaLayer& L = layers[static_cast<size_t>(i)];
    const DeepseekLayer& d = L.d;
    const bool ckpt = layer_checkpointed(cfg, i) && !inf;
    b.begin_layer("layers." + std::to_string(i), layer_checkpointed(cfg, i));
    // prev_topk_indices is a keyword argument of every layer call: under checkpointing the frame's partial keeps
    // it until the layer's backward, read or not (a full layer's own indexer ignores it).
    if (ckpt && !L.shared && topk != kNoTensor) b.view(topk, b.shape(topk));
    const TensorId layer_in = h;
    b.hold(layer_in);
    TensorId n1 = ds_rms_norm(b, h, d.in_norm);
    b.hold(n1);
    TensorId attn_weights = kNoTensor;
    TensorId layer_topk = kNoTensor;
    TensorId a = dsa_attention(b, s, L, n1, mask, cos, sin, P, rope_interleave, topk, &layer_topk, attn_weights);
    b.drop(n1);
    TensorId h1 = b.add(h, a);
    TensorId n2 = ds_rms_norm(b, h1, d.post_norm);
    b.hold(n2);
    const TensorId m = deepseek_mlp_half(b, s, d, n2, deepseek_route_bound);
    b.drop(n2);
    h = b.add(h1, m);
    if (attn_weights != kNoTensor) b.drop(attn_weights);
    if (layer_in != inputs_embeds) b.drop(layer_in);
    // `hidden_states, topk_indices = decoder_layer(...)`: a full layer's new top-k replaces the previous one
    if (layer_topk != topk) {
      if (topk != kNoTensor) b.drop(topk);
      topk = layer_topk;
    }
    b.end_layer();
  }
  b.hold(h);
  TensorId hn = ds_rms_norm(b, h, norm_w);
  for (TensorId t : {h, inputs_embeds, cos, sin, mask, position_ids, topk})
    if (t != kNoTensor) b.drop(t);
  if (inf) {
    inference_head(b, hn, head);
    return;
  }
  causal_lm_training_head(b, hn, head, ids);
}

}  // namespace memplan
