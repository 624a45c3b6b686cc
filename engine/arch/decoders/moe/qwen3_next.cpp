// Qwen3NextForCausalLM (transformers 5.17 models/qwen3_next/modeling_qwen3_next.py) and the text decoders of
// Qwen3.5 (models/qwen3_5/modeling_qwen3_5.py Qwen3_5ForCausalLM, models/qwen3_5_moe Qwen3_5MoeForCausalLM):
// training forward + causal-LM loss, or one inference pass (prefill / decode step of generate()).
//   embed_tokens -> position ids (Qwen3.5: arange(S) expanded to [4, B, S], text row + three M-RoPE rows) ->
//   create_causal_mask (skipped by SDPA without padding) and create_recurrent_attention_mask (None unless
//   generate() passes a padded mask: torch.all(mask == 1) decides) -> rotary cos / sin in the hidden dtype
//   (Qwen3-Next: Llama's over int(head_dim * partial_rotary_factor) dims; Qwen3.5: the interleaved M-RoPE
//   recomposition of three fp32 rows) -> N x DecoderLayer -> norm -> lm_head -> loss or the last logits.
//   DecoderLayer: h + mixer(input_layernorm(h)), then h + mlp(post_attention_layernorm(h)); every RMSNorm is
//   the zero-centred one (x.float() normalised, times 1 + weight in fp32, cast back: gemma_rms_norm).
//   mixer, full_attention layers (Qwen3NextAttention): q_proj twice as wide, viewed [B, S, nh, 2 hd] and chunked
//     into query and gate (views); gate.reshape(B, S, nh * hd) copies; q_norm / k_norm over head_dim; partial
//     rotary (the four slices, two rotations, two cats); SDPA / eager; the context reshaped to [B, S, nh * hd]
//     times sigmoid(gate); o_proj.
//   mixer, linear_attention layers (Qwen3NextGatedDeltaNet / Qwen3_5GatedDeltaNet) on transformers' PyTorch
//     fallbacks (no flash-linear-attention, no causal-conv1d on the measuring machine):
//       Qwen3-Next: in_proj_qkvz and in_proj_ba, fix_query_key_value_ordering (per key head views; v, z, b, a and
//         the flattened q, k reshapes copy), cat(q, k, v) [B, S, conv_dim]
//       Qwen3.5: in_proj_qkv [B, S, conv_dim], in_proj_z, in_proj_b, in_proj_a
//       .transpose(1, 2) -> causal_conv1d_fn (F.conv1d depthwise, padding kernel-1, [:, :, :S], silu) -> back,
//       split q / k / v, beta = sigmoid(b), g = -exp(A_log) * softplus(a.float() + dt_bias) (fp32),
//       query / key repeat_interleave to the value heads, then torch_chunk_gated_delta_rule (fp32, chunks of 64:
//       chunk_gated_delta_rule below) or, in a decode step, torch_recurrent_gated_delta_rule; the gated
//       RMSNorm over head_v_dim (norm before the silu gate of z); out_proj.
//   mlp: Qwen3NextSparseMoeBlock (qwen3_next, qwen3_5_moe_text; Qwen2-MoE's block: shared expert, Qwen3's TopK
//     router, grouped_mm experts, sigmoid shared-expert gate) or the SwiGLU MLP.
// A run with the flash-linear-attention kernels (chunk_gated_delta_rule from fla) allocates differently; it is not
// modelled (the measured machine runs the fallbacks).
// Generate: the cache holds, per linear layer, the conv state [B, conv_dim, kernel] (zeros, then copy_ of the last
// columns) and the fp32 recurrent state [B, Hv, Dk, Dv]; per full layer K and V (DynamicLayer's cats).
#include "engine/arch/builders.h"

#include "engine/arch/decoders/parts/gemma_parts.h"
#include "engine/arch/decoders/parts/llama_parts.h"
#include "engine/arch/decoders/parts/phi_parts.h"
#include "engine/arch/decoders/parts/qwen_parts.h"
#include "engine/arch/decoders/parts/rotary_slices.h"
#include "engine/checked.h"
#include "engine/errors.h"

namespace memplan {

namespace {

constexpr int64_t kChunk = 64;  // torch_chunk_gated_delta_rule's chunk_size

struct Layer {
  bool linear = false, moe = false;
  // full attention
  TensorId q = kNoTensor, k = kNoTensor, v = kNoTensor, o = kNoTensor, qb = kNoTensor, kb = kNoTensor,
           vb = kNoTensor, ob = kNoTensor, q_norm = kNoTensor, k_norm = kNoTensor;
  // gated delta net
  TensorId dt_bias = kNoTensor, a_log = kNoTensor, conv_w = kNoTensor, qkvz = kNoTensor, ba = kNoTensor,
           qkv = kNoTensor, z = kNoTensor, bp = kNoTensor, ap = kNoTensor, norm_w = kNoTensor, out_proj = kNoTensor;
  // mlp
  FfnParams dense;
  TensorId router = kNoTensor, gate_up = kNoTensor, down = kNoTensor, sh_gate = kNoTensor, sh_up = kNoTensor,
           sh_down = kNoTensor, sh_expert_gate = kNoTensor;
  TensorId in_norm = kNoTensor, post_norm = kNoTensor;
};

bool is_35(const TransformerSpec& s) { return s.model_type != "qwen3_next"; }

int64_t conv_dim(const TransformerSpec& s) {
  return 2 * s.linear_num_key_heads * s.linear_key_head_dim + s.linear_num_value_heads * s.linear_value_head_dim;
}

// Registration order (model.parameters(): a module's own parameters before its children's): the mixer
// (GatedDeltaNet: dt_bias, A_log, then conv1d, in_proj_qkvz, in_proj_ba, norm, out_proj for Qwen3-Next and conv1d,
// norm, out_proj, in_proj_qkv, in_proj_z, in_proj_b, in_proj_a for Qwen3.5; attention: q, k, v, o, q_norm,
// k_norm), the mlp (router, experts.gate_up_proj, experts.down_proj, shared_expert gate / up / down,
// shared_expert_gate; or gate / up / down), input_layernorm, post_attention_layernorm.
Layer layer_params(GraphBuilder& b, const TransformerSpec& s, int64_t i, bool train) {
  const std::string p = "layers." + std::to_string(i) + ".";
  const int64_t H = s.hidden_size, hd = s.head_dim;
  Layer w;
  w.linear = s.qwen3_next_linear_layers[static_cast<size_t>(i)] != 0;
  w.moe = !s.moe_layers.empty() && s.moe_layers[static_cast<size_t>(i)] != 0;
  if (w.linear) {
    const int64_t hk = s.linear_num_key_heads, hv = s.linear_num_value_heads, dk = s.linear_key_head_dim,
                  dv = s.linear_value_head_dim, C = conv_dim(s), vd = hv * dv;
    const std::string la = p + "linear_attn.";
    w.dt_bias = b.param(la + "dt_bias", {hv}, train);
    w.a_log = b.param(la + "A_log", {hv}, train);
    w.conv_w = b.param(la + "conv1d.weight", {C, 1, s.linear_conv_kernel}, train);
    if (!is_35(s)) {
      w.qkvz = b.param(la + "in_proj_qkvz.weight", {2 * hk * dk + 2 * vd, H}, train);
      w.ba = b.param(la + "in_proj_ba.weight", {2 * hv, H}, train);
    }
    w.norm_w = b.param(la + "norm.weight", {dv}, train);
    w.out_proj = b.param(la + "out_proj.weight", {H, vd}, train);
    if (is_35(s)) {
      w.qkv = b.param(la + "in_proj_qkv.weight", {C, H}, train);
      w.z = b.param(la + "in_proj_z.weight", {vd, H}, train);
      w.bp = b.param(la + "in_proj_b.weight", {hv, H}, train);
      w.ap = b.param(la + "in_proj_a.weight", {hv, H}, train);
    }
  } else {
    const int64_t nh = s.num_heads, nkv = s.num_kv_heads;
    auto bias = [&](const char* name, int64_t n) {
      return s.attention_bias ? b.param(p + "self_attn." + name + ".bias", {n}, train) : kNoTensor;
    };
    w.q = b.param(p + "self_attn.q_proj.weight", {2 * nh * hd, H}, train);
    w.qb = bias("q_proj", 2 * nh * hd);
    w.k = b.param(p + "self_attn.k_proj.weight", {nkv * hd, H}, train);
    w.kb = bias("k_proj", nkv * hd);
    w.v = b.param(p + "self_attn.v_proj.weight", {nkv * hd, H}, train);
    w.vb = bias("v_proj", nkv * hd);
    w.o = b.param(p + "self_attn.o_proj.weight", {H, nh * hd}, train);
    w.ob = bias("o_proj", H);
    w.q_norm = b.param(p + "self_attn.q_norm.weight", {hd}, train);
    w.k_norm = b.param(p + "self_attn.k_norm.weight", {hd}, train);
  }
  if (w.moe) {
    const int64_t E = s.num_experts, I = s.moe_intermediate_size, Is = s.shared_expert_intermediate_size;
    w.router = b.param(p + "mlp.gate.weight", {E, H}, train);
    w.gate_up = b.param(p + "mlp.experts.gate_up_proj", {E, 2 * I, H}, train);
    w.down = b.param(p + "mlp.experts.down_proj", {E, H, I}, train);
    w.sh_gate = b.param(p + "mlp.shared_expert.gate_proj.weight", {Is, H}, train);
    w.sh_up = b.param(p + "mlp.shared_expert.up_proj.weight", {Is, H}, train);
    w.sh_down = b.param(p + "mlp.shared_expert.down_proj.weight", {H, Is}, train);
    w.sh_expert_gate = b.param(p + "mlp.shared_expert_gate.weight", {1, H}, train);
  } else {
    const int64_t I = s.intermediate_size;
    w.dense.gate = b.param(p + "mlp.gate_proj.weight", {I, H}, train);
    w.dense.up = b.param(p + "mlp.up_proj.weight", {I, H}, train);
    w.dense.down = b.param(p + "mlp.down_proj.weight", {H, I}, train);
  }
  w.in_norm = b.param(p + "input_layernorm.weight", {H}, train);
  w.post_norm = b.param(p + "post_attention_layernorm.weight", {H}, train);
  return w;
}

// `x = norm(x)` on an input only the call's frame binds (a projection's head view): bound until the norm returns.
TensorId norm_held(GraphBuilder& b, TensorId x, TensorId w) {
  b.hold(x);
  const TensorId y = gemma_rms_norm(b, x, w);
  b.drop(x);
  return y;
}

int64_t tokens_now(const GraphBuilder& b) { return b.training() ? b.config().seq_len : b.pass().new_tokens; }

// Qwen3NextAttention.forward on the normed input x. `weights`: eager attention's probabilities, held.
TensorId gated_attention(GraphBuilder& b, const TransformerSpec& s, const Layer& w, TensorId x, TensorId cos,
                         TensorId sin, TensorId mask, TensorId& weights) {
  const auto& cfg = b.config();
  const bool inf = !b.training();
  const int64_t B = cfg.batch_size, S = tokens_now(b), nh = s.num_heads, nkv = s.num_kv_heads, hd = s.head_dim;
  const int64_t rot = s.rotary_dim > 0 ? s.rotary_dim : hd;
  // query_states, gate = torch.chunk(q_proj(x).view(B, S, nh, 2 hd), 2, dim=-1): two views of the projection,
  // whose backward writes both halves' gradients into one fresh buffer of its size.
  const TensorId qp = b.linear(x, w.q, w.qb);
  const auto halves = b.split(b.view(qp, {B, S, nh, 2 * hd}), 2, {B, S, nh, hd});
  b.hold(halves[0]);  // query_states until q_norm's output rebinds it
  // gate.reshape(B, S, nh * hd): the strided half cannot be viewed flat, so reshape copies it.
  const TensorId gate = b.contiguous_copy(halves[1], {B, S, nh * hd});
  b.hold(gate);
  const TensorId qn = norm_held(b, halves[0], w.q_norm);
  b.drop(halves[0]);
  const TensorId q = b.view(qn, {B, nh, S, hd});  // .transpose(1, 2)
  b.hold(q);
  // k: the rotary backward hands a contiguous [B, H, S, D] gradient to the transposed norm output, so the head
  // view of the projection receives it in another memory order (qwen3.cpp).
  const TensorId kn = norm_held(b, b.view_copying_grad(b.linear(x, w.k, w.kb), {B, S, nkv, hd}), w.k_norm);
  const TensorId k = b.view(kn, {B, nkv, S, hd});
  b.hold(k);
  const bool v_grad_in_layout = cfg.attn == AttnImpl::sdpa && mask == kNoTensor &&
                                !(b.dtype(qp) == DType::f32 && nkv != nh);
  const TensorId vp = b.linear(x, w.v, w.vb);
  TensorId v = v_grad_in_layout ? b.view(vp, {B, nkv, S, hd}) : b.view_copying_grad(vp, {B, nkv, S, hd});
  const TensorId v_proj = v;
  b.hold(v_proj);
  // apply_rotary_pos_emb with the partial rotary slices (nemotron.cpp's statements).
  TensorId qe = kNoTensor, ke = kNoTensor;
  if (rot < hd) {
    const auto sl = rotary_slices(b, q, k, rot);
    const TensorId qr = rope(b, sl.q_rot, cos, sin);
    b.hold(qr);
    const TensorId kr = rope(b, sl.k_rot, cos, sin);
    b.hold(kr);
    // `q_embed = torch.cat([q_embed, q_pass], dim=-1)`: a rebinding, the rotated half goes once the cat exists.
    qe = b.cat("cat", {qr, sl.q_pass}, -1, std::nullopt, /*cast_part_grads=*/true);
    b.hold(qe);
    b.drop(qr);
    ke = b.cat("cat", {kr, sl.k_pass}, -1, std::nullopt, /*cast_part_grads=*/true);
    b.hold(ke);
    b.drop(kr);
    b.drop(q);
    b.drop(k);
  } else {
    auto qk = rope_qk(b, q, k, cos, sin);
    qe = qk.first;
    ke = qk.second;
  }
  // q is a cat output ([B, H, S, D] contiguous), so cuDNN lays SDPA's output out alike and the transpose in
  // sdpa_attention_forward copies it (phi_parts.h cudnn_output_copy; whole-run stream: a q-sized block after the
  // SDPA output, saved by the gating product).
  const TensorId ctx = rot < hd ? cudnn_output_copy(b, attention_core(b, s, qe, ke, v, v_proj, mask, 0, weights), mask)
                                : attention_core(b, s, qe, ke, v, v_proj, mask, 0, weights);
  // attn_output.reshape(B, S, -1).contiguous() (a view of the context), * sigmoid(gate), o_proj.
  const TensorId flat = b.view(ctx, {B, S, nh * hd});
  const TensorId sg = b.unary("sigmoid", gate, false, /*save_out=*/true);
  const TensorId gated = b.mul(flat, sg);
  const TensorId out = b.linear(gated, w.o, w.ob);
  b.drop(gate);  // a local until forward returns
  b.drop(qe);
  b.drop(ke);
  if (!inf) b.drop(v_proj);
  return out;
}

// F.conv1d(x, weight.unsqueeze(1), None, padding=pad, groups=C) on x [B, C, L] (causal_conv1d_fn /
// causal_conv1d_update's torch bodies), as lfm2.cpp's: autocast casts input and weight to 16 bits; a strided
// input is copied to a contiguous block for the kernel (forward: before the output, freed when the op returns;
// backward: alive across both gradients).
TensorId depthwise_conv1d(GraphBuilder& b, TensorId x, TensorId w, int64_t pad, bool x_strided) {
  const TensorId xc = b.autocast_low(x);
  const TensorId wc = b.autocast_low(w);
  const Shape xs = b.shape(xc), ws = b.shape(wc);
  const int64_t len = xs[2] + 2 * pad - ws[2] + 1;
  if (len < 1) throw InputError("seq_len", std::to_string(xs[2]), "too short for the model's convolution");
  GraphBuilder::GenericOp op{"conv1d_depthwise", {xc, wc}, {{{xs[0], ws[0], len}, b.dtype(xc)}}, {0, 1}, {}, {}, {}};
  if (x_strided) {
    op.reads.push_back(b.generic_one("contiguous", {}, xs, b.dtype(xc)));
    op.bwd_pre_temp_bytes.push_back(b.info(xc).bytes);
  }
  return b.generic(op)[0];
}

// l2norm(x) = x * rsqrt((x * x).sum(-1, keepdim=True) + 1e-6).
TensorId l2norm(GraphBuilder& b, TensorId x) {
  const TensorId sq = b.mul(x, x);
  const TensorId s = b.reduce_last("sum", sq, false);
  const TensorId r = b.unary("rsqrt", b.add_scalar(s), false, true, true);
  return b.mul(x, r);
}

// x.transpose(1, 2).to(torch.float32, memory_format=torch.contiguous_format): a copy of a 16-bit x; an fp32 x is
// returned as the transposed view itself (to_will_alias: same dtype, and suggest_memory_format() of the strided
// view already says contiguous_format; whole-run fp32 stream: no copies of q / k / v, l2norm reads the views).
TensorId to_f32_heads_first(GraphBuilder& b, TensorId x) {
  Shape s = b.shape(x);
  std::swap(s[1], s[2]);
  if (b.dtype(x) == DType::f32) return b.view(x, s);
  return b.generic_one("to_copy", {x}, s, DType::f32);
}

// One view `x[:, :, i]` of a [B, H, N, ...] tensor: SelectBackward writes its gradient into a zero-filled tensor of
// x's size.
TensorId select_chunk(GraphBuilder& b, TensorId x) {
  Shape s = b.shape(x);
  s.erase(s.begin() + 2);
  return b.split(x, 1, s)[0];
}

struct RuleOut {
  TensorId out = kNoTensor, state = kNoTensor;
};

// torch_chunk_gated_delta_rule (training and prefill; use_qk_l2norm_in_kernel=True) on query / key [B, S, Hv, Dk]
// (already repeated to the value heads), value [B, S, Hv, Dv], g and beta [B, S, Hv]; `initial_state` kNoTensor.
// Returns core_attn_out [B, S, Hv, Dv] in query's dtype and, when `want_state`, the final recurrent state.
RuleOut chunk_gated_delta_rule(GraphBuilder& b, TensorId query, TensorId key, TensorId value, TensorId g,
                               TensorId beta, bool want_state) {
  const DType initial_dtype = b.dtype(query);
  const Shape qs = b.shape(query), vs = b.shape(value);
  const int64_t B = qs[0], S = qs[1], Hv = vs[2], Dk = qs[3], Dv = vs[3];
  const int64_t pad = (kChunk - S % kChunk) % kChunk, Sp = S + pad, N = Sp / kChunk, C = kChunk;
  // query, key, value, beta, decay = [x.transpose(1, 2).to(float32, contiguous) for x in (...)]
  TensorId q = to_f32_heads_first(b, query), k = to_f32_heads_first(b, key), v = to_f32_heads_first(b, value);
  TensorId bt = to_f32_heads_first(b, b.view(beta, {B, S, Hv, 1}));
  bt = b.view(bt, {B, Hv, S});
  TensorId dc = b.view(g, {B, Hv, S});  // g is fp32: the transposed view
  for (TensorId t : {q, k, v, bt, dc}) b.hold(t);
  TensorId qn = l2norm(b, q);
  b.drop(q);
  b.hold(qn);
  TensorId kn = l2norm(b, k);
  b.drop(k);
  b.hold(kn);
  TensorId qsc = b.scalar_op("mul_scalar", qn, false);  // query * scaling
  b.drop(qn);
  b.hold(qsc);
  // F.pad over the sequence (constant_pad_nd copies even with a zero pad; its backward narrows and copies too).
  auto padded = [&](TensorId x, Shape to) { return b.generic_one("constant_pad_nd", {x}, std::move(to), DType::f32); };
  const TensorId qp = padded(qsc, {B, Hv, Sp, Dk});
  const TensorId kp = padded(kn, {B, Hv, Sp, Dk});
  const TensorId vp = padded(v, {B, Hv, Sp, Dv});
  // `value` and `beta` stay bound to their padded copies until the function returns; query, key and decay are
  // rebound below.
  for (TensorId t : {qp, kp, vp}) b.hold(t);
  b.drop(qsc);
  b.drop(kn);
  b.drop(v);
  const TensorId btp = padded(bt, {B, Hv, Sp});
  const TensorId dcp = padded(dc, {B, Hv, Sp});
  for (TensorId t : {btp, dcp}) b.hold(t);
  b.drop(bt);
  b.drop(dc);
  const TensorId beta1 = b.view(btp, {B, Hv, Sp, 1});
  const TensorId v_beta = b.mul(vp, beta1);
  b.hold(v_beta);
  const TensorId k_beta = b.mul(kp, beta1);
  b.hold(k_beta);
  // reshapes to [B, Hv, N, C, D] (views of contiguous tensors)
  const TensorId q5 = b.view(qp, {B, Hv, N, C, Dk}), k5 = b.view(kp, {B, Hv, N, C, Dk});
  const TensorId kb5 = b.view(k_beta, {B, Hv, N, C, Dk}), vb5 = b.view(v_beta, {B, Hv, N, C, Dv});
  const TensorId decay = b.view(dcp, {B, Hv, N, C});
  const TensorId upper =
      b.generic_one("triu", {b.generic_one("ones", {}, {C, C}, DType::boolean)}, {C, C}, DType::boolean);
  b.hold(upper);
  const TensorId cum = b.generic_one("cumsum", {decay}, {B, Hv, N, C}, DType::f32);
  b.hold(cum);
  b.drop(dcp);
  TensorId pw = b.sub(b.view(cum, {B, Hv, N, C, 1}), b.view(cum, {B, Hv, N, 1, C}));
  pw = b.generic_one("masked_fill", {pw, upper}, {B, Hv, N, C, C}, DType::f32);
  pw = b.unary("exp", pw, false, true, true);
  b.hold(pw);
  const TensorId kT = b.view(k5, {B, Hv, N, Dk, C});  // key.transpose(-1, -2)
  const TensorId ut = b.mul(b.matmul(kb5, kT, {B, Hv, N, C, C}), pw);
  b.hold(ut);
  const TensorId intra = b.mul(b.matmul(q5, kT, {B, Hv, N, C, C}), pw);
  b.hold(intra);
  const TensorId dkb = b.mul(kb5, b.view(b.unary("exp", cum, false, true, true), {B, Hv, N, C, 1}));
  b.hold(dkb);
  auto solve = [&](TensorId rhs) {
    return b.generic({"solve_triangular", {ut, rhs}, {{b.shape(rhs), DType::f32}}, {0}, {0}, {}, {}})[0];
  };
  const TensorId new_values = solve(vb5);
  b.hold(new_values);
  const TensorId k_cumdecay = solve(dkb);
  b.hold(k_cumdecay);
  TensorId state = b.generic_one("zeros", {}, {B, Hv, Dk, Dv}, DType::f32);
  b.hold(state);
  const TensorId core0 = b.generic_one("zeros", {}, {B, Hv, N, C, Dv}, DType::f32);  // zeros_like(new_values)
  TensorId core = core0;
  b.hold(core);
  const TensorId qd = b.mul(q5, b.view(b.unary("exp", cum, false, true, true), {B, Hv, N, C, 1}));
  b.hold(qd);
  b.drop(qp);
  const TensorId last = b.split(cum, 1, {B, Hv, N, 1})[0];  // cum_decay[..., -1:]
  const TensorId kd =
      b.mul(k5, b.view(b.unary("exp", b.sub(last, cum), false, true, true), {B, Hv, N, C, 1}));
  b.hold(kd);
  b.drop(kp);
  const TensorId chunk_decay = b.view(
      b.unary("exp", b.split(cum, 1, {B, Hv, N})[0], false, true, true), {B, Hv, N, 1, 1});
  b.hold(chunk_decay);
  TensorId inter = kNoTensor, v_new = kNoTensor;
  for (int64_t i = 0; i < N; ++i) {
    const TensorId nv = select_chunk(b, new_values), kc = select_chunk(b, k_cumdecay);
    const TensorId vn = b.sub(nv, b.matmul(kc, state, {B, Hv, C, Dv}));
    if (v_new != kNoTensor) b.drop(v_new);
    v_new = vn;
    b.hold(v_new);
    const TensorId in = b.matmul(select_chunk(b, qd), state, {B, Hv, C, Dv});
    if (inter != kNoTensor) b.drop(inter);
    inter = in;
    b.hold(inter);
    const TensorId sum = b.add(inter, b.matmul(select_chunk(b, intra), v_new, {B, Hv, C, Dv}));
    // core_attn_out[:, :, i] = ...: CopySlices' backward makes a fresh gradient of the whole base (the incoming one
    // copied, then freed) and hands copy_ a contiguous clone of the slice, the source's gradient (whole-run
    // streams: a 64 + 1 MiB pair per chunk at B 1, S 4096).
    // (the clone is of the gradient's, i.e. core's, dtype: fp32 under autocast where the source is 16-bit)
    const TensorId src = b.view_copying_grad(sum, b.shape(sum), checked_mul(b.numel(sum), int64_t{4}));
    const TensorId core2 =
        b.view_copying_grad(b.inplace("copy_slice", core, false, {src}), b.shape(core), b.info(core0).bytes);
    b.drop(core);
    core = core2;
    b.hold(core);
    const TensorId decayed = b.mul(state, select_chunk(b, chunk_decay));
    const TensorId kt = b.view(select_chunk(b, kd), {B, Hv, Dk, C});
    const TensorId ns = b.add(decayed, b.matmul(kt, v_new, {B, Hv, Dk, Dv}));
    b.drop(state);
    state = ns;
    b.hold(state);
  }
  if (!want_state) b.drop(state);  // last_recurrent_state = None
  // core_attn_out = core_attn_out.reshape(B, Hv, -1, Dv): zeros_like kept solve_triangular's column-major batch
  // layout, so the reshape copies (whole-run streams: a padded-size fp32 block, the old one freed on rebinding);
  // then [:, :, :S].transpose(1, 2).to(initial_dtype, contiguous).
  const TensorId flat = b.contiguous_copy(core, {B, Hv, Sp, Dv});
  b.drop(core);
  b.hold(flat);
  const TensorId out = b.generic_one("to_copy", {flat}, {B, S, Hv, Dv}, initial_dtype);
  for (TensorId t : {flat, inter, v_new, upper, cum, pw, ut, intra, dkb, new_values, k_cumdecay, qd, kd, chunk_decay,
                     v_beta, k_beta, vp, btp})
    if (t != kNoTensor) b.drop(t);
  RuleOut r;
  r.out = out;
  if (want_state) r.state = state;  // the caller copies it into the cache; a local of its forward
  return r;
}

// torch_recurrent_gated_delta_rule for one token (generate()'s decode steps, no autograd) from the cached state
// `state_in` [B, Hv, Dk, Dv] fp32. Returns the output [B, 1, Hv, Dv] in query's dtype and the new state.
RuleOut recurrent_gated_delta_rule(GraphBuilder& b, TensorId query, TensorId key, TensorId value, TensorId g,
                                   TensorId beta, TensorId state_in) {
  const DType initial_dtype = b.dtype(query);
  const Shape qs = b.shape(query), vs = b.shape(value);
  const int64_t B = qs[0], Hv = vs[2], Dk = qs[3], Dv = vs[3];
  TensorId q = to_f32_heads_first(b, query), k = to_f32_heads_first(b, key), v = to_f32_heads_first(b, value);
  TensorId bt = b.to(b.view(beta, {B, Hv, 1}), DType::f32);
  TensorId dc = b.view(g, {B, Hv, 1});
  for (TensorId t : {q, k, v, bt}) b.hold(t);
  TensorId qn = l2norm(b, q);
  b.drop(q);
  b.hold(qn);
  TensorId kn = l2norm(b, k);
  b.drop(k);
  b.hold(kn);
  TensorId qsc = b.scalar_op("div_scalar", qn, false);
  b.drop(qn);
  b.hold(qsc);
  TensorId core = b.generic_one("zeros", {}, {B, Hv, 1, Dv}, DType::f32);
  b.hold(core);
  const TensorId decay_t = b.view(b.unary("exp", b.view(dc, {B, Hv}), false, true, true), {B, Hv, 1, 1});
  b.hold(decay_t);
  TensorId st = b.mul(state_in, decay_t);
  b.hold(st);
  const TensorId kv_mem = b.generic_one("sum", {b.mul(st, b.view(kn, {B, Hv, Dk, 1}))}, {B, Hv, Dv}, DType::f32);
  b.hold(kv_mem);
  const TensorId delta = b.mul(b.sub(b.view(v, {B, Hv, Dv}), kv_mem), b.view(bt, {B, Hv, 1}));
  b.hold(delta);
  const TensorId st2 = b.add(st, b.mul(b.view(kn, {B, Hv, Dk, 1}), b.view(delta, {B, Hv, 1, Dv})));
  b.drop(st);
  b.hold(st2);
  const TensorId o = b.generic_one("sum", {b.mul(st2, b.view(qsc, {B, Hv, Dk, 1}))}, {B, Hv, Dv}, DType::f32);
  const TensorId core2 = b.inplace("copy_slice", core, false, {o});
  b.drop(core);
  b.hold(core2);
  const TensorId out = b.to(b.view(core2, {B, 1, Hv, Dv}), initial_dtype);
  for (TensorId t : {v, bt, kn, qsc, core2, decay_t, kv_mem, delta}) b.drop(t);
  return {out, st2};
}

// Qwen3NextGatedDeltaNet / Qwen3_5GatedDeltaNet.forward on the normed input x (held by the caller).
TensorId gated_delta_net(GraphBuilder& b, const TransformerSpec& s, const Layer& w, TensorId x) {
  const auto& cfg = b.config();
  const bool inf = !b.training();
  const int64_t B = cfg.batch_size, S = tokens_now(b), hk = s.linear_num_key_heads, hv = s.linear_num_value_heads,
                dk = s.linear_key_head_dim, dv = s.linear_value_head_dim, C = conv_dim(s), K = s.linear_conv_kernel;
  const int64_t kd = hk * dk, vd = hv * dv, r = hv / hk;
  const bool decode = inf && b.pass().past_len > 0;
  TensorId mixed = kNoTensor, z = kNoTensor, bg = kNoTensor, ag = kNoTensor;
  std::vector<TensorId> locals;  // tensors bound in forward until it returns
  std::vector<TensorId> rebound_at_split;  // Qwen3-Next's flat query / key / value copies
  if (!is_35(s)) {
    // fix_query_key_value_ordering: per key head views [B, S, hk, 2 dk + 2 r dv] and [B, S, hk, 2 r], split.
    const TensorId qkvz = b.linear(x, w.qkvz);
    locals.push_back(qkvz);
    b.hold(qkvz);
    const TensorId ba = b.linear(x, w.ba);
    locals.push_back(ba);
    b.hold(ba);
    const auto parts = b.split(b.view(qkvz, {B, S, hk, 2 * dk + 2 * r * dv}),
                               std::vector<Shape>{{B, S, hk, dk}, {B, S, hk, dk}, {B, S, hk, r * dv}, {B, S, hk, r * dv}});
    const auto bas = b.split(b.view(ba, {B, S, hk, 2 * r}), std::vector<Shape>{{B, S, hk, r}, {B, S, hk, r}});
    // value / z reshape(B, S, hv, dv) and b / a reshape(B, S, hv): strided slices, so each reshape copies.
    const TensorId v4 = b.contiguous_copy(parts[2], {B, S, hv, dv});
    z = b.contiguous_copy(parts[3], {B, S, hv, dv});
    bg = b.contiguous_copy(bas[0], {B, S, hv});
    ag = b.contiguous_copy(bas[1], {B, S, hv});
    b.hold(v4);
    for (TensorId t : {z, bg, ag}) {
      locals.push_back(t);
      b.hold(t);
    }
    // query, key, value = (x.reshape(B, S, -1) ...): q and k copy, value is a view of its copy.
    // ... bound as query / key / value until the split after the conv rebinds them.
    const TensorId q3 = b.contiguous_copy(parts[0], {B, S, kd});
    const TensorId k3 = b.contiguous_copy(parts[1], {B, S, kd});
    b.hold(q3);
    b.hold(k3);
    mixed = b.cat("cat", {q3, k3, b.view(v4, {B, S, vd})}, -1);
    rebound_at_split = {q3, k3, v4};
  } else {
    mixed = b.linear(x, w.qkv);
    z = b.view(b.linear(x, w.z), {B, S, hv, dv});
    locals.push_back(z);
    b.hold(z);
    bg = b.linear(x, w.bp);
    locals.push_back(bg);
    b.hold(bg);
    ag = b.linear(x, w.ap);
    locals.push_back(ag);
    b.hold(ag);
  }
  b.hold(mixed);
  // mixed_qkv.transpose(1, 2): the conv's input gradient arrives contiguous [B, C, S], which the [B, S, C] producer
  // copies back (as lfm2's in_proj).
  const TensorId mt = b.view_copying_grad(mixed, {B, C, S});
  const DType wdt = b.dtype(w.conv_w);
  TensorId conv_act = kNoTensor;
  if (decode) {
    // causal_conv1d_update: cat([conv_state, x]).to(weight.dtype) [B, C, K + 1], conv_state.copy_, conv1d without
    // padding [B, C, 2], [:, :, -1:], silu, .to(x.dtype).
    const TensorId state = b.kv_cache_in({B, C, K}, b.dtype(mixed));
    const TensorId cat = b.cat("cat", {state, mt}, 2);
    const TensorId catw = b.to(cat, wdt);
    b.hold(catw);
    const TensorId conv = depthwise_conv1d(b, catw, w.conv_w, 0, false);
    b.kv_cache_out(state);
    b.drop(catw);
    Shape last = b.shape(conv);
    last[2] = 1;
    conv_act = b.to(b.unary("silu", b.view(conv, last), true, false), b.dtype(mixed));
  } else {
    if (inf) {
      // update_conv_state: the cache's zeros [B, C, K] of x's dtype, copy_ of the last K columns (in place); a
      // prompt shorter than K is left-padded for the copy.
      const TensorId state = b.generic_one("zeros", {}, {B, C, K}, b.dtype(mixed));
      if (S < K) b.generic_one("constant_pad_nd", {mt}, {B, C, K}, b.dtype(mixed));
      b.kv_cache_out(state);
    }
    const TensorId xin = b.to(mt, wdt);  // hidden_states.to(weight.dtype): the call's argument
    b.hold(xin);
    const TensorId conv = depthwise_conv1d(b, xin, w.conv_w, K - 1, true);  // the transposed input is strided
    b.drop(xin);
    // [:, :, :seq_len] (SliceBackward zero-fills the whole conv output's size), silu, .to(hidden dtype)
    const TensorId sliced = b.view_copying_grad(conv, {B, C, S});
    conv_act = b.to(b.unary("silu", sliced, true, false), b.dtype(mixed));
  }
  b.drop(mixed);
  b.hold(conv_act);  // mixed_qkv until forward returns (query / key / value are its views)
  // .transpose(1, 2), split into query / key / value [B, S, *] views, reshaped per head (views).
  const TensorId back = b.view(conv_act, {B, S, C});
  const auto qkv = b.split(back, std::vector<Shape>{{B, S, hk, dk}, {B, S, hk, dk}, {B, S, hv, dv}});
  for (TensorId t : rebound_at_split) b.drop(t);
  TensorId query = qkv[0], key = qkv[1];
  const TensorId value = qkv[2];
  const TensorId beta = b.unary("sigmoid", bg, false, /*save_out=*/true);
  b.hold(beta);
  // g = -A_log.float().exp() * F.softplus(a.float() + dt_bias)
  const TensorId a_exp = b.unary("neg", b.unary("exp", b.to(w.a_log, DType::f32), false, true, true), false, false);
  const TensorId sp = b.unary("softplus", b.add(b.to(ag, DType::f32), w.dt_bias), true, false, true);
  const TensorId g = b.mul(a_exp, sp);
  b.hold(g);
  if (r > 1) {  // query / key repeat_interleave(r, dim=2): fresh [B, S, hv, dk] copies
    query = b.generic_one("repeat_interleave", {query}, {B, S, hv, dk}, b.dtype(query));
    b.hold(query);
    key = b.generic_one("repeat_interleave", {key}, {B, S, hv, dk}, b.dtype(key));
    b.hold(key);
  }
  RuleOut rule;
  if (decode) {
    const TensorId st = b.kv_cache_in({B, hv, dk, dv}, DType::f32);
    rule = recurrent_gated_delta_rule(b, query, key, value, g, beta, st);
    b.kv_cache_out(st);  // update_recurrent_state: copy_ into the cached state
  } else {
    rule = chunk_gated_delta_rule(b, query, key, value, g, beta, inf);
    if (inf) {  // update_recurrent_state: zeros_like(state) on first use, then copy_
      const TensorId st = b.generic_one("zeros", {}, {B, hv, dk, dv}, DType::f32);
      b.kv_cache_out(st);
    }
  }
  b.hold(rule.out);  // core_attn_out
  // norm(core_attn_out.reshape(-1, dv), z.reshape(-1, dv)): Qwen3NextRMSNormGated
  const int64_t rows = B * S * hv;
  const TensorId core2 = b.view(rule.out, {rows, dv});
  const TensorId z2 = b.view(z, {rows, dv});
  const DType in_dt = b.dtype(core2);
  const TensorId h32 = b.to(core2, DType::f32);
  b.hold(h32);
  const TensorId var = b.reduce_last("mean", b.pow_scalar(h32), false);
  b.hold(var);
  const TensorId n = b.mul(h32, b.unary("rsqrt", b.add_scalar(var), false, true, true));
  b.drop(h32);
  b.hold(n);
  const TensorId wn = b.mul(w.norm_w, b.to(n, in_dt));
  b.drop(n);
  b.hold(wn);
  const TensorId gated = b.mul(wn, b.unary("silu", b.to(z2, DType::f32), true, false));
  b.drop(wn);
  b.drop(var);
  const TensorId normed = b.to(gated, in_dt);
  b.drop(rule.out);
  const TensorId out = b.linear(b.view(normed, {B, S, vd}), w.out_proj);
  for (TensorId t : locals) b.drop(t);
  for (TensorId t : {conv_act, beta, g}) b.drop(t);
  if (r > 1) {  // the repeated query / key: locals until forward returns
    b.drop(query);
    b.drop(key);
  }
  if (rule.state != kNoTensor) b.drop(rule.state);  // last_recurrent_state: a local until forward returns
  return out;
}

// Qwen3NextSparseMoeBlock.forward (Qwen2MoeSparseMoeBlock's statements, qwen2_moe.cpp).
TensorId sparse_moe_block(GraphBuilder& b, const TransformerSpec& s, const Layer& w, TensorId x) {
  const int64_t H = s.hidden_size, B = b.config().batch_size, Sq = tokens_now(b);
  const TensorId flat = b.view(x, {checked_mul(B, Sq), H});
  const TensorId shared = swiglu_mlp(b, flat, w.sh_gate, w.sh_up, w.sh_down);
  b.hold(shared);
  const QwenMoeRoute route = qwen_moe_router(b, s, w.router, flat);
  const TensorId experts = qwen_moe_experts(b, s, w.gate_up, w.down, flat, route);
  b.hold(experts);
  const TensorId gate = b.unary("sigmoid", b.linear(flat, w.sh_expert_gate), false, /*save_out=*/true);
  const TensorId gated = b.mul(gate, shared);
  b.drop(shared);
  const TensorId sum = b.add(experts, gated);
  b.drop(experts);
  const TensorId out = b.view(sum, {B, Sq, H});
  release_route(b, route);
  return out;
}

// Qwen3_5TextRotaryEmbedding.forward: inv_freq expanded to [3, P, rot/2, 1] @ position_ids[:, :, None, :].float()
// [3, P, 1, S] (fp32), transposed, cos / sin times attention_scaling, then the interleaved recomposition (in-place
// slice copies into row 0, cat((f, f), -1) [P, S, rot]) of sin before cos; both returned .to(out_dtype).
std::pair<TensorId, TensorId> mrope_cos_sin(GraphBuilder& b, int64_t P, int64_t S, int64_t rot, DType out_dtype) {
  auto f32 = [&](std::string_view name, std::vector<TensorId> reads, Shape shape) {
    return b.generic({name, std::move(reads), {{std::move(shape), DType::f32}}, {}, {}, {}, {}})[0];
  };
  const TensorId positions = f32("to_copy", {}, {3, P, 1, S});
  b.hold(positions);
  const TensorId freqs = f32("matmul", {positions}, {3, P, rot / 2, S});
  b.hold(freqs);
  const TensorId cos0 = f32("mul_scalar", {f32("cos", {freqs}, {3, P, S, rot / 2})}, {3, P, S, rot / 2});
  b.hold(cos0);
  const TensorId sin0 = f32("mul_scalar", {f32("sin", {freqs}, {3, P, S, rot / 2})}, {3, P, S, rot / 2});
  b.hold(sin0);
  const TensorId sin32 = f32("cat", {sin0}, {P, 1, S, rot});  // [P, S, rot], unsqueezed by apply_rotary_pos_emb
  b.hold(sin32);
  b.drop(sin0);
  const TensorId cos32 = f32("cat", {cos0}, {P, 1, S, rot});
  b.hold(cos32);
  b.drop(cos0);
  const TensorId cos = b.to(cos32, out_dtype);
  const TensorId sin = b.to(sin32, out_dtype);
  for (TensorId t : {positions, freqs, cos32, sin32})
    if (t != cos && t != sin) b.drop(t);
  return {cos, sin};
}

// create_recurrent_attention_mask inside generate() (a 2-d all-ones mask, more than one new token):
// torch.all(attention_mask == 1), then None.
void recurrent_mask_check(GraphBuilder& b) {
  if (b.training() || !b.pass().from_generate || b.pass().new_tokens == 1) return;
  const int64_t B = b.config().batch_size, S = b.pass().past_len + b.pass().new_tokens;
  const TensorId eq = b.generic_one("eq", {}, {B, S}, DType::boolean);
  b.generic_one("all", {eq}, {}, DType::boolean);
}

void check_spec(const TransformerSpec& s) {
  if (static_cast<int64_t>(s.qwen3_next_linear_layers.size()) != s.num_layers)
    throw InputError("model.qwen3_next_linear_layers", std::to_string(s.qwen3_next_linear_layers.size()) + " entries",
                     "must have one entry per layer (" + std::to_string(s.num_layers) + ")");
  if (!s.moe_layers.empty() && static_cast<int64_t>(s.moe_layers.size()) != s.num_layers)
    throw InputError("model.moe_layers", std::to_string(s.moe_layers.size()) + " entries",
                     "must have one entry per layer (" + std::to_string(s.num_layers) + ")");
  for (int64_t v : {s.linear_num_key_heads, s.linear_num_value_heads, s.linear_key_head_dim, s.linear_value_head_dim,
                    s.linear_conv_kernel})
    if (v < 1) throw InputError("model.linear_num_key_heads", std::to_string(v), "linear attention sizes must be positive");
  if (s.linear_num_value_heads % s.linear_num_key_heads != 0)
    throw InputError("model.linear_num_value_heads", std::to_string(s.linear_num_value_heads),
                     "must be a multiple of linear_num_key_heads (" + std::to_string(s.linear_num_key_heads) + ")");
  if (!s.moe_layers.empty() && (s.num_experts < 1 || s.num_experts_per_tok < 1 || s.moe_intermediate_size < 1 ||
                                s.shared_expert_intermediate_size < 1))
    throw InputError("model.num_experts", std::to_string(s.num_experts),
                     "MoE layers need num_experts, num_experts_per_tok, moe_intermediate_size and "
                     "shared_expert_intermediate_size");
  if (s.sliding_window > 0)
    throw InputError("model.sliding_window", std::to_string(s.sliding_window), "qwen3_next has no sliding window");
}

}  // namespace

void build_qwen3_next(GraphBuilder& b, const TransformerSpec& s) {
  check_spec(s);
  const auto& cfg = b.config();
  const bool inf = !b.training();
  const int64_t B = cfg.batch_size, S = tokens_now(b), H = s.hidden_size;
  const int64_t rot = s.rotary_dim > 0 ? s.rotary_dim : s.head_dim;
  auto [embed, ids, h, P] = llama_inputs(b, s);  // position_ids rows P: B inside generate(), else 1
  const TensorId inputs_embeds = h;
  TensorId text_pos = kNoTensor;
  if (!(inf && b.pass().from_generate)) {
    // position_ids = torch.arange(S) + past_seen_tokens, then a view ([1, S]; Qwen3.5: [4, B, S] expanded)
    text_pos = b.generic_one("add", {b.generic_one("arange", {}, {S}, DType::i64)}, {S}, DType::i64);
    b.hold(text_pos);
  }
  const TensorId mask = full_and_sliding_masks(b, s, true, false, b.dtype(h)).full;
  recurrent_mask_check(b);
  const int64_t rows = is_35(s) ? B : P;  // Qwen3.5: inv_freq expanded over position_ids.shape[1] = B
  const std::pair<TensorId, TensorId> cos_sin =
      is_35(s) ? mrope_cos_sin(b, rows, S, rot, b.dtype(h)) : rotary_cos_sin(b, P, S, rot, b.dtype(h));
  const TensorId cos = cos_sin.first, sin = cos_sin.second;
  b.hold(inputs_embeds);
  b.hold(cos);
  b.hold(sin);
  for (int64_t i = 0; i < s.num_layers; ++i) {
    const Layer w = layer_params(b, s, i, !layer_frozen(cfg, i));
    b.begin_layer("layers." + std::to_string(i), layer_checkpointed(cfg, i));
    const TensorId layer_in = h;
    b.hold(layer_in);  // the model's loop variable holds the layer input until the layer returns
    const TensorId n1 = gemma_rms_norm(b, h, w.in_norm);
    b.hold(n1);  // bound to hidden_states until the mixer returns
    TensorId attn_weights = kNoTensor;
    const TensorId a = w.linear ? gated_delta_net(b, s, w, n1) : gated_attention(b, s, w, n1, cos, sin, mask, attn_weights);
    b.drop(n1);
    const TensorId h1 = b.add(h, a);
    const TensorId n2 = gemma_rms_norm(b, h1, w.post_norm);
    b.hold(n2);
    const TensorId m = w.moe ? sparse_moe_block(b, s, w, n2) : swiglu_mlp(b, n2, w.dense.gate, w.dense.up, w.dense.down);
    b.drop(n2);
    h = b.add(h1, m);
    if (attn_weights != kNoTensor) b.drop(attn_weights);
    if (layer_in != inputs_embeds) b.drop(layer_in);
    b.end_layer();
  }
  b.hold(h);  // `hidden_states = self.norm(hidden_states)` rebinds only once the norm has returned
  const TensorId hn = gemma_rms_norm(b, h, b.param("norm.weight", {H}, !cfg.freeze_embeddings));
  for (TensorId t : {h, inputs_embeds, cos, sin, mask, text_pos})
    if (t != kNoTensor) b.drop(t);
  causal_lm_tail(b, s, hn, embed, ids);
}

}  // namespace memplan
