// Stages of distributed_memory(): (1) states per framework, at the forward/backward peak and in
// optimizer.step(); (2) buffers the framework holds; (3) the phase with more bytes decides the rows.
#include "engine/plan/distributed.h"

#include <algorithm>
#include <string>

#include "engine/checked.h"
#include "engine/errors.h"

namespace memplan::plan {

namespace {
constexpr std::string_view kDpNames[] = {"none", "ddp", "zero1", "zero2", "zero3", "fsdp2", "megatron"};
constexpr std::string_view kOffloadNames[] = {"none", "optimizer", "optimizer_and_params"};

int64_t mul(int64_t a, int64_t b) { return checked_mul(a, b, "distributed bytes"); }
int64_t add(int64_t a, int64_t b) { return checked_add(a, b, "distributed bytes"); }
int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

bool is_zero(DataParallel d) {
  return d == DataParallel::zero1 || d == DataParallel::zero2 || d == DataParallel::zero3;
}
bool shards_params(DataParallel d) { return d == DataParallel::zero3 || d == DataParallel::fsdp2; }
}  // namespace

std::string_view data_parallel_name(DataParallel d) { return kDpNames[static_cast<size_t>(d)]; }
std::string_view offload_name(Offload o) { return kOffloadNames[static_cast<size_t>(o)]; }

bool parse_data_parallel(std::string_view s, DataParallel& out) {
  for (size_t i = 0; i < std::size(kDpNames); ++i)
    if (s == kDpNames[i]) { out = static_cast<DataParallel>(i); return true; }
  return false;
}
bool parse_offload(std::string_view s, Offload& out) {
  for (size_t i = 0; i < std::size(kOffloadNames); ++i)
    if (s == kOffloadNames[i]) { out = static_cast<Offload>(i); return true; }
  return false;
}

int64_t master_bytes_per(const ShardStates& s, DataParallel d) {
  // DeepSpeed and Megatron keep an fp32 master copy of 16-bit parameters inside the optimizer; torch
  // optimizers (none, ddp, fsdp2) update the parameters in their own dtype.
  if ((is_zero(d) || d == DataParallel::megatron) && s.param_bytes_per < 4) return 4;
  return 0;
}

void validate_parallel(const ParallelConfig& p) {
  if (p.dp <= 0 || p.tp <= 0 || p.pp <= 0)
    throw InputError("parallel", std::to_string(p.dp) + "x" + std::to_string(p.tp) + "x" + std::to_string(p.pp),
                     "dp, tp and pp must be positive");
  if (p.micro_batches <= 0) throw InputError("micro_batches", std::to_string(p.micro_batches), "must be positive");
  if (p.dp > 1 && p.dp_kind == DataParallel::none)
    throw InputError("dp_kind", "none", "data parallel > 1 needs ddp, zero1-3, fsdp2 or megatron");
  if (p.offload != Offload::none && (p.dp_kind == DataParallel::none || p.dp_kind == DataParallel::ddp ||
                                     p.dp_kind == DataParallel::megatron))
    throw InputError("offload", std::string(offload_name(p.offload)), "needs zero1-3 or fsdp2");
  if (p.offload == Offload::optimizer_and_params && !shards_params(p.dp_kind))
    throw InputError("offload", "optimizer_and_params", "parameter offload needs zero3 or fsdp2");
  if (p.offload == Offload::optimizer && p.dp_kind == DataParallel::fsdp2)
    throw InputError("offload", "optimizer", "FSDP2's CPUOffloadPolicy offloads parameters too (optimizer_and_params)");
  if (p.sequence_parallel && p.tp == 1) throw InputError("sequence_parallel", "on", "needs tp > 1");
}

DistributedMemory distributed_memory(const ShardStates& s, const ShardActivations& a, const ParallelConfig& p,
                                     const FrameworkOptions& f) {
  validate_parallel(p);
  const int64_t n = p.dp, psi = s.params;
  const DataParallel d = p.dp_kind;
  const bool off_opt = p.offload != Offload::none;
  const bool off_par = p.offload == Offload::optimizer_and_params;
  const int64_t w_full = mul(psi, s.param_bytes_per), g_full = mul(psi, s.grad_bytes_per);
  const int64_t master = mul(psi, master_bytes_per(s, d));
  // DeepSpeed / Megatron optimizers hold fp32 state of the fp32 master copy, whatever the param dtype.
  const int64_t opt_state = (is_zero(d) || d == DataParallel::megatron) && s.param_bytes_per < 4
                                ? s.optimizer_state_bytes * 4 / s.param_bytes_per
                                : s.optimizer_state_bytes;
  const int64_t largest = std::min(s.largest_layer_params, psi);

  // Weights during forward/backward and during step().
  int64_t w_fb = w_full, w_opt = w_full, buffers = 0;
  // Gradients at the forward/backward peak and during step().
  int64_t g_fb = a.grads_at_peak_bytes, g_opt = g_full;
  int64_t o = add(opt_state, master), transient = s.optimizer_transient_bytes;
  switch (d) {
    case DataParallel::none: break;
    case DataParallel::ddp:
      buffers = g_full;  // buckets sized to all gradients, allocated at construction
      if (f.gradient_as_bucket_view) { g_fb = 0; g_opt = 0; }
      break;
    case DataParallel::megatron:
      g_fb = g_opt = mul(psi, 4);  // contiguous fp32 main_grad buffer, allocated at construction
      o = ceil_div(o, n);
      transient = 0;  // fused (Apex / TE) Adam
      break;
    case DataParallel::zero1: case DataParallel::zero2: case DataParallel::zero3: {
      const int64_t bucket = mul(std::min(f.zero_reduce_bucket_elems, psi), s.grad_bytes_per);
      buffers = d == DataParallel::zero3 ? bucket : mul(bucket, f.zero12_overlap_comm ? 2 : 1);
      o = ceil_div(o, n);
      transient = 0;  // DeepSpeed FusedAdam / CPUAdam: no foreach temporaries
      if (d != DataParallel::zero1) {
        g_fb = ceil_div(g_fb, n);
        g_opt = ceil_div(g_full, n);
      }
      if (d == DataParallel::zero3) {
        const int64_t gathered =
            std::min(f.zero3_max_live_params, largest + std::min(f.zero3_prefetch_bucket_elems, psi - largest));
        w_opt = ceil_div(w_full, n);
        w_fb = add(w_opt, mul(gathered, s.param_bytes_per));
      }
      break;
    }
    case DataParallel::fsdp2: {
      w_opt = ceil_div(w_full, n);
      // all-gather outputs: the current layer and the prefetched next one, unsharded
      const int64_t gathered = f.fsdp_reshard_after_forward ? mul(2 * largest, s.param_bytes_per) : w_full - w_opt;
      w_fb = add(w_opt, gathered);
      g_fb = ceil_div(g_fb, n);
      g_opt = ceil_div(g_full, n);
      buffers = mul(largest, s.grad_bytes_per);  // reduce-scatter input: one layer's unsharded gradient
      o = ceil_div(o, n);
      transient = ceil_div(transient, n);
      break;
    }
  }

  DistributedMemory m;
  if (off_opt) {
    // Optimizer state, master weights and fp32 gradient partitions move to pinned host memory; the GPU
    // keeps the reduce bucket. The step runs on the CPU.
    m.host_bytes_per_gpu = add(o, ceil_div(mul(psi, 4), n));
    o = 0;
    transient = 0;
    g_opt = 0;
    g_fb = d == DataParallel::zero1 ? g_fb : 0;
  }
  if (off_par) {
    m.host_bytes_per_gpu = add(m.host_bytes_per_gpu, ceil_div(w_full, n));
    w_fb = w_fb - w_opt;  // gathered layers only
    w_opt = 0;
  }

  int communicators = (d != DataParallel::none ? 1 : 0) + (p.tp > 1 ? 1 : 0) + (p.pp > 1 ? 1 : 0);
  m.nccl = mul(communicators, f.nccl_communicator_bytes);
  m.comm_buffers = buffers;
  m.optimizer_state = o;
  const int64_t inflight = mul(std::min(p.pp, p.micro_batches) - 1, a.inflight_bytes);
  const int64_t fb = add(add(add(w_fb, g_fb), add(a.peak_bytes, inflight)), o);
  const int64_t op = add(add(w_opt, g_opt), add(o, transient));
  if (op > fb) {
    m.optimizer_phase_peak = true;
    m.weights = w_opt;
    m.gradients = g_opt;
    m.optimizer_transient = transient;
  } else {
    m.weights = w_fb;
    m.gradients = g_fb;
    m.activations = a.peak_bytes;
    m.pipeline_inflight = inflight;
  }
  return m;
}

}  // namespace memplan::plan
