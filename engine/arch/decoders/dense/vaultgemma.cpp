// VaultGemmaForCausalLM (transformers 5.17 models/vaultgemma/modeling_vaultgemma.py), training forward + causal-LM
// loss or one inference pass. The modeling file is Gemma2's (modular_vaultgemma.py inherits every class from gemma2)
// with two statements fewer in the decoder layer: no post_attention_layernorm and no post_feedforward_layernorm, so
//   DecoderLayer: h + attn(input_layernorm(h)), then + mlp(pre_feedforward_layernorm(.)); the attention's and the
//   MLP's outputs go straight into the residual adds (and die there) instead of through a norm that rebinds them.
// VaultGemmaAttention is Gemma2Attention (query_pre_attn_scalar scaling, eager attention logit softcapping, the
// layer's sliding window from layer_types) with is_causal always True (Gemma2's use_bidirectional_attention is not
// a VaultGemma field). Everything else is Gemma2's, called from gemma_parts.h: the scaled embedding (embed_scale
// buffer), both masks (create_causal_mask and create_sliding_window_causal_mask, built whatever layer_types holds:
// google/vaultgemma-1b has only full-attention layers but still builds its window-512 sliding mask), one rotary
// embedding, Gemma2RMSNorm (fp32 product with 1 + weight), the gelu_pytorch_tanh MLP, the final norm, lm_head (tied
// by default) and final logit softcapping.
#include "engine/arch/decoders/parts/gemma_parts.h"

#include <string>

#include "engine/arch/decoders/parts/llama_parts.h"

namespace memplan {

namespace {

// Registration order (model.parameters()): self_attn (q, k, v, o with their biases under attention_bias), mlp (gate,
// up, down), input_layernorm, pre_feedforward_layernorm.
GemmaLayerParams layer_params(GraphBuilder& b, const TransformerSpec& s, const std::string& p, bool train) {
  const int64_t H = s.hidden_size, I = s.intermediate_size;
  GemmaLayerParams w;
  attention_projection_params(b, s, p, train, s.attention_bias, s.attention_bias, w);
  w.gate = b.param(p + "mlp.gate_proj.weight", {I, H}, train);
  w.up = b.param(p + "mlp.up_proj.weight", {I, H}, train);
  w.down = b.param(p + "mlp.down_proj.weight", {H, I}, train);
  w.in_norm = b.param(p + "input_layernorm.weight", {H}, train);
  w.pre_ffn_norm = b.param(p + "pre_feedforward_layernorm.weight", {H}, train);
  return w;
}

// VaultGemmaModel.forward from inputs_embeds `h`: masks, rotary cos / sin (P position rows), the layers, the final
// norm. inputs_embeds, the masks and cos / sin stay bound until the norm has returned. Returns the normed states.
TensorId text_model(GraphBuilder& b, const TransformerSpec& s, TensorId h, int64_t P) {
  const auto& cfg = b.config();
  const bool inf = !b.training();
  const int64_t S = inf ? b.pass().new_tokens : cfg.seq_len, H = s.hidden_size;
  const TensorId inputs_embeds = h;
  const DType dt = b.dtype(h);
  // causal_mask_mapping: eager materialises both masks whatever the lengths; SDPA skips the full one, and the
  // sliding one while the window covers the sequence (as Gemma2Model; gemma_parts.cpp gemma_text_model).
  TensorId mask = kNoTensor, sliding_mask = kNoTensor;
  if (!inf) {
    if (cfg.attn == AttnImpl::eager) {
      mask = eager_mask(b, 1, S, S, dt);
      sliding_mask = eager_mask(b, 1, S, S, dt);
    } else if (s.sliding_window > 0 && S >= s.sliding_window) {
      sliding_mask = sliding_sdpa_mask(b, 1, S, S);
    }
  } else {
    mask = inference_mask(b, 0, dt);
    if (s.sliding_window > 0) sliding_mask = inference_sliding_mask(b, s.sliding_window, dt);
  }
  for (TensorId m : {mask, sliding_mask})
    if (m != kNoTensor) b.hold(m);  // the mask mapping lives until the model's forward returns
  const std::pair<TensorId, TensorId> cos_sin = rotary_cos_sin(b, P, S, s.head_dim, dt);
  const TensorId cos = cos_sin.first, sin = cos_sin.second;
  b.hold(inputs_embeds);
  b.hold(cos);
  b.hold(sin);
  for (int64_t i = 0; i < s.num_layers; ++i) {
    const GemmaLayerParams w = layer_params(b, s, "layers." + std::to_string(i) + ".", !layer_frozen(cfg, i));
    b.begin_layer("layers." + std::to_string(i), layer_checkpointed(cfg, i));
    const TensorId layer_in = h;
    b.hold(layer_in);  // the model's loop variable holds the layer input until the layer returns
    const TensorId n1 = gemma_rms_norm(b, h, w.in_norm);
    b.hold(n1);  // bound to hidden_states until self_attn returns
    const bool sliding = layer_is_sliding(s, i);
    TensorId attn_weights = kNoTensor;
    const TensorId a = gemma_attention(b, s, GemmaVersion::v2, w, n1, cos, sin, sliding ? sliding_mask : mask,
                                       sliding ? s.sliding_window : 0, attn_weights);
    b.drop(n1);
    const TensorId h1 = b.add(h, a);  // hidden_states = residual + hidden_states (no post_attention_layernorm)
    const TensorId n2 = gemma_rms_norm(b, h1, w.pre_ffn_norm);
    b.hold(n2);  // bound to hidden_states until the MLP returns
    const TensorId g = gemma_activation(b, s.hidden_act, b.linear(n2, w.gate));
    const TensorId m = b.linear(b.mul(g, b.linear(n2, w.up)), w.down);
    b.drop(n2);
    h = b.add(h1, m);  // no post_feedforward_layernorm
    if (attn_weights != kNoTensor) b.drop(attn_weights);
    if (layer_in != inputs_embeds) b.drop(layer_in);
    b.end_layer();
  }
  b.hold(h);  // `hidden_states = self.norm(hidden_states)` rebinds only once the norm has returned
  const TensorId hn = gemma_rms_norm(b, h, b.param("norm.weight", {H}, !cfg.freeze_embeddings));
  for (TensorId t : {h, inputs_embeds, cos, sin, mask, sliding_mask})
    if (t != kNoTensor) b.drop(t);
  return hn;
}

}  // namespace

void build_vaultgemma(GraphBuilder& b, const TransformerSpec& s) {
  const auto& cfg = b.config();
  const bool inf = !b.training();
  const int64_t B = cfg.batch_size, S = inf ? b.pass().new_tokens : cfg.seq_len, H = s.hidden_size,
                V = s.vocab_size;
  const bool emb_train = !cfg.freeze_embeddings;
  hf_construction_scalar(b);
  const TensorId embed = b.param("embed_tokens.weight", {V, H}, emb_train);
  b.buffer("embed_tokens.embed_scale", {}, b.param_dtype());  // VaultGemmaTextScaledWordEmbedding's 0-dim buffer
  const TensorId ids = b.input({B, S}, DType::i64);
  const int64_t P = inf && b.pass().from_generate ? B : 1;  // position_ids rows (generate: from the mask)
  if (P > 1) b.input({B, S}, DType::i64);
  // embedding(ids) * embed_scale.to(weight dtype): MulBackward keeps only the 0-dim scale.
  const TensorId hn = text_model(b, s, b.scalar_op("mul", b.embedding(ids, embed), false), P);
  const TensorId head = s.tie_word_embeddings ? b.tied_param("lm_head.weight", embed, emb_train)
                                              : b.param("lm_head.weight", {V, H}, emb_train);
  if (s.tie_word_embeddings) b.construction_temp(b.info(embed).bytes);  // the head's own weight before tie_weights()
  if (inf) {
    Shape hs = b.shape(hn);
    const int64_t keep = cfg.logits_to_keep;
    if (keep > 0 && keep < hs[1]) hs[1] = keep;
    b.hold(gemma_final_softcap(b, s, b.linear(b.view(hn, hs), head)));  // the output holds the logits
    b.mark_model_end();
    return;
  }
  b.hold(hn);  // the CausalLM forward keeps hidden_states bound until it returns
  const TensorId logits = gemma_final_softcap(b, s, b.linear(hn, head));
  b.mark_model_end();
  const TensorId loss = causal_lm_loss(b, logits, ids);
  b.drop(hn);
  b.exit_autocast();
  b.set_loss(loss);
}

}  // namespace memplan
