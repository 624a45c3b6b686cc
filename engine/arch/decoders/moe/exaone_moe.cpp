// ExaoneMoeForCausalLM (transformers 5.17 models/exaone_moe/modeling_exaone_moe.py; LG K-EXAONE), modular from
// exaone4, olmoe, deepseek_v3 and qwen2_moe. Training forward + causal-LM loss or one inference pass.
//
// Stages: Exaone4Model's forward (exaone4.cpp: embed_tokens; create_causal_mask always and
// create_sliding_window_causal_mask when layer_types has a sliding layer, before the rotary embedding; cos / sin in
// the hidden dtype; the final RMSNorm; lm_head; loss) -> per layer OlmoeDecoderLayer's statements, which are
// LlamaDecoderLayer's (pre-norm: llama_residual_blocks), around:
//   ExaoneMoeAttention = Exaone4Attention (parts/exaone_parts.h qk_normed_head_attention): the three projections'
//     transposed head views, q_norm / k_norm over head_dim, the rotary embedding on sliding layers only (the
//     window is always set: sliding_window is an int in ExaoneMoeConfig, so the full-attention layers are NoPE),
//     the sliding mask and a DynamicSlidingWindowLayer cache on sliding layers, eager / SDPA, o_proj;
//   the feed-forward: ExaoneMoeMLP (Qwen2MoeMLP: down(act(gate(x)) * up(x))) of intermediate_size where
//     config.mlp_layer_types[i] is "dense", else ExaoneMoeSparseMoEBlock = DeepseekV3MoE statement for statement
//     (parts/glm4_moe_parts.h glm4_moe_block: the noaux_tc router in fp32, the routed experts through
//     transformers' default experts implementation grouped_mm (generate()'s decode steps batched_mm), the shared
//     experts' MLP of moe_intermediate_size * num_shared_experts over the block's input, added).
// Parameters per layer, registration order: self_attn q / k / v / o (no biases), q_norm, k_norm; mlp: dense
// gate / up / down, or experts.gate_up_proj [E, 2I, H], experts.down_proj [E, H, I], gate.weight [E, H] (+ the
// fp32 e_score_correction_bias buffer [E]), shared_experts gate / up / down; input_layernorm,
// post_attention_layernorm.
#include "engine/arch/builders.h"

#include <string>

#include "engine/arch/decoders/parts/exaone_parts.h"
#include "engine/arch/decoders/parts/glm4_moe_parts.h"
#include "engine/arch/decoders/parts/llama_parts.h"
#include "engine/errors.h"

namespace memplan {

namespace {

struct ExaoneMoeLayer {
  TensorId q = kNoTensor, k = kNoTensor, v = kNoTensor, o = kNoTensor, qb = kNoTensor, kb = kNoTensor,
           vb = kNoTensor, ob = kNoTensor, q_norm = kNoTensor, k_norm = kNoTensor;
  Glm4MoeFfn ffn;
  TensorId in_norm = kNoTensor, post_norm = kNoTensor;
};

bool moe_layer(const TransformerSpec& s, int64_t i) {
  return s.moe_layers[static_cast<size_t>(i)] != 0;
}

ExaoneMoeLayer layer_params(GraphBuilder& b, const TransformerSpec& s, const std::string& p, int64_t i, bool train) {
  const int64_t H = s.hidden_size, hd = s.head_dim;
  ExaoneMoeLayer w;
  attention_projection_params(b, s, p, train, false, false, w);
  w.q_norm = b.param(p + "self_attn.q_norm.weight", {hd}, train);
  w.k_norm = b.param(p + "self_attn.k_norm.weight", {hd}, train);
  w.ffn = glm4_moe_ffn_params(b, s, p, moe_layer(s, i), train);
  w.in_norm = b.param(p + "input_layernorm.weight", {H}, train);
  w.post_norm = b.param(p + "post_attention_layernorm.weight", {H}, train);
  return w;
}

}  // namespace

void build_exaone_moe(GraphBuilder& b, const TransformerSpec& s) {
  const auto& cfg = b.config();
  const bool inf = !b.training();
  const int64_t S = inf ? b.pass().new_tokens : cfg.seq_len, H = s.hidden_size, hd = s.head_dim;
  if (static_cast<int64_t>(s.moe_layers.size()) != s.num_layers)
    throw InputError("model.moe_layers", std::to_string(s.moe_layers.size()) + " entries",
                     "must have one entry per layer (" + std::to_string(s.num_layers) + ")");
  if (!s.sliding_layers.empty() && static_cast<int64_t>(s.sliding_layers.size()) != s.num_layers)
    throw InputError("model.sliding_layers", std::to_string(s.sliding_layers.size()) + " entries",
                     "must have one entry per layer (" + std::to_string(s.num_layers) + ")");
  if (s.sliding_window <= 0)
    throw InputError("model.sliding_window", std::to_string(s.sliding_window),
                     "ExaoneMoeConfig.sliding_window is an int: the full-attention layers are NoPE");
  bool any_moe = false, any_sliding = false;
  for (int64_t i = 0; i < s.num_layers; ++i) {
    any_moe = any_moe || moe_layer(s, i);
    any_sliding = any_sliding || layer_is_sliding(s, i);
  }
  if (any_moe && (s.num_experts <= 0 || s.num_experts_per_tok <= 0 || s.moe_intermediate_size <= 0 ||
                  s.num_shared_experts <= 0 || s.moe_topk_method != "noaux_tc"))
    throw InputError("model.num_experts", std::to_string(s.num_experts),
                     "exaone_moe's sparse layers need experts, num_experts_per_tok, moe_intermediate_size, shared "
                     "experts and the noaux_tc router");
  const bool emb_train = !cfg.freeze_embeddings;
  auto [embed, ids, h, P] = llama_inputs(b, s);  // position_ids rows P: B inside generate(), else 1
  const TensorId inputs_embeds = h;
  // causal_mask_mapping: the full mask always, the sliding one when a layer slides; before the rotary embedding.
  const auto [mask, sliding_mask] = full_and_sliding_masks(b, s, true, any_sliding, b.dtype(h));

  const std::pair<TensorId, TensorId> cos_sin = rotary_cos_sin(b, P, S, hd, b.dtype(h));
  const TensorId cos = cos_sin.first, sin = cos_sin.second;  // named: clang 14 cannot capture structured bindings
  const TensorId full_mask = mask, slide_mask = sliding_mask;
  b.hold(inputs_embeds);
  b.hold(cos);
  b.hold(sin);
  for (int64_t i = 0; i < s.num_layers; ++i) {
    const std::string p = "layers." + std::to_string(i) + ".";
    const ExaoneMoeLayer w = layer_params(b, s, p, i, !layer_frozen(cfg, i));
    b.begin_layer("layers." + std::to_string(i), layer_checkpointed(cfg, i));
    const TensorId layer_in = h;
    b.hold(layer_in);  // residual, and the model's loop variable, until the layer returns
    const bool sliding = layer_is_sliding(s, i);
    h = llama_residual_blocks(
        b, h, w.in_norm, w.post_norm,
        [&](TensorId x, TensorId& weights) {
          return qk_normed_head_attention(b, s, w, x, cos, sin, sliding ? slide_mask : full_mask,
                                          sliding ? s.sliding_window : 0, /*rotary=*/sliding, weights);
        },
        [&](TensorId n2) { return glm4_moe_ffn(b, s, w.ffn, n2); });
    if (layer_in != inputs_embeds) b.drop(layer_in);
    b.end_layer();
  }
  b.hold(h);  // `hidden_states = self.norm(hidden_states)` rebinds only once the norm has returned
  TensorId hn = rms_norm(b, h, b.param("norm.weight", {H}, emb_train), false);
  for (TensorId t : {h, inputs_embeds, cos, sin, full_mask, slide_mask})
    if (t != kNoTensor) b.drop(t);
  causal_lm_tail(b, s, hn, embed, ids);
}

}  // namespace memplan
