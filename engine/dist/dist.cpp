#include "engine/dist/dist.h"

#include <algorithm>

#include "engine/checked.h"
#include "engine/errors.h"

namespace memplan::dist {

void Strategy::tag_streams(MemEventStream& events) const {
  if (side_blocks_.empty()) return;
  // side_blocks_ is sorted by block (allocation order); events name blocks densely.
  int32_t max_block = side_blocks_.back().first;
  std::vector<int32_t> stream(static_cast<size_t>(max_block) + 1, 0);
  for (const auto& [b, s] : side_blocks_) stream[static_cast<size_t>(b)] = s;
  for (MemEvent& e : events)
    if (e.block <= max_block) e.stream = static_cast<int16_t>(stream[static_cast<size_t>(e.block)]);  // ids 0-3
}

int32_t Strategy::alloc_on(MemoryTracker& mem, int64_t bytes, Row row, int32_t stream) {
  const int32_t b = mem.alloc(bytes, row);
  if (stream != kDefaultStream) side_blocks_.emplace_back(b, stream);
  return b;
}

std::vector<ParamInfo> index_params(const Graph& g) {
  std::vector<int32_t> ordinal(g.tensors.size(), -1);
  std::vector<ParamInfo> out;
  for (size_t t = 0; t < g.tensors.size(); ++t) {
    const auto& ti = g.tensors[t];
    if (ti.kind != TensorKind::param && ti.kind != TensorKind::buffer) continue;
    ParamInfo p;
    p.ordinal = static_cast<int32_t>(out.size());
    p.tensor = static_cast<TensorId>(t);
    p.dtype = ti.dtype;
    p.numel = 1;
    for (int64_t d : ti.shape) p.numel = checked_mul(p.numel, d, "parameter elements");
    p.dim0 = ti.shape.empty() ? 1 : ti.shape.front();
    p.trainable = ti.kind == TensorKind::param && ti.trainable;
    p.buffer = ti.kind == TensorKind::buffer;
    ordinal[t] = p.ordinal;
    out.push_back(p);
  }
  // A parameter belongs to the layer whose op reads it first (fully_shard(layer) owns the layer's parameters;
  // what no layer reads is the root's).
  std::vector<bool> seen(out.size(), false);
  std::vector<int32_t> layer_of_op(g.ops.size(), kRoot);
  for (size_t l = 0; l < g.layers.size(); ++l)
    for (int32_t i = g.layers[l].first_op; i < g.layers[l].end_op; ++i) layer_of_op[static_cast<size_t>(i)] = static_cast<int32_t>(l);
  for (size_t i = 0; i < g.ops.size(); ++i)
    for (TensorId r : g.ops[i].reads) {
      const int32_t o = ordinal[static_cast<size_t>(r)];
      if (o < 0 || seen[static_cast<size_t>(o)]) continue;
      seen[static_cast<size_t>(o)] = true;
      out[static_cast<size_t>(o)].unit = layer_of_op[i];
    }
  return out;
}

bool parse_mp_dtype(std::string_view s, DType& out) {
  if (s == "bf16" || s == "bfloat16" || s == "torch.bfloat16") { out = DType::bf16; return true; }
  if (s == "fp16" || s == "float16" || s == "half" || s == "torch.float16") { out = DType::f16; return true; }
  if (s == "fp32" || s == "float32" || s == "float" || s == "torch.float32") { out = DType::f32; return true; }
  return false;
}

// NCCL 2.2x defaults (src/include/device.h / transport.h: DEFAULT_BUFFSIZE, DEFAULT_LL_BUFFSIZE,
// DEFAULT_LL128_BUFFSIZE): each peer connection of a channel has one buffer per protocol,
//   SIMPLE  NCCL_BUFFSIZE = 4 MiB,
//   LL      NCCL_LL_LINES_PER_THREAD 8 x 512 threads x NCCL_STEPS 8 x 16 B = 512 KiB,
//   LL128   NCCL_LL128_ELEMS_PER_THREAD 120 x 640 threads x NCCL_STEPS 8 x 8 B = 4.6875 MiB.
// Channels: the topology search settles on 16 ring / tree channels for H100 / H200 NVSwitch systems (the 32 of
// NCCL_MAX_NCHANNELS is reached only with NVLS / many NICs); a ring connects each rank to its previous and next
// rank (one peer in a ring of two), a tree adds up to two more that reuse ring connections here.
// Init: MECHANICS.md §2 measured 558 MiB outside the allocator for the first communicator (a world-1 group plus
// one all_reduce: NCCL's kernels, device-side communicator and work FIFO); later communicators do not load the
// kernels again and are counted with their connection buffers only. Derived, not measured: no multi-GPU machine
// is lent to this project, and the fake process group the per-rank measurements use creates no communicator.
NcclMemory nccl_memory(const std::vector<int64_t>& group_sizes) {
  constexpr int64_t kSimple = int64_t{4} << 20;
  constexpr int64_t kLl = int64_t{8} * 512 * 8 * 16;
  constexpr int64_t kLl128 = int64_t{120} * 640 * 8 * 8;
  constexpr int64_t kChannels = 16;
  constexpr int64_t kFirstInit = int64_t{558} << 20;
  NcclMemory m;
  m.channels = kChannels;
  for (int64_t n : group_sizes) {
    if (n <= 1) continue;
    const int64_t peers = std::min<int64_t>(n - 1, 2);
    const int64_t buffers = checked_mul(checked_mul(kChannels, peers), kSimple + kLl + kLl128, "nccl bytes");
    if (m.communicators == 0) m.init_bytes = kFirstInit;
    m.buffer_bytes = checked_add(m.buffer_bytes, buffers, "nccl bytes");
    ++m.communicators;
  }
  m.total_bytes = checked_add(m.init_bytes, m.buffer_bytes, "nccl bytes");
  return m;
}

std::unique_ptr<Strategy> make_rank_hooks(const RunConfig& cfg, const Graph& g, DType orig_dtype) {
  const DistributedConfig& d = cfg.distributed;
  std::unique_ptr<Strategy> s;
  switch (d.strategy) {
    case DistStrategy::ddp: s = make_ddp(cfg, g); break;
    case DistStrategy::fsdp2: s = make_fsdp2(cfg, g, orig_dtype); break;
    case DistStrategy::zero1: case DistStrategy::zero2: case DistStrategy::zero3: s = make_zero(cfg, g, orig_dtype); break;
    case DistStrategy::none:
      if (d.dp() > 1)
        throw InputError("distributed.strategy", "none",
                         "data parallel degree " + std::to_string(d.dp()) + " needs ddp, fsdp2 or zero1/2/3");
      s = make_tp_only(cfg, g);
      break;
  }
  RankReport& r = s->report_mut();
  r.strategy = d.strategy;
  r.world_size = d.world_size;
  r.dp = d.dp();
  r.tp = d.tp;
  r.rank = d.rank;
  r.dp_rank = d.rank / std::max<int64_t>(1, d.world_size / std::max<int64_t>(1, d.dp()));
  std::vector<int64_t> groups;
  if (d.dp() > 1) groups.push_back(d.dp());
  if (d.tp > 1) groups.push_back(d.tp);
  if (d.world_size > 1 && d.world_size != d.dp() && d.world_size != d.tp) groups.push_back(d.world_size);
  r.nccl = nccl_memory(groups);
  return s;
}

}  // namespace memplan::dist
