#include "engine/dist/dist.h"
#include "engine/errors.h"

namespace memplan::dist {
std::unique_ptr<Strategy> make_zero(const RunConfig& cfg, const Graph& g, DType) {
  if (cfg.distributed.strategy == DistStrategy::zero1) return make_zero1_torch(cfg, g);
  throw InputError("distributed.strategy", std::string(dist_strategy_name(cfg.distributed.strategy)),
                   "the per-rank ZeRO-2 / ZeRO-3 replay is not implemented yet (ddp, fsdp2 and zero1 are)");
}
}  // namespace memplan::dist
