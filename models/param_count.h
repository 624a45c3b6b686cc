// Closed-form parameter counts, written from the PyTorch module definitions (every nn.Parameter the model
// registers; buffers such as BN running stats or causal masks are not parameters; a tied lm_head/decoder
// weight counts once). They equal sum(p.numel() for p in model.parameters()) exactly and serve as an
// independent cross-check on the graph builders in engine/arch/.
//
// Which head is counted:
//   gpt2 family         GPT2LMHeadModel        (lm_head has no bias)
//   llama family        <Name>ForCausalLM      (llama, mistral, qwen2, mixtral; lm_head has no bias)
//   bert                BertForMaskedLM        (no pooler; cls.predictions: transform dense + LayerNorm,
//                                               a bias of vocab_size; with tie_word_embeddings=false the
//                                               decoder has its own weight and its own bias as well)
//   resnet / vit        torchvision classifier with `num_classes` outputs
//
// Byte arithmetic is overflow-checked (InputError on overflow).
#pragma once
#include <cstdint>

#include "engine/arch/spec.h"

namespace memplan {

int64_t param_count(const TransformerSpec& spec);
int64_t param_count(const VisionSpec& spec);
// Throws InputError for ModelSpec::Kind::graph (graph models count their own parameters).
int64_t param_count(const ModelSpec& spec);

}  // namespace memplan
