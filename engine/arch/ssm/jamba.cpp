// JambaForCausalLM (transformers 5.17 models/jamba/modeling_jamba.py) on its PyTorch path: training forward + loss,
// or one inference pass (prefill / decode step of generate()). Neither mamba_ssm nor causal_conv1d is installed, so
// the mixers' kernelized functions fall back to their torch bodies (mamba_inner_fn is a stub returning None; the
// associative scan runs only under torch.compile): the sequential selective scan. A run with the CUDA kernels
// allocates differently and is not modelled.
//   embed_tokens(input_ids) (inputs_embeds, bound until the forward returns) -> [use_cache: DynamicCache(config):
//   a LinearAttentionLayer per mamba layer, a DynamicLayer per attention layer] -> position_ids (no positional
//   embedding reads them) -> create_causal_mask (skipped by SDPA without padding; eager: the float mask) and
//   create_recurrent_attention_mask (None unless generate() passes a padded mask: the torch.all check only) ->
//   N x decoder layer -> final_layernorm -> lm_head over hidden[:, -logits_to_keep:] -> ForCausalLMLoss.
//   Layer i is JambaAttentionDecoderLayer iff i % attn_layer_period == attn_layer_offset, else
//   JambaMambaDecoderLayer; both: residual + op(input_layernorm(h)), then residual + feed_forward(pre_ff_layernorm(h))
//   (llama_residual_blocks' statements: each norm's output is bound until the callee returns; eager attention's
//   weights are bound to `_` until the layer returns). JambaRMSNorm is LlamaRMSNorm's statements.
//   JambaAttention: q / k / v projections viewed [B, heads, S, D] (no rotary embedding), the cache update in
//   inference, SDPA (is_causal, GQA in the kernel) or eager_attention_forward (repeat_kv), o_proj.
//   JambaMambaMixer: MambaMixer's statements (mamba_parts.h mamba_mixer) with time_step, B and C each passed
//   through its JambaRMSNorm right after x_proj's split; the block has no fp32 residual.
//   feed_forward is JambaSparseMoeBlock iff i % expert_layer_period == expert_layer_offset (and num_experts > 1),
//   else JambaMLP (down(silu(gate(x)) * up(x))). JambaSparseMoeBlock: x.view(-1, H), router_logits = router(x)
//   (bound until the block returns), route_tokens_to_experts: softmax(logits, dtype=float) (a local), topk,
//   top_k_weights.to(hidden_states.dtype) (no renormalisation), then JambaExperts through 5.17's default experts
//   implementation grouped_mm (deepseek_parts.h experts_grouped_mm; batched_mm in generate()'s decode steps),
//   reshape(B, S, H).
// Parameters, registration order: embed_tokens; per layer self_attn.{q,k,v,o}_proj or the mixer
// (mamba_mixer_params with the three norms), then feed_forward (router.weight [E, H], experts.gate_up_proj
// [E, 2I, H], experts.down_proj [E, H, I]; or gate_proj, up_proj, down_proj), input_layernorm, pre_ff_layernorm;
// final_layernorm; lm_head (untied by default).
#include <string>

#include "engine/arch/builders.h"
#include "engine/arch/decoders/parts/deepseek_parts.h"
#include "engine/arch/decoders/parts/llama_parts.h"
#include "engine/arch/ssm/mamba_parts.h"
#include "engine/checked.h"
#include "engine/errors.h"
#include "engine/limits.h"

namespace memplan {

namespace {

bool attention_layer(const TransformerSpec& s, int64_t i) { return i % s.jamba_attn_period == s.jamba_attn_offset; }

bool moe_layer(const TransformerSpec& s, int64_t i) {
  return s.num_experts > 1 && i % s.jamba_expert_period == s.jamba_expert_offset;
}

struct JambaLayer {
  bool attention = false, moe = false;
  LlamaLayerParams attn;  // q, k, v, o (no biases); in_norm / post_norm: input_layernorm / pre_ff_layernorm
  MambaMixerParams mixer;
  FfnParams ffn;  // MoE: gate = router [E, H], up = experts.gate_up_proj, down = experts.down_proj
};

JambaLayer layer_params(GraphBuilder& b, const TransformerSpec& s, int64_t i, bool train) {
  const std::string p = "layers." + std::to_string(i) + ".";
  const int64_t H = s.hidden_size, I = s.intermediate_size, E = s.num_experts;
  JambaLayer w;
  w.attention = attention_layer(s, i);
  w.moe = moe_layer(s, i);
  if (w.attention)
    attention_projection_params(b, s, p, train, false, false, w.attn);
  else
    w.mixer = mamba_mixer_params(b, s, p + "mamba.", train, MambaMixerNorms::jamba);
  FfnParams& f = w.ffn;
  if (w.moe) {
    f.gate = b.param(p + "feed_forward.router.weight", {E, H}, train);
    f.up = b.param(p + "feed_forward.experts.gate_up_proj", {E, 2 * I, H}, train);
    f.down = b.param(p + "feed_forward.experts.down_proj", {E, H, I}, train);
  } else {
    f.gate = b.param(p + "feed_forward.gate_proj.weight", {I, H}, train);
    f.up = b.param(p + "feed_forward.up_proj.weight", {I, H}, train);
    f.down = b.param(p + "feed_forward.down_proj.weight", {H, I}, train);
  }
  w.attn.in_norm = b.param(p + "input_layernorm.weight", {H}, train);
  w.attn.post_norm = b.param(p + "pre_ff_layernorm.weight", {H}, train);
  return w;
}

// JambaAttention.forward on the normed input x: the projections' head views `proj(x).view(B, S, -1, D)
// .transpose(1, 2)`, bound as query_states / key_states / value_states until the module returns (key / value
// rebound by the cache update in inference), then the attention and o_proj (llama_parts.h). Without a rotary
// embedding each view receives its gradient straight from the attention's backward: the fused SDPA kernels write
// it in the input's own layout (a view back to the projection), a bmm or repeat_kv's sum (eager, the math kernel
// of fp32 GQA) as a contiguous [B, heads, S, D] tensor that the transposed view copies back.
TensorId jamba_attention(GraphBuilder& b, const TransformerSpec& s, const LlamaLayerParams& w, TensorId x,
                         TensorId mask, TensorId& weights) {
  const auto& cfg = b.config();
  const int64_t B = cfg.batch_size, S = b.training() ? cfg.seq_len : b.pass().new_tokens, hd = s.head_dim;
  const TensorId qp = b.linear(x, w.q);
  const bool math_sdpa = b.dtype(qp) == DType::f32 && s.num_kv_heads != s.num_heads;
  const bool grad_in_layout = cfg.attn == AttnImpl::sdpa && mask == kNoTensor && !math_sdpa;
  auto heads = [&](TensorId proj, int64_t n) {
    const Shape shape{B, n, S, hd};
    return grad_in_layout ? b.view(proj, shape) : b.view_copying_grad(proj, shape);
  };
  const TensorId q = heads(qp, s.num_heads);
  b.hold(q);
  const TensorId k = heads(b.linear(x, w.k), s.num_kv_heads);
  b.hold(k);
  const TensorId v = heads(b.linear(x, w.v), s.num_kv_heads);
  b.hold(v);
  if (cfg.attn == AttnImpl::eager)
    return eager_attention_o_proj(b, s, q, k, v, v, mask, 0, w.o, kNoTensor, weights);
  return attention_o_proj(b, s, q, k, v, v, mask, 0, w.o, kNoTensor, weights);
}

// integrations/moe.py batched_mm_experts_forward, what generate()'s decode steps run (GenerationMixin.
// _optimize_model_for_decode swaps grouped_mm for batched_mm on CUDA after the prefill): the R = T * k routed rows
// (repeat_interleave), the clamped expert ids, the selected gate_up weights [R, 2I, H] (bound until rebound to
// the down weights [R, H, I], which are bound until the function returns), torch.bmm for each projection, the
// gate, times the routing weight, view(T, k, H).sum(1), cast to the input dtype. torch.bmm is an autocast op: under
// amp each selected weight block (fp32, an index of the fp32 experts) gets a 16-bit copy for its bmm, freed when
// the bmm returns (whole-run amp_fp16 generate stream: a1792 a896 f896 a896 f1792 a448 f448 f896 per MoE layer
// and step). deepseek_parts.cpp experts_batched_mm has the same statements without the casts (its families'
// measured generate rows are 16-bit models, where there is none); kept apart so their replays stay as measured.
TensorId experts_batched_mm_autocast(GraphBuilder& b, const ExpertsParams& e, TensorId flat, TensorId top_w,
                                     TensorId top_idx) {
  const Shape fs = b.shape(flat);
  const int64_t T = fs[0], H = fs[1], K = e.top_k, I = e.inter, R = checked_mul(T, K);
  const DType in_dt = b.dtype(flat), w_dt = b.dtype(e.gate_up);
  const TensorId rows = b.generic_one("repeat_interleave", {flat}, {R, H}, in_dt);
  b.hold(rows);  // selected_hidden_states
  const TensorId ids = b.generic_one("clamp", {b.view(top_idx, {R})}, {R}, DType::i64);
  b.hold(ids);
  auto bmm = [&](TensorId w, TensorId x, int64_t out_cols) {
    const TensorId wc = b.autocast_low(w);
    const TensorId xc = b.autocast_low(x);
    return b.generic_one("bmm", {wc, xc}, {R, out_cols}, b.dtype(wc), {0, 1});
  };
  const TensorId w_up = b.generic_one("index", {e.gate_up, ids}, {R, 2 * I, H}, w_dt, {1});
  b.hold(w_up);
  TensorId proj = bmm(w_up, rows, 2 * I);
  const auto halves = b.split(proj, 2, {R, I});
  proj = b.mul(b.unary("silu", halves[0], true, false), halves[1]);
  const TensorId w_dn = b.generic_one("index", {e.down, ids}, {R, H, I}, w_dt, {1});
  b.hold(w_dn);
  b.drop(w_up);  // `selected_weights` rebinds
  proj = bmm(w_dn, proj, H);
  const TensorId weighted = b.mul(proj, b.view(top_w, {R, 1}));
  const TensorId out = b.to(b.generic_one("sum_topk", {weighted}, {T, H}, b.dtype(weighted)), in_dt);
  for (TensorId t : {rows, ids, w_dn}) b.drop(t);
  return out;
}

// JambaSparseMoeBlock.forward on the normed input x [B, S, H] (the file header gives the statements).
TensorId jamba_moe(GraphBuilder& b, const TransformerSpec& s, const FfnParams& f, TensorId x) {
  const auto& cfg = b.config();
  const int64_t B = cfg.batch_size, S = b.training() ? cfg.seq_len : b.pass().new_tokens, H = s.hidden_size,
                K = s.num_experts_per_tok, T = checked_mul(B, S);
  const TensorId flat = b.view(x, {T, H});
  const TensorId logits = b.linear(flat, f.gate);
  b.hold(logits);  // router_logits: bound until the block returns
  const TensorId probs = b.softmax_last(b.to(logits, DType::f32));
  b.hold(probs);  // routing_weights: a local until route_tokens_to_experts returns
  const auto top = b.generic({"topk", {probs}, {{{T, K}, DType::f32}, {{T, K}, DType::i64}}, {}, {1}, {}, {}});
  const TensorId top_w = b.to(top[0], b.dtype(flat));  // top_k_weights.to(hidden_states.dtype)
  b.hold(top_w);  // top_k_index, top_k_weights: bound until the block returns
  b.hold(top[1]);
  b.drop(probs);
  ExpertsParams e;
  e.experts = s.num_experts;
  e.top_k = K;
  e.inter = s.intermediate_size;
  e.gate_up = f.up;
  e.down = f.down;
  const bool decode = !b.training() && b.pass().from_generate && b.pass().past_len > 0;
  const TensorId experts = decode ? experts_batched_mm_autocast(b, e, flat, top_w, top[1])
                                  : experts_grouped_mm(b, e, flat, top_w, top[1]);
  const TensorId out = b.view(experts, {B, S, H});
  for (TensorId t : {logits, top_w, top[1]}) b.drop(t);
  return out;
}

// create_recurrent_attention_mask in generate()'s prefill: not is_tracing(mask) and torch.all(mask == 1) (a bool
// [B, S] and a scalar), then None. A single-token step returns None before it; a plain forward passes no mask.
void recurrent_mask_check(GraphBuilder& b) {
  if (b.training() || !b.pass().from_generate || b.pass().new_tokens == 1) return;
  const int64_t B = b.config().batch_size, S = b.pass().past_len + b.pass().new_tokens;
  const TensorId eq = b.generic_one("eq", {}, {B, S}, DType::boolean);
  b.generic_one("all", {eq}, {}, DType::boolean);
}

void check_fields(const TransformerSpec& s) {
  if (s.jamba_attn_period < 1 || s.jamba_attn_offset < 0 || s.jamba_attn_offset >= s.jamba_attn_period)
    throw InputError("model.jamba_attn_offset", std::to_string(s.jamba_attn_offset),
                     "jamba needs 0 <= attn_layer_offset < attn_layer_period (" +
                         std::to_string(s.jamba_attn_period) + ")");
  if (s.jamba_expert_period < 1 || s.jamba_expert_offset < 0 || s.jamba_expert_offset >= s.jamba_expert_period)
    throw InputError("model.jamba_expert_offset", std::to_string(s.jamba_expert_offset),
                     "jamba needs 0 <= expert_layer_offset < expert_layer_period (" +
                         std::to_string(s.jamba_expert_period) + ")");
  if (s.ssm_state_size < 1 || s.ssm_inner_size < 1 || s.ssm_conv_kernel < 1 || s.ssm_time_step_rank < 1)
    throw InputError("model.ssm_state_size", std::to_string(s.ssm_state_size),
                     "jamba needs positive mamba_d_state, mamba_expand, mamba_d_conv and mamba_dt_rank");
  if (s.num_experts > 1 && (s.num_experts_per_tok < 1 || s.num_experts_per_tok > s.num_experts))
    throw InputError("model.num_experts_per_tok", std::to_string(s.num_experts_per_tok),
                     "must be in [1, num_experts]");
}

}  // namespace

void build_jamba(GraphBuilder& b, const TransformerSpec& s) {
  check_fields(s);
  const auto& cfg = b.config();
  const bool inf = !b.training();
  const int64_t S = inf ? b.pass().new_tokens : cfg.seq_len, H = s.hidden_size;
  int64_t mamba_layers = 0;
  for (int64_t i = 0; i < s.num_layers; ++i) mamba_layers += attention_layer(s, i) ? 0 : 1;
  // The sequential scan is about ten graph ops per token and mamba layer: refuse, naming the length, what would
  // pass the graph's op limit (engine/limits.h) rather than fail inside the build.
  if (S * mamba_layers > kMaxGraphOps / 10)
    throw InputError("seq_len", std::to_string(S),
                     "times jamba's mamba layers (" + std::to_string(mamba_layers) + ") exceeds " +
                         std::to_string(kMaxGraphOps / 10) +
                         ": the mixers' sequential scan is replayed op by op, about ten ops per token and layer, "
                         "and the graph is limited to " + std::to_string(kMaxGraphOps) + " ops");
  auto [embed, ids, h, P] = llama_inputs(b, s);  // position_ids: [B, S] inside generate(), else not allocated
  (void)P;
  const TensorId inputs_embeds = h;
  const TensorId mask = full_and_sliding_masks(b, s, true, false, b.dtype(h)).full;  // held until the forward returns
  recurrent_mask_check(b);
  b.hold(inputs_embeds);
  for (int64_t i = 0; i < s.num_layers; ++i) {
    const JambaLayer w = layer_params(b, s, i, !layer_frozen(cfg, i));
    b.begin_layer("layers." + std::to_string(i), layer_checkpointed(cfg, i));
    const TensorId layer_in = h;
    b.hold(layer_in);  // the model's loop variable holds the layer input until the layer returns
    h = llama_residual_blocks(
        b, h, w.attn.in_norm, w.attn.post_norm,
        [&](TensorId x, TensorId& weights) {
          if (w.attention) return jamba_attention(b, s, w.attn, x, mask, weights);
          weights = kNoTensor;
          return mamba_mixer(b, s, w.mixer, x, /*with_mask=*/false);
        },
        [&](TensorId n2) {
          return w.moe ? jamba_moe(b, s, w.ffn, n2) : swiglu_mlp(b, n2, w.ffn.gate, w.ffn.up, w.ffn.down);
        });
    if (layer_in != inputs_embeds) b.drop(layer_in);
    b.end_layer();
  }
  b.hold(h);  // `hidden_states = self.final_layernorm(hidden_states)` rebinds only once the norm has returned
  const TensorId hn = rms_norm(b, h, b.param("final_layernorm.weight", {H}, !cfg.freeze_embeddings));
  for (TensorId t : {h, inputs_embeds, mask})
    if (t != kNoTensor) b.drop(t);
  causal_lm_tail(b, s, hn, embed, ids);
}

}  // namespace memplan
