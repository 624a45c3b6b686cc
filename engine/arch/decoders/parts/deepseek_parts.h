// Pieces shared by the deepseek_v2, deepseek_v3, gpt_oss and glm4_moe builders (engine/arch/decoders/moe/deepseek_v2.cpp,
// _v3.cpp, gpt_oss.cpp, glm4_moe.cpp): the routed experts through transformers 5.17's default experts
// implementation, the DeepSeek top-k router, and the multi-head latent attention decoder both DeepSeek modeling
// files write the same way.
#pragma once
#include <functional>
#include <utility>

#include "engine/arch/builders.h"

namespace memplan {

// The routed experts' parameters and layout.
struct ExpertsParams {
  int64_t experts = 0, top_k = 0, inter = 0;
  TensorId gate_up = kNoTensor, down = kNoTensor;             // [E, 2I, H] / [E, H, I] (gpt_oss: transposed)
  TensorId gate_up_bias = kNoTensor, down_bias = kNoTensor;   // gpt_oss: [E, 2I] / [E, H]
  bool gpt_oss_gate = false;  // GptOssExperts._apply_gate: interleaved gate / up, clamps, sigmoid(alpha x) glu
  // DeepseekV4Experts._apply_gate: chunk(2), gate.clamp(max=limit), up.clamp(-limit, limit), act(gate) * up.
  bool clamped_gate = false;
};

// integrations/moe.py grouped_mm_experts_forward (the default experts_implementation "grouped_mm" that
// @use_experts_implementation installs on DeepseekV2Experts, DeepseekV3Experts and GptOssExperts; generate()'s
// decode steps run batched_mm_experts_forward instead, see deepseek_parts.cpp): sort by
// expert, gather the R = T * k routed rows, masked_fill_ the sentinel rows, grouped_mm (input cast to the
// weight's dtype: grouped_mm is not autocast), per-row bias gathered from the expert bias (has_bias) and
// add_-ed in place, masked_fill, the gate, grouped_mm down (+ bias), masked_fill, times the routing weight,
// back to token order, view(T, k, H).sum(1), cast to the input dtype. Returns [T, H].
// llama_parts.h moe_grouped_mm is the same function bound to Mixtral's router and config.intermediate_size; the
// routers here differ (fp32 / sigmoid / biased), so the experts part is written once for them.
TensorId experts_grouped_mm(GraphBuilder& b, const ExpertsParams& e, TensorId flat, TensorId top_w, TensorId top_idx);

// DeepseekV2TopkRouter / DeepseekV3TopkRouter (and Glm4MoeTopkRouter, the same statements) over flat [T, H] with
// router weight [E, H]: fp32 logits, then by s.moe_topk_method (greedy / group_limited_greedy softmax, or noaux_tc:
// sigmoid scores + e_score_correction_bias, group top-2 sums, group mask, top-k, gathered weights, optional
// renormalisation, * routed_scaling_factor). Returns the routing weights [T, K], indices [T, K] and logits [T, E];
// the logits come back held (the MoE forward binds them to `_`), the caller holds the other two for the MoE's
// bindings and drops all three when the MoE forward returns.
struct DeepseekRoute {
  TensorId weights = kNoTensor, indices = kNoTensor, logits = kNoTensor;
};
DeepseekRoute deepseek_route(GraphBuilder& b, const TransformerSpec& s, TensorId flat, TensorId router_w);

// DeepseekV2ForCausalLM / DeepseekV3ForCausalLM (training forward + loss, or one inference pass).
// One MLA decoder layer's parameters (DeepSeek-V2 / V3 and Mistral4, whose modules register the same tensors):
// attention (q_proj, or q_a_proj (+ bias), q_a_layernorm, q_b_proj; kv_a_proj_with_mqa (+ bias), kv_a_layernorm,
// kv_b_proj, o_proj (+ bias)), the dense MLP or the MoE (experts, router, shared experts), the two norms.
struct DeepseekMla {
  TensorId q = kNoTensor, q_a = kNoTensor, q_a_b = kNoTensor, q_a_norm = kNoTensor, q_b = kNoTensor;
  TensorId kv_a = kNoTensor, kv_a_b = kNoTensor, kv_a_norm = kNoTensor, kv_b = kNoTensor, o = kNoTensor,
           o_b = kNoTensor;
};

struct DeepseekMlp {
  TensorId gate = kNoTensor, up = kNoTensor, down = kNoTensor, gate_b = kNoTensor, up_b = kNoTensor,
           down_b = kNoTensor;
};

struct DeepseekLayer {
  DeepseekMla attn;
  bool moe = false;
  DeepseekMlp mlp;  // the dense MLP, or the MoE's shared experts
  ExpertsParams experts;
  TensorId router = kNoTensor;
  TensorId in_norm = kNoTensor, post_norm = kNoTensor;
};

// Registers layer i's parameters in the modules' order (MoE layers: those s.moe_layers marks when it is non-empty
// (glm4_moe_lite's mlp_layer_types), else layers >= s.first_dense_layers; the fp32 e_score_correction_bias buffer
// for model_type deepseek_v3, glm4_moe_lite, deepseek_v32 and glm_moe_dsa).
// `after_attention`, when set, runs after o_proj's parameters and before the MLP's (deepseek_v32: the attention's
// DeepseekV32Indexer, created last in DeepseekV32Attention.__init__).
DeepseekLayer deepseek_layer_params(GraphBuilder& b, const TransformerSpec& s, int64_t i, bool train,
                                    const std::function<void()>& after_attention = {});

// DeepseekV3RMSNorm (and V2 / V3.2's copies): llama's rms_norm with `variance` bound until forward returns.
TensorId ds_rms_norm(GraphBuilder& b, TensorId x, TensorId w);

// apply_rotary_pos_emb_interleave on one of q / k: the even / odd slices x1, x2 (strided views whose backward
// zero-fills a full-size gradient each), cat(x1 cos - x2 sin, x2 cos + x1 sin) over half-width views of cos / sin
// (broadcast against x: [P, 1, S, rope] for [B, H, S, rope]).
TensorId rope_interleave(GraphBuilder& b, TensorId x, TensorId cos, TensorId sin);

// deepseek_route, then topk_weights and topk_indices bound (held) until the MoE returns, as DeepseekV3MoE binds them.
DeepseekRoute deepseek_route_bound(GraphBuilder& b, const TransformerSpec& s, TensorId flat, TensorId router_w);

// The decoder layer's MLP half on the post-attention norm's output n2 [B, S, H]: the dense SwiGLU MLP, or (d.moe)
// the router over the flattened tokens (`route`), the routed experts through grouped_mm and the shared experts
// added to them, the router's tensors released once the MoE returns. Returns the MLP output; n2 stays the caller's.
TensorId deepseek_mlp_half(GraphBuilder& b, const TransformerSpec& s, const DeepseekLayer& d, TensorId n2,
                           DeepseekRoute (*route)(GraphBuilder&, const TransformerSpec&, TensorId, TensorId));

// What an MLA decoder's modeling file changes in DeepSeek-V2 / V3's forward (the defaults): Mistral4
// (engine/arch/decoders/moe/mistral4.cpp) sets all three.
struct MlaVariant {
  // query_states = cat(q_pass, q_rot) * get_llama_4_attn_scale(position_ids) (a rebinding product: the cat dies);
  // position_ids are then bound until the forward returns, generate()'s too.
  bool llama4_query_scale = false;
  // Under autocast the q cat promotes (q_rot fp32, q_pass 16-bit) and its backward casts q_pass's gradient part
  // back to 16 bits (a fresh buffer).
  bool cast_q_cat_grads = false;
  // LongcatFlashMLA: q_pass and q_rot times mla_scale_q_lora and the normed latent times mla_scale_kv_lora (Python
  // floats) after the latent's norm, before the rotary: three fresh tensors; the scaled q_pass stays bound until
  // the attention returns.
  bool lora_scales = false;
  // The router over flat [T, H]: logits, weights and indices returned bound until the MoE returns.
  DeepseekRoute (*route)(GraphBuilder&, const TransformerSpec&, TensorId flat, TensorId router_w) =
      deepseek_route_bound;
};

// The rotary tables build_mla_decoder makes once per forward: deepseek_v2 returns freqs_cis (complex64
// [P, S, rope/2], carried as fp32 [P, 1, S, rope]: same bytes); every other MLA model LlamaRotaryEmbedding's cos /
// sin [P, 1, S, rope] in the hidden dtype (llama_parts.h rotary_cos_sin over qk_rope_head_dim dims). The caller holds
// them until the model's forward returns.
struct MlaRotary {
  TensorId freqs_cis = kNoTensor, cos = kNoTensor, sin = kNoTensor;
  TensorId position_ids = kNoTensor;  // bound for MlaVariant::llama4_query_scale only
  int64_t rows = 1;                   // P: position_ids' rows
};
MlaRotary mla_rotary(GraphBuilder& b, const TransformerSpec& s, int64_t P, int64_t S, DType hidden_dt);

// DeepseekV3Attention.forward (and the copies MiniCPM3Attention, LongcatFlashMLA write) on the input norm's output
// x: the q path, the compressed kv and its norm, rope (s.rope_interleave picks the interleaved form), the cache
// update in inference, the q cat, expand_kv's key / value, the attention (SDPA or eager: `weights` receives eager's
// probabilities, held, kNoTensor under SDPA; the caller drops them when its layer returns), o_proj. Returns
// o_proj's output; every local is released.
TensorId mla_attention(GraphBuilder& b, const TransformerSpec& s, const MlaVariant& v, const DeepseekMla& w,
                       const MlaRotary& rot, TensorId x, TensorId mask, TensorId& weights);

// The MLA causal LM (embeddings, MLA layers with dense / MoE MLPs, norm, head) with `v`'s variations.
void build_mla_decoder(GraphBuilder& b, const TransformerSpec& s, const MlaVariant& v);

void build_deepseek(GraphBuilder& b, const TransformerSpec& s);  // build_mla_decoder with the defaults

// Glm4MoeLiteForCausalLM (engine/arch/decoders/moe/glm4_moe_lite.cpp): build_mla_decoder with the defaults, MoE layers
// by spec.moe_layers.
void build_glm4_moe_lite(GraphBuilder& b, const TransformerSpec& s);

// DeepseekV4ForCausalLM (engine/arch/decoders/moe/deepseek_v4.cpp): declared here rather than in builders.h, which
// is in the engine's precompiled header; common.cpp's builder table includes this header already.
void build_deepseek_v4(GraphBuilder& b, const TransformerSpec& s);

// The rotary embedding of GptOssRotaryEmbedding and DeepseekV4RotaryEmbedding (fp32, autocast off, no_grad):
// position_ids.float() [P, 1, S], freqs = inv_freq @ positions [P, hd/2, S], cos = freqs.cos() * scaling and sin
// likewise, returned .to(dt): half-width [P, 1, S, hd/2] each (the head-broadcast shape apply_rotary_pos_emb
// unsqueezes to); the fp32 tensors die as forward returns.
std::pair<TensorId, TensorId> half_rotary_cos_sin(GraphBuilder& b, int64_t P, int64_t S, int64_t hd, DType dt);

}  // namespace memplan
