// `memplan estimate`: the ledger of one training step for a model and configuration.
#include <cmath>
#include <cstdio>
#include <fstream>
#include <ostream>

#include "cli/commands.h"
#include "cli/report.h"
#include "cli/report_dist.h"
#include "cli/run_flags.h"
#include "cli/time_tables.h"
#include "cli/timeline_svg.h"
#include "engine/checked.h"
#include "engine/errors.h"
#include "engine/time/case_time.h"
#include "engine/time/time_band.h"
#include "engine/verdict.h"
#include "models/calibration_profile.h"
#include "models/gpu_specs.h"

namespace memplan::cli {

namespace {
// Non-PyTorch device memory = the CUDA context + the kernel images PyTorch loads lazily on first use (GEMM, SDPA,
// conv, cross-entropy) and the library handles' own allocations. MECHANICS.md §2 (H200, torch 2.11): 526 MiB
// right after init, about 830 MiB once those kernels have run, so the kernels and handles add about 304 MiB on
// top of whatever context a GPU has. Without a profile or a spec figure the H200 total is used.
constexpr int64_t kTorchKernelsAndHandlesBytes = int64_t{304} << 20;
constexpr int64_t kDefaultNonPytorchBytes = int64_t{830} << 20;
// Inference: the three harness figures, the peak's ledger, the prefill's and a decode step's time, the fit verdict.
void print_inference(const ModelSpec& m, const RunConfig& c, const Estimate& e, const DeviceBudget& d, const TimeOn& on,
                     bool json, std::ostream& out) {
  const auto& inf = e.inference;
  const auto& peak = e.replay.peak;
  // Time (engine/time/case_time.h): the prefill (or the one forward) and, with generate_tokens > 1, one decode step
  // at the middle of generation. Measured: prefills within 4.6 % on the H100 set and ~3 % median on the H200's;
  // decode per token is host-bound (generate()'s per-token Python), off by up to 42 % (NOTES-time.md).
  const timing::CaseTime ct = c.distributed.enabled() ? timing::CaseTime{} : timing::case_time(m, c, *on.rates);
  const auto time_json = [&](nlohmann::json& j) {
    if (ct.prefill_ms <= 0) return;
    j["step_time_on"] = on.id;
    j["inference"]["prefill_ms"] = round1(ct.prefill_ms);
    if (c.generate_tokens > 1 && ct.decode_ms_per_token > 0) j["inference"]["decode_ms_per_token"] = round1(ct.decode_ms_per_token);
  };
  const auto time_text = [&] {
    if (ct.prefill_ms <= 0) return;
    char line[240];
    std::snprintf(line, sizeof line, "  %-19s %.1f ms on %s (per-op model at its measured kernel rates)\n",
                  inf.forward_only ? "forward time" : "prefill time", ct.prefill_ms, on.label.c_str());
    out << line;
    if (c.generate_tokens > 1 && ct.decode_ms_per_token > 0) {
      std::snprintf(line, sizeof line, "  %-19s %.1f ms a token (host-bound: timed rows missed by up to 42 %%)\n",
                    "decode time", ct.decode_ms_per_token);
      out << line;
    }
  };
  if (inf.forward_only) {  // one forward of the batch: no KV cache, no generate()
    if (json) {
      nlohmann::json j = estimate_json(m, c, e, d);
      j.erase("steps");
      j["inference"] = {{"forward_only", true}, {"forward_peak_mib", mib1(inf.prefill_peak_bytes)}};
      time_json(j);
      out << j.dump(2) << "\n";
      return;
    }
    out << m.name << " inference, one forward of batch " << c.batch_size;
    if (m.kind == ModelSpec::Kind::vision) out << " images of " << c.image_size << " px";
    else out << " x " << c.seq_len << " tokens";
    out << ", " << precision_name(c.precision) << ", task " << task_name(c.task) << "\n";
    out << "  weights             " << mib(e.weights_bytes) << " MiB\n"
        << "  forward peak        " << mib(inf.prefill_peak_bytes) << " MiB\n";
  } else if (json) {
    nlohmann::json j = estimate_json(m, c, e, d);
    j.erase("steps");
    j["inference"] = {{"prefill_peak_mib", mib1(inf.prefill_peak_bytes)}, {"kv_cache_mib", mib1(e.torch_kv_cache_bytes())},
                      {"kv_cache_entries_mib", mib1(inf.kv_cache_entries_bytes)},
                      {"generate_peak_mib", mib1(inf.generate_peak_bytes)}, {"decode_peak_mib", mib1(inf.decode_peak_bytes)},
                      {"final_kv_cache_mib", mib1(inf.final_kv_entries_bytes)},
                      {"generate_tokens", c.generate_tokens},
                      {"generate_without_cache", inf.generate_without_cache}};
    time_json(j);
    out << j.dump(2) << "\n";
    return;
  } else {
    out << m.name << " inference, batch " << c.batch_size << " x " << c.seq_len << " tokens, "
        << precision_name(c.precision) << ", generate " << c.generate_tokens << " tokens\n";
    out << "  weights             " << mib(e.weights_bytes) << " MiB\n"
        << "  prefill peak        " << mib(inf.prefill_peak_bytes) << " MiB\n"
        << "  KV cache (+ws)      " << mib(e.torch_kv_cache_bytes()) << " MiB (cache entries "
        << mib(inf.kv_cache_entries_bytes) << " MiB)\n";
  }
  if (c.generate_tokens > 0)
    out << "  generate peak       " << mib(inf.generate_peak_bytes) << " MiB (decode steps " << mib(inf.decode_peak_bytes)
        << " MiB, cache at end " << mib(inf.final_kv_entries_bytes) << " MiB"
        << (inf.generate_without_cache ? "; no KV cache: config.use_cache is false, every token recomputes the sequence"
                                       : "")
        << ")\n";
  time_text();
  out << "  peak ledger (" << phase_name(peak.where.phase) << ")\n";
  for (size_t r = 0; r < kRowCount; ++r)
    if (peak.ledger.bytes[r] != 0)
      out << "    " << row_name(static_cast<Row>(r)) << std::string(20 - row_name(static_cast<Row>(r)).size(), ' ')
                << mib(peak.ledger.bytes[r]) << " MiB\n";
  out << verdict_line(m, c, e, d) << "\n";
  for (const std::string& w : estimate_warnings(m, c)) out << "Warning: " << w << ".\n";
}

}  // namespace

DeviceBudget device_budget(const RunFlags& f) {
  DeviceBudget d;
  d.non_pytorch_bytes = kDefaultNonPytorchBytes;
  if (!f.gpu.empty()) {
    const GpuSpec& g = find_gpu(f.gpu, "--gpu");
    d.gpu_name = g.id;
    d.capacity_bytes = g.memory_bytes;
    if (g.cuda_context_bytes > 0) d.non_pytorch_bytes = checked_add(g.cuda_context_bytes, kTorchKernelsAndHandlesBytes);
  }
  if (!f.calibration.empty()) {
    const CalibrationProfile p = load_calibration_profile(f.calibration);
    d.non_pytorch_bytes = checked_add(p.cuda_context_lazy_bytes, kTorchKernelsAndHandlesBytes);
    if (d.gpu_name.empty()) {
      d.gpu_name = p.gpu_name;
      d.capacity_bytes = p.total_memory_bytes;
    }
  }
  if (f.gpu_memory_gib > 0) {
    d.capacity_bytes = static_cast<int64_t>(f.gpu_memory_gib * static_cast<double>(kGiB));
    if (d.gpu_name.empty()) d.gpu_name = gib_text(f.gpu_memory_gib) + " GiB";
  }
  return d;
}

void register_estimate(CLI::App& app, Context& ctx) {
  auto* cmd = app.add_subcommand("estimate", "memory of one training step (or an inference run): ledger, peak, reserved, fit");
  auto flags = std::make_shared<RunFlags>();
  add_run_flags(*cmd, *flags);
  cmd->add_option("--time-tables", flags->time_tables,
                  "price the step time at the kernel rates in this directory (op-rates.tsv and, optionally, conv-time, "
                  "bn-time, gemm-align .tsv: calibrate/time_tables.sh writes them on any GPU; data/calibration/h100 "
                  "holds the H100's) instead of --gpu's");
  add_dist_flags(*cmd, *flags, "world size: GPUs of the distributed run (with --strategy / --tp)");
  cmd->callback([flags, &ctx] {
    std::ostream& out = ctx.out;
    const ModelSpec m = load_model_for(*flags, ctx.in);
    const RunConfig c = run_config_from(*flags, m);
    DeviceBudget d = device_budget(*flags);
    // A distributed rank: NCCL's communicators are device memory outside the allocator (cli/report_dist.h).
    d.non_pytorch_bytes = checked_add(d.non_pytorch_bytes, dist_nccl_bytes(c.distributed), "non-PyTorch bytes");
    EstimateOptions opt;
    opt.allocator.expandable_segments = flags->expandable_segments;
    if (d.capacity_bytes > 0) opt.allocator.capacity_bytes = std::max<int64_t>(0, d.capacity_bytes - d.non_pytorch_bytes);
    opt.replay.record_timeline = !flags->timeline.empty();
    const Estimate e = estimate(m, c, opt);
    // where the time is priced: --time-tables' rates, else --gpu's measured ones, else the H200's
    const std::unique_ptr<timing::LoadedRates> loaded =
        flags->time_tables.empty() ? nullptr : read_time_tables(flags->time_tables);
    const TimeOn on = time_on(d.gpu_name, flags->time_tables, loaded.get());
    if (c.mode == Mode::inference) {
      print_inference(m, c, e, d, on, flags->json, out);
      return;
    }
    if (!flags->timeline.empty()) {
      std::ofstream svg(flags->timeline);
      if (!svg) throw InputError("--timeline", flags->timeline, "cannot write the file");
      svg << timeline_svg(e, m.name + ": " + std::string(precision_name(c.precision)) + ", batch " +
                                 std::to_string(c.batch_size) + (c.seq_len > 0 ? " x " + std::to_string(c.seq_len) : ""));
    }
    // A distributed run: the last rank replayed too, shown when it differs (cli/report_dist.h).
    const std::vector<OtherRank> others = other_ranks(m, c, opt);
    // Step time of one GPU (engine/time/step_time.h): at the kernel rates measured on --gpu where there are some
    // (an H200, an H100 SXM), else on the H200's (the reference: its figure, labelled as such); coefficients fitted
    // to H200 timings. None for a distributed rank (communication is not costed per op).
    const timing::CaseTime ct = c.distributed.enabled() ? timing::CaseTime{} : timing::case_time(m, c, *on.rates);
    const double step_ms = ct.step_ms;
      // How wrong the model has been on comparable timed rows (engine/time/time_band.h).
    const timing::TimeBand tb =
        timing::time_band_for(timing::h200_time_bands(), "step", verdict_features(m, c, false).vision, ct.split.cpu_bound);
    if (flags->json) {
      nlohmann::json j = estimate_json(m, c, e, d);
      if (step_ms > 0) {
        // step_time_on: the GPU whose measured rates priced it (data/gpus.json id); the _h200 keys are that
        // figure when it is the H200's (kept for scripts written before other GPUs had tables)
        j["step_time_on"] = on.id;
        j["step_time_ms"] = round1(step_ms);
        // the critical path's shares: the host issuing ops, the GPU running them (engine/time/step_time.h)
        j["step_time_host_ms"] = round1(ct.split.cpu_s * 1e3);
        j["step_time_gpu_ms"] = round1(ct.split.gpu_s * 1e3);
        if (on.id == "h200-sxm-141gb") {
          j["step_time_ms_h200"] = round1(step_ms);
          j["step_time_host_ms_h200"] = round1(ct.split.cpu_s * 1e3);
          j["step_time_gpu_ms_h200"] = round1(ct.split.gpu_s * 1e3);
        }
        j["step_host_bound"] = ct.split.cpu_bound;
        j["step_time_band"] = {{"class", tb.key}, {"rows", tb.cases},
                               {"under_pct", round1(100 * tb.under_fraction)}, {"over_pct", round1(100 * tb.over_fraction)},
                               {"under90_pct", round1(100 * tb.under90_fraction)},
                               {"over90_pct", round1(100 * tb.over90_fraction)}};
      }
      if (flags->per_layer) j["layers"] = layers_json(e);
      if (c.distributed.enabled()) {
        j["distributed"] = dist_json(c, e);
        j["distributed"]["ranks"] = other_ranks_json(e, c.distributed.rank, others);
      }
      out << j.dump(2) << "\n";
    } else {
      if (c.distributed.enabled()) out << dist_heading(c.distributed) << "\n";  // whose ledger follows
      out << estimate_table(m, c, e, d);
      out << nccl_note(e);
      if (step_ms > 0) {
        char line[320];
        std::snprintf(line, sizeof line,
                      "\nStep time on %s: %.1f ms (per-op model at its measured kernel rates, engine/time/step_time.h; "
                      "critical path: host %.1f ms issuing, GPU %.1f ms running)\n",
                      on.label.c_str(), step_ms, ct.split.cpu_s * 1e3, ct.split.gpu_s * 1e3);
        out << line;
        if (tb.cases > 0) {
          std::snprintf(line, sizeof line,
                        "  measured on comparable rows (%s, %lld timed on the H200): the step took %.0f %% less to "
                        "%.0f %% more than predicted; 9 in 10 of them %.0f %% less to %.0f %% more\n",
                        tb.key.c_str(), static_cast<long long>(tb.cases), 100 * tb.over_fraction, 100 * tb.under_fraction,
                        100 * tb.over90_fraction, 100 * tb.under90_fraction);
          out << line;
        }
        // Measured: host-bound steps moved by up to 1.9x between device calls of one case, decode per token alike
        // (data/validation/NOTES-time.md, fourth round; h200-timing-drift.jsonl).
        if (ct.split.cpu_bound)
          out << "  host-bound (Python and dispatch set the pace): such steps vary with the host's speed, up to 1.9x "
                 "between H200 machines of one kind; a larger micro-batch costs little extra time\n";
      }
      if (!others.empty()) out << "\n" << other_ranks_text(e, others);
      if (flags->per_layer) out << "\n" << layers_table(e);
      // The question after "does not fit" is what to change; fit answers it with the same flags. The closing line
      // names the headline's verdict: a replay short of memory inside the error band is BORDERLINE there.
      if (!flags->quiet && d.capacity_bytes > 0 && !fits_on(e, d))
        out << (verdict_on(m, c, e, d).kind == VerdictKind::borderline
                    ? "\nBORDERLINE, short of memory as predicted: "
                    : "\nDOES NOT FIT: ")
            << "`memplan fit` with the same flags lists what to change, in order.\n";
      else if (!flags->quiet && d.capacity_bytes > 0 && verdict_on(m, c, e, d).kind == VerdictKind::borderline)
        out << "\nBORDERLINE: `memplan fit` with the same flags lists what buys safety.\n";
    }
  });
}

}  // namespace memplan::cli
