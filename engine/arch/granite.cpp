// GraniteForCausalLM (transformers 5.17 models/granite/modeling_granite.py), training forward + causal-LM loss or
// one inference pass. LlamaForCausalLM's statements (GraniteAttention, GraniteMLP, GraniteRMSNorm and the rotary
// embedding are Llama's: llama_parts.h) with four scalar multipliers, each a statement of its own:
//   GraniteModel.forward: `inputs_embeds = inputs_embeds * embedding_multiplier` (always executed, also at 1.0):
//     the embedding's output dies at the rebinding; the product is what the model keeps bound (as
//     inputs_embeds and the first hidden_states) until it returns.
//   GraniteAttention: scaling = attention_multiplier (a Python float given to the attention interface: no tensor).
//   GraniteDecoderLayer: `hidden_states = residual + hidden_states * residual_multiplier`, after the attention and
//     after the MLP: the block's output stays bound to hidden_states until the add rebinds it, the product is a
//     temporary of that statement; MulBackward0 by a Python scalar saves nothing and hands back a fresh gradient.
//   GraniteForCausalLM: `logits = logits / logits_scaling` after lm_head: the head's output dies at the
//     rebinding, the loss reads the quotient (DivBackward0 by a Python scalar: a fresh gradient, nothing saved).
#include "engine/arch/builders.h"

#include "engine/arch/llama_parts.h"
#include "engine/errors.h"

namespace memplan {

namespace {

// `residual + x * multiplier`: x stays bound (to hidden_states) until the sum exists.
TensorId scaled_residual(GraphBuilder& b, TensorId residual, TensorId x) {
  b.hold(x);
  TensorId sum = b.add(residual, b.scalar_op("mul_scalar", x, false));
  b.drop(x);
  return sum;
}

}  // namespace

void build_granite(GraphBuilder& b, const TransformerSpec& s) {
  const auto& cfg = b.config();
  const bool inf = !b.training();
  const int64_t B = cfg.batch_size, S = inf ? b.pass().new_tokens : cfg.seq_len, H = s.hidden_size,
                V = s.vocab_size, hd = s.head_dim;
  if (s.sliding_window > 0 || s.num_experts > 0)
    throw InputError("model.sliding_window", std::to_string(s.sliding_window),
                     "granite has no sliding-window attention or experts");
  const bool emb_train = !cfg.freeze_embeddings;
  hf_construction_scalar(b);
  TensorId embed = b.param("embed_tokens.weight", {V, H}, emb_train);
  TensorId ids = b.input({B, S}, DType::i64);
  const int64_t P = inf && b.pass().from_generate ? B : 1;  // position_ids rows (see build_llama)
  if (P > 1) b.input({B, S}, DType::i64);
  TensorId h = b.scalar_op("mul_scalar", b.embedding(ids, embed), false);
  const TensorId inputs_embeds = h;
  TensorId mask = kNoTensor;
  if (!inf && cfg.attn == AttnImpl::eager) mask = eager_mask(b, 1, S, S, b.dtype(h));
  if (inf) mask = inference_mask(b, 0, b.dtype(h));
  if (mask != kNoTensor) b.hold(mask);  // causal_mask lives until GraniteModel.forward returns
  const auto [cos, sin] = rotary_cos_sin(b, P, S, hd, b.dtype(h));
  b.hold(inputs_embeds);
  b.hold(cos);
  b.hold(sin);
  for (int64_t i = 0; i < s.num_layers; ++i) {
    const std::string p = "layers." + std::to_string(i) + ".";
    const LlamaDecoderParams d = llama_decoder_params(b, s, p, !layer_frozen(cfg, i));
    const LlamaLayerParams& w = d.attn;
    b.begin_layer("layers." + std::to_string(i), layer_checkpointed(cfg, i));
    const TensorId layer_in = h;
    b.hold(layer_in);  // residual, and the model's loop variable, until the layer returns
    TensorId n1 = rms_norm(b, h, w.in_norm);
    b.hold(n1);  // bound to hidden_states until self_attn returns
    TensorId attn_weights = kNoTensor;
    TensorId a = llama_attention(b, s, w, n1, cos, sin, mask, 0, attn_weights);
    b.drop(n1);
    TensorId h1 = scaled_residual(b, h, a);
    TensorId n2 = rms_norm(b, h1, w.post_norm);
    b.hold(n2);
    const FfnParams& f = d.ffn;
    TensorId m = swiglu_mlp(b, n2, f.gate, f.up, f.down, f.gate_b, f.up_b, f.down_b);
    b.drop(n2);
    h = scaled_residual(b, h1, m);
    if (attn_weights != kNoTensor) b.drop(attn_weights);
    if (layer_in != inputs_embeds) b.drop(layer_in);
    b.end_layer();
  }
  b.hold(h);
  TensorId hn = rms_norm(b, h, b.param("norm.weight", {H}, emb_train));
  for (TensorId t : {h, inputs_embeds, cos, sin, mask})
    if (t != kNoTensor) b.drop(t);
  TensorId head = s.tie_word_embeddings ? embed : b.param("lm_head.weight", {V, H}, emb_train);
  if (s.tie_word_embeddings) b.construction_temp(b.info(embed).bytes);  // the head's own weight before tie_weights()
  if (inf) {
    Shape hs = b.shape(hn);
    const int64_t keep = cfg.logits_to_keep;
    if (keep > 0 && keep < hs[1]) hs[1] = keep;
    TensorId logits = b.scalar_op("div_scalar", b.linear(b.view(hn, hs), head), false);
    b.hold(logits);  // the output holds the logits
    b.mark_model_end();
    return;
  }
  b.hold(hn);  // the CausalLM forward keeps hidden_states bound until it returns, after the loss
  TensorId logits = b.scalar_op("div_scalar", b.linear(hn, head), false);
  b.mark_model_end();
  TensorId loss = causal_lm_loss(b, logits, ids);
  b.drop(hn);
  b.exit_autocast();
  b.set_loss(loss);
}

}  // namespace memplan
