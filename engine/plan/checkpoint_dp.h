// Activation-checkpoint placement on a chain of layers under a memory budget.
//
// Model (HF-style non-reentrant checkpointing of whole layers, plus Megatron-style selective recompute of
// the attention core), for layers 0..n-1 run forward in order and backward in reverse:
//   none       layer i keeps saved_bytes[i] until its backward;                     no extra time
//   full       keeps input_bytes[i]; when backward reaches it, its saved_bytes[i] are live again while
//              layers < i still hold what they keep and layers > i have been freed;   + recompute_s[i]
//   selective  keeps saved_bytes[i] - selective_saved_bytes[i];                         + selective_s[i]
// Peak = max( sum_i kept_i,  max over full i of ( sum_{j<i} kept_j + saved_bytes[i] ) ).
//
// optimal_checkpoints() minimises total recompute time subject to peak <= budget exactly on this model by
// dynamic programming over (layer, kept bytes so far), the prefix structure above making the recompute
// constraint local (Chen et al. 2016's segment view; Beaumont et al.'s "rotor" solves the richer multi-level
// schedule, which HF / torch.utils.checkpoint layer wrapping cannot express). Memory is counted in units of
// `quantum_bytes`, rounded up per layer, so a returned plan always fits; it is optimal for chains whose sizes
// are multiples of the quantum. O(n * budget/quantum * 3).
#pragma once
#include <cstdint>
#include <vector>

namespace memplan::plan {

enum class Ckpt : uint8_t { none, full, selective };

struct ChainLayer {
  int64_t saved_bytes = 0;            // saved for backward without checkpointing
  int64_t input_bytes = 0;            // kept when checkpointed (the layer input)
  double recompute_s = 0;             // forward time of the layer
  int64_t selective_saved_bytes = 0;  // bytes selective recompute drops (0: option unavailable)
  double selective_s = 0;             // time of recomputing the attention core
};

struct ChainPlan {
  std::vector<Ckpt> choice;
  int64_t peak_bytes = 0;
  double recompute_s = 0;
  bool feasible = false;
};

// Peak and time of a given choice vector on the model above.
ChainPlan evaluate_chain(const std::vector<ChainLayer>& layers, const std::vector<Ckpt>& choice);

ChainPlan optimal_checkpoints(const std::vector<ChainLayer>& layers, int64_t budget_bytes, int64_t quantum_bytes);

// Baselines: every_k fully checkpoints layers whose index is a multiple of k; sqrt_n is every_k with
// k = round(sqrt(n)) (Chen et al.'s segment size).
ChainPlan every_k(const std::vector<ChainLayer>& layers, int64_t k);
ChainPlan sqrt_n(const std::vector<ChainLayer>& layers);

// Indices of layers a plan checkpoints fully (for RunConfig::checkpoint_layers).
std::vector<int64_t> full_layers(const ChainPlan& p);

}  // namespace memplan::plan
