#include "cli/report.h"
#include "cli/report_lora.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "engine/checked.h"
#include "engine/inference_replay.h"

namespace memplan::cli {

std::string mib(int64_t bytes) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f", static_cast<double>(bytes) / static_cast<double>(kMiB));
  return buf;
}

std::string gib_text(double gib) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", gib);
  return buf;
}

double round1(double v) { return std::round(v * 10.0) / 10.0; }
double mib1(int64_t bytes) { return round1(static_cast<double>(bytes) / static_cast<double>(kMiB)); }

namespace {
std::string where_text(const Graph* g, const Location& w) {
  (void)g;
  std::ostringstream o;
  o << "step " << w.step;
  if (w.micro_batch > 0) o << " micro-batch " << w.micro_batch + 1;
  o << ", " << phase_name(w.phase);
  if (w.recompute) o << " (checkpoint recompute)";
  return o.str();
}
}  // namespace

// Release-and-retry under the capacity can keep a run below its natural reserved peak.
int64_t device_total(const Estimate& e, const DeviceBudget& d) {
  return checked_add(e.run_peak_reserved_bytes(), d.non_pytorch_bytes, "device bytes");
}

Verdict verdict_on(const ModelSpec& m, const RunConfig& c, const Estimate& e, const DeviceBudget& d) {
  VerdictInput in;
  in.budget_bytes = d.capacity_bytes;
  in.device_total_bytes = device_total(e, d);
  in.reserved_bytes = e.allocator.peak_reserved_bytes;
  in.allocator_fits = e.fits();
  return judge(in, band_for(builtin_error_bands(), verdict_features(m, c, e.expandable_segments)));
}

Verdict verdict_for(const ModelSpec& m, const RunConfig& c, bool expandable_segments, int64_t budget_bytes,
                    int64_t device_total_bytes, int64_t reserved_bytes, bool fits) {
  return judge(VerdictInput{budget_bytes, device_total_bytes, reserved_bytes, fits},
               band_for(builtin_error_bands(), verdict_features(m, c, expandable_segments)));
}

std::string margin_text(const Verdict& v) {
  std::ostringstream o;
  o << "margin " << (v.margin_bytes >= 0 ? "+" : "-") << mib(v.margin_bytes >= 0 ? v.margin_bytes : -v.margin_bytes)
    << " MiB, band +" << mib(v.band_under_bytes) << " / -" << mib(v.band_over_bytes) << " MiB (";
  if (v.cls.cases > 0) {
    // the band is the class's largest errors; most of its cases erred far less (ErrorBand::under90_fraction)
    char b[96];
    std::snprintf(b, sizeof b, "; 9 in 10 within +%.2f / -%.2f %%", 100 * v.cls.under90_fraction,
                  100 * v.cls.over90_fraction);
    // A "new/" class: the model's family has no measured case, so the band is how far the first predictions of
    // other families erred before they were measured (engine/verdict.h VerdictFeatures::new_family).
    const bool new_family = v.cls.key.rfind("new", 0) == 0;
    o << v.cls.cases << (new_family ? " first predictions of families then unmeasured (this family has no measured case): "
                                    : " comparable measured cases: ")
      << v.cls.key << b;
  } else {
    o << "no comparable measured cases: the floors";
  }
  o << ")";
  return o.str();
}

void add_verdict_json(nlohmann::json& j, const Verdict& v) {
  j["margin_bytes"] = v.margin_bytes;
  j["band_bytes"] = v.band_bytes;
  j["band_under_bytes"] = v.band_under_bytes;
  j["band_over_bytes"] = v.band_over_bytes;
  j["verdict"] = std::string(verdict_name(v.kind));
  j["band_class"] = {{"key", v.cls.key},
                     {"cases", v.cls.cases},
                     {"under_ppm", std::llround(v.cls.under_fraction * 1e6)},
                     {"over_ppm", std::llround(v.cls.over_fraction * 1e6)},
                     {"worst_under_case", v.cls.worst_under_case},
                     {"worst_over_case", v.cls.worst_over_case},
                     {"under90_ppm", std::llround(v.cls.under90_fraction * 1e6)},
                     {"over90_ppm", std::llround(v.cls.over90_fraction * 1e6)}};
}

bool fits_on(const Estimate& e, const DeviceBudget& d) { return e.fits() && d.capacity_bytes >= device_total(e, d); }

std::string verdict_line(const ModelSpec& m, const RunConfig& c, const Estimate& e, const DeviceBudget& d) {
  std::ostringstream o;
  if (d.capacity_bytes <= 0) {
    o << "peak " << mib(e.replay.peak.bytes) << " MiB allocated, " << mib(e.allocator.peak_reserved_bytes)
      << " MiB reserved, " << mib(device_total(e, d)) << " MiB on the device (no GPU given)";
    return o.str();
  }
  const Verdict v = verdict_on(m, c, e, d);
  o << verdict_title(v.kind) << " on " << d.gpu_name << ": needs " << mib(device_total(e, d)) << " MiB of "
    << mib(d.capacity_bytes) << " MiB; " << margin_text(v);
  if (v.kind == VerdictKind::borderline) {
    // Which way the truth may lie, from the class's worst case on the margin's side.
    const double f = 100.0 * std::max(v.fits ? v.cls.under_fraction : v.cls.over_fraction, kMinBandFraction);
    const std::string& worst = v.fits ? v.cls.worst_under_case : v.cls.worst_over_case;
    char b[64];
    std::snprintf(b, sizeof b, "%.1f %%", f);
    o << "; inside the band: the replay says it " << (v.fits ? "fits" : "does not fit") << ", but comparable runs "
      << (v.fits ? "needed up to " : "needed up to ") << b << (v.fits ? " more" : " less") << " than predicted"
      << (worst.empty() ? std::string() : " (" + worst + ")");
  }
  return o.str();
}

std::vector<std::string> estimate_warnings(const ModelSpec& m, const RunConfig& c) {
  std::vector<std::string> w;
  if (m.kind == ModelSpec::Kind::transformer && c.mode == Mode::inference && c.generate_tokens > 0 &&
      !m.transformer.config_use_cache && !no_cache_generate_modelled(m))
    w.push_back("config.use_cache is false: transformers' generate() then runs without a KV cache, recomputing the "
                "whole sequence at every token (measured: MPT-7B widths reserved 2.3x the cached estimate), unless "
                "it is called with use_cache=True; this model type's generate() is replayed without a cache only "
                "for gpt2, llama, mistral, qwen2, qwen3, gpt_neox, phi3, opt and mpt, so this estimate replays it "
                "with the cache");
  return w;
}

nlohmann::json estimate_json(const ModelSpec& m, const RunConfig& c, const Estimate& e, const DeviceBudget& d) {
  nlohmann::json j;
  j["model"] = m.name;
  j["warnings"] = estimate_warnings(m, c);
  j["config"] = {{"mode", c.mode == Mode::training ? "training" : "inference"},
                 {"batch_size", c.batch_size},
                 {"seq_len", c.seq_len},
                 {"image_size", c.image_size},
                 {"precision", precision_name(c.precision)},
                 {"optimizer", optimizer_name(c.optimizer)},
                 {"optimizer_impl", optimizer_impl_name(c.optimizer_impl)},
                 {"attn", attn_name(c.attn)},
                 {"task", task_name(c.task)},
                 {"num_labels", c.num_labels},
                 {"grad_checkpointing", c.grad_checkpointing},
                 {"checkpoint_layers", c.checkpoint_layers},
                 {"frozen_layers", c.frozen_layers},
                 {"grad_accum_steps", c.grad_accum_steps}};
  j["params"] = e.params;
  j["trainable_params"] = e.trainable_params;
  j["weights_bytes"] = e.weights_bytes;
  j["weights_mib"] = mib1(e.weights_bytes);
  const auto& p = e.replay.peak;
  j["peak_allocated_bytes"] = p.bytes;
  j["peak_allocated_mib"] = mib1(p.bytes);
  j["torch_peak_allocated_bytes"] = e.torch_peak_allocated_bytes();  // max_memory_allocated: block sizes
  j["run_peak_reserved_bytes"] = e.run_peak_reserved_bytes();         // under the capacity when one is given
  j["peak_reserved_bytes"] = e.allocator.peak_reserved_bytes;
  j["peak_reserved_mib"] = mib1(e.allocator.peak_reserved_bytes);
  j["peak_at"] = {{"step", p.where.step}, {"micro_batch", p.where.micro_batch}, {"phase", phase_name(p.where.phase)},
                  {"op", p.where.op}, {"recompute", p.where.recompute}};
  nlohmann::json rows = nlohmann::json::object();
  for (size_t r = 0; r < kRowCount; ++r) rows[std::string(row_name(static_cast<Row>(r)))] = p.ledger.bytes[r];
  rows["allocator_slack"] = 0;  // reserved - allocated is reported at the reserved peak below
  j["ledger_at_peak_bytes"] = rows;
  j["ledger_total_bytes"] = p.ledger.total();
  if (c.lora.enabled() || c.quant.enabled()) j["ledger_weights_by_part_bytes"] = peft_ledger_json(m, c, p.ledger);
  j["allocator"] = {{"peak_reserved_bytes", e.allocator.peak_reserved_bytes},
                    {"allocated_at_peak_reserved_bytes", e.allocator.allocated_at_peak_reserved_bytes},
                    {"fragmentation_bytes", e.allocator.reserved_at_peak_reserved_bytes - e.allocator.allocated_at_peak_reserved_bytes},
                    {"num_alloc_retries", e.allocator.num_alloc_retries},
                    {"oom", !e.fits()}};
  nlohmann::json steps = nlohmann::json::array();
  for (const auto& s : e.replay.steps)
    steps.push_back({{"start_mib", mib1(s.start)}, {"batch_mib", mib1(s.batch)}, {"fwd_peak_mib", mib1(s.fwd_peak)},
                     {"after_fwd_mib", mib1(s.after_fwd)}, {"bwd_peak_mib", mib1(s.bwd_peak)},
                     {"micro_rest_peak_mib", mib1(s.micro_rest_peak)}, {"after_bwd_mib", mib1(s.after_bwd)},
                     {"opt_peak_mib", mib1(s.opt_peak)}, {"end_mib", mib1(s.end)}, {"step_peak_mib", mib1(s.step_peak)}});
  j["steps"] = steps;
  j["non_pytorch_bytes"] = d.non_pytorch_bytes;
  j["device_total_bytes"] = device_total(e, d);
  if (d.capacity_bytes > 0) {
    j["gpu"] = d.gpu_name;
    j["capacity_bytes"] = d.capacity_bytes;
    add_verdict_json(j, verdict_on(m, c, e, d));
    j["fits"] = fits_on(e, d);
  }
  return j;
}

std::string estimate_table(const ModelSpec& m, const RunConfig& c, const Estimate& e, const DeviceBudget& d) {
  std::ostringstream o;
  char line[256];
  o << verdict_line(m, c, e, d) << "\n\n";
  o << "model " << m.name << ": " << e.params << " parameters (" << e.trainable_params << " trainable), "
    << precision_name(c.precision) << ", " << optimizer_name(c.optimizer) << " (" << optimizer_impl_name(c.optimizer_impl)
    << "), batch " << c.batch_size;
  if (m.kind == ModelSpec::Kind::transformer) o << " x seq " << c.seq_len;
  if (c.grad_accum_steps > 1) o << " x " << c.grad_accum_steps << " accumulation";
  if (c.grad_checkpointing) o << ", checkpointing " << (c.checkpoint_layers.empty() ? "all layers" : "a subset");
  o << "\n\n";
  const auto& p = e.replay.peak;
  o << "Ledger at the peak (" << where_text(nullptr, p.where) << "):\n";
  for (size_t r = 0; r < kRowCount; ++r) {
    if (p.ledger.bytes[r] == 0) continue;
    std::snprintf(line, sizeof line, "  %-20s %12s MiB  %5.1f%%\n", std::string(row_name(static_cast<Row>(r))).c_str(),
                  mib(p.ledger.bytes[r]).c_str(), 100.0 * static_cast<double>(p.ledger.bytes[r]) / static_cast<double>(p.bytes));
    o << line;
  }
  o << peft_ledger_lines(m, c, p.ledger);  // LoRA / QLoRA: the weights row by part (cli/report_lora.h)
  std::snprintf(line, sizeof line, "  %-20s %12s MiB  (live tensors)\n", "= peak allocated", mib(p.bytes).c_str());
  o << line;
  if (e.torch_peak_allocated_bytes() != p.bytes) {
    std::snprintf(line, sizeof line, "  %-20s %12s MiB  (torch.cuda.max_memory_allocated: block sizes, unsplit tails)\n",
                  "  as PyTorch counts", mib(e.torch_peak_allocated_bytes()).c_str());
    o << line;
  }
  // Reserved beyond the tensor peak, so the rows add up: cached free blocks, fragmentation, unsplit tails.
  const int64_t slack = e.allocator.peak_reserved_bytes - p.bytes;
  std::snprintf(line, sizeof line, "  %-20s %12s MiB  (caching allocator: cached blocks, fragmentation, tails)\n",
                "+ allocator slack", mib(slack).c_str());
  o << line;
  std::snprintf(line, sizeof line, "  %-20s %12s MiB\n", "= peak reserved", mib(e.allocator.peak_reserved_bytes).c_str());
  o << line;
  if (e.run_peak_reserved_bytes() != e.allocator.peak_reserved_bytes) {
    std::snprintf(line, sizeof line, "  %-20s %12s MiB  (under the capacity, after release-and-retry)\n", "  under the cap",
                  mib(e.run_peak_reserved_bytes()).c_str());
    o << line;
  }
  std::snprintf(line, sizeof line, "  %-20s %12s MiB  (CUDA context, kernels)\n", "+ non-PyTorch", mib(d.non_pytorch_bytes).c_str());
  o << line;
  std::snprintf(line, sizeof line, "  %-20s %12s MiB\n\n", "= device total", mib(device_total(e, d)).c_str());
  o << line;
  o << "Per step (MiB allocated):  start   fwd_peak  after_fwd  bwd_peak  after_bwd  opt_peak      end\n";
  for (size_t i = 0; i < e.replay.steps.size(); ++i) {
    const auto& s = e.replay.steps[i];
    std::snprintf(line, sizeof line, "  step %zu%s %9s %10s %10s %9s %10s %9s %8s\n", i + 1,
                  i == 0 ? " (no opt state)" : " (steady)      ", mib(s.start).c_str(), mib(s.fwd_peak).c_str(),
                  mib(s.after_fwd).c_str(), mib(s.bwd_peak).c_str(), mib(s.after_bwd).c_str(), mib(s.opt_peak).c_str(),
                  mib(s.end).c_str());
    o << line;
  }
  return o.str();
}

std::string layers_table(const Estimate& e) {
  std::ostringstream o;
  char line[256];
  const double total = static_cast<double>(e.replay.peak.bytes);
  std::snprintf(line, sizeof line, "%-28s %14s %12s %14s %14s %7s\n", "layer (steady-state forward)", "params",
                "params MiB", "saved MiB", "transient MiB", "share");
  o << line;
  for (const auto& l : e.replay.layers) {
    std::snprintf(line, sizeof line, "%-28s %14lld %12s %14s %14s %6.1f%%\n", l.name.c_str(),
                  static_cast<long long>(l.param_count), mib(l.param_bytes).c_str(), mib(l.saved_bytes).c_str(),
                  mib(l.transient_peak_bytes).c_str(),
                  100.0 * static_cast<double>(l.param_bytes + l.saved_bytes) / total);
    o << line;
  }
  o << "(share: the layer's parameters and saved activations as a part of the peak)\n";
  return o.str();
}

nlohmann::json layers_json(const Estimate& e) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& l : e.replay.layers)
    a.push_back({{"name", l.name}, {"param_count", l.param_count}, {"param_bytes", l.param_bytes},
                 {"saved_bytes", l.saved_bytes}, {"transient_peak_bytes", l.transient_peak_bytes}});
  return a;
}

}  // namespace memplan::cli
