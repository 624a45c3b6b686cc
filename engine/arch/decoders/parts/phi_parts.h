// Pieces shared by the phi3, gpt_neox, starcoder2, phi, stablelm, granite and cohere builders (engine/arch/<type>.cpp):
// the CausalLM skeleton their transformers 5.17 modeling files have in common (embedding, masks,
// rotary embedding, the layer loop, the final norm, lm_head and the loss), the partial rotary embedding of
// phi3 / gpt_neox, and the activations their MLPs call through ACT2FN.
#pragma once
#include <string>
#include <vector>

#include "engine/arch/builders.h"

namespace memplan {

// ACT2FN[name](x) for the single-kernel activations (activations.py): gelu (GELUActivation, F.gelu) and
// gelu_pytorch_tanh (GELUTanh, F.gelu(approximate="tanh")) and silu / swish save their input, relu its output.
// Importers refuse other names (is_single_kernel_activation).
TensorId activation(GraphBuilder& b, const std::string& name, TensorId x);
bool is_single_kernel_activation(const std::string& name);

// ReLUSquaredActivation.forward(input) (ACT2FN["relu2"]): relu_applied = F.relu(input) (ReluBackward0 saves its
// result), squared = torch.square(relu_applied) (pow(x, 2), autocast's fp32 policy). `input` and relu_applied are
// the forward's locals, so both live until it returns: x dies after the square, not after the relu (NanoChat's
// LoRA stream: the fc1 output freed after the relu left one 1000 MiB block short).
TensorId relu_squared(GraphBuilder& b, TensorId x);
// down(relu_squared(up(x))) where the square is down's argument until it returns (a call's temporary or a rebound
// local: under amp the fp32 square outlives autocast's 16-bit copy for the GEMM; the Arcee amp stream).
TensorId relu_squared_mlp(GraphBuilder& b, TensorId x, TensorId up_w, TensorId up_b, TensorId down_w,
                          TensorId down_b);

// ACT2FN[name](x) where gelu_new may be configured (phi, gpt_bigcode, gptj): NewGELUActivation written out
// (builders.h gelu_new), else activation().
TensorId activation_or_gelu_new(GraphBuilder& b, const std::string& name, TensorId x);
// GPTBigCodeMLP / GPTJMLP.forward: fc (c_fc / fc_in, with bias), `hidden_states = self.act(hidden_states)` (the fc
// output held until the activation returns), the activation's output bound until the projection (c_proj / fc_out,
// with bias) returns (amp: its fp32 result outlives autocast's bf16 cast for the GEMM), then dropout(resid_pdrop).
TensorId fc_act_proj_mlp(GraphBuilder& b, const TransformerSpec& s, TensorId x, TensorId fc_w, TensorId fc_b,
                         TensorId proj_w, TensorId proj_b);

// apply_rotary_pos_emb of phi3 / gpt_neox for one tensor x [B, H, S, D] with cos / sin [P, S, rot]: the slices
// x[..., :rot] and x[..., rot:] (SliceBackward: each gradient is zero-filled at x's full size, even for the empty
// pass-through slice of a full rotary), rope(x_rot) and, when `cat_now`, torch.cat([rotated, x_pass], -1).
// gpt_neox rotates q and k first and cats both afterwards (cat_now false: returns the rotated part and
// `pass` receives the pass-through view for cat_rotary).
TensorId partial_rope(GraphBuilder& b, TensorId x, TensorId cos, TensorId sin, int64_t rot, bool cat_now,
                      TensorId* pass = nullptr);
TensorId cat_rotary(GraphBuilder& b, TensorId rotated, TensorId pass);

// attention_core (llama_parts.h) for q / k that are torch.cat outputs ([B, H, S, D] contiguous after the
// phi3 / gpt_neox rotary): eager attention's torch.matmul then copies neither q nor k (their batch and head
// dims merge; k^T is a plain transposed bmm operand), only a v that is still a view of the projection
// (training). llama.cpp's eager branch assumes q / k keep the projection's [B, S, H, D] memory order, so
// eager attention is written out here (same statements and lifetimes otherwise); SDPA goes to
// attention_core unchanged.
TensorId cat_rotary_attention(GraphBuilder& b, const TransformerSpec& s, TensorId qe, TensorId& ke, TensorId& v,
                              TensorId v_proj, TensorId mask, int64_t window, TensorId& weights);

// sdpa_attention_forward's `attn_output.transpose(1, 2).contiguous()` when q is a torch.cat output (phi3 /
// gpt_neox rotary): cuDNN (16-bit SDPA, masked or not, training and inference) lays its output out
// like q, here [B, H, S, D] contiguous, so the transpose is a copy [B, S, H, D] that o_proj / dense then saves
// (whole-run streams, phi3 and neox bf16: one q-sized allocation after SDPA's output per layer, alive until
// backward; neox inference: the copy, then SDPA's output freed). The memory-efficient kernel (fp32) allocates its
// output [B, S, H, D] already; eager attention copies in attention_core. Returns
// ctx itself where nothing is copied.
TensorId cudnn_output_copy(GraphBuilder& b, TensorId ctx, TensorId mask);

// The per-family part of the skeleton: one decoder layer (its parameters registered inside, in module order)
// from hidden state h, with the attention mask and the rotary cos / sin; returns the layer's output.
struct SkeletonContext {
  TensorId mask = kNoTensor;  // the attention mask every layer uses (kNoTensor: SDPA's is_causal)
  int64_t window = 0;         // sliding window of the cache and mask (0: full attention)
  TensorId cos = kNoTensor, sin = kNoTensor;
};
// The end of an attention whose q / k are torch.cat outputs (glm4, nemotron, phi3): cat_rotary_attention,
// cudnn_output_copy, o_proj (weight `o`, bias `ob` or kNoTensor) over the [B, S, nh * hd] view, then
// query_states / key_states (qe / ke, held by the caller) and, in training, value_states (v_proj) released as
// the module returns (attention_o_proj of llama_parts.h for rotated q / k).
TensorId cat_rotary_o_proj(GraphBuilder& b, const TransformerSpec& s, TensorId qe, TensorId ke, TensorId v,
                           TensorId v_proj, const SkeletonContext& c, TensorId o, TensorId ob, TensorId& weights);

// The attention of phi and stablelm from the (normed) head views on: apply_rotary_pos_emb on the slices
// q[..., :rot] / k[..., :rot] of both, then torch.cat of each with its pass-through slice (gpt_neox's order),
// cat_rotary_attention and cudnn_output_copy. `locals`: what the attention's frame keeps bound until it returns
// (query_states / key_states, which the pass-through views hold, the rotated halves `query_rot` / `key_rot`, the
// cat outputs, and value_states in training), in the order they are released by release_attention_locals once
// the output projection has run. In inference k and v are rebound by the cache update (attention_core).
struct SlicedRotaryAttention {
  TensorId ctx = kNoTensor;
  std::vector<TensorId> locals;
};
SlicedRotaryAttention sliced_rotary_attention(GraphBuilder& b, const TransformerSpec& s, TensorId q, TensorId k,
                                              TensorId v, TensorId v_proj, const SkeletonContext& c, int64_t rot,
                                              TensorId& weights);
void release_attention_locals(GraphBuilder& b, const SlicedRotaryAttention& a);

using LayerFn = TensorId (*)(GraphBuilder& b, const TransformerSpec& s, int64_t layer, TensorId h,
                             const SkeletonContext& ctx);

// Optional per-family statements around the shared ones (nullptr: none).
using TensorFn = TensorId (*)(GraphBuilder& b, TensorId x);
using NormFn = TensorId (*)(GraphBuilder& b, TensorId x, TensorId weight);

struct SkeletonSpec {
  const char* embed_name;       // e.g. "model.embed_tokens.weight"
  const char* norm_prefix;      // final norm, e.g. "model.norm"
  bool layer_norm_final;        // nn.LayerNorm (weight + bias) instead of the RMSNorm (weight)
  bool sliding_mask_function;   // create_sliding_window_causal_mask when config.sliding_window is set
  LayerFn layer;
  // Applied to the embedding's output before the mask is made (granite's `inputs_embeds * embedding_multiplier`):
  // its result is what the model keeps bound as inputs_embeds.
  TensorFn embed_op = nullptr;
  // embed_op runs after the mask and position ids are made (granitemoe: create_causal_mask, then the multiplier);
  // the embedding's output stays bound as inputs_embeds until then.
  bool embed_op_after_mask = false;
  // The final norm when it is neither RMSNorm nor nn.LayerNorm (cohere's Python LayerNorm; weight only).
  NormFn final_norm = nullptr;
  // Applied to lm_head's output (granite's `/ logits_scaling`, cohere's `* logit_scale`), in training and inference.
  TensorFn logits_op = nullptr;
};

// The CausalLM forward of the three modeling files: embed, the causal mask (before the rotary embedding), the
// embedding dropout (s.embd_dropout), the rotary embedding over rotary_dim (or head_dim), the layers (each
// holding its input until it returns; checkpointed / frozen per the run), the final norm, lm_head (tied to the
// embedding when s.tie_word_embeddings) and, in training, ForCausalLMLoss; in inference, logits of the last
// position only.
void build_causal_lm_skeleton(GraphBuilder& b, const TransformerSpec& s, const SkeletonSpec& k);

}  // namespace memplan
