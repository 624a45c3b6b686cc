// `memplan serve --model NAME|PATH --gpu NAME [...]`: vLLM-style serving capacity of one tensor-parallel
// replica (engine/serve.h): the budget, KV blocks, concurrent sequences at a context, context at a concurrency.
#include <cstdio>
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/report.h"
#include "cli/run_flags.h"
#include "engine/checked.h"
#include "engine/errors.h"
#include "engine/kv_cache.h"
#include "engine/verdict.h"
#include "engine/limits.h"
#include "engine/serve.h"
#include "models/gpu_specs.h"
#include "models/load_model.h"
#include "models/param_count.h"

namespace memplan::cli {

namespace {

struct ServeFlags {
  std::string model = "llama-3.1-8b";
  std::string gpu;
  double gpu_memory_gib = 0;
  int64_t gpus = 1, tensor_parallel = 1, block_size = 16, max_model_len = 0, max_num_batched_tokens = 0;
  int64_t context = 0, concurrency = 1, group_size = 128;
  double utilization = 0.9;
  std::string kv_dtype = "auto", weight_format = "bf16";
  bool json = false;
};

std::string gib(int64_t bytes) {
  char b[32];
  std::snprintf(b, sizeof b, "%.2f", static_cast<double>(bytes) / static_cast<double>(kGiB));
  return b;
}

}  // namespace

void register_serve(CLI::App& app, Context& ctx) {
  auto* cmd = app.add_subcommand("serve", "serving capacity: KV blocks, concurrent sequences, max context");
  auto f = std::make_shared<ServeFlags>();
  cmd->add_option("--model", f->model, kModelHelp);
  cmd->add_option("--gpu", f->gpu, "GPU from the spec table (h200, a100-80gb, ...)");
  cmd->add_option("--gpu-memory-gib", f->gpu_memory_gib, "GPU memory in GiB (overrides --gpu's)");
  cmd->add_option("--gpus", f->gpus, "GPUs in total (replicas = gpus / tensor-parallel)");
  cmd->add_option("--tensor-parallel", f->tensor_parallel, "tensor-parallel degree");
  cmd->add_option("--gpu-memory-utilization", f->utilization, "fraction of each GPU vLLM may use (0.9)");
  cmd->add_option("--block-size", f->block_size, "tokens per KV block (16)");
  cmd->add_option("--max-model-len", f->max_model_len, "longest sequence (default: max_position_embeddings)");
  cmd->add_option("--max-num-batched-tokens", f->max_num_batched_tokens, "profile prefill tokens (default min(len, 8192))");
  cmd->add_option("--context", f->context, "context length for the concurrency answer (default: max-model-len)");
  cmd->add_option("--concurrency", f->concurrency, "sequences for the max-context answer (1)");
  cmd->add_option("--kv-dtype", f->kv_dtype, "auto | fp16 | bf16 | fp8 | int8");
  cmd->add_option("--weight-format", f->weight_format, "fp32 | bf16 | fp16 | fp8 | int8 | int4 (GPTQ/AWQ)");
  cmd->add_option("--group-size", f->group_size, "int4 quantization group size (128)");
  cmd->add_flag("--json", f->json, "machine-readable output: exactly one JSON document");
  cmd->callback([f, &ctx] {
    std::ostream& os = ctx.out;
    const ModelSpec m = load_model_for(f->model, ctx.in);
    ServeOptions o;
    int64_t context_bytes = 0;
    std::string gpu_name;
    if (!f->gpu.empty()) {
      const GpuSpec& g = find_gpu(f->gpu, "--gpu");
      o.capacity_bytes = g.memory_bytes;
      context_bytes = g.cuda_context_bytes;
      gpu_name = g.id;
    }
    if (!(f->gpu_memory_gib >= 0 && f->gpu_memory_gib <= kMaxGpuMemoryGib))  // NaN fails both
      throw InputError("--gpu-memory-gib", std::to_string(f->gpu_memory_gib), "must be a number of GiB in [0, 1048576]");
    if (f->gpu_memory_gib > 0) {
      o.capacity_bytes = static_cast<int64_t>(f->gpu_memory_gib * static_cast<double>(kGiB));
      if (gpu_name.empty()) gpu_name = gib_text(f->gpu_memory_gib) + " GiB";
    }
    // CUDA context with GEMM/attention kernels loaded (MECHANICS §2), at least the spec's init figure.
    o.non_torch_bytes = std::max<int64_t>(int64_t{830} << 20, context_bytes);
    o.gpus = f->gpus;
    o.tensor_parallel = f->tensor_parallel;
    o.gpu_memory_utilization = f->utilization;
    o.block_size = f->block_size;
    o.max_model_len = f->max_model_len;
    o.max_num_batched_tokens = f->max_num_batched_tokens;
    o.context_tokens = f->context;
    o.concurrency = f->concurrency;
    if (!parse_kv_dtype(f->kv_dtype, o.kv_dtype))
      throw InputError("--kv-dtype", f->kv_dtype, "must be auto, fp16, bf16, fp8 or int8");
    if (!parse_weight_format(f->weight_format, o.weights.format))
      throw InputError("--weight-format", f->weight_format, "must be fp32, bf16, fp16, fp8, int8 or int4");
    o.weights.group_size = f->group_size;
    if (m.kind == ModelSpec::Kind::transformer) o.params_without_builder = param_count(m);
    const ServeResult r = plan_serving(m, o);
    // The verdict (engine/verdict.h): the budget is what vLLM may use (capacity x utilization); the run needs the
    // weights, the profiled activation peak, the non-PyTorch memory and one max-model-len sequence's KV blocks
    // (as plan_serving counts it: the activation dtype as engine/serve.cpp derives it, sliding windows as a ring).
    // The band comes from the measured Hugging Face generate() cases (vLLM itself was not measured).
    const DType act = o.weights.format == WeightFormat::fp32   ? DType::f32
                      : o.weights.format == WeightFormat::fp16 ? DType::f16
                                                               : o.weights.base_dtype;
    const int64_t seq_kv = kv_model(m.transformer, act, o.kv_dtype, o.tensor_parallel)
                               .sequence_bytes_paged(r.max_model_len, o.block_size, SlidingKeep::ring);
    const int64_t budget = static_cast<int64_t>(f->utilization * static_cast<double>(o.capacity_bytes));
    VerdictInput vin;
    vin.budget_bytes = budget;
    vin.device_total_bytes = checked_add(budget - r.kv_budget_bytes, seq_kv, "serve device bytes");
    vin.reserved_bytes = checked_add(r.weights.total() + r.activation_peak_bytes, seq_kv, "serve bytes");
    vin.allocator_fits = r.fits;
    RunConfig vc;
    vc.mode = Mode::inference;
    vc.generate_tokens = 1;
    vc.precision = act == DType::f32 ? Precision::fp32 : act == DType::f16 ? Precision::fp16 : Precision::bf16;
    const Verdict v = judge(vin, band_for(builtin_error_bands(), verdict_features(m, vc, false)));
    if (f->json) {
      nlohmann::json j = {{"model", m.name},
                          {"gpu", gpu_name},
                          {"capacity_mib", mib1(o.capacity_bytes)},
                          {"tensor_parallel", o.tensor_parallel},
                          {"replicas", r.replicas},
                          {"weights_mib", mib1(r.weights.total())},
                          {"weight_scales_mib", mib1(r.weights.scale_bytes)},
                          {"activation_peak_mib", mib1(r.activation_peak_bytes)},
                          {"activation_analytic", r.activation_analytic},
                          {"non_torch_mib", mib1(r.non_torch_bytes)},
                          {"kv_budget_mib", mib1(r.kv_budget_bytes)},
                          {"kv_bytes_per_token", r.kv_bytes_per_token},
                          {"block_size", o.block_size},
                          {"num_blocks", r.num_blocks},
                          {"max_model_len", r.max_model_len},
                          {"max_num_batched_tokens", r.max_num_batched_tokens},
                          {"context", r.context_tokens},
                          {"max_sequences_at_context", r.max_sequences_at_context},
                          {"max_sequences_all_replicas", r.max_sequences_at_context * r.replicas},
                          {"concurrency", o.concurrency},
                          {"max_context_at_concurrency", r.max_context_at_concurrency},
                          {"fits", r.fits}};
      add_verdict_json(j, v);
      os << j.dump(2) << "\n";
      return;
    }
    os << m.name << " on " << gpu_name << " x" << o.gpus << " (tensor parallel " << o.tensor_parallel << ", "
              << r.replicas << " replica(s)), weights " << weight_format_name(o.weights.format) << ", KV "
              << kv_dtype_name(o.kv_dtype) << "\n";
    os << "  per GPU: " << gib(o.capacity_bytes) << " GiB x " << o.gpu_memory_utilization << "\n"
              << "    weights            " << gib(r.weights.total()) << " GiB (scales/zeros " << gib(r.weights.scale_bytes) << ")\n"
              << "    activation peak    " << gib(r.activation_peak_bytes) << " GiB (prefill of "
              << r.max_num_batched_tokens << " tokens" << (r.activation_analytic ? ", analytic bound" : "") << ")\n"
              << "    non-PyTorch        " << gib(r.non_torch_bytes) << " GiB\n"
              << "    KV cache budget    " << gib(r.kv_budget_bytes) << " GiB\n";
    os << "  KV: " << r.kv_bytes_per_token << " B/token per GPU, " << r.num_blocks << " blocks of " << o.block_size
              << " tokens (" << r.num_blocks * o.block_size << " tokens)\n";
    os << "  max concurrent sequences at " << r.context_tokens << " tokens: " << r.max_sequences_at_context
              << " per replica, " << r.max_sequences_at_context * r.replicas << " in total\n";
    os << "  max context at " << o.concurrency << " concurrent sequence(s): " << r.max_context_at_concurrency
              << " tokens (max-model-len " << r.max_model_len << ")\n";
    os << verdict_title(v.kind) << ": "
              << (r.fits ? "one max-model-len sequence fits" : "no room for one max-model-len sequence") << "; "
              << margin_text(v) << "\n";
  });
}

}  // namespace memplan::cli
