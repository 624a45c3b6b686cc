// DTensor's functional collectives in a tensor-parallel rank's graph (engine/dist/tp.cpp), on a measured case's
// model (h200-distributed.jsonl: ll4 = 4 Llama layers, hidden 2048, vocabulary 32000, b2 s1024, bf16): which
// collective ops the rewrite inserts, their sizes, and the events they put in the replayed step.
#include <algorithm>
#include <string>

#include <catch2/catch.hpp>

#include "engine/arch/builders.h"
#include "engine/dist/dist.h"
#include "engine/estimate.h"
#include "engine/plan/shard_fit.h"
#include "fidelity_cases.h"

using namespace memplan;

namespace {

const ValidationCase& tp_case(const std::string& id) {
  static const auto cases = testing::load_cases("h200-distributed.jsonl");
  const auto it = std::find_if(cases.begin(), cases.end(), [&](const ValidationCase& c) { return c.id == id; });
  REQUIRE(it != cases.end());
  return *it;
}

// The rank graph as estimate() builds it (engine/estimate.cpp estimate_rank; bf16, no mixed precision).
Graph rank_graph(const ValidationCase& c) {
  const auto& d = c.run.distributed;
  ModelSpec local = plan::local_shard(c.model, d.tp, 0);
  local.transformer.vocab_size = c.model.transformer.vocab_size;
  Graph g = build_graph(local, c.run);
  dist::tensor_parallel_rewrite(g, c.model.transformer.vocab_size, d.tp);
  if (d.sequence_parallel) dist::shard_sequence(g, c.run.seq_len, c.model.transformer.hidden_size, d.tp);
  return g;
}

struct Counts {
  int all_reduce = 0, reduce_scatter = 0, all_gather = 0, fresh_from_local = 0, slice = 0;
};
Counts count(const Graph& g) {
  Counts n;
  for (const Op& op : g.ops) {
    const std::string& name = g.name_of(op.name);
    n.all_reduce += name == "all_reduce";
    n.reduce_scatter += name == "reduce_scatter";
    n.all_gather += name == "all_gather";
    n.slice += name == "slice";
    n.fresh_from_local += name == "from_local" && !op.grads.empty() && op.grads[0].alias_out < 0;
  }
  return n;
}

constexpr int64_t kBSH = int64_t{2} * 1024 * 2048 * 2;  // [B, S, H] bf16

}  // namespace

TEST_CASE("tensor parallel rank graph: the functional collectives around each parallelised module", "[dist][tp]") {
  const ValidationCase& c = tp_case("d1-tp8-ll4-bf16-b2s1024");
  const Graph g = rank_graph(c);
  const Counts n = count(g);
  CHECK(n.all_reduce == 1 + 2 * 4);        // the embedding, o_proj and down_proj of every layer
  CHECK(n.all_gather == 1);                // the lm_head's logits
  CHECK(n.fresh_from_local == 5 * 4 + 1);  // q, k, v, gate, up of every layer, and the lm_head: input grads all-reduced
  CHECK(n.reduce_scatter == 0);
  for (const Op& op : g.ops) {
    const std::string& name = g.name_of(op.name);
    if (name == "all_reduce") {
      CHECK(g.tensors[static_cast<size_t>(op.outs[0])].bytes == kBSH);  // a fresh [B, S, H] per call
      REQUIRE(op.grads.size() == 1);
      CHECK(op.grads[0].alias_out == 0);  // Partial -> Replicate's backward communicates nothing
    }
    if (name == "all_gather") {
      const int64_t local = int64_t{2} * 1024 * 4000 * 2;  // [B, S, V / 8]
      CHECK(g.tensors[static_cast<size_t>(op.reads[0])].bytes == local);
      CHECK(g.tensors[static_cast<size_t>(op.outs[0])].bytes == 8 * local);  // all_gather_into_tensor
      CHECK(g.tensors[static_cast<size_t>(op.outs[1])].bytes == 8 * local);  // chunk_cat: the full logits
      REQUIRE(op.grads.size() == 1);
      CHECK(op.grads[0].bytes == local);  // _select_split_tensor of the logits' gradient
    }
    if (name == "embedding")  // the Replicate [V, H] gradient of a Shard(0) parameter
      CHECK(op.grads[0].bytes == int64_t{32000} * 2048 * 2);
  }
  const std::vector<bool> rep = dist::replicate_grad_params(g);
  CHECK(std::count(rep.begin(), rep.end(), true) == 1);
}

TEST_CASE("sequence parallel rank graph: reduce-scatter, shared all-gathers, layer 0's slice", "[dist][tp]") {
  const ValidationCase& c = tp_case("d1-tp4-ll4-bf16-sp-b2s1024");
  const Graph g = rank_graph(c);
  const Counts n = count(g);
  CHECK(n.reduce_scatter == 2 * 4);
  CHECK(n.all_reduce == 1);             // the embedding's output stays replicated
  CHECK(n.all_gather == 2 * 4 + 1 + 1);  // attention and MLP inputs, the lm_head's input, the logits
  CHECK(n.fresh_from_local == 0);
  CHECK(n.slice == 1);
  for (const Op& op : g.ops)
    if (g.name_of(op.name) == "reduce_scatter") {
      CHECK(g.tensors[static_cast<size_t>(op.outs[0])].bytes == kBSH / 4);  // [B, S / tp, H]
      REQUIRE(op.grads.size() == 1);
      CHECK(op.grads[0].bytes == kBSH);  // backward: the gradient all-gathered to [B, S, H] ...
      CHECK(op.bwd_pre_temp_bytes.size() == 1);  // ... through all_gather_into_tensor's output
    }
}

TEST_CASE("tensor parallel replay: each row-parallel output is a fresh block next to its local partial", "[dist][tp]") {
  const ValidationCase& c = tp_case("d1-tp8-ll4-bf16-b2s1024");
  EstimateOptions opt = estimate_options_for(c);
  const Estimate e = estimate(c.model, c.run, opt);
  // In the events: a [B, S, H] allocation followed by another [B, S, H] allocation and, among the frees right
  // after, the first block's is one out-of-place all-reduce (the partial dies once its reduced copy exists).
  const auto& ev = e.replay.events;
  int pairs = 0;
  for (size_t i = 0; i + 2 < ev.size(); ++i) {
    if (ev[i].action != MemEvent::Action::alloc || ev[i].size_bytes != kBSH || ev[i + 1].action != MemEvent::Action::alloc ||
        ev[i + 1].size_bytes != kBSH)
      continue;
    for (size_t k = i + 2; k < ev.size() && ev[k].action == MemEvent::Action::free; ++k)
      if (ev[k].block == ev[i].block) ++pairs;
  }
  CHECK(pairs >= 3 * 9);  // 3 steps x (embedding + 2 per layer): o_proj's and down_proj's partials
}
