// What Lfm2ForCausalLM (engine/arch/decoders/dense/lfm2.cpp) and Lfm2MoeForCausalLM
// (engine/arch/decoders/moe/lfm2_moe.cpp) share: transformers 5.17 generates modeling_lfm2_moe.py from
// modeling_lfm2.py, so the two run the same embedding, masks, rotary embedding, Lfm2ShortConv / Lfm2Attention
// operators, decoder-layer residual blocks, embedding_norm and tail; only the feed-forward block differs
// (Lfm2MLP everywhere, or Lfm2MoeMLP on the first num_dense_layers layers and Lfm2MoeSparseMoeBlock after).
#pragma once
#include <functional>
#include <string>

#include "engine/arch/builders.h"
#include "engine/arch/decoders/parts/llama_parts.h"

namespace memplan {

// One layer's operator parameters: Lfm2Attention's (conv false) or Lfm2ShortConv's (conv true).
struct Lfm2Operator {
  bool conv = false;
  TensorId q = kNoTensor, k = kNoTensor, v = kNoTensor, o = kNoTensor, q_norm = kNoTensor, k_norm = kNoTensor;
  TensorId conv_w = kNoTensor, conv_b = kNoTensor, in_proj = kNoTensor, in_b = kNoTensor, out_proj = kNoTensor,
           out_b = kNoTensor;
};

// The feed-forward of layer `layer`: registers its parameters under prefix `p` ("layers.<i>.", after the
// operator's and before operator_norm / ffn_norm, as the decoder layer's __init__ creates them) and returns the
// forward to run on ffn_norm's output (its result is added to the residual).
using Lfm2FeedForwardFactory = std::function<LlamaMlpFn(int64_t layer, const std::string& p, bool train)>;

// The whole model, training forward + loss or one inference pass (b.pass()): embed_tokens, the masks, the rotary
// cos / sin, per layer the operator (s.lfm2_conv_layers) and the feed-forward `ffn` in Lfm2DecoderLayer's residual
// blocks, embedding_norm, the tied lm_head and the loss / last logits (lfm2.cpp's header gives the statements).
// Checks the [lfm2] spec fields (one entry per layer, a positive conv kernel).
void build_lfm2_model(GraphBuilder& b, const TransformerSpec& s, const Lfm2FeedForwardFactory& ffn);

}  // namespace memplan
