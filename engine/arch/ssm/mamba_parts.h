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
// The Mamba2 mixers' causal_conv1d_fn (the lifetimes the hybrids' whole-run recordings showed; Mamba-1's is
// ssm_causal_conv_seq above): the kernel's contiguous copy of its input also when the input is
// `.to(weight.dtype)`'s copy (a cast keeps the transposed strides), and that copy freed as F.conv1d returns, before
// the slice and the activation.
TensorId mamba2_causal_conv_seq(GraphBuilder& b, TensorId x, TensorId conv_w, TensorId conv_b, int64_t K,
                                bool inf);

// ---- MambaMixer (Mamba-1: mamba.cpp; JambaMambaMixer: jamba.cpp; FalconMambaMixer: falcon_mamba.cpp)

// The norms a Mamba-1 mixer applies to x_proj's time_step, B and C: none (MambaMixer), JambaMambaMixer's three
// RMSNorms with weights (dt_layernorm [R], b_layernorm [N], c_layernorm [N]), FalconMambaMixer's weightless RMS
// norms (their unused ones(size) buffers registered after out_proj).
enum class MambaMixerNorms : uint8_t { none, jamba, falcon };
struct MambaMixerParams {
  TensorId conv_w = kNoTensor, conv_b = kNoTensor, in_w = kNoTensor, in_b = kNoTensor, x_w = kNoTensor,
           dt_w = kNoTensor, dt_b = kNoTensor, a_log = kNoTensor, d = kNoTensor, out_w = kNoTensor, out_b = kNoTensor;
  TensorId dt_norm = kNoTensor, b_norm = kNoTensor, c_norm = kNoTensor;  // MambaMixerNorms::jamba's weights
  bool train = true;
  MambaMixerNorms norms = MambaMixerNorms::none;
};
// Registers one mixer's parameters under prefix `p` in MambaMixer.__init__'s order (mamba.cpp's header), then
// `norms`' weights or buffers.
MambaMixerParams mamba_mixer_params(GraphBuilder& b, const TransformerSpec& s, const std::string& p, bool train,
                                    MambaMixerNorms norms = MambaMixerNorms::none);
// MambaMixer.forward on the normed input x [B, S, H] (mamba.cpp's header gives the statements; the sequential
// scan of mamba_selective_scan); with w.norms the same statements with time_step, B and C each rebound to its norm
// right after x_proj's split (JambaMambaMixer, FalconMambaMixer: falcon_mamba.cpp's header). Inference: the layer's
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
// Every Mamba2 mixer (mamba2, granitemoehybrid, bamba, falcon_h1, nemotron_h: one torch path in transformers 5.17)
// replays the statement-exact Python lifetimes the whole-run recordings showed: causal_conv1d_fn's
// `x.to(weight.dtype)` dies as F.conv1d returns and the depthwise kernel copies its (transposed, also when cast)
// input contiguous; the chunk scan's `states` dies at `states = torch.cat([previous_states, states])`, that cat at
// the `states, final_state = new_states[:, :-1], new_states[:, -1]` rebinding; the scan's result stays bound
// (`scan_result`) until the mixer returns, and with it, in inference, new_states (final_state's base); the gated
// norm's output too (`scan_output = self.norm(scan_output, gate)`, freed after out_proj); the cache's recurrent
// state is written after the scan has returned. (Until the nineteenth session only Granite-4.0-H and Bamba had
// these lifetimes; Falcon-H1 and Nemotron-H read -3.8 .. +4.0 % reserved without them, mamba2 was exact either way.)
// Registers one mixer's parameters under prefix `p` in Mamba2Mixer.__init__'s order (mamba2.cpp's header).
Mamba2MixerParams mamba2_mixer_params(GraphBuilder& b, const TransformerSpec& s, const std::string& p, bool train);

// Mamba2Mixer.forward on the normed input x [B, S, H] (mamba2.cpp's header gives the statements). Inference: the
// layer's LinearAttentionLayer cache as 5.17 keeps it, two slots per layer in update order (conv_states[0]
// [B, I + 2GN, K] in x's dtype, recurrent_states[0] [B, h, hd, N] fp32): the prefill makes each lazily (zeros) and
// copies into it; a decode step reads and updates both in place (causal_conv1d_update,
// mamba2_selective_state_update's torch fallback).
TensorId mamba2_mixer(GraphBuilder& b, const TransformerSpec& s, const Mamba2MixerParams& w, TensorId x);

// Where a hybrid's copy of the Mamba2 mixer departs from Mamba2Mixer.forward (same chunk scan, conv and decode
// functions otherwise; mamba2_mixer is mamba2_mixer_variant with the defaults).
struct Mamba2MixerVariant {
  // FalconH1Mixer: `hidden_states * ssm_in_multiplier` before in_proj (a fresh [B, S, H], bound to hidden_states
  // until the split after the convolution rebinds it) and `projected_states * self.mup_vector` after it (`mup`, the
  // non-persistent [1, 1, P] buffer in the model's dtype; under autocast the product is fp32, and so is everything
  // split from it). kNoTensor: neither statement (Mamba2Mixer, NemotronHMamba2Mixer).
  TensorId mup = kNoTensor;
  // The norm after the scan. mamba2: MambaRMSNormGated (y * silu(gate.float()), RMS over the whole row, weight *
  // y.to(input dtype)). grouped: Zamba2RMSNormGated (NemotronHMamba2Mixer; the same statements with the RMS over
  // n_groups row groups: variance [B, S, G, 1]). falcon: FalconH1RMSNormGated (mamba_rms_norm; the gate product
  // before (norm_before_gate false) or after the grouped RMS, the weight product in fp32, no cast).
  // silu_gate: FalconH1Mixer without mamba_rms_norm: `scan_output * silu(gate)` in the chunk form, the gate
  // passed as z into the state update in a decode step.
  enum class Norm : uint8_t { mamba2, grouped, falcon, silu_gate };
  Norm norm = Norm::mamba2;
  bool norm_before_gate = false;  // falcon only
};
TensorId mamba2_mixer_variant(GraphBuilder& b, const TransformerSpec& s, const Mamba2MixerParams& w, TensorId x,
                              const Mamba2MixerVariant& v);

// ---- the Mamba2 hybrids (falcon_h1.cpp, nemotron_h.cpp)

// FalconH1Model / NemotronHModel.forward between the embedding and the first layer: position_ids =
// torch.arange(S) + past_seen_tokens (an arange and a sum, bound until the forward returns; generate() passes its own),
// create_causal_mask (held until the forward returns; kNoTensor where SDPA skips it) and
// create_recurrent_attention_mask (inside generate() with more than one new token: torch.all(mask == 1), a bool
// [B, S] and a scalar freed at once, then None; without a mask, None at once).
struct HybridPrelude {
  TensorId positions = kNoTensor, mask = kNoTensor;
};
HybridPrelude hybrid_positions_and_masks(GraphBuilder& b, const TransformerSpec& s, DType model_dtype);

}  // namespace memplan
