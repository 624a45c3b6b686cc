#include "engine/weight_format.h"

#include "engine/checked.h"
#include "engine/errors.h"

namespace memplan {

bool parse_weight_format(std::string_view s, WeightFormat& out) {
  if (s == "fp32") out = WeightFormat::fp32;
  else if (s == "bf16") out = WeightFormat::bf16;
  else if (s == "fp16") out = WeightFormat::fp16;
  else if (s == "fp8") out = WeightFormat::fp8;
  else if (s == "int8") out = WeightFormat::int8;
  else if (s == "int4" || s == "gptq" || s == "awq") out = WeightFormat::int4;
  else return false;
  return true;
}

std::string_view weight_format_name(WeightFormat f) {
  switch (f) {
    case WeightFormat::fp32: return "fp32";
    case WeightFormat::bf16: return "bf16";
    case WeightFormat::fp16: return "fp16";
    case WeightFormat::fp8: return "fp8";
    case WeightFormat::int8: return "int8";
    case WeightFormat::int4: return "int4";
  }
  return "?";
}

namespace {
enum class Kind { embedding, lm_head, matrix, other };

Kind classify(const std::string& name, const TensorInfo& t) {
  if (name.find("embed") != std::string::npos || name == "wte.weight" || name == "wpe.weight") return Kind::embedding;
  if (name.find("lm_head") != std::string::npos) return Kind::lm_head;
  if (name.find(".gate.weight") != std::string::npos) return Kind::other;  // MoE router
  if (t.shape.size() >= 2) return Kind::matrix;
  return Kind::other;  // norms, biases
}
}  // namespace

WeightBytes weight_bytes(const Graph& g, const WeightFormatOptions& opt) {
  if (opt.format == WeightFormat::int4 && opt.group_size <= 0)
    throw InputError("group_size", std::to_string(opt.group_size), "must be a positive integer");
  const bool quantized = opt.format == WeightFormat::fp8 || opt.format == WeightFormat::int8 || opt.format == WeightFormat::int4;
  const DType plain = opt.format == WeightFormat::fp32 ? DType::f32
                      : opt.format == WeightFormat::fp16 ? DType::f16
                      : opt.format == WeightFormat::bf16 ? DType::bf16
                                                         : opt.base_dtype;
  WeightBytes w;
  for (const auto& t : g.tensors) {
    if (t.kind != TensorKind::param && t.kind != TensorKind::buffer) continue;
    int64_t n = 1;
    for (int64_t d : t.shape) n = checked_mul(n, d, "param elements");
    const Kind k = t.name >= 0 ? classify(g.name_of(t.name), t) : Kind::other;
    const bool q = quantized && (k == Kind::matrix || (k == Kind::embedding && opt.quantize_embeddings) ||
                                 (k == Kind::lm_head && opt.quantize_lm_head));
    if (!q || t.shape.size() < 2) {
      w.unquantized_bytes = checked_add(w.unquantized_bytes, checked_mul(n, dtype_bytes(plain)));
      w.unquantized_params += n;
      continue;
    }
    // [.., out, in] (stacked experts: a leading expert dimension): rows = every dim but the last.
    const int64_t in = t.shape.back();
    const int64_t rows = n / in;
    w.quantized_params += n;
    switch (opt.format) {
      case WeightFormat::fp8:
        w.quantized_bytes += n;
        w.scale_bytes += checked_mul(rows, 4);
        break;
      case WeightFormat::int8:
        w.quantized_bytes += n;
        w.scale_bytes += checked_mul(rows, 2);
        break;
      default: {  // int4
        w.quantized_bytes += (n + 1) / 2;
        const int64_t groups = checked_mul(rows, (in + opt.group_size - 1) / opt.group_size);
        w.scale_bytes += checked_mul(groups, 2) + (groups + 1) / 2;  // fp16 scale + 4-bit zero
        if (opt.gptq_g_idx) {  // one int32 per input channel of each matrix (stacked experts: per expert)
          const int64_t matrices = rows / t.shape[t.shape.size() - 2];
          w.scale_bytes += checked_mul(matrices, checked_mul(in, 4));
        }
        break;
      }
    }
  }
  return w;
}

}  // namespace memplan
