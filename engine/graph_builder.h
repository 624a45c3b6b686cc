// GraphBuilder: a tiny symbolic PyTorch. Architecture builders call it the way model code calls torch; it
// records ops with the memory facts of their real kernels (what is allocated, saved for backward, and what
// backward allocates), applying autocast and dtype promotion as PyTorch does.
//
// Mechanisms modelled here (each from torch 2.11 sources or our H200 traces; see data/validation/NOTES.md):
//  - Autocast (amp_bf16/amp_fp16): lower-precision ops (linear, matmul, conv, sdpa) cast floating inputs to the
//    low dtype; casts of trainable leaf parameters are cached until the autocast region exits; fp32-policy ops
//    (layer_norm, pow, softmax, log_softmax, nll_loss, rsqrt, ...) cast low-precision inputs to fp32.
//  - Type promotion for mixed-dtype elementwise ops (bf16 * fp32 -> fp32), Python scalars do not promote.
//  - Python variable lifetime: a tensor is released after its last use, or later where model code keeps it in a
//    variable (`hold_until_drop` / `drop`).
#pragma once
#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "engine/graph.h"
#include "engine/lora.h"
#include "engine/run_config.h"

namespace memplan {

using Shape = std::vector<int64_t>;

// One inference forward (transformers generate/forward with a DynamicCache): the prefill (past_len 0) or a
// decode step. Builders read it through GraphBuilder::pass(); cfg.seq_len is ignored in inference graphs.
struct InferencePass {
  int64_t past_len = 0;        // tokens already in the cache (the cache_position of the first new token)
  int64_t new_tokens = 0;      // tokens this forward processes (prompt length in prefill, 1 in decode)
  bool from_generate = false;  // inside generate(): position_ids [B, S] and an all-ones attention_mask are passed
  // The process's first forward (forward-only inference: the measured one): TorchScript functions
  // (@torch.jit.script, deberta-v2's make_log_bucket_position) run interpreted op by op before the profiling
  // executor fuses them on later calls. Decoder passes leave it false.
  bool first_call = false;
  // use_cache: the forward writes K / V into the DynamicCache (kv_update). False: generate() of a model whose
  // config says use_cache false (GenerationConfig.from_model_config copies it): no cache is made, every forward of
  // the loop recomputes the whole sequence (past_len 0, new_tokens = the ids so far) and kv_update hands K and V
  // back unchanged. Only the builders in no_cache_generate_modelled (inference_replay.h) are replayed this way.
  bool use_cache = true;
};

class GraphBuilder {
 public:
  explicit GraphBuilder(const RunConfig& cfg);

  // Capacity for the graph's op and tensor tables (a hint: the tables still grow past it). A table that grows
  // by doubling copies itself into fresh memory at every step, and each fresh page is a page fault (about
  // 3.5 us each on the development VM): an 80-layer graph's 3,706 ops faulted in about 1,100 pages that way.
  // Capacity never written costs no fault.
  void reserve(size_t ops, size_t tensors);
  const RunConfig& config() const { return cfg_; }
  DType param_dtype() const { return param_dtype_; }     // storage dtype of parameters
  DType low_dtype() const { return low_dtype_; }         // autocast / pure low-precision dtype
  bool autocast() const { return autocast_; }
  bool training() const { return cfg_.mode == Mode::training; }
  const InferencePass& pass() const { return pass_; }
  // An inference forward whose K / V come back from a DynamicCache (cat outputs: contiguous, the projection's
  // tensors rebound). False in training and in generate() without a cache, where K / V are the projection's views.
  bool kv_cached() const { return !training() && pass_.use_cache; }
  void set_pass(const InferencePass& p) { pass_ = p; }
  // torch.no_grad() around the ops that follow (false) or its end (true): the ops record no autograd history (no
  // backward, nothing saved, outputs that do not require grad), while autocast still caches the casts of trainable
  // leaf parameters (its cache test reads requires_grad, not the grad mode). DeepseekV32Indexer.forward.
  void set_grad_enabled(bool on) { grad_enabled_ = on; }
  bool grad_enabled() const { return grad_enabled_; }

  // ---- leaves
  // `dtype` overrides the precision's parameter dtype (native graphs: a bf16 weight in an amp model).
  TensorId param(std::string_view name, Shape shape, bool trainable = true, std::optional<DType> dtype = std::nullopt);
  // The parameter `name` of a module whose weight is `tied_to`'s (a tied lm_head): `tied_to` itself, unless LoRA's
  // modules_to_save names the module. peft's ModulesToSaveWrapper then keeps the shared original (no new memory) and
  // trains a deep copy, a new tensor of `tied_to`'s shape and dtype (peft 0.21 on the H200: get_peft_model allocated
  // one [V, H] in the model's dtype; family set 28's tied Qwen3 row).
  TensorId tied_param(std::string_view name, TensorId tied_to, bool trainable = true);
  TensorId buffer(std::string_view name, Shape shape, DType dtype);
  TensorId input(Shape shape, DType dtype);

  // ---- KV cache slots (inference): see Graph::cache_in / cache_out
  TensorId kv_cache_in(Shape shape, DType dtype);  // the next slot's entry at pass start
  void kv_cache_out(TensorId t);                    // the entry the cache holds for the next slot at pass end

  // ---- layers and checkpoint regions
  void begin_layer(std::string_view name, bool checkpointed);
  void end_layer();

  // gradient_checkpointing_enable() installs enable_input_require_grads() only for models whose main input is
  // input_ids (or under peft): a builder of a model fed other inputs (whisper's input_features) calls this before
  // its first embedding, so no embedding output is made to require grad (engine/lora.h input_requires_grad).
  void no_input_require_grads() { lora_.input_embedding = kNoInputRequireGrads; }
  static constexpr TensorId kNoInputRequireGrads = -2;

  // ---- Python lifetimes
  void hold(TensorId t);   // keep referenced until drop(t) (a Python variable outliving its last use)
  void drop(TensorId t);   // release now (if held) — the variable is rebound or goes out of scope

  // ---- views (no allocation; backward passes the gradient through)
  TensorId view(TensorId x, Shape shape);
  // A view whose gradient arrives in another memory layout than the view's (a head-split, transposed q or k
  // whose rotary backward returns a contiguous [B, H, S, D] gradient): ViewBackward's reshape copies it.
  // `grad_bytes`: the copy's size when x is itself an alias (an in-place op's result, whose own bytes are 0);
  // -1: x's bytes.
  TensorId view_copying_grad(TensorId x, Shape shape, int64_t grad_bytes = -1);
  // param[i] of a stacked parameter: a view whose backward (SelectBackward) allocates a zero-filled gradient
  // of the whole parameter. `grad_arrives_as_view`: the selection is taken from a view of the parameter
  // (DBRX's `w1.view(E, F, H)[e]`), so ViewBackward hands that gradient on as a view (GradSpec::arrives_as_view).
  TensorId select_param(TensorId param, Shape slice_shape, bool grad_arrives_as_view = false);
  // An in-place op's result: aliases x's storage. `saves_result` for ops like relu_ that save their output.
  TensorId inplace(std::string_view name, TensorId x, bool saves_result, std::initializer_list<TensorId> other_reads = {});
  // An in-place op whose backward writes a fresh gradient from the other operands alone (masked_fill_ saves only
  // its mask: grad.masked_fill(mask, 0)). `bwd_pre_temp_bytes`: temporaries of that backward formula alive while
  // the gradient is computed (Op::bwd_pre_temp_bytes; clamp_: the two bool masks of
  // where((self >= min).logical_and_(self <= max), grad, 0), measured on OLMo clip_qkv).
  TensorId inplace_fresh_grad(std::string_view name, TensorId x, std::initializer_list<TensorId> other_reads,
                              std::initializer_list<int64_t> bwd_pre_temp_bytes = {});
  // x += other, in place, `other` broadcast to x's shape and / or of another dtype: AddBackward hands x's gradient
  // through and gives `other` the same gradient summed to its shape and cast to its dtype by validate_outputs (a
  // fresh buffer, passed through when shapes and dtypes agree). `slice_clone_bytes` >= 0: x is a slice view of a
  // tensor that requires grad (`t[1:] += other`), so autograd wraps the node in CopySlices, whose backward writes
  // a fresh gradient of x's base (x's bytes: the caller passes the base's id as x) and runs AddBackward on a clone
  // of the slice's part (these bytes), alive while the gradients are computed (torch/csrc/autograd/functions/
  // tensor.cpp CopySlices::apply).
  TensorId inplace_add(TensorId x, TensorId other, int64_t slice_clone_bytes = -1);

  // A parameter no gradient reaches (its module's output never reaches the loss: llava's vision layers past the
  // selected hidden state): it keeps requires_grad, so ops reading it record what its gradient would need and
  // autocast caches its casts, but it gets no .grad and no optimizer state (AdamW skips a parameter whose .grad
  // stays None).
  void unreached_param(TensorId param);
  // An nn.Linear (weight [out, in], `w` registered) whose forward never runs: unreached_param, and with LoRA the
  // adapters peft would still inject into it (lora_A / lora_B registered, unreached too: counted, never trained).
  void unreached_linear(TensorId w);
  // Ops [first_op, now) form a dead branch: their outputs never reach the loss, so backward never runs them.
  // Removes their backward and returns the activations they saved (views included, autocast's cached casts
  // excluded), which PyTorch keeps in the branch's graph until its outputs die: the caller holds them until then.
  std::vector<TensorId> cut_dead_branch(int32_t first_op);
  int32_t next_op() const { return static_cast<int32_t>(g_.ops.size()); }

  // x.expand(shape): a view (no allocation) whose backward (ExpandBackward: sum_to) reduces the incoming
  // gradient back to x's shape, a fresh x-sized buffer with the reduction's workspace (the state-space mixers'
  // segment_sum).
  TensorId expand(TensorId x, Shape shape);
  // x.sum(dims) into `out_shape` (a new tensor): SumBackward hands the gradient on expanded to x's shape, a view of
  // the incoming one (no allocation). The state-space mixers' broadcast-product contractions.
  TensorId sum_expand_grad(std::string_view name, TensorId x, Shape out_shape);

  // ---- dtype
  TensorId to(TensorId x, DType dtype);  // .to(dtype): no-op when equal, else a copy with ToCopyBackward
  TensorId autocast_low(TensorId x);     // cast as a lower-precision autocast op would (cached for params)
  TensorId autocast_fp32(TensorId x);    // cast as an fp32-policy autocast op would

  // ---- elementwise. `save_a`/`save_b`: whether backward needs that operand (derivatives.yaml).
  TensorId binary(std::string_view name, TensorId a, TensorId b, bool save_a, bool save_b);
  // a + b (or a - b): AddBackward hands the incoming gradient to both operands without a copy, except where
  // an operand was broadcast (sum_to) or has another dtype (the engine casts the gradient to it).
  TensorId add(TensorId a, TensorId b);
  // a - b: SubBackward0 hands the incoming gradient to a (as add does) and computes -grad for b, a fresh
  // full-size buffer, reduced (sum_to) when b was broadcast (CohereLayerNorm's x - mean).
  TensorId sub(TensorId a, TensorId b);
  // a * b: MulBackward saves an operand only when the other one needs a gradient.
  TensorId mul(TensorId a, TensorId b) { return binary("mul", a, b, info(b).requires_grad, info(a).requires_grad); }
  TensorId scalar_op(std::string_view name, TensorId x, bool save_x);  // x (op) python-scalar: a fresh gradient
  // x + python-scalar: AddBackward1 hands the incoming gradient on without a copy.
  TensorId add_scalar(TensorId x);
  // x.pow(python-scalar), fp32 policy under autocast; saves x. pow_backward evaluates
  // `grad * (e * x.pow(e - 1))`: two x-sized temporaries are alive while the gradient is computed.
  TensorId pow_scalar(TensorId x);
  // torch.cumsum(x, dim) with autograd: saves nothing; its backward is ATen's reversed_cumsum,
  // `grad.flip(dim).cumsum(dim).flip(dim)`, one C++ expression whose first two results are temporaries alive until
  // it ends (two x-sized pre-temporaries, freed last first after the gradient). A dim of size 1 or a tensor of one
  // element hands the gradient through: no temporaries (the replay still counts its generic gradient).
  TensorId cumsum(TensorId x, size_t dim);
  // Unary op producing a new tensor. `save_in`/`save_out` per derivatives.yaml; `fp32_policy` for autocast.
  TensorId unary(std::string_view name, TensorId x, bool save_in, bool save_out, bool fp32_policy = false);
  TensorId reduce_last(std::string_view name, TensorId x, bool save_in);  // mean/sum over last dim, keepdim
  TensorId cat_last(std::string_view name, std::initializer_list<TensorId> parts) { return cat(name, parts, -1); }
  // torch.cat promotes over its inputs' dtypes; `also_dtype` stands for an input with no elements that still
  // takes part (the empty tensor a DynamicCache layer starts from). `cast_part_grads`: CatBackward's narrow
  // views are in the output's dtype, so validate_outputs casts the gradient of each part of another dtype to
  // its own (a fresh buffer; the view goes): an fp32 rotated half cat with a bf16 pass-through slice under
  // autocast (whole-run glm4 / nemotron amp streams: a q_pass-sized bf16 buffer at the q cat's backward).
  TensorId cat(std::string_view name, std::initializer_list<TensorId> parts, int dim,
               std::optional<DType> also_dtype = std::nullopt, bool cast_part_grads = false);
  // .contiguous()/.reshape() of a non-contiguous view. Its backward hands the gradient back as a view;
  // `grad_copied`: the producer cannot use that view as it is (an eager attention's bmm output, reshaped
  // to 3-d by matmul's backward), so the gradient becomes a fresh contiguous copy and the incoming one is
  // released (whole-run streams, GPT-2 / BERT eager attention).
  // `grad_as_view`: a reshape that copies (matmul's fold of a non-contiguous 3-d input to 2-d): ViewBackward hands
  // the incoming gradient back reshaped, a view of it, so an InputBuffer holding it first cannot add into it in
  // place (GradSpec::arrives_as_view; recordings/families44, SegFormer fp32: the stage outputs' second gradient
  // summed into a fresh buffer).
  TensorId contiguous_copy(TensorId x, Shape shape, bool grad_copied = false, bool grad_as_view = false);
  // x.split(...) into `parts` equal views of shape `each` (later views / transposes folded in): one
  // SplitBackward node, whose backward concatenates the parts' gradients into one fresh x-sized buffer.
  std::vector<TensorId> split(TensorId x, int parts, const Shape& each);
  // x.split((n0, n1, ...)) into views of differing shapes (gpt_bigcode's multi-query c_attn: q, then one k and one
  // v head): one SplitWithSizesBackward node, whose backward writes the parts' gradients into one fresh x-sized
  // buffer, as split().
  std::vector<TensorId> split(TensorId x, const std::vector<Shape>& parts);

  // ---- nn
  TensorId embedding(TensorId ids, TensorId weight);
  TensorId linear(TensorId x, TensorId w, TensorId b = kNoTensor, bool addmm_order = false);
  // torch.matmul of 4-d operands. `copy_a` / `copy_b`: the operand is a view whose batch and head dims cannot
  // merge, so matmul's reshape copies it - after autocast's cast, which keeps the view's memory order - and
  // bmm saves the copy.
  TensorId matmul(TensorId a, TensorId b, Shape out_shape, bool copy_a = false, bool copy_b = false);
  // `contiguous_copy`: x is a non-contiguous view, so the kernel works on a transient contiguous copy (the node
  // still saves x itself). `grad_contiguous` (with contiguous_copy): the incoming gradient is contiguous, so the
  // backward copies x only (whisper's permuted encoder stream; ViT's backward copies both).
  TensorId layer_norm(TensorId x, TensorId w, TensorId b, bool contiguous_copy = false, bool grad_contiguous = false);
  TensorId dropout(TensorId x, double p);
  TensorId softmax_last(TensorId x);
  // Fused SDPA (flash / efficient / cuDNN): q [B,H,L,D], k/v [B,Hkv,L,D]. `bool_mask` (training with a
  // materialised mask): SDPA first turns it into an additive bias of q's dtype at [B, 1, L, L], which the
  // backward needs, so the node saves it (whole-run Mistral-shape stream: 16 MiB per layer for b2 s2048 bf16).
  // `float_mask`: `bool_mask` is already an additive float mask (mllama's aspect-ratio and cross-attention masks):
  // SDPA takes it as it is - under autocast its cast to the low dtype (a copy of an fp32 mask; autocast casts the
  // arguments last to first, the mask before v) - and the node saves that.
  TensorId sdpa(TensorId q, TensorId k, TensorId v, double dropout_p, bool causal, TensorId bool_mask = kNoTensor,
                bool float_mask = false);
  // Inference SDPA with a boolean attention mask (sliding-window layers): F.scaled_dot_product_attention turns
  // the mask into an additive one of q's dtype at the batch-expanded size [B, 1, Lq, Lk], alive for the call,
  // and runs the memory-efficient kernel, which keeps no logsumexp without autograd (whole-run stream).
  TensorId sdpa_masked_inference(TensorId q, TensorId k, TensorId v, TensorId mask);
  // SDPA's math backend, decomposed into the kernels it runs (O(L^2) saved scores).
  TensorId sdpa_math(TensorId q, TensorId k, TensorId v, double dropout_p, bool causal);
  // Loss: cross entropy over logits [N, V] (log_softmax + nll_loss). Returns the scalar loss.
  TensorId cross_entropy(TensorId logits2d, TensorId labels);
  // Vision
  // conv2d: square kernel (w is [out, in, k, k]), groups = dilation = 1; stride and pad pick cuDNN's workspace.
  TensorId conv2d(TensorId x, TensorId w, TensorId b, int64_t stride, int64_t pad, Shape out_shape);
  TensorId batch_norm(TensorId x, TensorId w, TensorId b);
  TensorId max_pool2d(TensorId x, Shape out_shape);
  TensorId adaptive_avg_pool(TensorId x, Shape out_shape);
  // A general nn.Conv2d (torchvision 0.26 families): square kernel taken from w [out, in / groups, k, k], with
  // stride, padding, dilation and groups; the output shape follows from them. Backend as ATen's
  // ConvParams::use_cudnn_depthwise picks it: a depthwise conv (groups == in channels, out a multiple) of
  // an fp32 or bf16 tensor runs the native CudaDepthwise2d kernels, which take no workspace; everything else
  // runs cuDNN with its workspaces from the measured table (engine/conv_workspace.h, keyed by groups too).
  // `channels_last`: x has channels-last strides (a permuted view, ConvNeXt's residual stream): cuDNN takes the
  // conv whatever the groups, and cudnn_convolution makes the weight channels-last for the call (a transient
  // weight-sized copy in forward and again in backward) unless it already is (in / groups == 1 or a 1x1 kernel).
  struct Conv2dArgs {
    int64_t stride = 1, pad = 0, dilation = 1, groups = 1;
    bool channels_last = false;
  };
  TensorId conv2d_ex(TensorId x, TensorId w, TensorId b, const Conv2dArgs& a);
  // Where the memory layout, not the logical shapes the elementwise ops read, decides how the most recent op's
  // broadcast `operand` has its gradient summed: `staged` - the sum keeps the fastest dimension (a [C, 1, 1] scale
  // times a channels-last [N, C, H, W]), which Reduce.cuh stages as a column sum of [numel(out) / numel(operand),
  // numel(operand)]; not `staged` - it reduces the fastest dimensions (a [C] scale times an [N, H, W, C] view of an
  // NCHW buffer) and stages nothing. No-op when the last op has no gradient for `operand`.
  void broadcast_grad_staging(TensorId operand, bool staged);
  // nn.Conv1d(in, out, k, stride, padding) on x [B, in, L] with w [out, in, k] (groups = dilation = 1): cuDNN runs it
  // as a 2-d convolution. Under autocast weight, input and bias are cast in that order. Workspaces measured on the
  // H200 (whisper's convs, fp32 and bf16, torch 2.11): forward and dgrad each take in + out + weight bytes + 147,
  // wgrad in + out + weight bytes + 16, each allocated after its output and freed at once. The node keeps the
  // input and the weight.
  TensorId conv1d(TensorId x, TensorId w, TensorId b, int64_t stride, int64_t pad);
  // F.adaptive_avg_pool2d(x, 1): ATen computes it as x.mean((-1, -2), keepdim=True), whose MeanBackward keeps
  // no tensor (only sizes) and writes a fresh x-sized gradient (grad.expand(...) / n).
  TensorId mean_hw(TensorId x);
  // nn.AvgPool2d / F.avg_pool2d: a new output; avg_pool2d_backward takes self, so the input is saved.
  TensorId avg_pool2d(TensorId x, Shape out_shape);
  // torch.cat of a Python list built at run time (DenseNet's growing feature list): as cat().
  TensorId cat_list(std::string_view name, const std::vector<TensorId>& parts, int dim);
  // F.interpolate(x, size=(out_h, out_w), mode="bilinear", align_corners=False) of x [N, C, H, W]
  // (upsample_bilinear2d): fp32 policy under autocast (torch >= 2.4 puts the upsample ops in AT_FORALL_FP32, which
  // the CUDA autocast key registers): a 16-bit x is cast to fp32 (a copy, dropped when the op returns; its
  // ToCopyBackward casts the gradient back) and the output is fp32; otherwise it runs in x's dtype. The output
  // [N, C, out_h, out_w] keeps x's memory format (channels-last in, channels-last out: the same bytes). Saves no
  // tensor (its backward needs only the sizes); the backward zero-fills a fresh x-sized gradient in the gradient's
  // dtype and scatters into it (atomics: no accumulation buffer). `grad_copy`: the incoming gradient is not
  // contiguous in the format the kernel takes (a cat's narrow() of a channels-last gradient: the NHWC kernel's
  // grad_output.contiguous(ChannelsLast)), a transient copy of it during the backward; same-size calls copy the
  // gradient straight through and make none.
  TensorId upsample_bilinear2d(TensorId x, int64_t out_h, int64_t out_w, bool grad_copy = false);

  // ---- generic op (for the native graph format and rare ops)
  struct GenericOp {
    std::string_view name;
    std::vector<TensorId> reads;
    std::vector<std::pair<Shape, DType>> outs;
    std::vector<int> saved_reads;       // indices into reads
    std::vector<int> saved_outs;        // indices into outs
    std::vector<int64_t> fwd_temp_bytes;
    std::vector<int64_t> bwd_temp_bytes;
    // Temporaries of a composite backward formula alive while the gradients are computed (Op::bwd_pre_temp_bytes:
    // allocated before the first gradient, freed last first after the last; apertus' expm1 `result + 1`).
    std::vector<int64_t> bwd_pre_temp_bytes = {};
    // Fresh gradient buffers the kernel allocates larger than their input ({read index, bytes}): the
    // memory-efficient attention backward pads the mask's gradient to a multiple of 16 keys and slices it.
    std::vector<std::pair<int, int64_t>> grad_bytes = {};
  };
  std::vector<TensorId> generic(const GenericOp& op);
  // generic() with one output and no temporaries: the rare single-kernel ops builders spell by name (integer
  // index arithmetic, sorts, gathers). `saved_reads`: indices into reads the backward keeps.
  TensorId generic_one(std::string_view name, std::vector<TensorId> reads, Shape shape, DType dtype,
                       std::vector<int> saved_reads = {}) {
    return generic({name, std::move(reads), {{std::move(shape), dtype}}, std::move(saved_reads), {}, {}, {}})[0];
  }

  // A tensor model construction allocates and frees after all parameters (Graph::build_temp_bytes).
  void construction_temp(int64_t bytes) { g_.build_temp_bytes.push_back(bytes); }
  // An allocation construction makes before the first parameter and keeps (Graph::build_persistent_bytes).
  void construction_persistent(int64_t bytes) { g_.build_persistent_bytes.push_back(bytes); }

  // ---- finishing
  void set_loss(TensorId loss);
  void mark_model_end();           // ops after this are the loss computation
  void exit_autocast();            // the autocast cache is cleared here (end of forward)
  Graph finish();

  // Shape helpers. The references point into the tensor table: any call that creates a tensor may
  // reallocate it, so copy a shape that must outlive the next builder call.
  const TensorInfo& info(TensorId t) const { return g_.tensors[static_cast<size_t>(t)]; }
  const Shape& shape(TensorId t) const { return info(t).shape; }
  DType dtype(TensorId t) const { return info(t).dtype; }
  int64_t numel(TensorId t) const;

 private:
  // linear() without the LoRA adapter (engine/lora.h): the base layer's op.
  TensorId linear_base(TensorId x, TensorId w, TensorId b, bool conv1d);
  // bitsandbytes' Linear4bit / Linear8bitLt for a quantised base (engine/quantized_weights.h; in engine/lora.cpp).
  TensorId quantized_linear(TensorId x, TensorId w, TensorId b, bool conv1d);
  // The op of an in-place call on x: `result` aliases x's storage (inplace, inplace_fresh_grad).
  Op& emit_inplace(std::string_view name, TensorId x, std::initializer_list<TensorId> other_reads, TensorId& result);
  TensorId new_tensor(Shape shape, DType dtype, TensorKind kind, TensorId storage_of = kNoTensor);
  // A parameter leaf as registered, without LoRA's wrapping (param and tied_param decide the names).
  TensorId new_param(std::string_view name, Shape shape, bool trainable, DType dtype);
  int32_t intern(std::string_view name);
  Op& emit(std::string_view name, std::vector<TensorId> reads);
  // The same for a braced list of reads (most ops): no vector is allocated for them.
  Op& emit(std::string_view name, std::initializer_list<TensorId> reads);
  Op& new_op(std::string_view name);  // emit()'s op, reads still empty
  // Fills op.grads for every read that requires grad: fresh buffers of the read's size, in read order.
  void add_grads(Op& op, const std::vector<TensorId>& differentiable);
  void finish_outs(Op& op);  // requires_grad of outs from reads
  void save_for_product(Op& op, TensorId a, TensorId b);
  // Backward of a gradient summed over the rows of [rows, cols] (bias grads, broadcast operands).
  // A broadcast operand's sum_to in validate_outputs, when it keeps the fastest dimension: its column-sum workspace.
  void set_reduce_workspace(GradSpec& g, TensorId operand, TensorId out);
  // An elementwise op's gradient for `operand` of output `out`: the incoming gradient passed through (add, sub's
  // first operand), or a fresh buffer at the output's size (mul, div, sub's second operand); either is reduced
  // (sum_to) and / or cast by validate_outputs when the operand was broadcast or has another dtype.
  GradSpec passed_through_grad(TensorId operand, TensorId out);
  GradSpec fresh_elementwise_grad(TensorId operand, TensorId out);
  int64_t bytes_of(const Shape& s, DType t) const;
  DType promote(DType a, DType b) const;

  RunConfig cfg_;
  InferencePass pass_;
  DType param_dtype_;
  DType low_dtype_;
  bool autocast_;
  bool grad_enabled_ = true;
  Graph g_;
  int32_t current_layer_ = -1;
  std::vector<int32_t> explicit_release_;   // per tensor: op index of drop(), -1 none, -2 held
  std::vector<TensorId> cache_entry_of_param_;  // per tensor (param): its cached cast, or kNoTensor
  // Interned names -> index into g_.names. Transparent hashing: intern() looks a name up as a string_view,
  // without building a std::string for every op.
  struct NameHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, int32_t, NameHash, std::equal_to<>> name_index_;
  // In front of name_index_: the last name interned from each of a few character addresses (intern()).
  struct RecentName {
    const char* chars = nullptr;
    int32_t id = -1;
  };
  static constexpr size_t kRecentNames = 64;
  RecentName recent_names_[kRecentNames];
  lora::Tracker lora_;  // peft LoRA / bitsandbytes: targets matched, embeddings seen (engine/lora.h)
};

}  // namespace memplan
