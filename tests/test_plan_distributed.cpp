// Closed forms of engine/plan/distributed.h against values derived by hand (written next to each case).
#include <catch2/catch.hpp>

#include "engine/checked.h"
#include "engine/errors.h"
#include "engine/plan/distributed.h"

using namespace memplan;
using namespace memplan::plan;

namespace {
constexpr int64_t G9 = 1'000'000'000;
constexpr int64_t kNccl = int64_t{558} << 20;

ShardStates states(int64_t psi, int64_t bytes_per, int64_t opt_state, int64_t transient, int64_t largest) {
  ShardStates s;
  s.params = psi;
  s.param_bytes_per = s.grad_bytes_per = bytes_per;
  s.optimizer_state_bytes = opt_state;
  s.optimizer_transient_bytes = transient;
  s.largest_layer_params = largest;
  return s;
}
ShardActivations acts(int64_t peak, int64_t grads, int64_t inflight = 0) { return {peak, grads, inflight}; }
ParallelConfig par(int64_t dp, DataParallel d, Offload o = Offload::none) {
  ParallelConfig p;
  p.dp = dp;
  p.dp_kind = d;
  p.offload = o;
  return p;
}
}  // namespace

TEST_CASE("DDP keeps bucket buffers and, without bucket views, a separate .grad", "[plan]") {
  // psi = 1e9 fp32 params (AMP master), AdamW state 8e9, foreach transient 4e9, activations 10e9 with 2e9
  // of gradients already produced at the backward peak; dp = 8.
  //   forward/backward: W 4e9 + G 2e9 + O 8e9 + A 10e9 = 24e9 > step(): 4e9 + 4e9 + 8e9 + 4e9 = 20e9
  //   buckets: 4e9 (all gradient bytes); one NCCL communicator.
  const auto s = states(G9, 4, 8 * G9, 4 * G9, G9 / 10);
  DistributedMemory m = distributed_memory(s, acts(10 * G9, 2 * G9), par(8, DataParallel::ddp));
  CHECK(m.weights == 4 * G9);
  CHECK(m.gradients == 2 * G9);
  CHECK(m.optimizer_state == 8 * G9);
  CHECK(m.activations == 10 * G9);
  CHECK(m.comm_buffers == 4 * G9);
  CHECK(m.nccl == kNccl);
  CHECK(m.gpu_total() == 28 * G9 + kNccl);
  CHECK_FALSE(m.optimizer_phase_peak);

  FrameworkOptions view;
  view.gradient_as_bucket_view = true;  // .grad is a view into the bucket: 2e9 less
  m = distributed_memory(s, acts(10 * G9, 2 * G9), par(8, DataParallel::ddp), view);
  CHECK(m.gpu_total() == 26 * G9 + kNccl);
}

TEST_CASE("ZeRO-3 bf16 matches the ZeRO paper's (2 + 2 + 12) psi / N plus gathered layers", "[plan]") {
  // psi = 7e9 bf16, AdamW state in bf16 4 B/param (28e9) -> DeepSpeed keeps it in fp32: 56e9, plus fp32
  // master 28e9: optimizer 84e9 / 8 = 10.5e9. Parameters 14e9 / 8 = 1.75e9, gradients 14e9 / 8 = 1.75e9:
  // states = 14e9 = 16 B x 7e9 / 8, the paper's figure.
  // Gathered: the current layer (2e8) + the prefetch bucket (5e7) = 2.5e8 x 2 B = 5e8.
  // Forward/backward: W 1.75e9 + 0.5e9, G at peak 8e9 / 8 = 1e9, O 10.5e9, A 20e9 = 33.75e9;
  // reduce bucket min(5e8, 7e9) x 2 B = 1e9.
  const auto s = states(7 * G9, 2, 28 * G9, 14 * G9, 2 * G9 / 10);
  const DistributedMemory m = distributed_memory(s, acts(20 * G9, 8 * G9), par(8, DataParallel::zero3));
  CHECK(m.weights == 2'250'000'000);
  CHECK(m.gradients == G9);
  CHECK(m.optimizer_state == 10'500'000'000);
  CHECK(m.comm_buffers == G9);
  CHECK(m.gpu_total() == 34'750'000'000 + kNccl);

  // Step phase states alone: 1.75e9 + 1.75e9 + 10.5e9 = 14e9 = 16 B/param / 8.
  const DistributedMemory idle = distributed_memory(s, acts(0, 0), par(8, DataParallel::zero3));
  CHECK(idle.optimizer_phase_peak);
  CHECK(idle.weights + idle.gradients + idle.optimizer_state == 14 * G9);
}

TEST_CASE("ZeRO stages shard optimizer, then gradients", "[plan]") {
  // psi = 1e9 AMP fp32 (no master copy), AdamW 8e9, dp 4, grads at peak 4e9 (backward done), A 1e9.
  const auto s = states(G9, 4, 8 * G9, 4 * G9, G9 / 10);
  const auto a = acts(G9, 4 * G9);
  const DistributedMemory z1 = distributed_memory(s, a, par(4, DataParallel::zero1));
  const DistributedMemory z2 = distributed_memory(s, a, par(4, DataParallel::zero2));
  CHECK(z1.optimizer_state == 2 * G9);  // 8e9 / 4
  CHECK(z1.gradients == 4 * G9);        // full
  CHECK(z2.gradients == G9);            // 4e9 / 4
  CHECK(z1.comm_buffers == 2 * G9);     // reduce bucket 5e8 x 4 B
  CHECK(z1.gpu_total() - z2.gpu_total() == 3 * G9);
}

TEST_CASE("FSDP2 all-gather and reduce-scatter buffers; reshard_after_forward=False", "[plan]") {
  // psi 1e9 fp32, dp 4, largest unit 1e8: W 1e9 + 2 x 1e8 x 4 B = 1.8e9; RS input 1e8 x 4 = 4e8;
  // G at peak 2e9 / 4 = 5e8; O 8e9 / 4 = 2e9; A 3e9 -> 7.3e9 + 4e8.
  const auto s = states(G9, 4, 8 * G9, 4 * G9, G9 / 10);
  DistributedMemory m = distributed_memory(s, acts(3 * G9, 2 * G9), par(4, DataParallel::fsdp2));
  CHECK(m.weights == 1'800'000'000);
  CHECK(m.comm_buffers == 400'000'000);
  CHECK(m.gpu_total() == 7'700'000'000 + kNccl);
  FrameworkOptions keep;
  keep.fsdp_reshard_after_forward = false;  // unsharded parameters stay: W = 4e9
  m = distributed_memory(s, acts(3 * G9, 2 * G9), par(4, DataParallel::fsdp2), keep);
  CHECK(m.weights == 4 * G9);
}

TEST_CASE("CPU offload moves optimizer state, master weights and fp32 gradients to the host", "[plan]") {
  // ZeRO-2 + offload, psi 1e9 bf16, dp 4: state 4e9 (bf16) -> 8e9 fp32 + master 4e9 = 12e9 / 4 = 3e9 host;
  // fp32 gradient partition 4e9 / 4 = 1e9 host. GPU: W 2e9, reduce bucket 5e8 x 2 B = 1e9, A 1e9.
  const auto s = states(G9, 2, 4 * G9, 2 * G9, G9 / 10);
  DistributedMemory m = distributed_memory(s, acts(G9, G9), par(4, DataParallel::zero2, Offload::optimizer));
  CHECK(m.host_bytes_per_gpu == 4 * G9);
  CHECK(m.optimizer_state == 0);
  CHECK(m.gpu_total() == 4 * G9 + kNccl);
  // ZeRO-3 + parameter offload: the parameter shard (2e9 / 4) joins the host; the GPU keeps gathered layers.
  m = distributed_memory(s, acts(G9, G9), par(4, DataParallel::zero3, Offload::optimizer_and_params));
  CHECK(m.host_bytes_per_gpu == 4 * G9 + G9 / 2);
  CHECK(m.weights == (G9 / 10 + 50'000'000) * 2);
}

TEST_CASE("Megatron distributed optimizer: 6 + 12/DP bytes per parameter", "[plan]") {
  // Megatron's theoretical memory (MECHANICS.md §9): bf16 params 2 B + fp32 main grads 4 B + (fp32 master 4 +
  // Adam 8) / DP. psi 3.37e9 (first stage of Llama-2-7B at PP 2), DP 8: 3.37e9 x 7.5 = 25.275e9.
  const int64_t psi = 3'370'000'000;
  const auto s = states(psi, 2, 4 * psi, 2 * psi, 202'000'000);
  ParallelConfig p = par(8, DataParallel::megatron);
  p.pp = 2;
  p.micro_batches = 128;
  const DistributedMemory m = distributed_memory(s, acts(0, 0, 0), p);
  CHECK(m.weights + m.gradients + m.optimizer_state == 25'275'000'000);
  // 1F1B: the first stage holds min(P, m) = 2 micro-batches: one more than the replayed one.
  const DistributedMemory m2 = distributed_memory(s, acts(10 * G9, 0, 9 * G9), p);
  CHECK(m2.pipeline_inflight == 9 * G9);
  CHECK(m2.nccl == 2 * kNccl);  // dp and pp groups
}

TEST_CASE("inconsistent parallel configurations are input errors", "[plan]") {
  CHECK_THROWS_AS(validate_parallel(par(2, DataParallel::none)), InputError);
  CHECK_THROWS_AS(validate_parallel(par(2, DataParallel::ddp, Offload::optimizer)), InputError);
  CHECK_THROWS_AS(validate_parallel(par(2, DataParallel::zero2, Offload::optimizer_and_params)), InputError);
  ParallelConfig sp = par(1, DataParallel::none);
  sp.sequence_parallel = true;
  CHECK_THROWS_AS(validate_parallel(sp), InputError);
}
