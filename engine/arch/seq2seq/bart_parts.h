// Pieces of BartForConditionalGeneration (engine/arch/seq2seq/bart.cpp) that the encoder-decoders copied from it share in
// transformers 5.17 (mbart and whisper run the same BartAttention and fc1 / activation / fc2 statements around
// pre-LN layers): the attention module with its EncoderDecoderCache handling, the feed-forward block, the learned
// positional embedding with its offset, and the layers' parameters in registration order. Also the outer
// statements of ...ForConditionalGeneration that bart, marian, mbart, m2m_100 and whisper write alike: the stacks'
// layers, shift_tokens_right, the inference pass's encoder output and end, and the training loss.
#pragma once
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "engine/arch/builders.h"

namespace memplan {

// BartAttention's projections (k_proj, v_proj, q_proj, out_proj, registered in that order by __init__, each
// weight then its bias; `k_bias` false leaves k_proj without one, kb kNoTensor, as WhisperAttention builds it).
// One struct for bart, mbart and whisper (their attention modules are copies of BartAttention).
struct BartAttnParams {
  TensorId k = kNoTensor, kb = kNoTensor, v = kNoTensor, vb = kNoTensor, q = kNoTensor, qb = kNoTensor,
           o = kNoTensor, ob = kNoTensor;
};
// `p` ends with the module's name and a dot ("encoder.layers.0.self_attn.").
BartAttnParams bart_attn_params(GraphBuilder& b, int64_t d_model, const std::string& p, bool train, bool k_bias = true);

// An encoder (decoder) layer's parameters: self_attn, self_attn_layer_norm, [encoder_attn,
// encoder_attn_layer_norm], fc1, fc2, final_layer_norm.
struct BartLayerParams {
  BartAttnParams sa, ca;
  TensorId sa_ln_w = kNoTensor, sa_ln_b = kNoTensor, ca_ln_w = kNoTensor, ca_ln_b = kNoTensor;
  TensorId fc1 = kNoTensor, fc1_b = kNoTensor, fc2 = kNoTensor, fc2_b = kNoTensor;
  TensorId ln_w = kNoTensor, ln_b = kNoTensor;
};
// Layer `i` (encoder: 0..N-1, decoder: i is the decoder index) of a stack under `prefix` ("model.encoder." ...),
// as BartEncoderLayer / BartDecoderLayer.__init__ (and mbart's and whisper's copies) register them; `k_bias`
// as bart_attn_params'.
BartLayerParams bart_layer_params(GraphBuilder& b, const TransformerSpec& s, const std::string& prefix, int64_t i,
                                  bool decoder, bool train, bool k_bias = true);

// The module prefix of the encoder ("model.encoder.") or the decoder ("model.decoder.") of a
// ...ForConditionalGeneration.
inline std::string bart_stack_prefix(bool decoder) { return decoder ? "model.decoder." : "model.encoder."; }
// The layers of the encoder (decoder) stack under bart_stack_prefix, in order; layer indices for
// grad_checkpointing_layers / frozen_layers count the encoder's first (encoder 0..N-1, decoder N..N+M-1). A layer
// is trainable when `train` and not frozen.
std::vector<BartLayerParams> bart_stack_layer_params(GraphBuilder& b, const TransformerSpec& s, bool decoder,
                                                     bool train);

// nn.LayerNorm(d) parameters under `name` (weight, bias).
std::pair<TensorId, TensorId> bart_norm_params(GraphBuilder& b, const std::string& name, int64_t d, bool train);

// How a copy of BartAttention departs from BART's model of it; the defaults are BART's. The last two fields are
// not differences between the modeling files: each family's model was checked against its own H200 recordings
// with eager's gradient copies and the single-query case expressed its own way, and each keeps that event stream.
struct BartAttnStyle {
  // WhisperAttention: `(q_proj(x) * scaling).view(...).transpose(1, 2).contiguous()` (the product a new tensor),
  // k and v likewise made contiguous (each a copy whose backward copies the transposed gradient back), and the
  // attention called with scaling 1.0 (eager's `* scaling` is still a new tensor). torch.matmul then copies none
  // of them.
  bool contiguous_heads = false;
  // Eager training: the transposed head views copy the contiguous [B, H, L, D] gradients eager's bmm returns
  // (ViewBackward's reshape; as OPT's, the same attention code). false: the gradients pass through the views,
  // the copies being matmul's operand copies alone (mbart / whisper).
  bool view_grad_copies = true;
  // One query (a decode step): its head view merges, so torch.matmul copies no q and the output needs no
  // transpose copy, and SDPA runs without is_causal. false: every attention is modelled as multi-query (mbart /
  // whisper are modelled for training only).
  bool one_query_merges = true;
};

// BartAttention.forward (training, or an inference pass) on `h` [B, Lq, d]. `kv_src`: the encoder output for
// cross-attention (kNoTensor: self-attention over h). `causal`: the decoder's self-attention (module.is_causal;
// SDPA then runs causal without a mask, eager adds `mask`, the [B, 1, Lq, Lk] float mask, when given). `heads`:
// the module's head count. Inference: `cache_past` >= 0 appends self-attention k / v to the cache (cat with the
// `cache_past` cached positions), and cross-attention stores the encoder's k / v at the first step (cache_past
// 0) and reads them back later (the caller passes kv_src as the encoder output either way); -1: no cache.
// Returns out_proj's output [B, Lq, d]. `weights` receives eager attention's probabilities (held: the layer
// binds them until it returns; kNoTensor for SDPA).
// `style`: the family's departures from BART's model (BartAttnStyle).
TensorId bart_attention(GraphBuilder& b, const TransformerSpec& s, const BartAttnParams& w, TensorId h, TensorId kv_src,
                        bool causal, TensorId mask, int64_t heads, int64_t cache_past, TensorId& weights,
                        const BartAttnStyle& style = {});

// fc1 -> activation_fn -> dropout(activation_dropout) -> fc2 -> dropout(dropout), each statement rebinding
// hidden_states (the layer's FFN half without its residual and norm; mbart's and whisper's statements are the
// same). `pre_ln` false (BART's post-LN layer): h is also the caller's `residual`, which the caller holds, and the
// activation's output is left to its last read. true (mbart / whisper, whose recordings fixed it): h is the
// final_layer_norm output that hidden_states alone binds, released once the activation statement (with its
// dropout) has run, and the activation's output is bound until fc2 returns.
TensorId bart_ffn(GraphBuilder& b, const TransformerSpec& s, TensorId h, TensorId fc1, TensorId fc1_b, TensorId fc2,
                  TensorId fc2_b, bool pre_ln = false);

// BartLearnedPositionalEmbedding.forward: `position_ids` (kNoTensor: an arange of len, expanded to `rows`, local to
// the call, as the encoder passes none) plus the offset 2, a fresh [rows, len] int64 tensor the embedding saves,
// looked up in `table` [max + 2, d]: [rows, len, d].
TensorId bart_positions(GraphBuilder& b, TensorId table, TensorId position_ids, int64_t rows, int64_t len);

// Refuses (InputError naming the field, with the message `why`) a seq_len, a training target_len (0 means
// seq_len, checked as such) or an inference generate_tokens longer than the `limit` positions a table holds.
void check_seq2seq_lengths(const RunConfig& cfg, int64_t limit, const std::string& why);

// An encoder-decoder inference pass (engine/inference_replay.cpp; bart, marian, m2m_100): past_len 0 runs the
// encoder over the seq_len ids and the first decoder step; a decode pass with past_len P is decoder step
// P - seq_len + 1. Returns that step's past length; refuses (InputError naming `family`) a past_len shorter than
// the prompt.
int64_t seq2seq_decoder_past(const GraphBuilder& b, const std::string& family);

// encoder_outputs of an inference pass: `run_encoder()` at the first pass (past_len 0), else the cached
// [B, seq_len, d] encoder output (the final layer_norm's output, in the parameters' dtype: fp32 under amp). Inside
// generate() it is carried from pass to pass as the first cache slot. Held: bound until forward returns.
template <class RunEncoder>
TensorId seq2seq_encoder_output(GraphBuilder& b, int64_t d, RunEncoder run_encoder) {
  const auto& cfg = b.config();
  const TensorId enc = b.pass().past_len == 0 ? run_encoder()
                                              : b.kv_cache_in({cfg.batch_size, cfg.seq_len, d}, b.param_dtype());
  if (b.pass().from_generate) b.kv_cache_out(enc);
  b.hold(enc);
  return enc;
}

// The end of an encoder-decoder inference pass once lm_head's output `logits` exists: logits held (the output),
// the model's end, the encoder output `enc` freed as forward returns, the autocast cache cleared.
void seq2seq_inference_end(GraphBuilder& b, TensorId logits, TensorId enc);

// BART's shift_tokens_right(labels, pad, start) (copied by marian and m2m_100): new_zeros [B, T]; labels[:, :-1]
// .clone() copied into [:, 1:]; [:, 0] = start; masked_fill_(== -100, pad) with the comparison a bool temporary.
// Returns decoder_input_ids, held: forward binds them until it returns.
TensorId bart_shift_tokens_right(GraphBuilder& b, TensorId labels);

// The end of a ...ForConditionalGeneration training forward once lm_head's output `logits` [B, T, V] exists (bart,
// marian, mbart, m2m_100, whisper): the model's end, CrossEntropyLoss over [B*T, V] against `labels` [B, T], then
// forward returns and frees the logits and its other held locals `bound` (in that order), the autocast cache is
// cleared and the loss set.
void seq2seq_lm_loss(GraphBuilder& b, TensorId logits, TensorId labels, std::initializer_list<TensorId> bound);

}  // namespace memplan
