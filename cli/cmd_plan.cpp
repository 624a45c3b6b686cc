// `memplan plan`: search how to train a model on N GPUs of one kind; top-k by step time, the memory-vs-time
// Pareto frontier, each with the settings to run it.
#include <chrono>
#include <cstdio>
#include <iostream>
#include <sstream>

#include "cli/commands.h"
#include "cli/plan_common.h"
#include "cli/plan_replay.h"
#include "cli/progress.h"
#include "cli/report.h"
#include "cli/run_flags.h"
#include "engine/checked.h"
#include "engine/errors.h"
#include "engine/limits.h"
#include "models/load_model.h"

namespace memplan::cli {

namespace {
struct PlanFlags {
  std::string model = "llama-2-7b";
  std::string gpu;
  int64_t gpus = 1, gpus_per_node = 8, global_batch = 0, seq_len = 0, image_size = 224, top = 5;
  int64_t max_micro_batch = 64, max_tp = 8, max_pp = 64;
  std::vector<std::string> allow;
  std::string attn, optimizer_impl = "foreach";  // attn empty: default_attn
  std::string calibration;  // a profile from `memplan calibrate`: measured rates for the time model
  bool no_checkpointing = false, no_sequence_parallel = false, json = false, stats = false, quiet = false;
};

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, sep))
    if (!item.empty()) out.push_back(item);
  return out;
}

// --allow key=v1,v2 (repeatable): precision, optimizer, dp, offload.
void apply_allow(const std::vector<std::string>& allow, plan::PlanSpace& s) {
  for (const std::string& a : allow) {
    const auto eq = a.find('=');
    if (eq == std::string::npos) throw InputError("--allow", a, "expects key=value[,value] with key precision, optimizer, dp or offload");
    const std::string key = a.substr(0, eq);
    const auto vals = split(a.substr(eq + 1), ',');
    if (key == "precision") {
      s.precisions.clear();
      for (const auto& v : vals) {
        Precision p;
        if (!parse_precision(v, p)) throw InputError("--allow precision", v, "must be fp32, amp_bf16, amp_fp16, bf16 or fp16");
        s.precisions.push_back(p);
      }
    } else if (key == "optimizer") {
      s.optimizers.clear();
      for (const auto& v : vals) {
        OptimizerKind o;
        if (!parse_optimizer(v, o)) throw InputError("--allow optimizer", v, "must be sgd, sgd_momentum, adam, adamw, adafactor or adam8bit");
        s.optimizers.push_back(o);
      }
    } else if (key == "dp") {
      s.dp_kinds.clear();
      for (const auto& v : vals) {
        plan::DataParallel d;
        if (!plan::parse_data_parallel(v, d)) throw InputError("--allow dp", v, "must be ddp, zero1, zero2, zero3, fsdp2 or megatron");
        s.dp_kinds.push_back(d);
      }
    } else if (key == "offload") {
      s.offloads.clear();
      for (const auto& v : vals) {
        plan::Offload o;
        if (!plan::parse_offload(v, o)) throw InputError("--allow offload", v, "must be none, optimizer or optimizer_and_params");
        s.offloads.push_back(o);
      }
    } else {
      throw InputError("--allow", key, "key must be precision, optimizer, dp or offload");
    }
  }
}

std::string settings_text(const plan::PlanCandidate& c) {
  std::ostringstream o;
  o << "--precision " << precision_name(c.precision) << " --optimizer " << optimizer_name(c.optimizer)
    << " --batch-size " << c.micro_batch << " --grad-accum-steps " << c.par.micro_batches;
  if (c.ckpt_layers > 0) {
    o << " --grad-checkpointing ";
    if (c.ckpt_layers >= c.stage_layers || c.checkpoint_layers.empty()) o << (c.ckpt_layers >= c.stage_layers ? "all" : std::to_string(c.ckpt_layers) + "-of-" + std::to_string(c.stage_layers));
    else for (size_t i = 0; i < c.checkpoint_layers.size(); ++i) o << (i ? "," : "") << c.checkpoint_layers[i];
  }
  return o.str();
}

nlohmann::json candidate_json(const plan::PlanCandidate& c) {
  nlohmann::json j = {{"tp", c.par.tp}, {"pp", c.par.pp}, {"dp", c.par.dp},
                      {"sequence_parallel", c.par.sequence_parallel},
                      {"data_parallel", plan::data_parallel_name(c.par.dp_kind)},
                      {"offload", plan::offload_name(c.par.offload)}, {"micro_batch", c.micro_batch},
                      {"grad_accum_steps", c.par.micro_batches}, {"precision", precision_name(c.precision)},
                      {"optimizer", optimizer_name(c.optimizer)}, {"stage_layers", c.stage_layers},
                      {"checkpointed_layers", c.ckpt_layers}, {"device_bytes", c.device_bytes},
                      {"host_bytes_per_gpu", c.mem.host_bytes_per_gpu}, {"step_time_s", c.time.total_s},
                      {"settings", settings_text(c)}};
  j["rows_bytes"] = {{"weights", c.mem.weights}, {"gradients", c.mem.gradients},
                     {"optimizer_state", c.mem.optimizer_state}, {"activations", c.mem.activations},
                     {"pipeline_inflight", c.mem.pipeline_inflight}, {"comm_buffers", c.mem.comm_buffers},
                     {"optimizer_transient", c.mem.optimizer_transient}, {"nccl", c.mem.nccl}};
  j["time_s"] = {{"compute", c.time.compute_s}, {"recompute", c.time.recompute_s}, {"optimizer", c.time.optimizer_s},
                 {"dp_comm", c.time.dp_comm_s}, {"tp_comm", c.time.tp_comm_s}, {"pp_comm", c.time.pp_comm_s},
                 {"bubble", c.time.bubble_s}, {"offload", c.time.offload_s}};
  if (c.confirmed) {
    j["confirmed_device_bytes"] = c.confirmed_device_bytes;
    j["checkpoint_layers"] = c.checkpoint_layers;
  }
  return j;
}

// A finalist's verdict (engine/verdict.h) on its best figure: rank 0 replayed where it is, else the confirmed
// closed form; the band from the measured single-GPU training cases of its precision and checkpointing.
Verdict finalist_verdict(const ModelSpec& m, const RunConfig& base, const plan::PlanCandidate& c, const RankReplay& x,
                         const DeviceBudget& d, int64_t capacity_bytes) {
  RunConfig run = x.replayed ? x.run : base;
  if (!x.replayed) {
    run.precision = c.precision;
    run.grad_checkpointing = c.ckpt_layers > 0;
    run.grad_accum_steps = std::max<int64_t>(1, c.par.micro_batches);
  }
  const int64_t device = x.replayed ? x.device_bytes : c.confirmed ? c.confirmed_device_bytes : c.device_bytes;
  const int64_t reserved = x.replayed ? x.peak_reserved_bytes : std::max<int64_t>(0, device - d.non_pytorch_bytes);
  return verdict_for(m, run, false, capacity_bytes, device, reserved, x.replayed ? x.fits : device <= capacity_bytes);
}

void print_row(std::ostream& o, size_t i, const plan::PlanCandidate& c, bool confirmed_col) {
  char line[512];
  std::snprintf(line, sizeof line, "  %2zu  %-34s %-9s %-10s b%-3lld x%-4lld ckpt %3lld/%-3lld %8s GiB%s %10s\n", i + 1,
                parallel_text(c.par).c_str(), std::string(precision_name(c.precision)).c_str(),
                std::string(optimizer_name(c.optimizer)).c_str(), static_cast<long long>(c.micro_batch),
                static_cast<long long>(c.par.micro_batches), static_cast<long long>(c.ckpt_layers),
                static_cast<long long>(c.stage_layers), gib(c.device_bytes).c_str(),
                confirmed_col ? (" (replay " + gib(c.confirmed_device_bytes) + ")").c_str() : "",
                seconds_text(c.time.total_s).c_str());
  o << line;
}
}  // namespace

void register_plan(CLI::App& app, Context& ctx) {
  auto* cmd = app.add_subcommand("plan", "search parallelism, batch, precision, checkpointing, optimizer and offload");
  auto f = std::make_shared<PlanFlags>();
  cmd->add_option("--model", f->model, kModelHelp);
  cmd->add_option("--gpu", f->gpu, "GPU from data/gpus.json")->required();
  cmd->add_option("--gpus", f->gpus, "number of GPUs");
  cmd->add_option("--gpus-per-node", f->gpus_per_node, "GPUs per node (NVLink domain)");
  cmd->add_option("--calibration", f->calibration, "calibration profile (memplan calibrate): measured GEMM and bandwidth rates");
  cmd->add_option("--global-batch", f->global_batch, "samples per optimizer step (default 8 x data-parallel width 1)");
  cmd->add_option("--seq-len", f->seq_len, "sequence length (default 2048, BERT 512)");
  cmd->add_option("--image-size", f->image_size, "image size (vision models)");
  cmd->add_option("--allow", f->allow, "restrict a dimension: precision=..., optimizer=..., dp=..., offload=... (repeatable)");
  cmd->add_option("--top", f->top, "how many plans to confirm and list");
  cmd->add_option("--max-micro-batch", f->max_micro_batch, "largest micro-batch tried");
  cmd->add_option("--max-tp", f->max_tp, "largest tensor-parallel degree");
  cmd->add_option("--max-pp", f->max_pp, "largest pipeline-parallel degree");
  cmd->add_option("--attn", f->attn, "sdpa | eager (default: sdpa where the model supports it, else eager)");
  cmd->add_option("--optimizer-impl", f->optimizer_impl, "foreach | fused | forloop (torch optimizers)");
  cmd->add_flag("--no-checkpointing", f->no_checkpointing, "never checkpoint activations");
  cmd->add_flag("--no-sequence-parallel", f->no_sequence_parallel, "tensor parallel without sequence parallel");
  cmd->add_flag("--json", f->json, "machine-readable output: exactly one JSON document");
  cmd->add_flag("--quiet", f->quiet, "no progress line while searching, for scripts");
  cmd->add_flag("--stats", f->stats, "configurations evaluated and seconds");
  cmd->callback([f, &ctx] {
    std::ostream& out = ctx.out;
    const auto t0 = std::chrono::steady_clock::now();
    const ModelSpec m = load_model_for(f->model, ctx.in);
    const GpuSpec& g = find_gpu(f->gpu, "--gpu");
    if (f->gpus <= 0) throw InputError("--gpus", std::to_string(f->gpus), "must be positive");
    if (f->top <= 0) throw InputError("--top", std::to_string(f->top), "must be positive");
    // The search space grows with these; caps far above real clusters keep `plan` interactive and every
    // product (8 x gpus, dp x tp x pp) inside int64.
    const std::pair<const char*, std::pair<int64_t, int64_t>> caps[] = {
        {"--gpus", {f->gpus, kMaxPlanGpus}},          {"--gpus-per-node", {f->gpus_per_node, 1024}},
        {"--global-batch", {f->global_batch, kMaxBatch}}, {"--max-micro-batch", {f->max_micro_batch, 4096}},
        {"--max-tp", {f->max_tp, 1024}},              {"--max-pp", {f->max_pp, 1024}},
        {"--top", {f->top, 1000}}};
    for (const auto& [flag, v] : caps) {
      if (v.first < 0 || (v.first == 0 && std::string(flag) != "--global-batch"))
        throw InputError(flag, std::to_string(v.first), "must be positive");
      if (v.first > v.second)
        throw InputError(flag, std::to_string(v.first), "exceeds the limit of " + std::to_string(v.second));
    }
    RunFlags rf;
    rf.model = f->model;
    rf.seq_len = f->seq_len;
    rf.image_size = f->image_size;
    rf.attn = f->attn;
    rf.optimizer_impl = f->optimizer_impl;
    rf.gpu = f->gpu;
    const RunConfig base = run_config_from(rf, m);
    const DeviceBudget d = device_budget(rf);
    plan::PlanSpace s;
    s.gpus = f->gpus;
    s.global_batch = f->global_batch > 0 ? f->global_batch : 8 * f->gpus;
    s.max_micro_batch = f->max_micro_batch;
    s.max_tp = f->max_tp;
    s.max_pp = f->max_pp;
    s.checkpointing = !f->no_checkpointing;
    s.sequence_parallel = !f->no_sequence_parallel;
    s.capacity_bytes = d.capacity_bytes;
    s.non_pytorch_bytes = d.non_pytorch_bytes;
    s.rates = device_rates(g, f->gpus_per_node, f->calibration);
    if (g.bf16_tflops <= 0) s.precisions = {Precision::fp32, Precision::amp_fp16, Precision::fp16};
    apply_allow(f->allow, s);
    plan::Planner planner(m, base);
    Progress bar(ctx.progress, !f->json && !f->quiet, "searching");
    auto progress = [&bar](double frac) { bar.update(frac); };
    const plan::PlanResult r = planner.search(s, static_cast<size_t>(f->top), progress);
    bar.done();
    // The listed plans, rank 0 replayed (cli/plan_replay.h): the closed form stands where the replay does not
    // model the configuration (pipeline parallel, Megatron), and the output says which is which.
    std::vector<RankReplay> replays;
    for (const auto& c : r.top) replays.push_back(replay_candidate(m, base, c, d));
    size_t best = 0;  // the fastest plan that fits by its best figure (the replay where there is one)
    while (best < replays.size() && replays[best].replayed && !replays[best].fits) ++best;
    if (best == replays.size()) best = 0;
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (f->json) {
      nlohmann::json j;
      j["model"] = m.name;
      j["gpu"] = g.id;
      j["gpus"] = s.gpus;
      j["global_batch"] = s.global_batch;
      j["seq_len"] = base.seq_len;
      j["capacity_bytes"] = s.capacity_bytes;
      j["top"] = nlohmann::json::array();
      for (size_t i = 0; i < r.top.size(); ++i) {
        nlohmann::json c = candidate_json(r.top[i]);
        c["rank_replay"] = rank_replay_json(replays[i]);
        const Verdict v = finalist_verdict(m, base, r.top[i], replays[i], d, s.capacity_bytes);
        add_verdict_json(c, v);
        c["fits"] = v.fits;
        j["top"].push_back(std::move(c));
      }
      if (!r.top.empty()) j["best"] = best;
      j["pareto"] = nlohmann::json::array();
      for (const auto& c : r.pareto) j["pareto"].push_back(candidate_json(c));
      if (f->stats)
        j["stats"] = {{"configs_evaluated", r.configs_evaluated}, {"configs_feasible", r.configs_feasible},
                      {"replays", r.replays}, {"rejected_on_confirmation", r.rejected_on_confirmation}, {"seconds", secs}};
      out << j.dump(2) << "\n";
      return;
    }
    std::ostringstream o;
    o << "plan: " << m.name << " on " << s.gpus << " x " << g.id << " (" << gib(s.capacity_bytes) << " GiB each), global batch "
      << s.global_batch;
    if (m.kind == ModelSpec::Kind::transformer) o << " x seq " << base.seq_len;
    o << "\n";
    if (r.top.empty()) {
      o << "NOTHING FITS in the allowed space (" << r.configs_evaluated << " configurations evaluated). Allow more GPUs, "
        << "offload (--allow offload=optimizer_and_params), a smaller --global-batch or --seq-len.\n";
    } else {
      o << "\nFastest plans (device GiB: closed form, then the confirming replay with allocator slack; step time per "
           "optimizer step; under each, rank 0 of the whole step replayed, or why the closed form stands):\n";
      for (size_t i = 0; i < r.top.size(); ++i) {
        print_row(o, i, r.top[i], true);
        const RankReplay& x = replays[i];
        if (x.replayed)
          o << "        per-rank replay: " << gib(x.device_bytes) << " GiB on rank 0 (" << gib(x.peak_reserved_bytes)
            << " reserved" << (x.nccl_bytes > 0 ? " + NCCL " + gib(x.nccl_bytes) : std::string()) << "), "
            << (x.fits ? "fits" : "DOES NOT FIT") << (x.dist.enabled() ? "; with " + dist_flags(x.dist) : "")
            << "\n";
        else
          o << "        closed form only: " << x.closed_form_because << "\n";
        const Verdict v = finalist_verdict(m, base, r.top[i], x, d, s.capacity_bytes);
        o << "        verdict: " << verdict_title(v.kind) << ", " << margin_text(v) << "\n";
      }
      o << "\nBest: " << parallel_text(r.top[best].par) << ", " << settings_text(r.top[best]);
      if (replays[best].replayed && replays[best].dist.enabled()) o << " (" << dist_flags(replays[best].dist) << ")";
      o << "\n";
      o << "\nMemory-vs-time Pareto frontier (closed form):\n";
      for (size_t i = 0; i < r.pareto.size(); ++i) print_row(o, i, r.pareto[i], false);
    }
    if (f->stats) {
      char line[256];
      std::snprintf(line, sizeof line,
                    "\nstats: %lld configurations evaluated (%lld fit), %d replays, %d rejected on confirmation, %.3f s\n",
                    static_cast<long long>(r.configs_evaluated), static_cast<long long>(r.configs_feasible), r.replays,
                    r.rejected_on_confirmation, secs);
      o << line;
    }
    out << o.str();
  });
}

}  // namespace memplan::cli
