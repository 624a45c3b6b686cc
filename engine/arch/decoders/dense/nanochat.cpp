// NanoChatForCausalLM (transformers 5.17 models/nanochat/modeling_nanochat.py), training forward + causal-LM loss
// or one inference pass. LlamaForCausalLM's skeleton (embedding, masks, rotary cos / sin in the embeddings' dtype,
// the decoder loop, SDPA / eager attention from the cache update on: llama_parts.h) with five differences, each
// written out here:
//   NanoChatRMSNorm has no weight: `self._norm(x.float()).type_as(x)`, _norm(x) = x * torch.rsqrt(x.pow(2)
//     .mean(-1, keepdim=True) + eps): the float copy (a 16-bit x only) is _norm's argument, bound until _norm
//     returns and saved by pow and the product; the fp32 normalised x dies with type_as (a 16-bit copy) unless
//     the input was fp32 (fp32 models, amp's fp32 residual stream: no copies, the product is the output).
//     Every norm of the model is one: input_layernorm, post_attention_layernorm, q_norm, k_norm and the model's
//     `norm`, which runs twice (on inputs_embeds before the first layer, and after the last).
//   NanoChatModel.forward: `hidden_states = self.norm(hidden_states)` after the rotary embedding and before the
//     layers; inputs_embeds stays bound until forward returns, so the embedding output lives through the model.
//   NanoChatAttention: q / k / v projections and head views as Llama's, apply_rotary_pos_emb, and then
//     `query_states = self.q_norm(query_states)`, `key_states = self.k_norm(key_states)` (RoPE -> Norm): each
//     rotated tensor stays bound until its norm returns and is then rebound (kept only where the fp32 norm saves
//     it); the normed q / k go to the cache update and the attention function.
//   NanoChatMLP: fc2(relu2(fc1(x))), ACT2FN["relu2"] = ReLUSquaredActivation (phi_parts.h relu_squared: fc1's
//     output lives until the square returns); `hidden_states` rebinds at each line.
//   NanoChatForCausalLM: lm_head (untied by default), then final_logit_softcapping (default 15.0): logits / cap,
//     tanh (saves its output), * cap, each statement rebinding `logits` (gemma_ple_parts.h softcap), then the loss.
// No norm weights: the parameters are embed_tokens, per layer self_attn.{q,k,v,o}_proj (biases with
// attention_bias) and mlp.fc1 / fc2, and lm_head.
#include "engine/arch/builders.h"

#include <string>

#include "engine/arch/decoders/parts/gemma_ple_parts.h"
#include "engine/arch/decoders/parts/llama_parts.h"
#include "engine/arch/decoders/parts/phi_parts.h"
#include "engine/errors.h"

namespace memplan {

namespace {

// NanoChatRMSNorm.forward on x, which the caller's frame binds until the norm returns.
TensorId weightless_norm(GraphBuilder& b, TensorId x) {
  const DType in_dt = b.dtype(x);
  const TensorId x32 = b.to(x, DType::f32);
  if (x32 != x) b.hold(x32);  // _norm's argument
  const TensorId r =
      b.unary("rsqrt", b.add_scalar(b.reduce_last("mean", b.pow_scalar(x32), false)), false, true, true);
  const TensorId n = b.mul(x32, r);
  if (x32 != x) b.drop(x32);
  return b.to(n, in_dt);
}

struct NanoChatLayer {
  TensorId q, k, v, o, qb, kb, vb, ob, fc1, fc2;
};

// Registration order: self_attn.{q,k,v,o}_proj (each weight then its bias under attention_bias), mlp.fc1, mlp.fc2
// (no bias); the four norms have no parameters.
NanoChatLayer layer_params(GraphBuilder& b, const TransformerSpec& s, const std::string& p, bool train) {
  const int64_t H = s.hidden_size, I = s.intermediate_size;
  NanoChatLayer w{};
  attention_projection_params(b, s, p, train, s.attention_bias, s.attention_bias, w);
  w.fc1 = b.param(p + "mlp.fc1.weight", {I, H}, train);
  w.fc2 = b.param(p + "mlp.fc2.weight", {H, I}, train);
  return w;
}

// NanoChatAttention.forward on the normed input x. `weights`: eager attention's probabilities (held; the decoder
// layer binds them to `_` until it returns), kNoTensor for SDPA.
TensorId attention(GraphBuilder& b, const TransformerSpec& s, const NanoChatLayer& w, TensorId x, TensorId cos,
                   TensorId sin, TensorId mask, TensorId& weights) {
  auto [q, k, v] = llama_qkv_views(b, s, w, x, mask);
  const TensorId v_proj = v;  // value_states (held) until the module returns or the cache rebinds it
  b.hold(q);  // apply_rotary_pos_emb(q, k, ...): both rebound once both are rotated
  b.hold(k);
  auto [qe, ke] = rope_qk(b, q, k, cos, sin);  // held: query_states / key_states
  const TensorId qn = weightless_norm(b, qe);  // query_states = self.q_norm(query_states)
  b.hold(qn);
  b.drop(qe);
  const TensorId kn = weightless_norm(b, ke);  // key_states = self.k_norm(key_states)
  b.hold(kn);
  b.drop(ke);
  return attention_o_proj(b, s, qn, kn, v, v_proj, mask, 0, w.o, w.ob, weights);
}

}  // namespace

void build_nanochat(GraphBuilder& b, const TransformerSpec& s) {
  if (s.sliding_window > 0 || s.num_experts > 0)
    throw InputError("model.sliding_window", std::to_string(s.sliding_window),
                     "nanochat has no sliding-window attention or experts");
  if (s.hidden_act != "relu2")
    throw InputError("model.hidden_act", s.hidden_act, "nanochat is modelled with relu2 (ReLUSquaredActivation)");
  const auto& cfg = b.config();
  const bool inf = !b.training();
  const int64_t S = inf ? b.pass().new_tokens : cfg.seq_len, hd = s.head_dim;
  auto [embed, ids, h, P] = llama_inputs(b, s);  // position_ids rows P: B inside generate(), else 1
  const TensorId inputs_embeds = h;
  const TensorId mask = full_and_sliding_masks(b, s, true, false, b.dtype(h)).full;
  const std::pair<TensorId, TensorId> cos_sin = rotary_cos_sin(b, P, S, hd, b.dtype(h));
  const TensorId cos = cos_sin.first, sin = cos_sin.second;
  b.hold(inputs_embeds);
  b.hold(cos);
  b.hold(sin);
  h = weightless_norm(b, inputs_embeds);  // hidden_states = self.norm(hidden_states): the extra norm before the layers
  for (int64_t i = 0; i < s.num_layers; ++i) {
    const NanoChatLayer w = layer_params(b, s, "layers." + std::to_string(i) + ".", !layer_frozen(cfg, i));
    b.begin_layer("layers." + std::to_string(i), layer_checkpointed(cfg, i));
    const TensorId layer_in = h;
    b.hold(layer_in);  // the model's loop variable holds the layer input until the layer returns
    const TensorId n1 = weightless_norm(b, h);
    b.hold(n1);  // bound to hidden_states until self_attn returns
    TensorId attn_weights = kNoTensor;
    const TensorId a = attention(b, s, w, n1, cos, sin, mask, attn_weights);
    b.drop(n1);
    const TensorId h1 = b.add(h, a);
    const TensorId n2 = weightless_norm(b, h1);  // h1: the residual, read again below
    b.hold(n2);  // bound to the decoder layer's hidden_states until the MLP returns
    const TensorId m = relu_squared_mlp(b, n2, w.fc1, kNoTensor, w.fc2, kNoTensor);
    b.drop(n2);
    h = b.add(h1, m);
    if (attn_weights != kNoTensor) b.drop(attn_weights);
    b.drop(layer_in);
    b.end_layer();
  }
  b.hold(h);  // `hidden_states = self.norm(hidden_states)` rebinds only once the norm has returned
  const TensorId hn = weightless_norm(b, h);
  for (TensorId t : {h, inputs_embeds, cos, sin, mask})
    if (t != kNoTensor) b.drop(t);
  causal_lm_tail(b, s, hn, embed, ids, false, s.final_logit_softcapping > 0.0 ? &gemma_ple::softcap : nullptr);
}

}  // namespace memplan
