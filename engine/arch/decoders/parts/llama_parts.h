// Pieces of LlamaForCausalLM (engine/arch/decoders/dense/llama.cpp) that the modeling files derived from it share verbatim in
// transformers 5.17 (qwen3, olmo2, gemma*, phi3, starcoder2, ...). A builder uses one only where its modeling
// code runs the same statements; where it differs (a norm before the rotary embedding, softcapping, fused
// projections) the builder writes its own and says why.
#pragma once
#include <functional>
#include <string>
#include <utility>

#include "engine/arch/builders.h"

namespace memplan {

// rotate_half(x): cat(-x2, x1) over the last dim (a neg and a cat kernel).
TensorId rotate_half(GraphBuilder& b, TensorId x);
// apply_rotary_pos_emb for one tensor: x * cos + rotate_half(x) * sin.
TensorId rope(GraphBuilder& b, TensorId x, TensorId cos, TensorId sin);
// LlamaMLP: down(silu(gate(x)) * up(x)); the biases are kNoTensor unless the config sets mlp_bias.
TensorId swiglu_mlp(GraphBuilder& b, TensorId x, TensorId gate, TensorId up, TensorId down, TensorId gate_b = kNoTensor,
                    TensorId up_b = kNoTensor, TensorId down_b = kNoTensor);

// LlamaRotaryEmbedding.forward, in fp32 with autocast off: position_ids.float() [P, 1, S], freqs = inv_freq @
// positions [P, rot_dim/2, S] (the model's first GEMM: the forward thread's cuBLAS workspace comes here, after
// the embedding and the masks), emb = cat(freqs, freqs) [P, S, rot_dim], cos = emb.cos() * attention_scaling and
// the same for sin (each a temporary, then the product), returned .to(out_dtype); the fp32 locals die when it
// returns (whole-run streams: their small-pool segments decide where later segments are placed).
// P: 1 in a plain forward, B inside generate() (position_ids from the attention mask).
std::pair<TensorId, TensorId> rotary_cos_sin(GraphBuilder& b, int64_t positions_rows, int64_t seq, int64_t rot_dim,
                                             DType out_dtype);

// The start of LlamaForCausalLM.forward as its copies write it: the model's construction scalar
// (hf_construction_scalar), "embed_tokens.weight" [V, H] (trainable unless cfg.freeze_embeddings), input_ids
// [B, S], position_ids [B, S] when `position_rows` P > 1 ([1, S] from cache_position in a plain forward, nothing
// allocated; [B, S] from the attention mask in generate()), then embed_tokens(input_ids), which the model binds
// as inputs_embeds.
struct LlamaInputs {
  TensorId embed, ids, inputs_embeds;
  int64_t position_rows;
};
LlamaInputs llama_inputs(GraphBuilder& b, const TransformerSpec& s);

// LlamaModel.forward from inputs_embeds `h` on (llama, mistral, qwen2, mixtral; llava's language_model): the
// masks, the rotary embedding (P position rows), the decoder layers (their parameters "layers.<i>." created here,
// in order), the final norm ("norm.weight"). inputs_embeds, the masks and cos / sin stay bound until the norm has
// returned. Returns the normed hidden states (engine/arch/decoders/dense/llama.cpp). `batch_aware_eager`: eager
// attention from the cache update on as eager_attention_o_proj (torch.matmul's copies seen per batch size); false
// keeps attention_core's (copies whatever the batch: the llama / mistral / qwen2 / mixtral builders' measured form).
// `other_layer` (mllama's text model, whose cross-attention layers sit among the Llama ones): asked first for each
// layer index i with the running hidden states; returns true when it ran (or skipped) layer i itself, rebinding h,
// and false to let the Llama layer run. Empty: every layer is a Llama layer.
using OtherLayerFn = std::function<bool(int64_t i, TensorId& h)>;
TensorId llama_text_model(GraphBuilder& b, const TransformerSpec& s, TensorId h, int64_t P,
                          bool batch_aware_eager = false, const OtherLayerFn& other_layer = {});

// apply_rotary_pos_emb(q, k, cos, sin) as Llama's: rope on q, then on k (q and k held by the caller), each result
// held (query_states / key_states until the attention module returns), then q and k released as the caller
// rebinds them. Returns (q_embed, k_embed).
std::pair<TensorId, TensorId> rope_qk(GraphBuilder& b, TensorId q, TensorId k, TensorId cos, TensorId sin);

// apply_rotary_pos_emb of olmo / olmo2, whose rotary embedding keeps cos / sin in fp32: q_embed and k_embed
// (fp32) are locals until it returns, after both casts back to q's / k's dtype (`.to()` returns the tensor
// itself under fp32 models, then it stays bound as query_states). q and k (held by the caller) are released once
// the caller rebinds them; returns (query_states, key_states), held until the attention module returns.
std::pair<TensorId, TensorId> rope_cast_back(GraphBuilder& b, TensorId q, TensorId k, TensorId cos, TensorId sin);

// The attention from the cache update on (LlamaAttention.forward after apply_rotary_pos_emb, then
// sdpa_attention_forward / eager_attention_forward): qe / ke rotated [B, H, S, D] / [B, Hkv, S, D] (held by the
// caller), v [B, Hkv, S, D] and v_proj the view the caller holds as value_states. In inference ke and v are
// rebound to the cache's full tensors (ke and v_proj dropped). Returns the context [B, S, H, D] (a view of
// SDPA's output or eager's contiguous copy). `weights`: eager attention's probabilities, held (the decoder
// layer binds them until it returns); kNoTensor for SDPA.
TensorId attention_core(GraphBuilder& b, const TransformerSpec& s, TensorId qe, TensorId& ke, TensorId& v,
                        TensorId v_proj, TensorId mask, int64_t window, TensorId& weights);

// The feed-forward block's parameters. LlamaMLP: gate / up / down projections (+ biases with mlp_bias);
// MoE: gate = the router [E, H], up = experts.gate_up_proj [E, 2I, H], down = experts.down_proj [E, H, I].
struct FfnParams {
  TensorId gate = kNoTensor, up = kNoTensor, down = kNoTensor, gate_b = kNoTensor, up_b = kNoTensor,
           down_b = kNoTensor;
};
// LlamaDecoderLayer's attention parameters. Registration order: self_attn q, k, v, o (each weight then its bias
// where the config sets one), the MLP or MoE block, then input_layernorm and post_attention_layernorm:
// model.parameters() follows it, so the optimizer's per-parameter temporaries come in this order (Adafactor
// whole-run stream).
struct LlamaLayerParams {
  TensorId in_norm, post_norm, q, k, v, o, qb, kb, vb, ob;
};
struct LlamaDecoderParams {
  LlamaLayerParams attn;
  FfnParams ffn;
};
// The q / k / v / o projections of a Llama-derived attention under "<p>self_attn.", registered as nn.Linear
// creates them, each weight then its bias where the flag says: q [nh * hd, H], k and v [nkv * hd, H], o
// [H, nh * hd]. L: a layer struct with members q, qb, k, kb, v, vb, o, ob (biases left kNoTensor when absent).
template <class L>
void attention_projection_params(GraphBuilder& b, const TransformerSpec& s, const std::string& p, bool train,
                                 bool qkv_bias, bool o_bias, L& w) {
  const int64_t H = s.hidden_size, nh = s.num_heads, nkv = s.num_kv_heads, hd = s.head_dim;
  auto bias = [&](const char* name, int64_t n, bool has) {
    return has ? b.param(p + "self_attn." + name + ".bias", {n}, train) : kNoTensor;
  };
  w.q = b.param(p + "self_attn.q_proj.weight", {nh * hd, H}, train);
  w.qb = bias("q_proj", nh * hd, qkv_bias);
  w.k = b.param(p + "self_attn.k_proj.weight", {nkv * hd, H}, train);
  w.kb = bias("k_proj", nkv * hd, qkv_bias);
  w.v = b.param(p + "self_attn.v_proj.weight", {nkv * hd, H}, train);
  w.vb = bias("v_proj", nkv * hd, qkv_bias);
  w.o = b.param(p + "self_attn.o_proj.weight", {H, nh * hd}, train);
  w.ob = bias("o_proj", H, o_bias);
}

// LlamaAttention's projections and their head views [B, H, S, D] (`self.q_proj(x).view(hidden_shape)
// .transpose(1, 2)`, then k, then v). q and k reach the views with contiguous gradients from the rotary backward
// (slice_backward zero-fills [B, H, S, D]), which the transposed view must copy back (whole-run stream: a copy per
// projection). v's gradient comes from the fused SDPA kernel in v's own layout, but from a bmm or repeat_kv's sum
// (eager attention, masked SDPA) as a contiguous [B, H, S, D] tensor that is copied back too (whole-run streams:
// biased MHA Llama eager, Mistral-shape sliding window). v (value_states) is held: bound until the attention
// module returns (or the cache update rebinds it). L: as attention_projection_params.
struct QkvViews {
  TensorId q, k, v;
};
template <class L>
QkvViews llama_qkv_views(GraphBuilder& b, const TransformerSpec& s, const L& w, TensorId x, TensorId mask) {
  const auto& cfg = b.config();
  const int64_t B = cfg.batch_size, S = b.training() ? cfg.seq_len : b.pass().new_tokens, hd = s.head_dim;
  const TensorId qp = b.linear(x, w.q, w.qb);
  // SDPA's math backend (fp32 with grouped KV heads, GraphBuilder::sdpa) repeats K / V, so v's gradient is
  // repeat's sum as well (whole-run fp32 Qwen2 stream: a [B, S, Hkv * D] copy per layer).
  const bool math_sdpa = b.dtype(qp) == DType::f32 && s.num_kv_heads != s.num_heads;
  const bool v_grad_in_layout = cfg.attn == AttnImpl::sdpa && mask == kNoTensor && !math_sdpa;
  const TensorId q = b.view_copying_grad(qp, {B, s.num_heads, S, hd});
  const TensorId k = b.view_copying_grad(b.linear(x, w.k, w.kb), {B, s.num_kv_heads, S, hd});
  const TensorId vp = b.linear(x, w.v, w.vb);
  const Shape vs{B, s.num_kv_heads, S, hd};
  const TensorId v = v_grad_in_layout ? b.view(vp, vs) : b.view_copying_grad(vp, vs);
  b.hold(v);
  return {q, k, v};
}

// Creates layer `p`'s parameters (p = "layers.<i>."): q/k/v biases with qkv_bias, o's with o_bias, MLP biases
// with mlp_bias; the MoE block's router and 3-d expert weights when num_experts > 0.
LlamaDecoderParams llama_decoder_params(GraphBuilder& b, const TransformerSpec& s, const std::string& p, bool train);
// LlamaAttention.forward on the normed input x: projections, head views, rotary embedding, attention_core, o_proj.
// `weights` receives eager attention's probabilities, held: the decoder layer binds them to `_`
// (`hidden_states, _ = self.self_attn(...)`) until it returns. kNoTensor for SDPA.
// `t.clamp_(-clip_qkv, clip_qkv)` on a q / k / v projection's output (olmo, olmoe): the result aliases t. Under
// autograd the in-place node keeps a clone of the unclamped t, and its backward holds two bool masks of t's size
// while it writes a fresh gradient (engine/arch/decoders/dense/olmo.cpp; measured on OLMo clip_qkv). A view of the result that
// copies its gradient back copies t's full size (view_copying_grad's grad_bytes).
TensorId clamp_qkv_inplace(GraphBuilder& b, TensorId t);
TensorId llama_attention(GraphBuilder& b, const TransformerSpec& s, const LlamaLayerParams& w, TensorId x, TensorId cos,
                         TensorId sin, TensorId mask, int64_t window, TensorId& weights);

// eager_attention_forward from the cache update on, as attention_o_proj's eager branch but with torch.matmul's
// reshapes seen per batch size: the rotated q keeps the projection's [B, S, H, D] memory order, which the scores
// bmm copies for B > 1 but merges as a view for B = 1, and likewise the context gradient in matmul's backward
// (whole-run fp32 b1 eager streams of OLMo-3 and Phi-3.5-MoE: an 8 MiB q copy per layer too many in forward and a
// context-gradient copy in backward with the B > 1 form). Arguments and releases as attention_o_proj.
TensorId eager_attention_o_proj(GraphBuilder& b, const TransformerSpec& s, TensorId qe, TensorId ke, TensorId v,
                                TensorId v_proj, TensorId mask, int64_t window, TensorId o, TensorId ob,
                                TensorId& weights);

// A Llama-derived attention from the cache update on: attention_core (qe / ke / v / v_proj as there), o_proj
// (weight `o`, bias `ob` or kNoTensor) over attn_output.reshape(B, S, nh * hd), then the module's frame returns:
// query_states / key_states (qe / ke, held by the caller; ke as the cache update rebinds it) released, and
// value_states (v_proj) too in training (in inference the cache update released it). `weights` as attention_core.
TensorId attention_o_proj(GraphBuilder& b, const TransformerSpec& s, TensorId qe, TensorId ke, TensorId v,
                          TensorId v_proj, TensorId mask, int64_t window, TensorId o, TensorId ob, TensorId& weights);

// LlamaDecoderLayer.forward as layer `i` of the model's loop (its parameters `d` created by the caller), around
// the family's attention: `attention(x, weights)` runs self_attn on the normed input x and returns its output,
// `weights` receiving eager attention's probabilities (held; bound to `_` until the layer returns) or kNoTensor.
// The layer input stays held by the model's loop variable until the layer returns (unless it is inputs_embeds,
// which the model holds itself); input_layernorm's output is bound to hidden_states until self_attn returns,
// post_attention_layernorm's until the MLP (MoE block when num_experts > 0) returns. Checkpointed per the run.
using LlamaAttentionFn = std::function<TensorId(TensorId x, TensorId& weights)>;
TensorId llama_decoder_layer(GraphBuilder& b, const TransformerSpec& s, int64_t i, const LlamaDecoderParams& d,
                             TensorId h, TensorId inputs_embeds, const LlamaAttentionFn& attention);
// The statements of LlamaDecoderLayer.forward between the layer's bookkeeping, shared by the modeling files that
// copy them (llama_decoder_layer, hunyuan_v1_dense, apertus): input_layernorm (RMSNorm `in_norm`, its output bound
// until `attention` returns), the residual add, post_attention_layernorm (`post_norm`, bound until `mlp` returns),
// `mlp` on it, the residual add; eager attention's weights (bound to `_`) die as the layer returns.
using LlamaMlpFn = std::function<TensorId(TensorId x)>;
TensorId llama_residual_blocks(GraphBuilder& b, TensorId h, TensorId in_norm, TensorId post_norm,
                               const LlamaAttentionFn& attention, const LlamaMlpFn& mlp);

// MixtralSparseMoeBlock with transformers 5.17's default experts implementation grouped_mm (llama.cpp); generate()'s
// decode steps run batched_mm instead (deepseek_parts.h experts_grouped_mm dispatches to it).
TensorId moe_grouped_mm(GraphBuilder& b, const TransformerSpec& s, const FfnParams& w, TensorId x);

}  // namespace memplan
