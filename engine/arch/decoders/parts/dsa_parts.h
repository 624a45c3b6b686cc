// DeepSeek Sparse Attention (DSA): DeepSeek-V3's multi-head latent attention with a lightning indexer that picks
// index_topk keys per query, every other key masked. Written once from transformers 5.17's
// models/deepseek_v32/modeling_deepseek_v32.py; models/glm_moe_dsa (GLM-5) copies it statement for statement but
// for the indexer's rotary form and its cross-layer top-k sharing, the two knobs below. Used by
// engine/arch/decoders/moe/deepseek_v32.cpp and glm_moe_dsa.cpp.
//
//   Attention.forward (what differs from V3's):
//     q_resid = q_a_layernorm(q_a_proj(x)) is bound until forward returns (the indexer reads it);
//     apply_rotary_pos_emb_interleave always (no rope_interleave switch);
//     query_states = cat(q_pass, q_rot); expand_kv(k_pass, k_rot) as V3 (new_empty + two copy_);
//     the cache stores the EXPANDED key / value states ([B, H, L, qk] and [B, H, L, v] per layer), after expand_kv;
//     topk_indices = indexer(...) [B, S, k] int32 (GLM-5's "shared" layers: the previous full layer's), bound
//       until forward returns (GLM-5 returns it to the model's loop);
//     index_mask = new_ones([B, S, T], bool).scatter(-1, topk_indices.long(), False).unsqueeze(1), bound;
//     SDPA: attention_mask = attention_mask & ~index_mask ([B, 1, S, T] bool; ~ a temporary), then SDPA with that
//       mask (is_causal False): its additive [B, 1, S, T] bias of q's dtype is what the fused kernel saves;
//     eager: attention_mask = attention_mask.masked_fill(index_mask, min) ([B, 1, S, T] in the mask's dtype);
//     attention, o_proj.
//   Indexer.forward runs under @torch.no_grad(): nothing it computes is saved for backward and its four
//   modules (wq_b, wk, k_norm, weights_proj) never receive a gradient (no .grad, no optimizer state), while autocast
//   still caches the bf16 casts of their weights. Statement by statement (S queries, T keys, h = index_n_heads,
//   d = index_head_dim, r = qk_rope_head_dim):
//     q = wq_b(q_resid).view(B, S, h, d); q_rot, q_pass = split (views: q_pass keeps wq_b's output alive);
//     k = k_norm(wk(x)).unsqueeze(2) (nn.LayerNorm: fp32 under autocast); k_rot, k_pass = split (views);
//     the rotary on q_rot then k_rot, cos / sin unsqueezed at dim 2 (DeepSeek-V3.2: apply_rotary_pos_emb, the
//       rotate_half form; GLM-5: apply_rotary_pos_emb_interleave, cat(x1 cos - x2 sin, x2 cos + x1 sin) over
//       the even / odd slices); q = cat(q_rot, q_pass) [B, S, h, d];
//     k = cat(k_rot, k_pass).squeeze(2) [B, S, d]; q_rot / q_pass / k_rot / k_pass stay bound to the end;
//     inference: k = cache.update_indexer(k) (DynamicIndexedLayer: cat along dim 1, [B, L, d] per layer);
//     scores = matmul(q.float(), k.transpose(-1, -2).float().unsqueeze(1)) * softmax_scale: torch.matmul expands
//       the [B, 1, d, T] operand to [B, S, d, T] and reshapes it to [B*S, d, T], a copy when B > 1 and S > 1 (a
//       stride-0 view otherwise), then bmm [B, S, h, T]; under autocast both operands are cast to bf16 first;
//       the product rebinds, relu rebinds again: two [B, S, h, T] tensors alive at each step;
//     weights = weights_proj(x).float() * h^-0.5 [B, S, h]; index_scores = matmul(weights [B, S, 1, h], scores)
//       [B, S, T] (views, no copy); masked_fill(~mask, -inf) (SDPA's bool mask) or + mask (eager's float);
//     index_scores is a local, bound until forward returns;
//     topk(min(index_topk, T)) -> values and int64 indices [B, S, k], a temporary tuple: the values die once
//     .indices is taken; .indices.to(int32) returned.
#pragma once
#include "engine/arch/decoders/parts/deepseek_parts.h"

namespace memplan {

struct DsaIndexerParams {
  TensorId wq_b = kNoTensor, wk = kNoTensor, k_norm_w = kNoTensor, k_norm_b = kNoTensor, weights_proj = kNoTensor;
};

// Indexer.__init__ of layer i: wq_b [h * d, q_lora_rank], wk [d, H], k_norm (LayerNorm: weight and bias [d]),
// weights_proj [h, H]; all in the model's dtype when built from a config (_keep_in_fp32_modules applies only to
// from_pretrained with fp16). Trainable but unreached: the forward runs under no_grad.
DsaIndexerParams dsa_indexer_params(GraphBuilder& b, const TransformerSpec& s, int64_t i, bool train);

// The indexer's rotary on its [B, S, h, r] / [B, S, 1, r] rotated slices with cos / sin [P, S, 1, r].
using DsaRopeFn = TensorId (*)(GraphBuilder& b, TensorId x, TensorId cos, TensorId sin);

struct DsaLayer {
  DeepseekLayer d;
  DsaIndexerParams idx;
  bool shared = false;  // GLM-5's indexer_types[i] == "shared": no indexer module, the previous layer's top-k
};

// The attention on the normed input x (see the file comment). `mask`: the model's causal mask ([P, 1, S, T] bool
// for SDPA, [B, 1, S, T] float for eager); cos / sin [P, 1, S, r]. `prev_topk`: the top-k a shared layer reuses
// (kNoTensor for a layer with its own indexer). `topk_out` null: the layer's top-k dies as forward returns
// (DeepSeek-V3.2); else it receives the top-k the forward returns, left bound (GLM-5). `weights`: eager attention's
// probabilities, held, or kNoTensor.
TensorId dsa_attention(GraphBuilder& b, const TransformerSpec& s, const DsaLayer& L, TensorId x, TensorId mask,
                       TensorId cos, TensorId sin, int64_t P, DsaRopeFn indexer_rope, TensorId prev_topk,
                       TensorId* topk_out, TensorId& weights);

// create_causal_mask(..., allow_is_causal_skip=False), never skipped. SDPA: masking_utils.sdpa_mask over broadcast
// index tensors: kv <= q, a [1, 1, q, kv] bool; with generate()'s 2-d attention mask (P = B) the mask function is
// and_masks(causal, padding): ones(()) & (kv <= q) (each a fresh [1, 1, q, kv]), then & padding_mask[b, kv]
// ([P, 1, 1, kv]) giving [P, 1, q, kv]. Eager: the float mask every eager decoder builds (eager_mask).
TensorId dsa_mask(GraphBuilder& b, int64_t P, int64_t q, int64_t kv, DType dtype);

// The DSA causal LM's forward after the builder's checks (DeepseekV32ForCausalLM, GlmMoeDsaForCausalLM): parameters
// in module order (an indexer per layer unless spec.index_shared_layers marks it shared), embedding, position_ids,
// dsa_mask, rotary cos / sin, the layers (RMSNorm, dsa_attention, residual, RMSNorm, deepseek_mlp_half, residual),
// norm, lm_head, loss or the last logits. `layers_return_topk` false: each layer's top-k dies in its attention
// (V3.2); true: the model's loop binds the top-k each layer returns until the next full layer has returned, and a
// checkpointed layer's frame keeps the one it was passed (GLM-5).
void build_dsa_model(GraphBuilder& b, const TransformerSpec& s, DsaRopeFn indexer_rope, bool layers_return_topk);

}  // namespace memplan
