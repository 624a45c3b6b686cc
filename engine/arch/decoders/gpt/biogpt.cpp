// BioGptForCausalLM (transformers 5.17 models/biogpt/modeling_biogpt.py; the builder was first written from the code
// index's 4.5x-era modular file and checked against the installed 5.17 file after family set 47 was measured: its
// attention is BartAttention's statements, its positions a learned table offset by 2), training forward +
// causal-LM loss, or one inference pass.
//
// BioGptModel.forward:
//   inputs_embeds = embed_tokens(ids): BioGptScaledWordEmbedding (BartScaledWordEmbedding), the lookup times
//   embed_scale (sqrt(hidden) with scale_embedding, else 1.0: a product either way; the lookup a temporary);
//   attention_mask = torch.ones(B, past + S) (the default dtype) when none is passed; the causal mask (SDPA skips
//   it in training: the padding mask is all ones; eager materialises [B, 1, S, kv]); position_ids =
//   arange(S) + past, unsqueezed [1, S] (generate() passes its own [B, S]); positions = embed_positions(mask, past,
//   position_ids) = embedding(position_ids + 2) [1, S, H]; hidden_states = inputs_embeds + positions, dropout
//   (hidden_dropout_prob); inputs_embeds, positions, the mask and the position ids stay bound until the model's
//   forward returns; the layers (LayerDrop's torch.rand([]) is a CPU scalar); layer_norm.
// BioGptDecoderLayer (pre-LN, BartDecoderLayer without cross-attention):
//   residual = h; h = self_attn_layer_norm(h); h, attn_weights = self_attn(h) (BartAttention: bart_parts.h,
//   BART's own attention style); h = dropout(h); h = residual + h; residual = h; h = final_layer_norm(h);
//   h = fc1(h); h = activation_fn(h); h = dropout(h, activation_dropout); h = fc2(h); h = dropout(h);
//   h = residual + h. Each statement rebinds hidden_states (the normed input freed once fc1 has returned, fc1's
//   output once the activation has); attn_weights (eager) are bound until the layer returns.
// BioGptForCausalLM: prediction_scores = output_projection(h) (no bias, tied to embed_tokens), loss_function
//   (ForCausalLMLoss).
// Registration order: biogpt.embed_tokens, biogpt.embed_positions [max + 2, H], per layer self_attn (k, v, q,
// out_proj), self_attn_layer_norm, fc1, fc2, final_layer_norm (BartDecoderLayer.__init__'s order, the
// cross-attention deleted), biogpt.layer_norm, output_projection (tied).
#include <string>

#include "engine/arch/builders.h"
#include "engine/arch/decoders/parts/phi_parts.h"
#include "engine/arch/seq2seq/bart_parts.h"

namespace memplan {

namespace {

// One BioGptDecoderLayer (training, or one inference pass appending to the cache at `past`); `mask` the eager
// (or inference) causal mask, kNoTensor where SDPA runs causal.
TensorId biogpt_layer(GraphBuilder& b, const TransformerSpec& s, const BartLayerParams& w, TensorId h, TensorId mask,
                      int64_t past) {
  const bool inf = !b.training();
  b.hold(h);  // `residual`, and the model's loop variable until the layer returns
  const TensorId x = b.layer_norm(h, w.sa_ln_w, w.sa_ln_b);
  b.hold(x);  // hidden_states: bound until self_attn returns
  TensorId weights = kNoTensor;
  const TensorId a = bart_attention(b, s, w.sa, x, kNoTensor, /*causal=*/true, mask, s.num_heads,
                                    inf ? past : -1, weights);
  b.drop(x);
  const TensorId h1 = b.add(h, b.dropout(a, s.resid_dropout));
  b.hold(h1);  // `residual` of the feed-forward block
  const TensorId n = b.layer_norm(h1, w.ln_w, w.ln_b);
  TensorId f = activation_or_gelu_new(b, s.hidden_act, b.linear(n, w.fc1, w.fc1_b));
  f = b.dropout(f, s.activation_dropout);
  f = b.dropout(b.linear(f, w.fc2, w.fc2_b), s.resid_dropout);
  const TensorId out = b.add(h1, f);
  for (TensorId t : {h1, weights, h})
    if (t != kNoTensor) b.drop(t);
  return out;
}

}  // namespace

void build_biogpt(GraphBuilder& b, const TransformerSpec& s) {
  const auto& cfg = b.config();
  const bool inf = !b.training();
  const int64_t B = cfg.batch_size, S = inf ? b.pass().new_tokens : cfg.seq_len, H = s.hidden_size,
                V = s.vocab_size;
  const int64_t past = inf ? b.pass().past_len : 0;
  const bool emb_train = !cfg.freeze_embeddings;
  hf_construction_scalar(b);
  const TensorId embed = b.param("biogpt.embed_tokens.weight", {V, H}, emb_train);
  const TensorId pos_w = b.param("biogpt.embed_positions.weight", {s.max_position_embeddings + 2, H}, emb_train);
  std::vector<BartLayerParams> layers;
  for (int64_t i = 0; i < s.num_layers; ++i)
    layers.push_back(bart_layer_params(b, s, "biogpt.", i, /*decoder=*/false, !layer_frozen(cfg, i)));
  const TensorId ln_w = b.param("biogpt.layer_norm.weight", {H}, emb_train);
  const TensorId ln_b = b.param("biogpt.layer_norm.bias", {H}, emb_train);

  const TensorId ids = b.input({B, S}, DType::i64);
  const TensorId inputs_embeds = b.scalar_op("mul_scalar", b.embedding(ids, embed), false);  // * embed_scale
  b.hold(inputs_embeds);
  // attention_mask = torch.ones(B, past + S): a local until the forward returns.
  const int64_t L = past + S;
  const TensorId attention_mask = b.generic_one("ones", {}, {B, L}, DType::f32);
  b.hold(attention_mask);
  TensorId mask = kNoTensor;
  if (cfg.attn == AttnImpl::eager) mask = inf ? inference_mask(b, 0, b.dtype(inputs_embeds))
                                              : eager_mask(b, B, S, S, b.dtype(inputs_embeds));
  else if (inf) mask = inference_mask(b, 0, b.dtype(inputs_embeds));
  if (mask != kNoTensor) b.hold(mask);
  // position_ids: generate() passes [B, S] ids made from its attention mask; otherwise the forward makes
  // torch.arange(S) + past, unsqueezed to [1, S] (a view). Bound until the forward returns.
  const bool from_generate = inf && b.pass().from_generate;
  const int64_t P = from_generate ? B : 1;
  const TensorId position_ids =
      from_generate ? b.input({P, S}, DType::i64)
                    : b.view(b.generic_one("add_scalar", {b.generic_one("arange", {}, {S}, DType::i64)}, {S}, DType::i64),
                               {1, S});
  b.hold(position_ids);
  // BioGptLearnedPositionalEmbedding: embedding(position_ids + 2) [P, S, H], the sum a temporary the embedding saves;
  // `inputs_embeds + positions` broadcasts it over the batch.
  const TensorId pos_embeds = b.embedding(b.generic_one("add_scalar", {position_ids}, {P, S}, DType::i64), pos_w);
  b.hold(pos_embeds);
  TensorId h = b.dropout(b.add(inputs_embeds, pos_embeds), s.resid_dropout);

  for (int64_t i = 0; i < s.num_layers; ++i) {
    b.begin_layer("biogpt.layers." + std::to_string(i), layer_checkpointed(cfg, i));
    h = biogpt_layer(b, s, layers[static_cast<size_t>(i)], h, mask, past);
    b.end_layer();
  }
  b.hold(h);  // `hidden_states = self.layer_norm(hidden_states)` rebinds once the norm returns
  const TensorId hn = b.layer_norm(h, ln_w, ln_b);
  b.drop(h);
  for (TensorId t : {inputs_embeds, pos_embeds, attention_mask, position_ids, mask})
    if (t != kNoTensor) b.drop(t);
  const TensorId head = s.tie_word_embeddings ? b.tied_param("output_projection.weight", embed, emb_train)
                                              : b.param("output_projection.weight", {V, H}, emb_train);
  if (inf) {
    inference_head(b, hn, head);
    return;
  }
  causal_lm_training_head(b, hn, head, ids);
}

}  // namespace memplan
