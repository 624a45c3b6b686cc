// Pieces the state-space causal LMs share (engine/arch/ssm/): MambaForCausalLM (mamba.cpp) and Mamba2ForCausalLM
// (mamba2.cpp) run the same block around their mixers and the same head, and both mixers feed a depthwise causal
// Conv1d and linears with transposed inputs. transformers 5.17 runs them on their PyTorch paths here: the
// measuring machine has neither mamba_ssm nor causal_conv1d (a run with those CUDA kernels allocates differently
// and is not modelled).
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "engine/arch/builders.h"

namespace memplan {

// nn.Conv1d(C, C, K, groups=C, padding=pad) over x [B, C, L] with weight w [C, 1, K] (and bias [C] or kNoTensor):
// output [B, C, L + 2 * pad - K + 1]. Autocast casts input, weight and bias to 16 bits (conv1d is a lower-precision
// op). `x_strided`: x is a non-contiguous view (a channel slice of a transposed projection), which the depthwise
// kernel first copies into a contiguous block (forward: allocated before the output, freed when the op returns;
// backward: alive while both gradients are computed), as lfm2's short convolution measured. The node keeps x and
// the weight.
TensorId ssm_depthwise_conv1d(GraphBuilder& b, TensorId x, TensorId w, TensorId bias, int64_t pad, bool x_strided);

// F.linear(x_t, w, bias) where x_t [B, S, D] is the transposed view of a contiguous [B, D, S] tensor (the mixers'
// `x.transpose(1, 2)` arguments). aten::linear takes matmul's path for a non-contiguous 3-d input; matmul folds the
// input to 2-d when the weight operand requires grad (a trainable weight, or any parameter outside autocast even
// under inference_mode, since parameters keep requires_grad), and reshape copies the transposed view into a
// contiguous [B * S, D] block unless B == 1 (a leading size-1 dim merges as a view); the mm keeps that block for
// the weight's gradient. Without the fold (a cast weight under inference autocast) bmm reads the view as it is.
// `trainable`: the weight parameter requires grad.
TensorId ssm_linear_transposed(GraphBuilder& b, TensorId x_t, TensorId w, TensorId bias, bool trainable);

// MambaBlock / Mamba2Block.forward as layer `i` of the model's loop: residual = h;
// h = norm(h.to(norm.weight.dtype)) (the cast, when it copies, is the call's argument, bound until the norm
// returns); residual = residual.to(float32) when `residual_in_fp32`; h = mixer(h); residual + h. The layer input
// stays bound by the model's loop variable until the block returns. `mixer` runs on the normed input.
using SsmMixerFn = std::function<TensorId(TensorId x)>;
TensorId ssm_block(GraphBuilder& b, TensorId h, TensorId norm_w, bool residual_in_fp32, const SsmMixerFn& mixer);

// The MambaForCausalLM / Mamba2ForCausalLM head after norm_f returned `hidden` [B, S, H] (held by the caller until
// the forward returns): logits = lm_head(hidden[:, slice].to(lm_head.weight.dtype)).float(), then in training
// self.loss_function (ForCausalLMLoss, causal_lm_loss); in inference the last logits_to_keep positions. `embed`:
// the token embedding, the head's weight when s.tie_word_embeddings.
void ssm_causal_lm_head(GraphBuilder& b, const TransformerSpec& s, TensorId hidden, TensorId embed, TensorId ids);

// MambaModel / Mamba2Model.forward and their ForCausalLM head: the token embedding, per layer `layers.i.norm.weight`
// then the mixer's parameters (`mixer(prefix, train)` registers them under prefix "layers.i.mixer." and returns the
// mixer's forward), ssm_block around it (checkpointed per the run config), norm_f, ssm_causal_lm_head. B x S from the
// run config (inference: the pass's new tokens).
using SsmMixerFactory = std::function<SsmMixerFn(const std::string& prefix, bool train)>;
void ssm_causal_lm(GraphBuilder& b, const TransformerSpec& s, const SsmMixerFactory& mixer);

// Both mixers' causal convolution over a whole sequence, x [B, C, S] (a transposed view, contiguous channels-last
// underneath): in inference update_conv_state's prefill first (the layer's lazily made zeros [B, C, K] of x's dtype,
// copy_ of the last K columns, left-padded when S < K; a cache slot), then causal_conv1d_fn's PyTorch path:
// F.conv1d(x.to(weight.dtype), padding=K - 1)[..., :S], silu, .to(x.dtype). Returns that [B, C, S]. The
// depthwise kernel copies its input (of the size of the conv's 16-bit argument) also when `.to(weight.dtype)`
// made a contiguous fp32 copy under autocast, and that fp32 copy, a temporary of the call, dies when F.conv1d
// returns (whole-run amp streams of jamba and mamba: a copy alloc'd before the conv output, freed with the cast
// and the fp32 copy before silu).
TensorId ssm_causal_conv_seq(GraphBuilder& b, TensorId x, TensorId conv_w, TensorId conv_b, int64_t K, bool inf);

// ---- MambaMixer (Mamba-1: mamba.cpp; JambaMambaMixer: jamba.cpp)

struct MambaMixerParams {
  TensorId conv_w = kNoTensor, conv_b = kNoTensor, in_w = kNoTensor, in_b = kNoTensor, x_w = kNoTensor,
           dt_w = kNoTensor, dt_b = kNoTensor, a_log = kNoTensor, d = kNoTensor, out_w = kNoTensor, out_b = kNoTensor;
  // JambaMambaMixer's RMSNorms on time_step [R], B [N] and C [N]; kNoTensor for MambaMixer.
  TensorId dt_norm = kNoTensor, b_norm = kNoTensor, c_norm = kNoTensor;
  bool train = true;
};
// Registers one mixer's parameters under prefix `p` in MambaMixer.__init__'s order (mamba.cpp's header);
// `bcdt_norms`: then JambaMambaMixer's dt_layernorm, b_layernorm, c_layernorm weights (registered last).
MambaMixerParams mamba_mixer_params(GraphBuilder& b, const TransformerSpec& s, const std::string& p, bool train,
                                    bool bcdt_norms = false);
// MambaMixer.forward on the normed input x [B, S, H] (mamba.cpp's header gives the statements; the sequential
// scan of mamba_selective_scan). With w.dt_norm set, JambaMambaMixer.forward: the same statements with
// time_step, B and C each rebound to its RMSNorm right after x_proj's split. Inference: the layer's
// LinearAttentionLayer cache, two slots per layer in update order (conv_states[0] [B, D, K] in the conv input's
// dtype, recurrent_states[0] [B, D, N] fp32). `with_mask`: generate()'s prefill passes an all-ones attention_mask
// that apply_mask_to_padding_states multiplies in twice (MambaModel passes it as it is; Jamba's
// create_recurrent_attention_mask turns an all-ones mask into None: false).
TensorId mamba_mixer(GraphBuilder& b, const TransformerSpec& s, const MambaMixerParams& w, TensorId x,
                     bool with_mask);

// ---- Mamba2Mixer (mamba2.cpp; the hybrids reuse it)

struct Mamba2MixerParams {
  TensorId conv_w = kNoTensor, conv_b = kNoTensor, in_w = kNoTensor, in_b = kNoTensor, dt_bias = kNoTensor,
           a_log = kNoTensor, norm_w = kNoTensor, d = kNoTensor, out_w = kNoTensor, out_b = kNoTensor;
  bool train = true;
};
// Registers one mixer's parameters under prefix `p` in Mamba2Mixer.__init__'s order (mamba2.cpp's header).
Mamba2MixerParams mamba2_mixer_params(GraphBuilder& b, const TransformerSpec& s, const std::string& p, bool train);

// Mamba2Mixer.forward on the normed input x [B, S, H] (mamba2.cpp's header gives the statements). Inference: the
// layer's LinearAttentionLayer cache as 5.17 keeps it, two slots per layer in update order (conv_states[0]
// [B, I + 2GN, K] in x's dtype, recurrent_states[0] [B, h, hd, N] fp32): the prefill makes each lazily (zeros) and
// copies into it; a decode step reads and updates both in place (causal_conv1d_update,
// mamba2_selective_state_update's torch fallback).
TensorId mamba2_mixer(GraphBuilder& b, const TransformerSpec& s, const Mamba2MixerParams& w, TensorId x);

}  // namespace memplan
