// Tensor parallel as the measurements run it (calibrate/dist_harness.py: torchtitan's plan on HF Llama modules):
// the local shard graph (plan::local_shard: heads, kv heads and intermediate / tp) with the vocabulary-sized
// parameters sharded but the logits whole. embed_tokens is RowwiseParallel(input_layouts=Replicate()) (rows =
// vocabulary / tp, output all-reduced) and lm_head ColwiseParallel(output_layouts=Replicate()) (its [B, S, V/tp]
// output all-gathered into a fresh full [B, S, V] on every rank, then HF's loss on the full logits: no
// loss_parallel). So the graph is built with the full vocabulary and shard_vocab_rows() cuts the vocabulary-row
// parameters (and their gradients and autocast copies) to this rank's torch.chunk rows, ceil(V / tp) on rank 0.
// Sequence parallel (shard_sequence): the decoder layers take and return [B, S/tp, H]; the norms (input,
// post-attention, final) run on sequence shards; attention / MLP inputs are all-gathered to [B, S, H] (what the
// q / k / v and gate / up linears save); o / down reduce-scatter back to [B, S/tp, H]. In the graph: every tensor
// a layer's ops create from its start, and again after a row-parallel linear (output width = hidden), up to the
// next linear is cut to S/tp along its sequence dimension, except the linear's own input, which stands for the
// all-gathered tensor; the final norm likewise up to the head. Gradients of cut tensors are cut alike.
// Not modelled: the out-of-place functional all-reduce of each RowwiseParallel output (a fresh [B, S, H] per
// o_proj / down_proj / embedding call, the local output dropped right after), the lm_head's [B, S, V/tp] local
// output before its all-gather and the backward's chunk copies; with sequence parallel the [B, S/tp, H] shard
// of each norm output next to its gathered copy and layer 0's Replicate -> Shard(1) slice; the embedding backward's
// full-vocabulary [V, H] gradient, which the recordings show next to the rank's [V / tp, H] .grad from the
// embedding's backward until zero_grad (tp only; a transient under FSDP2 x TP; d2-tp4-ll6w-bf16: 98,304,000 B).
#include <string>
#include <vector>

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

void shard_sequence(Graph& g, int64_t seq_len, int64_t hidden, int64_t tp) {
  if (tp <= 1 || seq_len <= 1) return;
  const int64_t local = (seq_len + tp - 1) / tp;
  std::vector<bool> cut(g.tensors.size(), false), gathered(g.tensors.size(), false);
  std::vector<int32_t> layer_of_op(g.ops.size(), -1);
  for (size_t l = 0; l < g.layers.size(); ++l)
    for (int32_t i = g.layers[l].first_op; i < g.layers[l].end_op; ++i) layer_of_op[static_cast<size_t>(i)] = static_cast<int32_t>(l);
  bool region = false, seen_layer = false;
  for (size_t i = 0; i < g.ops.size(); ++i) {
    const Op& op = g.ops[i];
    const int32_t l = layer_of_op[i];
    if (l >= 0 && static_cast<int32_t>(i) == g.layers[static_cast<size_t>(l)].first_op) {
      region = true;
      seen_layer = true;
    }
    if (l < 0 && !seen_layer) continue;  // embedding and rotary tables: whole
    const std::string& name = g.name_of(op.name);
    if (name == "linear" || name == "addmm" || name == "matmul") {
      if (!op.reads.empty()) gathered[static_cast<size_t>(op.reads[0])] = true;
      const auto& out = g.tensors[static_cast<size_t>(op.outs[0])];
      region = l >= 0 && !out.shape.empty() && out.shape.back() == hidden;  // row-parallel: reduce-scatter after
      continue;
    }
    if (region)
      for (TensorId o : op.outs) cut[static_cast<size_t>(o)] = true;
  }
  auto seq_dim = [&](const TensorInfo& t) -> int {
    for (size_t d = 1; d < t.shape.size(); ++d)
      if (t.shape[d] == seq_len) return static_cast<int>(d);
    return -1;
  };
  std::vector<bool> done(g.tensors.size(), false);
  for (size_t t = 0; t < g.tensors.size(); ++t) {
    TensorInfo& ti = g.tensors[t];
    if (!cut[t] || gathered[t] || ti.kind != TensorKind::activation) continue;
    const int d = seq_dim(ti);
    if (d < 0) continue;
    ti.shape[static_cast<size_t>(d)] = local;
    if (ti.bytes > 0) ti.bytes = checked_mul(ti.bytes / seq_len, local, "activation bytes");
    done[t] = true;
  }
  for (Op& op : g.ops)
    for (GradSpec& gs : op.grads) {
      if (!done[static_cast<size_t>(gs.input)] || gs.alias_out >= 0) continue;
      gs.bytes = checked_mul(gs.bytes / seq_len, local, "gradient bytes");
      if (gs.cast_to_bytes > 0) gs.cast_to_bytes = checked_mul(gs.cast_to_bytes / seq_len, local, "gradient bytes");
    }
}

}  // namespace memplan::dist
