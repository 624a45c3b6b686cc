// LoRA adapters (peft 0.21): target matching, the adapter's forward ops and the checks peft makes.
// Stages: param() asks param_role() whether a parameter trains; linear() asks targets() and then adapt() emits
// the adapter path; finish() calls check_matched(). The sources each step mirrors are cited in lora.h.
#include "engine/lora.h"

#include <algorithm>

#include "engine/checked.h"
#include "engine/errors.h"
#include "engine/graph_builder.h"
#include "engine/quantized_weights.h"

namespace memplan::lora {

std::string_view module_of(std::string_view name) {
  const size_t dot = name.rfind('.');
  return dot == std::string_view::npos ? std::string_view{} : name.substr(0, dot);
}

bool is_adapter_param(std::string_view name) {
  return name.find(".lora_A.") != std::string_view::npos || name.find(".lora_B.") != std::string_view::npos;
}

bool key_matches(std::string_view module, std::string_view target) {
  if (module == target) return true;
  return module.size() > target.size() && module.substr(module.size() - target.size()) == target &&
         module[module.size() - target.size() - 1] == '.';
}

namespace {
bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}
std::string_view last_component(std::string_view module) {
  const size_t dot = module.rfind('.');
  return dot == std::string_view::npos ? module : module.substr(dot + 1);
}
}  // namespace

bool key_ends_with(std::string_view module, std::string_view entry) { return ends_with(module, entry); }

bool saved_module(const LoraConfig& c, std::string_view module) {
  for (const std::string& m : c.modules_to_save)
    if (ends_with(module, m)) return true;
  return false;
}

std::vector<std::string_view> task_modules_to_save(Task task) {
  if (task == Task::seq_cls || task == Task::token_cls) return {"classifier", "score"};
  return {};
}

namespace {
// transformers 5.17's MoE routers (MixtralTopKRouter, Qwen3MoeTopKRouter, DeepseekV3TopkRouter, GptOssTopKRouter)
// are nn.Modules holding a weight they pass to F.linear, not nn.Linear: no LoRA target, no bitsandbytes layer.
// The builders register them as <moe block>.gate / .router next to fused experts (dense MLPs use gate_proj).
bool is_router(std::string_view module) {
  const std::string_view leaf = last_component(module);
  return leaf == "gate" || leaf == "router";
}

bool is_head(const Tracker& t, std::string_view module, TensorId weight) {
  const std::string_view leaf = last_component(module);
  // get_output_embeddings() of the causal LMs, gpt_neox and DistilBertForMaskedLM (an untied vocab_projector).
  if (leaf == "lm_head" || leaf == "embed_out" || leaf == "vocab_projector") return true;
  return std::find(t.embedding_weights.begin(), t.embedding_weights.end(), weight) != t.embedding_weights.end();
}
}  // namespace

bool targets(const LoraConfig& c, Tracker& t, std::string_view weight_name, TensorId weight) {
  if (c.merged) return false;  // merge_and_unload(): the adapters are folded into the base weights
  if (is_adapter_param(weight_name) || !ends_with(weight_name, ".weight")) return false;
  if (weight_name.find(".modules_to_save.") != std::string_view::npos ||
      weight_name.find(".original_module.") != std::string_view::npos)
    return false;
  const std::string_view module = module_of(weight_name);
  if (saved_module(c, module)) return false;  // a ModulesToSaveWrapper is not itself adapted
  // get_output_embeddings() is excluded: the head by its transformers name, or a tied head (the input
  // embedding's weight read by a linear).
  if (is_router(module)) {
    // all-linear on a transformers-5 MoE model: peft 0.21 converts the config to also target the fused expert
    // parameters (tuners_utils.py inject_adapter -> convert_peft_config_for_transformers; lora.ParamWrapper, which
    // refuses lora_dropout != 0, observed on the H200). Adapters on 3-d expert parameters are not modelled.
    if (c.all_linear)
      throw InputError("lora.target_modules", "all-linear",
                       "on a mixture-of-experts model peft 0.21 also wraps the fused expert parameters (lora.ParamWrapper), "
                       "not modelled; list the attention / dense projections instead (e.g. q_proj,k_proj,v_proj,o_proj)");
    for (const std::string& target : c.target_modules)
      if (key_matches(module, target))
        throw InputError("lora.target_modules", target,
                         "matches the MoE router " + std::string(module) + ", a TopKRouter module peft cannot adapt");
    return false;
  }
  if (c.all_linear) return !is_head(t, module, weight);
  bool hit = false;
  t.target_hit.resize(c.target_modules.size(), 0);
  for (size_t i = 0; i < c.target_modules.size(); ++i)
    if (key_matches(module, c.target_modules[i])) {
      t.target_hit[i] = 1;
      hit = true;
    }
  return hit;
}

bool quantizable(Tracker& t, std::string_view weight_name, TensorId weight) {
  if (is_adapter_param(weight_name) || !ends_with(weight_name, ".weight")) return false;
  if (weight_name.find(".modules_to_save.") != std::string_view::npos) return false;
  if (is_router(module_of(weight_name))) return false;  // not an nn.Linear: bitsandbytes leaves it alone
  return !is_head(t, module_of(weight_name), weight);
}

bool input_requires_grad(Tracker& t, const RunConfig& cfg, TensorId weight) {
  if (cfg.mode != Mode::training || (!cfg.grad_checkpointing && cfg.checkpoint_layers.empty())) return false;
  if (t.input_embedding == kNoTensor) t.input_embedding = weight;
  return t.input_embedding == weight;
}

std::pair<TensorId, TensorId> adapter_weights(GraphBuilder& b, Tracker& t, std::string_view module, int64_t in,
                                              int64_t out) {
  auto found = t.adapters.find(module);
  if (found == t.adapters.end()) {
    const int64_t r = b.config().lora.r;
    const std::string m(module);
    const TensorId a = b.param(m + ".lora_A.default.weight", {r, in}, true, DType::f32);
    const TensorId w = b.param(m + ".lora_B.default.weight", {out, r}, true, DType::f32);
    found = t.adapters.emplace(m, std::make_pair(a, w)).first;
  }
  return found->second;
}

TensorId adapt(GraphBuilder& b, Tracker& t, TensorId x, TensorId base_out, std::string_view module, int64_t in,
               int64_t out) {
  const LoraConfig& c = b.config().lora;
  const auto [wa, wb] = adapter_weights(b, t, module, in, out);
  // _cast_input_dtype: x.to(fp32), a copy only for a 16-bit x; the rebound local lives until forward returns.
  const TensorId xa = b.to(x, DType::f32);
  const bool copied = xa != x;
  if (copied) b.hold(xa);
  const TensorId d = b.dropout(xa, c.dropout);  // nn.Identity when lora_dropout == 0
  const TensorId a = b.linear(d, wa);
  const TensorId o = b.linear(a, wb);
  const TensorId scaled = b.scalar_op("mul", o, false);  // * scaling (a Python float: a fresh gradient)
  const TensorId sum = b.add(base_out, scaled);          // bf16 result + fp32 product promotes to fp32
  const TensorId res = b.to(sum, b.dtype(base_out));     // result.to(torch_result_dtype)
  if (copied) b.drop(xa);
  return res;
}

void check_matched(const LoraConfig& c, const Tracker& t) {
  if (!c.enabled() || c.merged) return;
  if (c.all_linear && t.adapters.empty())
    throw InputError("lora.target_modules", "all-linear", "the model has no linear layer LoRA can target");
  for (size_t i = 0; i < c.target_modules.size(); ++i)
    if (i >= t.target_hit.size() || !t.target_hit[i])
      throw InputError("lora.target_modules", c.target_modules[i],
                       "matches no linear layer of this model (peft: target module not found)");
  for (size_t i = 0; i < c.modules_to_save.size(); ++i)
    if (i >= t.save_hit.size() || !t.save_hit[i])
      throw InputError("lora.modules_to_save", c.modules_to_save[i], "matches no module of this model");
}

}  // namespace memplan::lora

namespace memplan {

// bitsandbytes' Linear4bit / Linear8bitLt in place of a frozen base linear (engine/quantized_weights.h has the
// sources). The weight's own storage becomes the packed tensor; the quant state's tensors are buffers.
TensorId GraphBuilder::quantized_linear(TensorId x, TensorId w, TensorId bias, bool conv1d) {
  const QuantConfig& q = cfg_.quant;
  const int64_t out = conv1d ? shape(w)[1] : shape(w)[0];
  const int64_t in = conv1d ? shape(w)[0] : shape(w)[1];
  const QuantizedWeight qw = quantized_weight(q, out, in);
  if (std::find(lora_.quantized.begin(), lora_.quantized.end(), w) == lora_.quantized.end()) {
    lora_.quantized.push_back(w);
    auto& wi = g_.tensors[static_cast<size_t>(w)];
    wi.bytes = qw.packed_bytes;
    wi.dtype = DType::u8;  // Params4bit / Int8Params: uint8 / int8 storage (numel as torch counts it: n / 2, n)
    wi.trainable = false;
    wi.requires_grad = false;
    const std::string base = g_.name_of(wi.name);
    for (auto [suffix, bytes] : {std::pair<const char*, int64_t>{".absmax", qw.absmax_bytes}, {".code", qw.code_bytes},
                                 {".offset", qw.offset_bytes}, {".state2.absmax", qw.absmax2_bytes},
                                 {".state2.code", qw.code2_bytes}})
      if (bytes > 0) buffer(base + suffix, {bytes}, DType::u8);
  }
  const DType compute = q.base == QuantBase::int8 ? dtype(x) : (q.compute_bf16 ? DType::bf16 : DType::f16);
  const DType in_dtype = dtype(x);
  const TensorId xc = to(x, compute);  // Linear4bit.forward: x.to(self.compute_dtype)
  Shape ys = shape(xc);
  ys.back() = out;
  int64_t rows = 1;
  for (size_t i = 0; i + 1 < shape(xc).size(); ++i) rows = checked_mul(rows, shape(xc)[i]);
  const int64_t dq_bytes = checked_mul(checked_mul(out, in), dtype_bytes(compute));
  GenericOp op;
  std::vector<TensorId> reads{xc, w};
  if (bias != kNoTensor) reads.push_back(bias);
  op.reads = reads;
  op.outs = {{ys, compute}};
  if (q.base == QuantBase::int8) {
    op.name = "matmul_8bit";
    // MatMul8bitLt: int8 input rows + fp32 row scales, an int32 product, dequantised into the output.
    op.fwd_temp_bytes = {checked_mul(rows, in), checked_mul(rows, 4), checked_mul(checked_mul(rows, out), 4)};
    op.bwd_temp_bytes = {dq_bytes};  // grad_A through the dequantised weight
  } else {
    op.name = "matmul_4bit";
    // gemm_4bit's dequant fallback: nested absmax -> fp32 (two [blocks] tensors), B_dq [out, in], F.linear.
    if (q.double_quant) op.fwd_temp_bytes = {qw.blocks * 4, qw.blocks * 4};
    op.fwd_temp_bytes.push_back(dq_bytes);
    op.bwd_temp_bytes = op.fwd_temp_bytes;  // F.dequantize_4bit(B, ctx.state) again in backward
  }
  const TensorId y = generic(op)[0];
  return to(y, in_dtype);  // .to(inp_dtype)
}

}  // namespace memplan
