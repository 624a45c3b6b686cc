// Pieces of T5ForConditionalGeneration (engine/arch/seq2seq/t5.cpp) that UMT5 (engine/arch/seq2seq/umt5.cpp) runs
// as the same Python in transformers 5.17 (umt5's modules are "Copied from" t5's): T5LayerNorm, the dense
// activations and T5LayerFF, T5Block's fp16 clamp, compute_bias with _relative_position_bucket, the biased SDPA
// of integrations/sdpa_attention.py as the H200 runs it, the parameters of one attention and one FF sub-layer in
// registration order, and DynamicLayer.update's cat. Their contracts are stated at their definitions in t5.cpp.
// The drivers are shared too (build_t5_family: the stacks' parameters, both stacks, the seq2seq loss, the generate
// passes); a family brings its attention sub-layers (Family), where T5 and UMT5 differ.
#pragma once
#include <string>
#include <vector>

#include "engine/arch/builders.h"

namespace memplan::t5parts {

bool low_precision(DType t);
// T5LayerNorm over x with weight w.
TensorId t5_norm(GraphBuilder& b, TensorId x, TensorId w);
// The dense activation (relu, gelu_new, gelu, gelu_pytorch_tanh, silu / swish).
TensorId t5_act(GraphBuilder& b, const std::string& act, TensorId x);
// T5Block's clamp after a sub-layer when h is fp16 (h itself otherwise).
TensorId fp16_clamp(GraphBuilder& b, TensorId h);
// compute_bias(q, k): the [1, heads, q, k] permuted view of the relative_attention_bias lookup. `log_ratio_local`:
// the bucket function binds the scaled log ratio to a local (UMT5's `log_ratio`), so that fp32 [q, k] tensor lives
// until the function returns rather than dying at its cast to int64 (T5 writes it as one expression).
TensorId compute_bias(GraphBuilder& b, TensorId table, int64_t q, int64_t k, int64_t heads, bool bidirectional,
                      bool log_ratio_local);
TensorId matmul_no_autocast(GraphBuilder& b, TensorId x, TensorId y, Shape out, bool copy_x, bool copy_y);
// sdpa_attention_forward with `bias` as the float mask; `bias_permuted`: the relative bias (math backend) rather
// than a contiguous zero bias. Sets out_contiguous_heads when the output's memory is [B, H, q, D].
TensorId biased_sdpa(GraphBuilder& b, TensorId q, TensorId k, TensorId v, TensorId bias, bool bias_permuted,
                     double dropout_p, bool& out_contiguous_heads);

struct AttnParams {
  TensorId q, k, v, o;
};
// q, k, v, o of one attention module; `p` ends with the module's name and a dot.
AttnParams attn_params(GraphBuilder& b, const TransformerSpec& s, const std::string& p, bool train);

// The start of T5Attention.forward (UMT5Attention's alike): normed_hidden_states = layer_norm(h) and the
// head-split q, k, v [B, H, L, D], k and v of `kv_src` (the encoder output) for cross-attention, of x otherwise;
// all four held, the caller drops them (x when the sub-layer returns, q, k, v when the attention does).
struct AttnInputs {
  TensorId x, q, k, v;
};
AttnInputs attn_inputs(GraphBuilder& b, const TransformerSpec& s, const AttnParams& w, TensorId norm_w, TensorId h,
                       TensorId kv_src);
// eager_attention_forward over the whole sequence: scores = q k^T (scaling 1.0) + bias (+ `mask` unless
// kNoTensor), softmax, dropout into `weights` (held: the block binds them to `_`), the context [B, q, H, D].
TensorId eager_context(GraphBuilder& b, const TransformerSpec& s, TensorId q, TensorId k, TensorId v, TensorId bias,
                       TensorId mask, TensorId& weights);

// The end of T5Attention.forward (UMT5Attention's alike) and its sub-layer over the whole sequence: o(ctx) with ctx
// [B, q, H, D] (or a fused kernel's [B, H, q, D] laid out as that), `dead` released (the attention's q, k, v ...), then h + dropout(o's output); releases x (the normed
// input) after the add.
TensorId attention_output_residual(GraphBuilder& b, const TransformerSpec& s, TensorId ctx, TensorId o, TensorId h,
                                   TensorId x, std::initializer_list<TensorId> dead);

struct FfParams {
  TensorId wi = kNoTensor, wi1 = kNoTensor, wo = kNoTensor, norm = kNoTensor;
};
// DenseReluDense's weights and the sub-layer's layer_norm; `p` ends with "layer.<i>.".
FfParams ff_params(GraphBuilder& b, const TransformerSpec& s, const std::string& p, bool train);
// T5LayerFF: h + dropout(DenseReluDense(layer_norm(h))).
TensorId feed_forward(GraphBuilder& b, const TransformerSpec& s, const FfParams& w, TensorId h);

// The KV cache's dtype (the k / v projections' outputs).
DType cache_dtype(const GraphBuilder& b);
// DynamicLayer.update: cat([cached (past positions), x], dim=-2), marked as the layer's cache.
TensorId cache_cat(GraphBuilder& b, TensorId x, int64_t past);
// The k / v [B, H, k, D] of one generate step's attention over the normed `x` [B, 1, d]: the self-attention's
// cache with the new position appended (`enc` kNoTensor), or the cross-attention's over the encoder output `enc`.
void cached_kv(GraphBuilder& b, const TransformerSpec& s, const AttnParams& w, TensorId x, TensorId enc,
               int64_t past, TensorId& kc, TensorId& vc);

// One block's parameters; `table` is kNoTensor where the block has no relative_attention_bias, the cross-attention
// fields kNoTensor in the encoder.
struct BlockParams {
  AttnParams sa{}, ca{};
  TensorId table = kNoTensor, sa_norm = kNoTensor, ca_norm = kNoTensor;
  FfParams ff;
};
struct StackParams {
  std::vector<BlockParams> blocks;
  TensorId final_norm = kNoTensor;
};
// One stack's parameters in registration order (T5Stack.__init__, UMT5Stack.__init__): block i's layer.0
// SelfAttention q, k, v, o, its relative_attention_bias (the first block's only, or every block's with
// `bias_per_attention`), layer.0 layer_norm, the decoder's layer.1 EncDecAttention and layer_norm, the FF
// sub-layer; final_layer_norm after the blocks.
StackParams stack_params(GraphBuilder& b, const TransformerSpec& s, bool decoder, bool bias_per_attention);

// What a family's blocks do differently: its training attention sub-layer and where its position biases live.
// The stack's locals position_bias (self-attention) and encoder_decoder_position_bias (cross-attention) are
// kNoTensor before the first block: T5 fills them there and later blocks reuse them (the stack holds them until
// it returns); UMT5 leaves them kNoTensor, each attention making and freeing its own. The generate step's
// attention (t5.cpp step_attention) is one function for both, told by `bias_per_attention`.
struct Family {
  const char* name;         // in messages ("t5" for t5 and mt5, "umt5")
  bool bias_per_attention;  // UMT5: every self-attention owns a relative_attention_bias and every attention
                            // makes its own bias; T5: block 0's table, one bias of each kind per stack
  // The training sub-layer, h + dropout(o(attn(layer_norm(h)))). `kv_src`: the encoder output for
  // cross-attention, kNoTensor for self-attention; `table`: the block's relative_attention_bias for
  // self-attention, kNoTensor otherwise; `causal`: decoder self-attention; `mask`: the eager decoder's causal
  // float mask or kNoTensor; `bias`: the stack's local for this kind of attention; `weights` receives eager
  // attention's probabilities (held: the block binds them to `_`), kNoTensor for SDPA.
  TensorId (*attention)(GraphBuilder& b, const TransformerSpec& s, const AttnParams& w, TensorId norm_w, TensorId h,
                        TensorId kv_src, TensorId table, bool causal, TensorId mask, TensorId& bias,
                        TensorId& weights);
};

// T5ForConditionalGeneration.forward (UMT5's) with `f`'s attention: in training both stacks over ids and
// _shift_right(labels), the tied lm_head and the loss; in inference one generate pass (engine/inference_replay.cpp).
void build_t5_family(GraphBuilder& b, const TransformerSpec& s, const Family& f);

}  // namespace memplan::t5parts
