// BeitForImageClassification (transformers 5.17 models/beit/modeling_beit.py) and
// Data2VecVisionForImageClassification (models/data2vec/modeling_data2vec_vision.py, BEiT's statements under the
// prefix data2vec_vision), training forward + cross entropy and the inference forward. Written first from an older
// copy (family set 38, predicted blind: data/validation/predictions/families38-holdout.json), then rewritten on the
// installed 5.17 file after the set was measured (H100, data/validation/h100-families.jsonl). Stages:
//   BeitEmbeddings: projection(pixel_values).flatten(2).transpose(1, 2) (a view); cat((cls_token.expand, patches))
//     [+ position_embeddings, returned as they are at the config's size]; dropout. Under autocast the bf16 patches
//     promote to the fp32 cls token's dtype: the residual stream is fp32.
//   BeitModel: create_bidirectional_mask gives None; with use_shared_relative_position_bias the shared
//     BeitRelativePositionBias (below) becomes the attention_mask, built once and bound until the model returns.
//   BeitLayer (GradientCheckpointingLayer; drop path rate drop_path_rate * i / max(n - 1, 1), nn.Identity at 0):
//     its own BeitRelativePositionBias first (the layer's attention_mask, bound until it returns); residual = h;
//     layernorm_before; BeitAttention: q_proj (bias), k_proj (no bias), v_proj (bias) viewed [B, S, heads, hd]
//     .transpose(1, 2); the attention interface with the mask: SDPA (a float mask needing a gradient: the
//     memory-efficient kernel, engine/arch/sdpa_bias.h) or eager_attention_forward (matmul * scaling + mask,
//     softmax(dtype=float32).to(q.dtype), dropout, matmul, transpose(1, 2).contiguous(); the probabilities are
//     returned and bound as the layer's `_` until it returns); reshape; o_proj. dropout; lambda_1 * h (the float
//     1.0 without layer scale: a new tensor all the same); drop_path + residual; residual = h; layernorm_after;
//     BeitMLP (fc1, gelu, fc2; its argument bound until it returns); dropout; lambda_2 *; drop_path + residual.
//   BeitRelativePositionBias.forward (every call, the same grid too): the table's first (2w - 1)^2 rows viewed
//     [1, 2w - 1, 2w - 1, heads].permute(0, 3, 1, 2) and interpolated bilinear to the same size (a new fp32
//     tensor, channels-last like its input, so the permute(0, 2, 3, 1).reshape back is a view); cat with the three
//     cls rows; gathered at the relative position index ([N * N] int64, a CPU tensor lru-cached per grid: copied to
//     the device for the gather and again for its backward's index_put, which sorts it); view [N, N, heads],
//     permute(2, 0, 1).contiguous() (a copy; its backward's reshape of the permuted gradient copies too);
//     unsqueeze(0): [1, heads, N, N].
//   BeitModel: layernorm (nn.Identity with use_mean_pooling); BeitPooler: LayerNorm(h[:, 1:, :].mean(1)) with
//     mean pooling, else h[:, 0]. Head: classifier -> ForSequenceClassificationLoss (cross entropy, mean).
// Python bindings: BeitModel.forward keeps embedding_output bound until it returns and its loop variable holds
// each layer's input until the layer returns; BeitForImageClassification keeps outputs (sequence_output,
// pooler_output) and the logits bound until it returns, after the loss.
// Parameters in model.to("cuda") order (Module._apply: children first): the patch projection, then the embeddings'
// own cls_token (mask_token), position_embeddings; the shared table; per layer q, k, v, o, the two LayerNorms, fc1,
// fc2, its table, then lambda_1, lambda_2; the model's layernorm or the pooler's; the classifier. Built on the
// device, cls_token (mask_token) come before the projection and each layer's table after its lambdas.
#include "engine/arch/builders.h"
#include "engine/arch/encoders/bert_parts.h"
#include "engine/arch/vision/hf_backbone_parts.h"
#include "engine/arch/vision/hf_vit_parts.h"
#include "engine/checked.h"
#include "engine/errors.h"
#include "engine/reduce_workspace.h"

namespace memplan {

namespace {

using hfvit::VitLinear;

TensorId apply(GraphBuilder& b, const VitLinear& l, TensorId x) { return b.linear(x, l.w, l.b); }

struct BeitLayerParams : hfvit::VitLayerParams {
  TensorId table = kNoTensor;  // relative_position_bias_table [(2w - 1)^2 + 3, heads], per layer
  TensorId lambda1 = kNoTensor, lambda2 = kNoTensor;
};

int64_t table_rows(int64_t side) { return (2 * side - 1) * (2 * side - 1) + 3; }

// BeitLayer's parameters: attention (q, k, v, o projections), layernorm_before, layernorm_after, mlp (fc1, fc2),
// then lambda_1 / lambda_2 (assigned after the submodules) and the relative_position_bias submodule last. Built on
// the device they come in that order; model.to("cuda") moves the submodules (the table among them) before the
// layer's own lambdas.
BeitLayerParams layer_params(GraphBuilder& b, const TransformerSpec& s, const std::string& p, int64_t side,
                             bool train, bool built_on_device) {
  const int64_t H = s.hidden_size;
  // ViTLayer's modules under BeitLayer's names; q_proj and v_proj with biases, k_proj without (the importer sets
  // qkv_bias)
  BeitLayerParams w{{hfvit::vit_layer_params(b, s, p, train, /*key_bias=*/false)}};
  auto table = [&] {
    if (s.beit_rel_pos)
      w.table = b.param(p + "relative_position_bias.relative_position_bias_table", {table_rows(side), s.num_heads},
                        train);
  };
  if (!built_on_device) table();
  if (s.beit_layer_scale) {
    w.lambda1 = b.param(p + "lambda_1", {H}, train);
    w.lambda2 = b.param(p + "lambda_2", {H}, train);
  }
  if (built_on_device) table();
  return w;
}

// BeitRelativePositionBias.forward for the config's grid (side x side patches, N = side^2 + 1 tokens):
// [1, heads, N, N] in the table's dtype.
TensorId relative_position_bias(GraphBuilder& b, TensorId table, int64_t side, int64_t heads) {
  const int64_t w2 = 2 * side - 1, rows = table_rows(side), N = side * side + 1;
  const DType dt = b.dtype(table);
  const int64_t nn_idx_bytes = checked_mul(checked_mul(N, N), 8);
  // F.interpolate(bilinear) of the first rows' [1, heads, 2w - 1, 2w - 1] view: a new tensor; its backward
  // (upsample_bilinear2d_backward, then the slice's) gives the table a fresh gradient.
  const TensorId interp = b.generic_one("upsample_bilinear2d", {table}, {1, heads, w2, w2}, dt);
  // torch.cat([new_sub_table, table[rows - 3:]]): a new [rows, heads].
  const TensorId full = b.generic_one("cat", {interp, table}, {rows, heads}, dt);
  // new_table[index.view(-1)]: the CPU index copied to the device for the gather (alive for the call); the
  // backward's index_put_(accumulate) copies it again and sorts it (the device copy, the sorted keys and their
  // original positions alive while it runs) into a fresh zero [rows, heads] gradient.
  const TensorId gathered =
      b.generic({"index", {full}, {{{N * N, heads}, dt}}, {}, {}, {nn_idx_bytes},
                 {nn_idx_bytes, nn_idx_bytes, nn_idx_bytes}})[0];
  // .view(N, N, -1).permute(2, 0, 1).contiguous(): a copy, whose backward copies the permuted gradient back
  // (ViewBackward's reshape).
  const TensorId bias = b.contiguous_copy(gathered, {heads, N, N}, /*grad_copied=*/true);
  return b.view(bias, {1, heads, N, N});
}

// lambda * x: a trainable [H] parameter (both operands saved), or the float 1.0 without layer scale (a new tensor
// all the same; its backward writes a fresh gradient).
TensorId layer_scale(GraphBuilder& b, TensorId lambda, TensorId x) {
  return lambda != kNoTensor ? b.mul(lambda, x) : b.scalar_op("mul_scalar", x, false);
}

// BeitLayer.forward (GradientCheckpointingLayer: the bias is rebuilt inside the checkpointed region). `shared`:
// the model's attention_mask (the shared bias), kNoTensor without one.
TensorId beit_layer(GraphBuilder& b, const TransformerSpec& s, const BeitLayerParams& w, const std::string& name,
                    bool checkpointed, double rate, int64_t side, TensorId shared, TensorId h) {
  b.begin_layer(name, checkpointed);
  const TensorId layer_in = h;
  b.hold(layer_in);  // the model's loop variable (and `residual`) until the layer returns
  TensorId bias = shared;
  if (w.table != kNoTensor) {
    bias = relative_position_bias(b, w.table, side, s.num_heads);
    b.hold(bias);  // attention_mask until the layer returns
  }
  const TensorId norm = b.layer_norm(h, w.ln1_w, w.ln1_b);
  b.hold(norm);  // hidden_states until the attention's return rebinds it
  TensorId weights = kNoTensor;
  TensorId a = hfvit::vit_attention(b, s, w.q, w.k, w.v, w.o, norm, bias, weights);  // BeitAttention
  b.drop(norm);
  a = layer_scale(b, w.lambda1, b.dropout(a, s.resid_dropout));
  const TensorId h1 = b.add(hfbackbone::drop_path(b, a, rate), layer_in);
  b.hold(h1);  // residual until the layer returns
  const TensorId n2 = b.layer_norm(h1, w.ln2_w, w.ln2_b);
  b.hold(n2);  // hidden_states until the MLP returns
  TensorId m = apply(b, w.fc2, b.unary("gelu", apply(b, w.fc1, n2), true, false));
  b.drop(n2);
  m = layer_scale(b, w.lambda2, b.dropout(m, s.resid_dropout));
  const TensorId out = b.add(hfbackbone::drop_path(b, m, rate), h1);
  for (TensorId t : {h1, weights, layer_in})
    if (t != kNoTensor) b.drop(t);
  if (w.table != kNoTensor) b.drop(bias);
  b.end_layer();
  return out;
}

}  // namespace

void build_hf_beit(GraphBuilder& b, const TransformerSpec& s) {
  const auto& cfg = b.config();
  const std::string type = s.model_type.empty() ? std::string("beit") : s.model_type;
  if (cfg.task != Task::lm)  // check_task refuses it first (no kTasks row)
    throw InputError("task", std::string(task_name(cfg.task)), type + " has its own image-classification head");
  if (s.beit_rel_pos && s.beit_shared_rel_pos)
    throw InputError("model.use_shared_relative_position_bias", "true",
                     "together with use_relative_position_bias is not modelled (the in-place sum of both biases)");
  const std::string pre = type == "data2vec-vision" ? "data2vec_vision." : "beit.";
  const int64_t B = cfg.batch_size, H = s.hidden_size, R = s.image_size, P = s.patch_size, C = s.num_channels;
  const int64_t side = R / P, n = side * side, S = n + 1, NL = s.image_num_labels;
  if (cfg.seq_len != S || hf_image_tokens(s) != S)
    throw InputError("seq_len", std::to_string(cfg.seq_len),
                     "a " + type + "'s sequence is its (image_size / patch_size)^2 + 1 = " + std::to_string(S) +
                         " tokens, set from the config (not a run setting)");
  const bool emb_train = !cfg.freeze_embeddings;

  hf_construction_scalar(b);
  const bool built_on_device = cfg.weights_load == WeightsLoad::on_device;
  // BeitEmbeddings' own cls_token (and mask_token) before its patch projection when built on the device, after it
  // when moved (children first); position_embeddings after both either way (created after the projection).
  TensorId cls = kNoTensor, pos = kNoTensor;
  auto own = [&] {
    cls = b.param(pre + "embeddings.cls_token", {1, 1, H}, emb_train);
    if (s.beit_mask_token) b.param(pre + "embeddings.mask_token", {1, 1, H}, false);  // never read: no gradient
  };
  if (built_on_device) own();
  const TensorId conv_w = b.param(pre + "embeddings.patch_embeddings.projection.weight", {H, C, P, P}, emb_train);
  const TensorId conv_b = b.param(pre + "embeddings.patch_embeddings.projection.bias", {H}, emb_train);
  if (!built_on_device) own();
  if (s.beit_abs_pos) pos = b.param(pre + "embeddings.position_embeddings", {1, S, H}, emb_train);
  const TensorId shared_table =
      s.beit_shared_rel_pos
          ? b.param(pre + "shared_position_bias.relative_position_bias_table", {table_rows(side), s.num_heads},
                    !layer_frozen(cfg, 0))
          : kNoTensor;
  std::vector<BeitLayerParams> layers;
  layers.reserve(static_cast<size_t>(s.num_layers));
  for (int64_t i = 0; i < s.num_layers; ++i)
    layers.push_back(layer_params(b, s, pre + "layers." + std::to_string(i) + ".", side, !layer_frozen(cfg, i),
                                  built_on_device));
  const std::string final_ln = s.beit_mean_pooling ? pre + "pooler.layernorm" : pre + "layernorm";
  const TensorId lnf_w = b.param(final_ln + ".weight", {H});
  const TensorId lnf_b = b.param(final_ln + ".bias", {H});
  const TensorId cls_w = b.param("classifier.weight", {NL, H});
  const TensorId cls_b = b.param("classifier.bias", {NL});

  // The batch: pixel_values in the model's dtype (fp32 under amp), then the labels.
  const TensorId x = b.input({B, C, R, R}, b.param_dtype());
  const TensorId labels = b.training() ? b.input({B}, DType::i64) : kNoTensor;

  // BeitEmbeddings: projection(pixel_values).flatten(2).transpose(1, 2) (a view), cat((cls.expand, patches)),
  // [+ position_embeddings, returned as they are at the config's own size], dropout.
  const TensorId patches = b.view_copying_grad(b.conv2d(x, conv_w, conv_b, P, 0, {B, H, side, side}), {B, n, H});
  TensorId h = b.cat("cat", {b.view(cls, {B, 1, H}), patches}, 1, std::nullopt, /*cast_part_grads=*/true);
  if (pos != kNoTensor) h = b.add(h, pos);
  h = b.dropout(h, s.embd_dropout);
  const TensorId embedding_output = h;
  b.hold(embedding_output);  // bound in BeitModel.forward until it returns

  // create_bidirectional_mask gives None; the shared bias becomes BeitModel.forward's attention_mask, built once
  // and bound until it returns.
  TensorId shared = kNoTensor;
  if (shared_table != kNoTensor) {
    shared = relative_position_bias(b, shared_table, side, s.num_heads);
    b.hold(shared);
  }
  for (int64_t i = 0; i < s.num_layers; ++i)
    h = beit_layer(b, s, layers[static_cast<size_t>(i)], pre + "layers." + std::to_string(i),
                   layer_checkpointed(cfg, i), hfbackbone::block_drop_path(s.drop_path_rate, i, s.num_layers), side,
                   shared, h);
  b.hold(h);  // encoder_outputs until BeitModel.forward returns (with mean pooling also its sequence_output)
  TensorId pooled;
  TensorId seq = h;
  if (s.beit_mean_pooling) {
    // BeitModel.layernorm is nn.Identity; BeitPooler: hidden_states[:, 1:, :] (a view whose backward writes a
    // zero-filled sequence-sized gradient), mean(1) over a dimension that is not the fastest (Reduce.cuh stages
    // partial sums when there are many tokens per output), LayerNorm.
    const TensorId patch_tok = b.view_copying_grad(h, {B, n, H});
    const ReduceWorkspace ws = column_sum_workspace(n, B * H, cfg.gpu_sm_count, cfg.gpu_max_threads_per_sm);
    std::vector<int64_t> mean_temps;
    if (ws.buffer_bytes > 0) mean_temps = {ws.buffer_bytes, ws.semaphore_bytes};
    const TensorId mean = b.generic({"mean", {patch_tok}, {{{B, H}, b.dtype(h)}}, {}, {}, mean_temps, {}})[0];
    pooled = b.layer_norm(mean, lnf_w, lnf_b);
  } else {
    seq = b.layer_norm(h, lnf_w, lnf_b);
    b.hold(seq);
    pooled = first_token(b, seq);
  }
  b.drop(embedding_output);  // BeitModel.forward returns
  if (shared != kNoTensor) b.drop(shared);
  if (seq != h) b.drop(h);
  // BeitForImageClassification: outputs (sequence_output, pooler_output) bound until it returns
  hfbackbone::classifier_tail(b, {seq, pooled}, pooled, cls_w, cls_b, labels);
}

}  // namespace memplan
