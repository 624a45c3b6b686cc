// Tensor parallel as the measurements run it (calibrate/dist_harness.py: torchtitan's plan on HF Llama modules):
// the local shard graph (plan::local_shard: heads, kv heads and intermediate / tp) with the vocabulary-sized
// parameters sharded but the logits whole. embed_tokens is RowwiseParallel(input_layouts=Replicate()) (rows =
// vocabulary / tp, output all-reduced) and lm_head ColwiseParallel(output_layouts=Replicate()) (its [B, S, V/tp]
// output all-gathered into a fresh full [B, S, V] on every rank, then HF's loss on the full logits: no
// loss_parallel). So the graph is built with the full vocabulary and shard_vocab_rows() cuts the vocabulary-row
// parameters (and their gradients and autocast copies) to this rank's torch.chunk rows, ceil(V / tp) on rank 0.
// Not modelled: the out-of-place functional all-reduce of each RowwiseParallel output (a fresh [B, S, H] per
// o_proj / down_proj / embedding call, the local output dropped right after), the lm_head's [B, S, V/tp] local
// output before its all-gather and the backward's chunk copies; sequence parallel's [B, S/tp, H] norms.
#include "engine/checked.h"
#include "engine/dist/dist.h"

namespace memplan::dist {

void shard_vocab_rows(Graph& g, int64_t vocab, int64_t tp) {
  if (tp <= 1 || vocab <= 0) return;
  const int64_t rows = (vocab + tp - 1) / tp;
  std::vector<bool> vocab_param(g.tensors.size(), false);
  auto cut = [&](TensorInfo& t) {
    if (t.bytes > 0) t.bytes = checked_mul(t.bytes / vocab, rows, "parameter bytes");
    t.shape[0] = rows;
  };
  for (size_t i = 0; i < g.tensors.size(); ++i) {
    TensorInfo& t = g.tensors[i];
    if (t.kind != TensorKind::param || t.shape.size() != 2 || t.shape[0] != vocab) continue;
    vocab_param[i] = true;
    cut(t);
  }
  for (TensorInfo& t : g.tensors)
    if (t.autocast_cache && t.cast_of != kNoTensor && vocab_param[static_cast<size_t>(t.cast_of)] && !t.shape.empty() &&
        t.shape[0] == vocab)
      cut(t);
  for (Op& op : g.ops)
    for (GradSpec& gs : op.grads) {
      if (!vocab_param[static_cast<size_t>(gs.input)] || gs.alias_out >= 0) continue;
      gs.bytes = checked_mul(gs.bytes / vocab, rows, "gradient bytes");
      if (gs.cast_to_bytes > 0) gs.cast_to_bytes = checked_mul(gs.cast_to_bytes / vocab, rows, "gradient bytes");
    }
}

}  // namespace memplan::dist
