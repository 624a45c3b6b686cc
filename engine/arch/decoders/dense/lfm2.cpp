// Lfm2ForCausalLM (transformers 5.17 models/lfm2/modeling_lfm2.py), training forward + causal-LM loss or one
// inference pass (prefill / decode step of generate()).
//   embed_tokens -> create_causal_mask (skipped by SDPA without padding) and create_recurrent_attention_mask
//   (None unless generate() passes a padded mask) -> rotary cos / sin in the hidden dtype (Llama's) ->
//   N x Lfm2DecoderLayer -> embedding_norm (the final RMSNorm, despite its name) -> lm_head (tied) -> loss or the
//   last logits.
//   Lfm2DecoderLayer: h + op(operator_norm(h)), then h + feed_forward(ffn_norm(h)) (llama_residual_blocks' statements:
//   each norm's output is the call's argument, alive until the callee returns); op is
//     Lfm2Attention (full_attention layers): q_layernorm(q_proj(x).view(B, S, nh, D)).transpose(1, 2), the same for
//     k, v's head view, apply_rotary_pos_emb, the cache update and SDPA / eager, out_proj - Qwen3Attention's
//     statements (a q / k RMSNorm over head_dim before the rotary embedding), with LFM2's parameter names;
//     Lfm2ShortConv (conv layers), the torch path: causal_conv1d_fn / causal_conv1d_update resolve to their Python
//     bodies because the causal_conv1d package is not installed (integrations/hub_kernels.py
//     use_kernel_func_from_hub_with_fallback: the import fails, the torch function is used):
//       BCx = in_proj(x).transpose(-1, -2)            [B, 3H, S], a transposed view of [B, S, 3H]
//       B, C, x = BCx.chunk(3, dim=-2)                three [B, H, S] views (bound until forward returns)
//       hidden_states = B * x                         [B, H, S], in the inputs' [B, S, H] memory order
//       training / prefill: causal_conv1d_fn: F.conv1d(hidden_states.to(weight.dtype), padding=L-1, groups=H)
//         [B, H, S + L - 1], sliced [:, :, :S] (a view; its backward zero-fills the whole conv output's size);
//         prefill first lazily creates the cache's zero conv state [B, H, L] and copies the last L columns in;
//       decode step: causal_conv1d_update: cat([conv_state, hidden_states]).to(weight.dtype) [B, H, L + 1],
//         conv_state.copy_ (in place), F.conv1d without padding [B, H, 2], sliced [:, :, -1:];
//       y = C * conv                                  [B, H, S] in C's [B, S, H] order, so
//       y.transpose(-1, -2).contiguous()              is that tensor itself (no copy)
//       out_proj(y)
//     The depthwise conv's input (B * x) is not contiguous, so the convolution works on a contiguous copy, in
//     forward and again in backward (whole-run streams: an input-sized block before the output / the weight
//     gradient, freed after). Under autocast `.to(weight.dtype)` makes an fp32 copy of B * x, which conv1d's
//     autocast casts back to 16 bits.
//   Lfm2MLP: w2(silu(w1(x)) * w3(x)) at the width the importer derives (block_auto_adjust_ff_dim).
// Parameters per layer, registration order: self_attn.{q,k,v,out}_proj, q_layernorm, k_layernorm, or
// conv.conv (weight [H, 1, L], bias with conv_bias), conv.in_proj, conv.out_proj; then feed_forward.{w1,w3,w2},
// operator_norm, ffn_norm. After the layers: embedding_norm.
// build_lfm2_model (lfm2_parts.h) is everything but the feed-forward, which lfm2_moe.cpp replaces.
#include "engine/arch/decoders/parts/lfm2_parts.h"

#include "engine/arch/builders.h"
#include "engine/arch/decoders/parts/llama_parts.h"
#include "engine/checked.h"
#include "engine/errors.h"

namespace memplan {

namespace {

Lfm2Operator operator_params(GraphBuilder& b, const TransformerSpec& s, const std::string& p, int64_t i, bool train) {
  const int64_t H = s.hidden_size, hd = s.head_dim, nh = s.num_heads, nkv = s.num_kv_heads;
  Lfm2Operator w;
  w.conv = s.lfm2_conv_layers[static_cast<size_t>(i)] != 0;
  if (w.conv) {
    const bool bias = s.lfm2_conv_bias;
    w.conv_w = b.param(p + "conv.conv.weight", {H, 1, s.lfm2_conv_kernel}, train);
    if (bias) w.conv_b = b.param(p + "conv.conv.bias", {H}, train);
    w.in_proj = b.param(p + "conv.in_proj.weight", {3 * H, H}, train);
    if (bias) w.in_b = b.param(p + "conv.in_proj.bias", {3 * H}, train);
    w.out_proj = b.param(p + "conv.out_proj.weight", {H, H}, train);
    if (bias) w.out_b = b.param(p + "conv.out_proj.bias", {H}, train);
  } else {
    w.q = b.param(p + "self_attn.q_proj.weight", {nh * hd, H}, train);
    w.k = b.param(p + "self_attn.k_proj.weight", {nkv * hd, H}, train);
    w.v = b.param(p + "self_attn.v_proj.weight", {nkv * hd, H}, train);
    w.o = b.param(p + "self_attn.out_proj.weight", {H, nh * hd}, train);
    w.q_norm = b.param(p + "self_attn.q_layernorm.weight", {hd}, train);
    w.k_norm = b.param(p + "self_attn.k_layernorm.weight", {hd}, train);
  }
  return w;
}

// Lfm2Attention.forward on the normed input x (Qwen3Attention's statements, see qwen3.cpp). `weights`: eager
// attention's probabilities, held (attention_core).
TensorId attention(GraphBuilder& b, const TransformerSpec& s, const Lfm2Operator& w, TensorId x, TensorId cos,
                   TensorId sin, TensorId mask, TensorId& weights) {
  const auto& cfg = b.config();
  const int64_t B = cfg.batch_size, S = b.training() ? cfg.seq_len : b.pass().new_tokens, nh = s.num_heads,
                nkv = s.num_kv_heads, hd = s.head_dim;
  // The rotary backward hands contiguous [B, H, S, D] gradients to the transposed norm outputs, so the
  // projection's head view [B, S, H, D] receives a gradient in another memory order (ViewBackward copies it).
  auto normed_heads = [&](TensorId wt, TensorId norm_w, int64_t heads) {
    TensorId proj = b.view_copying_grad(b.linear(x, wt), {B, S, heads, hd});
    TensorId n = rms_norm(b, proj, norm_w, true);
    return b.view(n, {B, heads, S, hd});  // .transpose(1, 2)
  };
  TensorId q = normed_heads(w.q, w.q_norm, nh);
  b.hold(q);  // query_states until apply_rotary_pos_emb's results rebind it
  TensorId k = normed_heads(w.k, w.k_norm, nkv);
  b.hold(k);
  TensorId vp = b.linear(x, w.v);
  // As llama_qkv_views: v's gradient arrives in the view's layout only from a fused SDPA kernel; SDPA's math
  // backend (fp32 with grouped KV heads) repeats K / V, so it comes from repeat's sum, contiguous.
  const bool math_sdpa = b.dtype(vp) == DType::f32 && nkv != nh;
  const bool v_grad_in_layout = cfg.attn == AttnImpl::sdpa && mask == kNoTensor && !math_sdpa;
  TensorId v = v_grad_in_layout ? b.view(vp, {B, nkv, S, hd}) : b.view_copying_grad(vp, {B, nkv, S, hd});
  const TensorId v_proj = v;
  b.hold(v_proj);  // value_states until the module returns (or the cache update rebinds it)
  auto [qe, ke] = rope_qk(b, q, k, cos, sin);
  return attention_o_proj(b, s, qe, ke, v, v_proj, mask, 0, w.o, kNoTensor, weights);
}

// F.conv1d(x, weight.unsqueeze(1), bias, padding=pad, groups=H) on x [B, H, L] (torch path of causal_conv1d_fn /
// causal_conv1d_update). Autocast casts input, weight and bias to 16 bits (conv1d is a lower-precision op).
// `x_strided`: x is B * x's [B, S, H]-ordered tensor, which the convolution copies to a contiguous block for
// its kernel (forward: allocated before the output, freed when the op returns; backward: alive while both
// gradients are computed). The node keeps x and the weight.
TensorId depthwise_conv1d(GraphBuilder& b, TensorId x, TensorId w, TensorId bias, int64_t pad, bool x_strided) {
  const TensorId xc = b.autocast_low(x);
  const TensorId wc = b.autocast_low(w);
  const TensorId bc = bias == kNoTensor ? kNoTensor : b.autocast_low(bias);
  const Shape xs = b.shape(xc), ws = b.shape(wc);
  const int64_t len = xs[2] + 2 * pad - ws[2] + 1;
  if (len < 1) throw InputError("seq_len", std::to_string(xs[2]), "too short for the model's convolution");
  GraphBuilder::GenericOp op{"conv1d_depthwise", {xc, wc}, {{{xs[0], ws[0], len}, b.dtype(xc)}}, {0, 1}, {}, {}, {}};
  if (bc != kNoTensor) op.reads.push_back(bc);
  if (x_strided) {
    // The kernel's contiguous copy of x: made before the output (whole-run streams), read by the kernel only (no
    // autograd edge), freed once the op returns; the backward makes it again, alive across both gradients.
    op.reads.push_back(b.generic_one("contiguous", {}, xs, b.dtype(xc)));
    op.bwd_pre_temp_bytes.push_back(b.info(xc).bytes);
  }
  return b.generic(op)[0];
}

// Lfm2ShortConv.forward on the normed input x (held by the caller). Training / inference as the file header says.
TensorId short_conv(GraphBuilder& b, const TransformerSpec& s, const Lfm2Operator& w, TensorId x) {
  const auto& cfg = b.config();
  const bool inf = !b.training();
  const int64_t B = cfg.batch_size, S = inf ? b.pass().new_tokens : cfg.seq_len, H = s.hidden_size,
                L = s.lfm2_conv_kernel;
  const bool decode = inf && b.pass().past_len > 0;
  const TensorId bcx_lin = b.linear(x, w.in_proj, w.in_b);  // [B, S, 3H]
  b.hold(bcx_lin);  // B, C and x stay bound until forward returns
  // .transpose(-1, -2): the chunk's backward writes a contiguous [B, 3H, S] gradient, which the linear's
  // [B, S, 3H] gradient copies (whole-run stream: a cat-sized block after the cat).
  const TensorId bcx = b.view_copying_grad(bcx_lin, {B, 3 * H, S});
  const std::vector<TensorId> parts = b.split(bcx, 3, {B, H, S});
  const TensorId Bg = parts[0], Cg = parts[1], xg = parts[2];
  const TensorId bx = b.mul(Bg, xg);  // hidden_states = B * x
  b.hold(bx);  // bound as hidden_states until the conv function returns
  const DType wdt = b.dtype(w.conv_w);
  TensorId conv_view;
  TensorId conv_out;
  if (decode) {
    // causal_conv1d_update over the cached state (past_key_values.layers[i].conv_states[0]).
    const TensorId state = b.kv_cache_in({B, H, L}, b.dtype(bx));
    const TensorId cat = b.cat("cat", {state, bx}, 2);  // [B, H, L + 1]
    const TensorId catw = b.to(cat, wdt);
    b.hold(catw);  // hidden_states_new: a local until the function returns
    conv_out = depthwise_conv1d(b, catw, w.conv_w, w.conv_b, 0, false);
    b.kv_cache_out(state);  // conv_state.copy_(...) wrote it in place
    b.drop(catw);
    Shape last = b.shape(conv_out);
    last[2] = 1;
    conv_view = b.to(b.view(conv_out, last), b.dtype(bx));  // out[:, :, -seq_len:].to(input dtype)
  } else {
    TensorId full = bx;
    if (inf) {
      // update_conv_state's lazy_initialization: torch.zeros([B, H, L]) of hidden_states' dtype, then copy_ of
      // the last L columns (in place); a prompt shorter than L is first left-padded (F.pad) to L columns.
      const TensorId state = b.generic_one("zeros", {}, {B, H, L}, b.dtype(bx));
      if (S < L) full = b.generic_one("constant_pad_nd", {bx}, {B, H, L}, b.dtype(bx));
      b.kv_cache_out(state);
    }
    const TensorId xin = b.to(full, wdt);  // hidden_states.to(weight.dtype): the call's argument
    b.hold(xin);
    conv_out = depthwise_conv1d(b, xin, w.conv_w, w.conv_b, L - 1, full == bx);
    b.drop(xin);
    Shape first = b.shape(conv_out);
    first[2] = b.shape(full)[2];
    // [:, :, :seq_len]: SliceBackward zero-fills a gradient of the whole conv output; .to(hidden_states.dtype)
    conv_view = b.to(b.view_copying_grad(conv_out, first), b.dtype(bx));
    if (full != bx) {  // the padded prompt: hidden_states[:, :, -seq_len:]
      Shape tail = b.shape(conv_view);
      tail[2] = S;
      conv_view = b.view(conv_view, tail);
    }
  }
  b.drop(bx);
  b.hold(conv_view);  // hidden_states until forward returns
  const TensorId y = b.mul(Cg, conv_view);  // [B, H, S] in C's [B, S, H] memory order
  const TensorId yt = b.view(y, {B, S, H});  // .transpose(-1, -2).contiguous(): already contiguous
  const TensorId out = b.linear(yt, w.out_proj, w.out_b);
  b.drop(conv_view);
  b.drop(bcx_lin);
  return out;
}

// create_recurrent_attention_mask inside generate() (a 2-d all-ones mask, more than one new token):
// torch.all(attention_mask == 1) - a bool [B, S] and a bool scalar, freed at once - then None.
void recurrent_mask_check(GraphBuilder& b) {
  if (b.training() || !b.pass().from_generate || b.pass().new_tokens == 1) return;
  const int64_t B = b.config().batch_size, S = b.pass().past_len + b.pass().new_tokens;
  const TensorId eq = b.generic_one("eq", {}, {B, S}, DType::boolean);
  b.generic_one("all", {eq}, {}, DType::boolean);
}

void check_layer_fields(const TransformerSpec& s) {
  if (static_cast<int64_t>(s.lfm2_conv_layers.size()) != s.num_layers)
    throw InputError("model.lfm2_conv_layers", std::to_string(s.lfm2_conv_layers.size()) + " entries",
                     "must have one entry per layer (" + std::to_string(s.num_layers) + ")");
  if (s.lfm2_conv_kernel < 1)
    throw InputError("model.lfm2_conv_kernel", std::to_string(s.lfm2_conv_kernel), "must be a positive integer");
}

}  // namespace

void build_lfm2_model(GraphBuilder& b, const TransformerSpec& s, const Lfm2FeedForwardFactory& ffn) {
  const auto& cfg = b.config();
  const bool inf = !b.training();
  const int64_t S = inf ? b.pass().new_tokens : cfg.seq_len, H = s.hidden_size, hd = s.head_dim;
  check_layer_fields(s);
  auto [embed, ids, h, P] = llama_inputs(b, s);  // position_ids rows P: B inside generate(), else 1
  const TensorId inputs_embeds = h;
  const TensorId mask = full_and_sliding_masks(b, s, true, false, b.dtype(h)).full;
  recurrent_mask_check(b);
  const std::pair<TensorId, TensorId> cos_sin = rotary_cos_sin(b, P, S, hd, b.dtype(h));
  const TensorId cos = cos_sin.first, sin = cos_sin.second;
  b.hold(inputs_embeds);
  b.hold(cos);
  b.hold(sin);
  for (int64_t i = 0; i < s.num_layers; ++i) {
    const std::string p = "layers." + std::to_string(i) + ".";
    const bool train = !layer_frozen(cfg, i);
    const Lfm2Operator w = operator_params(b, s, p, i, train);
    const LlamaMlpFn feed_forward = ffn(i, p, train);
    const TensorId op_norm = b.param(p + "operator_norm.weight", {H}, train);
    const TensorId ffn_norm = b.param(p + "ffn_norm.weight", {H}, train);
    b.begin_layer("layers." + std::to_string(i), layer_checkpointed(cfg, i));
    const TensorId layer_in = h;
    b.hold(layer_in);  // the model's loop variable holds the layer input until the layer returns
    h = llama_residual_blocks(
        b, h, op_norm, ffn_norm,
        [&](TensorId x, TensorId& weights) {
          return w.conv ? short_conv(b, s, w, x) : attention(b, s, w, x, cos, sin, mask, weights);
        },
        feed_forward);
    if (layer_in != inputs_embeds) b.drop(layer_in);
    b.end_layer();
  }
  b.hold(h);  // `hidden_states = self.embedding_norm(hidden_states)` rebinds only once the norm has returned
  TensorId hn = rms_norm(b, h, b.param("embedding_norm.weight", {H}, !cfg.freeze_embeddings), false);
  for (TensorId t : {h, inputs_embeds, cos, sin, mask})
    if (t != kNoTensor) b.drop(t);
  causal_lm_tail(b, s, hn, embed, ids);
}

void build_lfm2(GraphBuilder& b, const TransformerSpec& s) {
  check_layer_fields(s);
  if (s.sliding_window > 0 || s.num_experts > 0)
    throw InputError("model.sliding_window", std::to_string(s.sliding_window),
                     "lfm2 has no sliding-window attention or experts");
  const int64_t H = s.hidden_size, I = s.intermediate_size;
  // Lfm2MLP: w2(silu(w1(x)) * w3(x)), registered w1, w3, w2.
  build_lfm2_model(b, s, [&b, H, I](int64_t, const std::string& p, bool train) -> LlamaMlpFn {
    const TensorId w1 = b.param(p + "feed_forward.w1.weight", {I, H}, train);
    const TensorId w3 = b.param(p + "feed_forward.w3.weight", {I, H}, train);
    const TensorId w2 = b.param(p + "feed_forward.w2.weight", {H, I}, train);
    return [&b, w1, w3, w2](TensorId n2) { return swiglu_mlp(b, n2, w1, w3, w2); };
  });
}

}  // namespace memplan
