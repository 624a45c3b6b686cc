// Distributed training memory per GPU (and on the host), composed with the single-GPU replay.
//
// Stages:
//   1. The caller replays the *local shard* one GPU runs (tensor parallel: heads, kv heads, intermediate and
//      vocabulary divided by T; pipeline parallel: layers/P of the model) and splits the replay's peak into
//      ShardStates (weights, gradients, optimizer state of the local shard, unsharded across data parallel)
//      and ShardActivations (everything else at the forward/backward peak, for one micro-batch).
//   2. distributed_memory() shards the states across data parallel with closed forms per framework and adds
//      the framework's buffers, the in-flight micro-batches of the first pipeline stage and NCCL memory.
//
// Framework semantics modelled (defaults are the frameworks' defaults):
//   none   single process, no wrapper (dp must be 1).
//   ddp    torch DDP: bucket buffers equal to the gradient bytes allocated at construction; with
//          gradient_as_bucket_view=False (default) .grad is kept separately => 2 x gradient memory.
//   zero1  DeepSpeed stage 1: optimizer state (+ fp32 master weights when params are 16-bit) / dp; full
//          gradients; a reduce bucket (reduce_bucket_size elements, x2 with overlap_comm) and an all-gather
//          bucket (allgather_bucket_size elements), each capped at the local parameter count.
//   zero2  + gradients / dp (reduced bucket by bucket during backward).
//   zero3  + parameters / dp; gathered-layer buffers: the layer being computed plus the prefetch bucket,
//          at most stage3_max_live_parameters elements.
//   fsdp2  torch FSDP2 (fully_shard per layer): parameters, gradients, optimizer state / dp; all-gather output
//          of world x padded shard = one layer unsharded, two live (current + implicit prefetch); the
//          reduce-scatter input is one layer's full unsharded gradient in the reduce dtype;
//          reshard_after_forward=False keeps every layer's unsharded parameters from forward to backward.
//   megatron  Megatron-LM DDP with the distributed optimizer: contiguous fp32 main-gradient buffer
//          (4 B/param, unsharded), optimizer state + fp32 master weights / dp.
//   Offload (DeepSpeed ZeRO-Offload / ZeRO-Infinity CPU): optimizer state, fp32 master weights and fp32
//   gradient partitions live in pinned host memory; the GPU keeps the reduce bucket only. Parameter offload
//   (stage 3 / fsdp2) keeps only gathered layers on the GPU.
//   Tensor parallel is in the shard replay; sequence parallel divides the per-layer activations of the
//   unsharded (T=1) layer by T (Korthikanti et al. 2022: 34sbh/t), so callers pass activations accordingly.
//   Pipeline parallel (Megatron 1F1B): the first stage holds min(P, micro_batches) micro-batches' saved
//   activations when the first backward starts.
#pragma once
#include <cstdint>
#include <string_view>

namespace memplan::plan {

enum class DataParallel : uint8_t { none, ddp, zero1, zero2, zero3, fsdp2, megatron };
enum class Offload : uint8_t { none, optimizer, optimizer_and_params };

std::string_view data_parallel_name(DataParallel d);
std::string_view offload_name(Offload o);
bool parse_data_parallel(std::string_view s, DataParallel& out);
bool parse_offload(std::string_view s, Offload& out);

struct ParallelConfig {
  int64_t dp = 1, tp = 1, pp = 1;
  bool sequence_parallel = false;
  DataParallel dp_kind = DataParallel::none;
  Offload offload = Offload::none;
  int64_t micro_batches = 1;  // per optimizer step on each pipeline (gradient accumulation)
  int64_t world() const { return dp * tp * pp; }
};

struct FrameworkOptions {
  bool gradient_as_bucket_view = false;          // torch DDP default
  int64_t zero_reduce_bucket_elems = 500'000'000;     // DeepSpeed reduce_bucket_size default
  int64_t zero_allgather_bucket_elems = 500'000'000;  // DeepSpeed allgather_bucket_size default
  bool zero12_overlap_comm = false;               // DeepSpeed default for stages 1/2
  int64_t zero3_prefetch_bucket_elems = 50'000'000;    // stage3_prefetch_bucket_size default
  int64_t zero3_max_live_params = 1'000'000'000;        // stage3_max_live_parameters default
  bool fsdp_reshard_after_forward = true;         // FSDP2 default for non-root modules
  int64_t nccl_communicator_bytes = int64_t{558} << 20;  // MECHANICS.md §2: one group + all_reduce
};

// The local shard's states before data-parallel sharding.
struct ShardStates {
  int64_t params = 0;                 // trainable parameters of this GPU's TP/PP shard
  int64_t largest_layer_params = 0;   // the largest FSDP / ZeRO-3 unit (a decoder layer or the embedding)
  int64_t param_bytes_per = 4;        // bytes per parameter element (4 fp32 / AMP master, 2 bf16 / fp16)
  int64_t grad_bytes_per = 4;         // bytes per gradient element
  int64_t optimizer_state_bytes = 0;  // OptimizerModel::state_bytes of the local shard
  int64_t optimizer_transient_bytes = 0;  // temporaries of one step() (foreach: 1 x param bytes)
};

// The activation side of the local shard replay (one micro-batch), bytes.
struct ShardActivations {
  int64_t peak_bytes = 0;          // at the forward/backward peak: everything except weights/gradients/states
  int64_t grads_at_peak_bytes = 0; // gradients live at that peak (backward has produced some already)
  int64_t inflight_bytes = 0;      // saved activations one more in-flight micro-batch holds (PP first stage)
};

// Per-GPU memory by row (the worst pipeline stage, at its worst phase) and host memory. Rows add to the total.
struct DistributedMemory {
  int64_t weights = 0, gradients = 0, optimizer_state = 0, activations = 0, pipeline_inflight = 0,
          comm_buffers = 0, optimizer_transient = 0, nccl = 0;
  int64_t host_bytes_per_gpu = 0;  // pinned host memory (offload) per GPU process
  bool optimizer_phase_peak = false;  // the peak is in optimizer.step(), not in forward/backward
  int64_t gpu_total() const {
    return weights + gradients + optimizer_state + activations + pipeline_inflight + comm_buffers +
           optimizer_transient + nccl;
  }
};

// Master weights DeepSpeed / Megatron keep in fp32 when parameters are 16-bit, bytes per parameter.
int64_t master_bytes_per(const ShardStates& s, DataParallel d);

// Throws InputError naming the field for inconsistent configurations (dp > 1 with `none`, offload with ddp,
// parameter offload below stage 3, sequence parallel without tp).
void validate_parallel(const ParallelConfig& p);

DistributedMemory distributed_memory(const ShardStates& s, const ShardActivations& a, const ParallelConfig& p,
                                     const FrameworkOptions& f = {});

}  // namespace memplan::plan
