// Pieces of the pre-LN BART-derived encoder-decoders mbart (engine/arch/seq2seq/mbart.cpp) and whisper
// (engine/arch/seq2seq/whisper.cpp), as transformers 5.17 writes them in models/mbart/modeling_mbart.py and
// models/whisper/modeling_whisper.py: the pre-LN encoder and decoder layers around bart_parts.h's attention,
// feed-forward statements and parameters (the embeddings and the loss are each builder's own). Layer indices
// (grad_checkpointing_layers, frozen_layers) follow t5.cpp: encoder layers 0..N-1, decoder layers N..N+M-1.
#pragma once
#include <string>
#include <vector>

#include "engine/arch/seq2seq/bart_parts.h"
#include "engine/arch/builders.h"

namespace memplan {

// How the two modeling files differ inside the shared layers.
struct BartStyle {
  bool k_bias = true;  // whisper: k_proj = nn.Linear(d, d, bias=False) (bart_layer_params' k_bias)
  // WhisperAttention's contiguous head copies (BartAttnStyle::contiguous_heads; MBartAttention: plain head views).
  bool contiguous_heads = false;
  // The encoder's residual stream keeps the memory order of a permuted view (whisper: conv2's output
  // .permute(0, 2, 1) plus the positions; every residual add follows its first operand's layout), so each encoder
  // LayerNorm works on a transient contiguous copy, forward and backward (H200 recordings: a 35 MiB copy around
  // every encoder norm of whisper-small b8).
  bool permuted_encoder_stream = false;
};

// The pre-LN encoder layer over `h`, checkpointed / frozen per the run (layer index `i`). Returns its output.
TensorId bart_encoder_layer(GraphBuilder& b, const TransformerSpec& s, const BartStyle& st, const BartLayerParams& w,
                            int64_t i, TensorId h);
// The pre-LN decoder layer `i` (decoder index) over `h`, cross-attending to `enc`; `mask` is the eager causal
// float mask (kNoTensor under SDPA, which runs is_causal).
TensorId bart_decoder_layer(GraphBuilder& b, const TransformerSpec& s, const BartStyle& st, const BartLayerParams& w,
                            int64_t i, TensorId h, TensorId enc, TensorId mask);
// The same decoder layer in one inference pass (no autograd): the self-attention appends its keys / values to the
// EncoderDecoderCache (`past` positions already cached), the cross-attention stores the encoder's keys / values at
// the first step (past 0) and reads them back after (bart_attention's cache_past), with a single query's head view
// merging (BartAttnStyle::one_query_merges). The normed input of each block is bound to hidden_states until its
// attention returns, each block's sum is `residual` of the next.
TensorId bart_cached_decoder_layer(GraphBuilder& b, const TransformerSpec& s, const BartStyle& st,
                                   const BartLayerParams& w, int64_t i, TensorId h, TensorId enc, TensorId mask,
                                   int64_t past);

}  // namespace memplan
