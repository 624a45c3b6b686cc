#include "engine/dist/dist.h"
#include "engine/errors.h"

namespace memplan::dist {
std::unique_ptr<Strategy> make_zero(const RunConfig& cfg, const Graph&, DType) {
  throw InputError("distributed.strategy", std::string(dist_strategy_name(cfg.distributed.strategy)),
                   "the per-rank ZeRO replay is not implemented yet (ddp and fsdp2 are)");
}
}  // namespace memplan::dist
