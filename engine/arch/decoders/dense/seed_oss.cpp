// SeedOssForCausalLM (transformers 5.17 models/seed_oss/modeling_seed_oss.py), training forward + causal-LM loss
// or one inference pass. LlamaForCausalLM's statements (RMSNorm, rotary embedding, attention: llama_parts.h) with
// three differences that matter for memory:
//   - biases: q / k / v take config.attention_bias (default True), o_proj config.attention_out_bias (default
//     False), the MLP config.mlp_bias (the importer sets qkv_bias / o_bias / mlp_bias; llama_decoder_params
//     registers them in nn.Linear order);
//   - attention_dropout (default 0.1) goes to the SDPA kernel (dropout_p) or eager attention's probabilities;
//   - SeedOssAttention: `attn_output = dropout(o_proj(...), p=residual_dropout)` and SeedOssMLP:
//     `down_proj = dropout(down_proj(...), p=residual_dropout)` (default 0.1): each a native_dropout with its
//     bool mask saved for backward; the projection's output dies at the rebinding. The attention's locals
//     (query / key / value states) are saved by SDPA anyway, so returning after the dropout changes no lifetime.
#include "engine/arch/builders.h"

#include "engine/arch/decoders/parts/llama_parts.h"
#include "engine/arch/decoders/parts/phi_parts.h"
#include "engine/errors.h"

namespace memplan {

namespace {

// SeedOssDecoderLayer.forward (the skeleton holds its input, the residual, until it returns).
TensorId seed_oss_layer(GraphBuilder& b, const TransformerSpec& s, int64_t i, TensorId h, const SkeletonContext& c) {
  const LlamaDecoderParams d =
      llama_decoder_params(b, s, "layers." + std::to_string(i) + ".", !layer_frozen(b.config(), i));
  const LlamaLayerParams& w = d.attn;
  TensorId n1 = rms_norm(b, h, w.in_norm);
  b.hold(n1);  // bound to hidden_states until self_attn returns
  TensorId attn_weights = kNoTensor;
  TensorId a = llama_attention(b, s, w, n1, c.cos, c.sin, c.mask, 0, attn_weights);
  a = b.dropout(a, s.resid_dropout);
  b.drop(n1);
  TensorId h1 = b.add(h, a);
  TensorId n2 = rms_norm(b, h1, w.post_norm);
  b.hold(n2);
  const FfnParams& f = d.ffn;
  TensorId m = b.dropout(swiglu_mlp(b, n2, f.gate, f.up, f.down, f.gate_b, f.up_b, f.down_b), s.resid_dropout);
  b.drop(n2);
  TensorId out = b.add(h1, m);
  if (attn_weights != kNoTensor) b.drop(attn_weights);
  return out;
}

}  // namespace

void build_seed_oss(GraphBuilder& b, const TransformerSpec& s) {
  if (s.sliding_window > 0 || s.num_experts > 0)
    throw InputError("model.sliding_window", std::to_string(s.sliding_window),
                     "seed_oss has no sliding-window attention or experts");
  build_causal_lm_skeleton(b, s, SkeletonSpec{"embed_tokens.weight", "norm", false, false, seed_oss_layer});
}

}  // namespace memplan
