#include "engine/run_config.h"

#include <array>
#include <utility>

namespace memplan {

namespace {
template <typename E, size_t N>
std::string_view name_in(const std::array<std::pair<E, std::string_view>, N>& table, E e) {
  for (const auto& [k, v] : table) if (k == e) return v;
  return "?";
}
template <typename E, size_t N>
bool parse_in(const std::array<std::pair<E, std::string_view>, N>& table, std::string_view s, E& out) {
  for (const auto& [k, v] : table) if (v == s) { out = k; return true; }
  return false;
}

constexpr std::array<std::pair<Precision, std::string_view>, 5> kPrecision{{
    {Precision::fp32, "fp32"}, {Precision::amp_bf16, "amp_bf16"}, {Precision::amp_fp16, "amp_fp16"},
    {Precision::bf16, "bf16"}, {Precision::fp16, "fp16"}}};
constexpr std::array<std::pair<OptimizerKind, std::string_view>, 6> kOptimizer{{
    {OptimizerKind::sgd, "sgd"}, {OptimizerKind::sgd_momentum, "sgd_momentum"}, {OptimizerKind::adam, "adam"},
    {OptimizerKind::adamw, "adamw"}, {OptimizerKind::adafactor, "adafactor"}, {OptimizerKind::adam8bit, "adam8bit"}}};
constexpr std::array<std::pair<OptimizerImpl, std::string_view>, 3> kImpl{{
    {OptimizerImpl::foreach, "foreach"}, {OptimizerImpl::fused, "fused"}, {OptimizerImpl::forloop, "forloop"}}};
constexpr std::array<std::pair<AttnImpl, std::string_view>, 2> kAttn{{
    {AttnImpl::sdpa, "sdpa"}, {AttnImpl::eager, "eager"}}};
constexpr std::array<std::pair<Task, std::string_view>, 5> kTask{{{Task::lm, "lm"},
                                                                  {Task::seq_cls, "seq_cls"},
                                                                  {Task::token_cls, "token_cls"},
                                                                  {Task::feature, "feature"},
                                                                  {Task::semantic_seg, "semantic_seg"}}};
constexpr std::array<std::pair<DistStrategy, std::string_view>, 6> kDistStrategy{{
    {DistStrategy::none, "none"}, {DistStrategy::ddp, "ddp"}, {DistStrategy::fsdp2, "fsdp2"},
    {DistStrategy::zero1, "zero1"}, {DistStrategy::zero2, "zero2"}, {DistStrategy::zero3, "zero3"}}};
constexpr std::array<std::pair<DistOffload, std::string_view>, 3> kDistOffload{{
    {DistOffload::none, "none"}, {DistOffload::optimizer, "optimizer"}, {DistOffload::params, "params"}}};
constexpr std::array<std::pair<WeightsLoad, std::string_view>, 2> kWeightsLoad{{
    {WeightsLoad::on_device, "on_device"}, {WeightsLoad::to_device, "to_device"}}};
}  // namespace

std::string_view weights_load_name(WeightsLoad w) { return name_in(kWeightsLoad, w); }
bool parse_weights_load(std::string_view s, WeightsLoad& out) { return parse_in(kWeightsLoad, s, out); }

std::string_view dist_strategy_name(DistStrategy s) { return name_in(kDistStrategy, s); }
bool parse_dist_strategy(std::string_view s, DistStrategy& out) { return parse_in(kDistStrategy, s, out); }
std::string_view dist_offload_name(DistOffload o) { return name_in(kDistOffload, o); }
bool parse_dist_offload(std::string_view s, DistOffload& out) { return parse_in(kDistOffload, s, out); }

std::string_view precision_name(Precision p) { return name_in(kPrecision, p); }
std::string_view optimizer_name(OptimizerKind o) { return name_in(kOptimizer, o); }
std::string_view optimizer_impl_name(OptimizerImpl o) { return name_in(kImpl, o); }
std::string_view attn_name(AttnImpl a) { return name_in(kAttn, a); }

bool parse_precision(std::string_view s, Precision& out) { return parse_in(kPrecision, s, out); }
bool parse_optimizer(std::string_view s, OptimizerKind& out) { return parse_in(kOptimizer, s, out); }
bool parse_optimizer_impl(std::string_view s, OptimizerImpl& out) {
  if (s == "default") { out = OptimizerImpl::foreach; return true; }  // torch.optim's CUDA default
  return parse_in(kImpl, s, out);
}
bool parse_attn(std::string_view s, AttnImpl& out) { return parse_in(kAttn, s, out); }
std::string_view task_name(Task t) { return name_in(kTask, t); }
bool parse_task(std::string_view s, Task& out) { return parse_in(kTask, s, out); }

}  // namespace memplan
