// `memplan fit`: the verdict, the ledger, and when it does not fit (or with --advise) remedies in the order
// practitioners reach for them, each applied on top of the previous ones, with the memory after it, its step
// time and the exact flags:
//   1. mixed precision (AMP bf16, then pure bf16)   2. smaller micro-batch + accumulation (same global batch)
//   3. activation checkpointing (fewest layers, placed by the chain DP, then all)
//   4. leaner optimizer (fused implementation, then 8-bit Adam, then Adafactor)
//   5. LoRA r=16 on all linear layers, then QLoRA (nf4 + double quant), each with its largest micro-batch
//   6. ZeRO-3 / FSDP2 across GPUs                   7. CPU offload (optimizer, then parameters)
// plus allocator advice (expandable_segments) when the caching allocator's slack is large.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <optional>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/fit_lora.h"
#include "cli/fit_safety.h"
#include "cli/plan_common.h"
#include "cli/plan_replay.h"
#include "cli/report_dist.h"
#include "cli/report.h"
#include "cli/run_flags.h"
#include "cli/time_tables.h"
#include "engine/arch/builders.h"
#include "engine/checked.h"
#include "engine/errors.h"
#include "engine/limits.h"
#include "engine/plan/checkpoint_dp.h"

namespace memplan::cli {

namespace {
// --gpus (RunFlags::gpus): with --strategy / --tp the world size of the run being fitted (one rank's ledger);
// alone, as before, the GPUs the ZeRO / FSDP remedies may use (0: try 2, 4, 8).
struct FitFlags : RunFlags {
  int64_t gpus_per_node = 8;
  bool advise = false;
};

struct Remedy {
  std::string what, flags;
  int64_t device_bytes = 0;
  double step_s = 0;
  bool fits = false;
  int64_t trainable = -1, params = 0, max_batch = -1, max_batch_bytes = 0;  // LoRA / QLoRA remedies (cli/fit_lora.h)
  // Multi-GPU remedies: rank 0 replayed (cli/plan_replay.h), or the closed form of engine/plan/ and why.
  std::string closed_form_because;
  bool multi_gpu = false;
};

struct Single {  // one configuration on one GPU
  Estimate e;
  int64_t device_bytes = 0;
  double step_s = 0;
};

Single run_single(const ModelSpec& m, const RunConfig& c, const DeviceBudget& d, const plan::DeviceRates& rates,
                  bool expandable) {
  Single s;
  EstimateOptions opt;
  opt.allocator.expandable_segments = expandable;
  // Replayed under what PyTorch may reserve: a run that fits only through release-and-retry fits.
  opt.allocator.capacity_bytes = std::max<int64_t>(0, d.capacity_bytes - d.non_pytorch_bytes);
  // Inference: the inference replay (the prefill and generate(), or a forward-only model's forward), timed on the
  // prefill's graph; the training graph's step replay does not apply (it aborted on an inference graph).
  const bool inference = c.mode == Mode::inference;
  const Graph g = inference ? build_inference_graph(m, c, InferencePass{0, c.seq_len, false}) : build_graph(m, c);
  // A distributed run: rank cfg.distributed.rank's replay (engine/dist/); the step time stays the single-GPU
  // model's (the graph's compute, no communication).
  s.e = c.distributed.enabled() || inference ? estimate(m, c, opt) : estimate_graph(g, c, opt);
  s.device_bytes = s.e.run_peak_reserved_bytes() + d.non_pytorch_bytes;
  // Training: the step-time model fitted on the H200 timing corpus (engine/time/), at the GPU's measured rates
  // where it has some (the H200, the H100 SXM: DeviceRates::op_rates), else the H200's scaled by the GEMM-rate and
  // bandwidth ratios (DeviceRates::time_scale_*); otherwise the older roofline.
  if (c.mode == Mode::training) {
    s.step_s = plan::timed_single_gpu_step_s(g, c, rates);
  } else {
    const int64_t state = s.e.replay.peak.ledger[Row::optimizer_state];
    s.step_s = plan::single_gpu_step_time(g, c, s.e.trainable_params, state, rates).total_s;
  }
  return s;
}

std::string layer_list(const std::vector<int64_t>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s;
}

// The remedies and the allocator advice, rendered as text or as one JSON document.
struct FitAnswer {
  bool fits = false;          // the run as given
  double step_s = 0;          // its step time
  int64_t device_bytes = 0;   // its device total (the closed replay under the capacity)
  std::vector<Remedy> remedies;
  std::optional<int64_t> slack_bytes, expandable_device_bytes;  // allocator advice, when given
  std::optional<BatchFit> largest;  // a LoRA / QLoRA run: the largest micro-batch that fits
  Verdict verdict;                  // the run as given, with its margin and band (engine/verdict.h)
  std::optional<Safety> safety;     // BORDERLINE: what buys safety (cli/fit_safety.h)
};

nlohmann::json remedy_json(const Remedy& r) {
  nlohmann::json j = {{"what", r.what}, {"flags", r.flags}, {"device_bytes", r.device_bytes}, {"step_time_s", r.step_s},
                      {"fits", r.fits}};
  if (r.multi_gpu) {
    j["figures"] = r.closed_form_because.empty() ? "replay" : "closed_form";
    if (!r.closed_form_because.empty()) j["closed_form_because"] = r.closed_form_because;
  }
  if (r.trainable >= 0)
    j.update({{"trainable_params", r.trainable}, {"params", r.params}, {"largest_micro_batch", r.max_batch},
              {"largest_micro_batch_device_bytes", r.max_batch_bytes}});
  return j;
}

void print_fit_json(const nlohmann::json& estimate, const FitAnswer& a, std::ostream& out) {
  nlohmann::json j = estimate;
  j["step_time_s"] = a.step_s;
  if (a.largest) j["largest_micro_batch"] = {{"batch_size", a.largest->batch}, {"device_bytes", a.largest->device_bytes}};
  j["remedies"] = nlohmann::json::array();
  for (const Remedy& r : a.remedies) j["remedies"].push_back(remedy_json(r));
  const auto first_fit = std::find_if(a.remedies.begin(), a.remedies.end(), [](const Remedy& r) { return r.fits; });
  j["fits_after_remedy"] = first_fit == a.remedies.end() ? nlohmann::json(nullptr)
                                                         : nlohmann::json(first_fit - a.remedies.begin() + 1);
  if (a.safety) j["safety"] = safety_json(*a.safety);
  if (a.slack_bytes)
    j["allocator_advice"] = {{"reserved_unallocated_bytes", *a.slack_bytes},
                             {"flags", "--expandable-segments"},
                             {"expandable_segments_device_bytes", *a.expandable_device_bytes}};
  out << j.dump(2) << "\n";
}

// The flags of remedies applied one on top of the other, as one command line: `--opt value` pairs keep the
// place of their first appearance and the value of their last ("--optimizer adam8bit" then "--optimizer
// adafactor" is "--optimizer adafactor"); anything else (torchrun / deepspeed settings) follows as written.
std::string merged_flags(const std::vector<std::string>& remedy_flags) {
  std::vector<std::pair<std::string, std::string>> opts;  // option, value ("" for a bare flag)
  std::vector<std::string> other;
  for (const std::string& f : remedy_flags) {
    std::istringstream in(f);
    std::vector<std::string> tok;
    for (std::string t; in >> t;) tok.push_back(t);
    if (tok.empty() || tok[0].rfind("--", 0) != 0) {
      other.push_back(f);
      continue;
    }
    for (size_t i = 0; i < tok.size(); ++i) {
      const bool has_value = i + 1 < tok.size() && tok[i + 1].rfind("--", 0) != 0;
      const std::string value = has_value ? tok[i + 1] : "";
      auto it = std::find_if(opts.begin(), opts.end(), [&](const auto& p) { return p.first == tok[i]; });
      if (it == opts.end()) opts.emplace_back(tok[i], value);
      else it->second = value;
      if (has_value) ++i;
    }
  }
  std::string out;
  for (const auto& [opt, value] : opts) out += (out.empty() ? "" : " ") + opt + (value.empty() ? "" : " " + value);
  for (const std::string& f : other) out += (out.empty() ? "" : "; ") + f;
  return out;
}

// The last lines: the verdict again and which remedies make it fit, so the answer ends on what to do.
std::string conclusion(const FitAnswer& a, const DeviceBudget& d) {
  std::ostringstream o;
  if (a.largest)
    o << "\nLargest micro-batch that fits: " << a.largest->batch
      << (a.largest->batch > 0 ? " (" + gib(a.largest->device_bytes) + " GiB)" : std::string(" (not even 1)")) << "\n";
  // BORDERLINE says which way the allocator replay went: the remedies below follow that answer.
  const std::string title = a.verdict.kind == VerdictKind::borderline
                                ? std::string("BORDERLINE (the replay: ") + (a.fits ? "fits" : "does not fit") + ")"
                                : std::string(verdict_title(a.verdict.kind));
  if (a.fits) {
    o << "\nVerdict: " << title << " on " << d.gpu_name << " as given (" << gib(a.device_bytes) << " of "
      << gib(d.capacity_bytes) << " GiB; " << margin_text(a.verdict) << ")";
    if (a.safety) {
      const auto safe = std::find_if(a.safety->steps.begin(), a.safety->steps.end(),
                                     [](const SafetyStep& t) { return t.verdict.kind == VerdictKind::fits; });
      if (safe != a.safety->steps.end()) o << "; FITS with the band's room: " << safe->flags;
    }
    o << ".\n";
    return o.str();
  }
  o << "\nVerdict: " << title << " on " << d.gpu_name << " as given (needs " << gib(a.device_bytes) << " of "
    << gib(d.capacity_bytes) << " GiB); ";
  const auto first_fit = std::find_if(a.remedies.begin(), a.remedies.end(), [](const Remedy& r) { return r.fits; });
  if (first_fit == a.remedies.end()) {
    o << "none of the remedies above makes it fit: a GPU with more memory, or more GPUs (--gpus).\n";
    return o.str();
  }
  const size_t n = static_cast<size_t>(first_fit - a.remedies.begin()) + 1;
  std::vector<std::string> flags;
  for (size_t i = 0; i < n; ++i) flags.push_back(a.remedies[i].flags);
  o << "with remed" << (n == 1 ? "y 1" : "ies 1-" + std::to_string(n)) << " it fits (" << gib(first_fit->device_bytes)
    << " GiB): " << merged_flags(flags) << "\n";
  return o.str();
}
}  // namespace

void register_fit(CLI::App& app, Context& ctx) {
  auto* cmd = app.add_subcommand("fit", "will it fit, and if not, what to change first (ordered remedies)");
  auto f = std::make_shared<FitFlags>();
  add_run_flags(*cmd, *f);
  cmd->add_option("--time-tables", f->time_tables,
                  "price each remedy's step time at the kernel rates in this directory (as estimate --time-tables)");
  f->gpus_for_remedies = true;
  add_dist_flags(*cmd, *f, "GPUs: with --strategy / --tp the world size of the run; alone, the GPUs the ZeRO / FSDP "
                           "remedies may use (default: try 2, 4, 8)");
  cmd->add_option("--gpus-per-node", f->gpus_per_node, "GPUs per node");
  cmd->add_flag("--advise", f->advise, "list remedies even when it fits");
  cmd->callback([f, &ctx] {
    std::ostream& answer = ctx.out;
    const ModelSpec m = load_model_for(*f, ctx.in);
    RunConfig cur = run_config_from(*f, m);
    DeviceBudget d = device_budget(*f);
    // A distributed run (--gpus N --strategy S): NCCL's communicators are non-PyTorch memory too.
    d.non_pytorch_bytes = checked_add(d.non_pytorch_bytes, dist_nccl_bytes(cur.distributed), "non-PyTorch bytes");
    if (d.capacity_bytes <= 0) throw InputError("--gpu", "(none)", "fit needs --gpu or --gpu-memory-gib");
    const GpuSpec& g = find_gpu(f->gpu.empty() ? "h200" : f->gpu, "--gpu");
    for (const auto& [flag, v] : {std::pair<const char*, int64_t>{"--gpus", f->gpus}, {"--gpus-per-node", f->gpus_per_node}})
      if (v < 0 || v > kMaxPlanGpus)
        throw InputError(flag, std::to_string(v), "must be in [0, " + std::to_string(kMaxPlanGpus) + "]");
    // --time-tables: the step priced at those rates, unscaled (cli/time_tables.h)
    const std::unique_ptr<timing::LoadedRates> loaded = f->time_tables.empty() ? nullptr : read_time_tables(f->time_tables);
    const plan::DeviceRates rates = device_rates(g, f->gpus_per_node, f->calibration, loaded ? &loaded->rates : nullptr);
    EstimateOptions opt;
    opt.allocator.expandable_segments = f->expandable_segments;
    opt.allocator.capacity_bytes = std::max<int64_t>(0, d.capacity_bytes - d.non_pytorch_bytes);
    const Estimate e0 = estimate(m, cur, opt);
    std::ostringstream o;
    if (cur.distributed.enabled()) o << dist_heading(cur.distributed) << "\n";  // whose ledger follows
    o << estimate_table(m, cur, e0, d);
    o << nccl_note(e0);
    Single now = run_single(m, cur, d, rates, f->expandable_segments);
    const bool fits0 = e0.fits() && now.device_bytes <= d.capacity_bytes;
    const double t0 = now.step_s;
    const int64_t base_device = now.device_bytes;
    FitAnswer a;
    a.fits = fits0;
    a.step_s = t0;
    a.device_bytes = base_device;
    a.verdict = verdict_on(m, cur, e0, d);
    if (a.verdict.kind == VerdictKind::borderline) {
      const EstimateFn rerun = [&](const RunConfig& c, bool ex) { return run_single(m, c, d, rates, ex).e; };
      a.safety = borderline_safety(m, cur, f->expandable_segments, e0, d, rerun);
      o << safety_text(*a.safety);
    }
    nlohmann::json estimate_doc = f->json ? estimate_json(m, cur, e0, d) : nlohmann::json();
    if (f->json && cur.distributed.enabled()) estimate_doc["distributed"] = dist_json(cur, e0);
    const DeviceBytesFn device_of = [&](const RunConfig& c) { return run_single(m, c, d, rates, f->expandable_segments).device_bytes; };
    if (cur.lora.enabled() || cur.quant.enabled()) a.largest = largest_fitting_batch(device_of, cur, d.capacity_bytes);
    // where the step is priced (cli/time_tables.h): measured rates of this GPU or of --time-tables, else the H200's
    // scaled to it by the GEMM-rate and bandwidth ratios (plan_common.cpp device_rates)
    const TimeOn on = time_on(g.id, f->time_tables, loaded.get());
    const bool scaled = on.embedded && on.id != g.id;
    o << "\nstep time (model): " << seconds_text(t0) << " per optimizer step ("
      << (scaled ? "the H200's measured kernel rates scaled to " + g.id + " by its GEMM rate and bandwidth"
                 : "at the measured kernel rates of " + on.label)
      << ")\n";
    if (f->json) {
      estimate_doc["step_time_on"] = on.id;
      estimate_doc["step_time_scaled"] = scaled;
    }
    if (fits0 && !f->advise) {
      if (f->json) print_fit_json(estimate_doc, a, answer);
      else answer << o.str() << conclusion(a, d);
      return;
    }
    std::vector<Remedy>& out = a.remedies;
    bool done = fits0;
    auto add = [&](const std::string& what, const std::string& flags, int64_t bytes, double t) {
      Remedy r;
      r.what = what;
      r.flags = flags;
      r.device_bytes = bytes;
      r.step_s = t;
      r.fits = bytes <= d.capacity_bytes;
      out.push_back(r);
      if (r.fits) done = true;
    };
    auto try_cfg = [&](const RunConfig& c) { return run_single(m, c, d, rates, f->expandable_segments); };
    const bool has_bf16 = g.bf16_tflops > 0;
    // 1. precision
    if (!done && cur.precision == Precision::fp32) {
      cur.precision = has_bf16 ? Precision::amp_bf16 : Precision::amp_fp16;
      now = try_cfg(cur);
      add("mixed precision (autocast)", std::string("--precision ") + std::string(precision_name(cur.precision)), now.device_bytes, now.step_s);
    }
    if (!done && is_amp(cur.precision) && (f->advise || now.device_bytes > d.capacity_bytes)) {
      RunConfig c = cur;
      c.precision = has_bf16 ? Precision::bf16 : Precision::fp16;
      const Single s = try_cfg(c);
      if (s.device_bytes < now.device_bytes) {
        cur = c;
        now = s;
        add("pure 16-bit weights (model.to(bf16)); no fp32 master copy", std::string("--precision ") + std::string(precision_name(cur.precision)), now.device_bytes, now.step_s);
      }
    }
    // Inference (a prefill / generate() or an encoder's forward): precision, then fewer sequences per forward; the
    // training remedies below (accumulation, checkpointing, optimizers, LoRA, sharding a training step) do not apply.
    const bool training = cur.mode == Mode::training;
    if (!done && !training && cur.batch_size > 1) {
      for (int64_t b = cur.batch_size / 2;; b /= 2) {
        RunConfig c = cur;
        c.batch_size = std::max<int64_t>(b, 1);
        const Single s = try_cfg(c);
        if (s.device_bytes <= d.capacity_bytes || c.batch_size == 1) {
          cur = c;
          now = s;
          add("fewer sequences per forward (the requests split over more forwards)",
              "--batch-size " + std::to_string(c.batch_size), now.device_bytes, now.step_s);
          break;
        }
      }
    }
    // 2. micro-batch with accumulation, holding the global batch
    if (!done && training && cur.batch_size > 1) {
      const int64_t global = cur.batch_size * cur.grad_accum_steps;
      for (int64_t b = cur.batch_size - 1; b >= 1; --b) {
        if (global % b != 0 || (cur.batch_size % b != 0 && b != 1)) continue;
        RunConfig c = cur;
        c.batch_size = b;
        c.grad_accum_steps = global / b;
        const Single s = try_cfg(c);
        if (b == 1 && s.device_bytes >= now.device_bytes) break;  // accumulation holds the gradients: no gain
        if (s.device_bytes <= d.capacity_bytes || b == 1) {
          cur = c;
          now = s;
          add("smaller micro-batch, gradient accumulation keeps the global batch " + std::to_string(global),
              "--batch-size " + std::to_string(b) + " --grad-accum-steps " + std::to_string(c.grad_accum_steps), now.device_bytes, now.step_s);
          break;
        }
      }
    }
    // 3. checkpointing: the fewest layers (chain DP on the per-layer saving measured by two replays), then all
    const int64_t L = plan::stack_layers(m);
    if (!done && training && L > 0 && !cur.grad_checkpointing) {
      RunConfig all = cur;
      all.grad_checkpointing = true;
      const Single s_all = try_cfg(all);
      const int64_t per = std::max<int64_t>(1, (now.device_bytes - s_all.device_bytes) / L);
      const int64_t over = now.device_bytes - d.capacity_bytes;
      std::vector<plan::ChainLayer> chain(static_cast<size_t>(L), plan::ChainLayer{per, 0, 1.0, 0, 0});
      const plan::ChainPlan p = plan::optimal_checkpoints(chain, std::max<int64_t>(0, L * per - over - per / 4), std::max<int64_t>(1, per / 64));
      bool placed = false;
      if (p.feasible && !plan::full_layers(p).empty() && static_cast<int64_t>(plan::full_layers(p).size()) < L) {
        RunConfig c = cur;
        c.grad_checkpointing = true;
        c.checkpoint_layers = plan::full_layers(p);
        const Single s = try_cfg(c);
        if (s.device_bytes <= d.capacity_bytes) {
          cur = c;
          now = s;
          placed = true;
          add("activation checkpointing of " + std::to_string(c.checkpoint_layers.size()) + " of " + std::to_string(L) + " layers",
              "--grad-checkpointing " + layer_list(c.checkpoint_layers), now.device_bytes, now.step_s);
        }
      }
      if (!placed) {
        cur = all;
        now = s_all;
        add("activation checkpointing of every layer", "--grad-checkpointing all", now.device_bytes, now.step_s);
      }
    }
    // 4. leaner optimizer
    const bool adam = cur.optimizer == OptimizerKind::adam || cur.optimizer == OptimizerKind::adamw;
    if (!done && training && adam && cur.optimizer_impl != OptimizerImpl::fused) {
      cur.optimizer_impl = OptimizerImpl::fused;
      now = try_cfg(cur);
      add("fused AdamW (no foreach temporaries, same math)", "--optimizer-impl fused", now.device_bytes, now.step_s);
    }
    for (OptimizerKind k : {OptimizerKind::adam8bit, OptimizerKind::adafactor}) {
      if (done || !training || !(cur.optimizer == OptimizerKind::adam || cur.optimizer == OptimizerKind::adamw ||
                    (k == OptimizerKind::adafactor && cur.optimizer == OptimizerKind::adam8bit)))
        continue;
      cur.optimizer = k;
      now = try_cfg(cur);
      add(k == OptimizerKind::adam8bit ? "8-bit AdamW (bitsandbytes)" : "Adafactor (factored second moments)",
          std::string("--optimizer ") + std::string(optimizer_name(k)), now.device_bytes, now.step_s);
    }
    // 5. parameter-efficient fine-tuning on this GPU: LoRA r=16 on all linear layers, then QLoRA (cli/fit_lora.h)
    bool lora_listed = false;  // QLoRA follows a fitting LoRA too: it answers for larger micro-batches
    for (bool qlora : {false, true}) {
      if ((done && !(qlora && lora_listed)) || cur.mode != Mode::training || (cur.lora.enabled() && (!qlora || cur.quant.enabled()))) continue;
      lora_listed = !qlora;
      const RunConfig c = lora_remedy(cur, run_config_from(*f, m), qlora, has_bf16);
      const std::string flags = lora_remedy_flags(c, cur);
      Single s;
      try {
        s = try_cfg(c);
      } catch (const InputError&) {  // e.g. all-linear on a mixture-of-experts model (engine/lora.cpp)
        continue;
      }
      cur = c;
      now = s;
      add(qlora ? "QLoRA: base weights in 4-bit NF4 with double quant (bitsandbytes), bf16 compute, the same adapters"
                : "LoRA (peft) r=16 on all linear layers, base frozen",
          flags, now.device_bytes, now.step_s);
      Remedy& r = out.back();
      r.trainable = now.e.trainable_params;
      r.params = now.e.params;
      if (qlora) {  // peft's get_nb_trainable_parameters counts a Params4bit's numel twice: the model's own count
        RunConfig unquantised = cur;
        unquantised.quant = QuantConfig{};
        r.params = run_single(m, unquantised, d, rates, f->expandable_segments).e.params;
      }
      const BatchFit bf = largest_fitting_batch(device_of, cur, d.capacity_bytes);
      r.max_batch = bf.batch;
      r.max_batch_bytes = bf.device_bytes;
    }
    // 6 / 7. shard across GPUs, then offload: rank 0 of the sharded step replayed (cli/plan_replay.h) where
    // engine/dist/ models it, else the closed forms + the local replay of engine/plan/. Not for a run that is
    // distributed already (its strategy is the user's).
    if (!done && training && !cur.distributed.enabled()) {
      plan::PlanSpace s;
      s.capacity_bytes = d.capacity_bytes;
      s.non_pytorch_bytes = d.non_pytorch_bytes;
      s.rates = rates;
      plan::Planner planner(m, cur);
      const std::vector<int64_t> counts = f->gpus > 0 ? std::vector<int64_t>{f->gpus} : std::vector<int64_t>{2, 4, 8};
      const int64_t k = cur.grad_checkpointing ? (cur.checkpoint_layers.empty() ? L : static_cast<int64_t>(cur.checkpoint_layers.size())) : 0;
      auto shard = [&](int64_t n, plan::DataParallel dk, plan::Offload off) {
        plan::ParallelConfig p;
        p.dp = n;
        p.dp_kind = dk;
        p.offload = off;
        s.gpus = n;
        s.global_batch = cur.batch_size * cur.grad_accum_steps * n;
        plan::PlanCandidate c = planner.evaluate(s, p, cur.batch_size, cur.precision, cur.optimizer, k);
        c.par.micro_batches = cur.grad_accum_steps;
        planner.confirm(c, s);
        return c;
      };
      // The remedy's run on n GPUs, rank 0 replayed with this run's own checkpointing and batch; the closed
      // form `c` stands where the replay does not model it.
      auto add_sharded = [&](const std::string& what, const std::string& closed_flags, const plan::PlanCandidate& c,
                             DistStrategy strategy, int64_t n, DistOffload off) {
        RunConfig rc = cur;
        rc.distributed = DistributedConfig{};
        rc.distributed.strategy = strategy;
        rc.distributed.world_size = n;
        rc.distributed.offload = off;
        const RankReplay x = replay_run(m, rc, d, f->expandable_segments);
        if (x.replayed) {
          add(what + " (rank 0 replayed)", dist_flags(rc.distributed), x.device_bytes, c.time.total_s);
        } else {
          add(what + " (closed form)", closed_flags, c.confirmed_device_bytes, c.time.total_s);
          out.back().closed_form_because = x.closed_form_because;
        }
        out.back().multi_gpu = true;
      };
      for (int64_t n : counts) {
        if (done) break;
        for (plan::DataParallel dk : {plan::DataParallel::fsdp2, plan::DataParallel::zero3}) {
          const plan::PlanCandidate c = shard(n, dk, plan::Offload::none);
          add_sharded(std::string(dk == plan::DataParallel::fsdp2 ? "FSDP2 (fully_shard per layer)" : "DeepSpeed ZeRO-3") +
                          " across " + std::to_string(n) + " GPUs, per-GPU batch unchanged",
                      "torchrun --nproc-per-node " + std::to_string(n) + (dk == plan::DataParallel::fsdp2 ? " + fully_shard" : " + deepspeed zero_optimization.stage=3"),
                      c, dk == plan::DataParallel::fsdp2 ? DistStrategy::fsdp2 : DistStrategy::zero3, n, DistOffload::none);
          if (done) break;
        }
      }
      const int64_t n = f->gpus > 0 ? f->gpus : 1;
      for (plan::Offload off : {plan::Offload::optimizer, plan::Offload::optimizer_and_params}) {
        if (done) break;
        const plan::PlanCandidate c = shard(n, plan::DataParallel::zero3, off);
        add_sharded("ZeRO-3 CPU offload of " + std::string(off == plan::Offload::optimizer ? "optimizer state" : "optimizer state and parameters") +
                        " on " + std::to_string(n) + " GPU(s), host " + gib(c.mem.host_bytes_per_gpu) + " GiB per GPU",
                    std::string("deepspeed offload_optimizer.device=cpu") + (off == plan::Offload::optimizer_and_params ? " offload_param.device=cpu" : ""),
                    c, DistStrategy::zero3, n, off == plan::Offload::optimizer ? DistOffload::optimizer : DistOffload::params);
      }
    }
    // Allocator advice: slack between reserved and allocated at the reserved peak.
    const int64_t slack = e0.allocator.reserved_at_peak_reserved_bytes - e0.allocator.allocated_at_peak_reserved_bytes;
    if (!f->expandable_segments && (slack > kGiB || slack * 20 > e0.allocator.peak_reserved_bytes)) {
      EstimateOptions ex;
      ex.allocator.expandable_segments = true;
      const Estimate ee = estimate(m, run_config_from(*f, m), ex);
      a.slack_bytes = slack;
      a.expandable_device_bytes = ee.allocator.peak_reserved_bytes + d.non_pytorch_bytes;
    }
    if (f->json) {
      print_fit_json(estimate_doc, a, answer);
      return;
    }
    o << "\n" << (fits0 ? "Advice (it fits already; each step applies on top of the previous):\n"
                        : "Remedies in order (each applies on top of the previous):\n");
    char line[768];
    for (size_t i = 0; i < out.size(); ++i) {
      const Remedy& r = out[i];
      std::snprintf(line, sizeof line, "  %zu. %-4s %s\n       %s -> %s GiB per GPU (%+.2f GiB), step %s (x%.2f)\n", i + 1,
                    r.fits ? "FITS" : "", r.what.c_str(), r.flags.c_str(), gib(r.device_bytes).c_str(),
                    static_cast<double>(r.device_bytes - (i ? out[i - 1].device_bytes : base_device)) / static_cast<double>(kGiB),
                    seconds_text(r.step_s).c_str(), t0 > 0 ? r.step_s / t0 : 1.0);
      o << line;
      if (!r.closed_form_because.empty()) o << "       closed form (engine/plan/), not replayed: " << r.closed_form_because << "\n";
      if (r.trainable >= 0) {
        std::snprintf(line, sizeof line, "       trainable %lld of %lld parameters (%.2f %%); largest micro-batch that fits: %lld%s\n",
                      static_cast<long long>(r.trainable), static_cast<long long>(r.params),
                      r.params > 0 ? 100.0 * static_cast<double>(r.trainable) / static_cast<double>(r.params) : 0.0,
                      static_cast<long long>(r.max_batch), r.max_batch > 0 ? (" (" + gib(r.max_batch_bytes) + " GiB)").c_str() : "");
        o << line;
      }
    }
    if (out.empty()) o << "  (nothing left to change in this order)\n";
    if (a.slack_bytes)
      o << "\nAllocator: " << gib(*a.slack_bytes) << " GiB reserved but unallocated at the reserved peak (fragmentation). "
        << "PYTORCH_ALLOC_CONF=expandable_segments:True (--expandable-segments) brings the original run to "
        << gib(*a.expandable_device_bytes) << " GiB on the device.\n";
    answer << o.str() << conclusion(a, d);
  });
}

}  // namespace memplan::cli
