// BeitForImageClassification (transformers models/beit/modeling_beit.py) and Data2VecVisionForImageClassification
// (models/data2vec/modeling_data2vec_vision.py, BEiT's statements under the prefix data2vec_vision), training
// forward + cross entropy and the inference forward. Written from the modeling file before any run of it was
// measured (family set 38, held out: data/validation/predictions/families38-holdout.json). Stages:
//   BeitEmbeddings: patch Conv2d (kernel = stride = patch) [-> + the absolute table's patch rows, interpolated
//     bicubic to the patch grid, when use_absolute_position_embeddings] -> flatten(2).transpose(1, 2) (a view);
//     cls_token.expand(B, -1, -1) [+ the table's first row]; cat((cls, patches), dim=1); dropout. Under autocast
//     the bf16 patches promote to the fp32 cls token's dtype: the residual stream is fp32.
//   BeitEncoder, per layer i (drop path rate drop_path_rate * i / (n - 1), nn.Identity at 0): [the shared
//     BeitRelativePositionBias, evaluated again for every layer and passed in] BeitLayer:
//     layernorm_before; BeitSelfAttention: query (bias), key (no bias), value (bias), each viewed
//     [B, S, heads, hd].permute(0, 2, 1, 3); the layer's BeitRelativePositionBias (below) as the additive mask;
//     SDPA (BeitSdpaSelfAttention: F.scaled_dot_product_attention(q, k, v, attn_mask=bias), the memory-efficient
//     kernel when the bias needs a gradient, engine/arch/sdpa_bias.h) or eager (matmul(q, k^T) / sqrt(hd) + bias,
//     softmax, dropout, matmul with v: under autocast the bf16 scores plus the fp32 bias are fp32; the scores and
//     the probabilities are two names, both bound until the attention returns);
//     permute(0, 2, 1, 3).contiguous(); BeitSelfOutput: dense, dropout. lambda_1 * output (layer_scale_init_value
//     > 0: fp32 under autocast), drop_path, + h; layernorm_after; BeitIntermediate: dense, gelu; BeitOutput: dense,
//     dropout; lambda_2 *; drop_path; + h.
//   BeitRelativePositionBias.forward (every call, the same grid too): the table's first (2w - 1)^2 rows viewed
//     [1, 2w - 1, 2w - 1, heads].permute(0, 3, 1, 2) and interpolated bilinear to the same size (a new fp32
//     tensor, channels-last like its input, so the permute(0, 2, 3, 1).reshape back is a view); cat with the three
//     cls rows; gathered at the relative position index ([N * N] int64, a CPU tensor cached per grid: copied to
//     the device for the gather and again for its backward's index_put, which sorts it); view [N, N, heads],
//     permute(2, 0, 1).contiguous() (a copy; its backward's reshape of the permuted gradient copies too);
//     unsqueeze(0): [1, heads, N, N].
//   BeitModel: layernorm (nn.Identity with use_mean_pooling); BeitPooler: LayerNorm(h[:, 1:, :].mean(1)) with
//     mean pooling, else h[:, 0]. Head: classifier -> ForSequenceClassificationLoss (cross entropy, mean).
// Python bindings that decide lifetimes:
//   - BeitModel.forward keeps embedding_output bound until it returns; the encoder's loop variable holds each
//     layer's input until the layer returns, and the shared bias until the next layer's rebinds it.
//   - BeitAttention binds the normed input (its `hidden_states`) and self_outputs (the context) until it returns;
//     BeitSelfAttention binds q / k / v and the bias (`attn_bias`) until it returns.
//   - BeitLayer binds self_attention_outputs (the dense output) until it returns, the lambda_1 product and the
//     first residual sum until it returns.
//   - BeitForImageClassification keeps outputs (sequence_output, pooled_output) and the logits bound until it
//     returns, after the loss.
// Parameters in model.to("cuda") order (Module._apply: children first): the patch projection, then the
// embeddings' own cls_token (mask_token, position_embeddings); the encoder's shared table; per layer: query,
// key, value, its table, output.dense, intermediate.dense, output.dense, layernorm_before, layernorm_after,
// lambda_1, lambda_2; the model's layernorm or the pooler's; the classifier. Built on the device, the embeddings'
// own parameters come before the patch conv (construction order).
#include "engine/arch/builders.h"
#include "engine/arch/encoders/bert_parts.h"
#include "engine/arch/sdpa_bias.h"
#include "engine/arch/vision/hf_backbone_parts.h"
#include "engine/arch/vision/hf_vit_parts.h"
#include "engine/checked.h"
#include "engine/errors.h"
#include "engine/reduce_workspace.h"

namespace memplan {

namespace {

using hfvit::VitLinear;
using hfvit::vit_linear;

TensorId apply(GraphBuilder& b, const VitLinear& l, TensorId x) { return b.linear(x, l.w, l.b); }

struct BeitLayerParams {
  VitLinear q, k, v, o, fc1, fc2;
  TensorId table = kNoTensor;  // relative_position_bias_table [(2w - 1)^2 + 3, heads], per layer
  TensorId ln1_w, ln1_b, ln2_w, ln2_b;
  TensorId lambda1 = kNoTensor, lambda2 = kNoTensor;
};

int64_t table_rows(int64_t side) { return (2 * side - 1) * (2 * side - 1) + 3; }

BeitLayerParams layer_params(GraphBuilder& b, const TransformerSpec& s, const std::string& p, int64_t side,
                             bool train) {
  const int64_t H = s.hidden_size, A = s.num_heads * s.head_dim, I = s.intermediate_size;
  BeitLayerParams w;
  w.q = vit_linear(b, p + "attention.attention.query", A, H, true, train);
  w.k = vit_linear(b, p + "attention.attention.key", A, H, false, train);
  w.v = vit_linear(b, p + "attention.attention.value", A, H, true, train);
  if (s.beit_rel_pos)
    w.table = b.param(p + "attention.attention.relative_position_bias.relative_position_bias_table",
                      {table_rows(side), s.num_heads}, train);
  w.o = vit_linear(b, p + "attention.output.dense", H, A, true, train);
  w.fc1 = vit_linear(b, p + "intermediate.dense", I, H, true, train);
  w.fc2 = vit_linear(b, p + "output.dense", H, I, true, train);
  w.ln1_w = b.param(p + "layernorm_before.weight", {H}, train);
  w.ln1_b = b.param(p + "layernorm_before.bias", {H}, train);
  w.ln2_w = b.param(p + "layernorm_after.weight", {H}, train);
  w.ln2_b = b.param(p + "layernorm_after.bias", {H}, train);
  if (s.beit_layer_scale) {
    w.lambda1 = b.param(p + "lambda_1", {H}, train);
    w.lambda2 = b.param(p + "lambda_2", {H}, train);
  }
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

// BeitAttention.forward on the normed input x [B, S, H] (held by the caller until it returns): the dense
// projection's output after dropout. `shared_bias`: the encoder's bias for this layer (kNoTensor: none).
TensorId attention(GraphBuilder& b, const TransformerSpec& s, const BeitLayerParams& w, TensorId x, int64_t side,
                   TensorId shared_bias) {
  const auto& cfg = b.config();
  const int64_t B = cfg.batch_size, S = cfg.seq_len, nh = s.num_heads, hd = s.head_dim;
  const bool eager = cfg.attn == AttnImpl::eager;
  // transpose_for_scores: view + permute (SDPA's fused backward writes each gradient in its input's layout; eager's
  // bmm gradients come back contiguous and the permuted view copies them). The query projection runs first.
  auto heads = [&](TensorId t) {
    return eager ? b.view_copying_grad(t, {B, nh, S, hd}) : b.view(t, {B, nh, S, hd});
  };
  const TensorId mixed_q = apply(b, w.q, x);
  const TensorId k = heads(apply(b, w.k, x));
  const TensorId v = heads(apply(b, w.v, x));
  const TensorId q = heads(mixed_q);
  for (TensorId t : {q, k, v}) b.hold(t);  // until BeitSelfAttention returns
  TensorId ctx;
  if (!eager) {
    TensorId bias = w.table != kNoTensor ? relative_position_bias(b, w.table, side, nh) : shared_bias;
    if (bias == kNoTensor) {
      ctx = b.sdpa(q, k, v, s.attn_dropout, false);
    } else {
      b.hold(bias);  // attn_bias until BeitSelfAttention returns
      ctx = sdpa_float_mask(b, q, k, v, bias, s.attn_dropout);
      b.drop(bias);
    }
    // permute(0, 2, 1, 3).contiguous(): free, the kernels write [B, S, heads, hd]
  } else {
    // matmul(q, k.transpose(-1, -2)) (torch.matmul copies both head-split views), / sqrt(hd) (the product dies),
    // + the bias (a temporary of the statement: AddBackward keeps nothing; broadcast over the batch, its gradient
    // is summed), softmax (fp32 policy), dropout, matmul with v (autocast casts fp32 probabilities back),
    // permute(0, 2, 1, 3).contiguous().
    // attention_scores and attention_probs are two names: the scores (fp32 under autocast with the bias) stay
    // bound beside the probabilities until BeitSelfAttention returns.
    TensorId scores = b.scalar_op("div_scalar", b.matmul(q, k, {B, nh, S, S}, true, true), false);
    if (w.table != kNoTensor) scores = b.add(scores, relative_position_bias(b, w.table, side, nh));
    if (shared_bias != kNoTensor) scores = b.add(scores, shared_bias);
    b.hold(scores);
    const TensorId probs = b.dropout(b.softmax_last(scores), s.attn_dropout);
    b.hold(probs);
    ctx = b.contiguous_copy(b.matmul(probs, v, {B, nh, S, hd}, false, true), {B, S, nh, hd}, /*grad_copied=*/true);
    b.drop(probs);
    b.drop(scores);
  }
  const TensorId context = b.view(ctx, {B, S, nh * hd});
  for (TensorId t : {q, k, v}) b.drop(t);
  b.hold(context);  // BeitAttention's self_outputs until it returns
  const TensorId out = b.dropout(apply(b, w.o, context), s.resid_dropout);
  b.drop(context);
  return out;
}

TensorId beit_layer(GraphBuilder& b, const TransformerSpec& s, const BeitLayerParams& w, const std::string& name,
                    bool checkpointed, double rate, int64_t side, TensorId shared_bias, TensorId h) {
  b.begin_layer(name, checkpointed);
  const TensorId layer_in = h;
  b.hold(layer_in);  // the encoder's loop variable until the layer returns
  const TensorId norm = b.layer_norm(h, w.ln1_w, w.ln1_b);
  b.hold(norm);  // BeitAttention's hidden_states until it returns
  const TensorId dense = attention(b, s, w, norm, side, shared_bias);
  b.drop(norm);
  b.hold(dense);  // self_attention_outputs until the layer returns
  const TensorId scaled = w.lambda1 != kNoTensor ? b.mul(w.lambda1, dense) : dense;
  if (scaled != dense) b.hold(scaled);  // attention_output until the layer returns
  const TensorId h1 = b.add(hfbackbone::drop_path(b, scaled, rate), layer_in);
  b.hold(h1);  // hidden_states until the layer returns
  const TensorId n2 = b.layer_norm(h1, w.ln2_w, w.ln2_b);
  b.hold(n2);  // layer_output, BeitIntermediate's argument until it returns (after the gelu)
  const TensorId act = b.unary("gelu", apply(b, w.fc1, n2), true, false);
  b.drop(n2);
  TensorId m = b.dropout(apply(b, w.fc2, act), s.resid_dropout);
  if (w.lambda2 != kNoTensor) m = b.mul(w.lambda2, m);
  const TensorId out = b.add(hfbackbone::drop_path(b, m, rate), h1);
  b.drop(h1);
  if (scaled != dense) b.drop(scaled);
  b.drop(dense);
  b.drop(layer_in);
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
  TensorId cls = kNoTensor, pos = kNoTensor;
  auto own = [&] {
    cls = b.param(pre + "embeddings.cls_token", {1, 1, H}, emb_train);
    if (s.beit_mask_token) b.param(pre + "embeddings.mask_token", {1, 1, H}, false);  // never read: no gradient
    if (s.beit_abs_pos) pos = b.param(pre + "embeddings.position_embeddings", {1, S, H}, emb_train);
  };
  if (built_on_device) own();
  const TensorId conv_w = b.param(pre + "embeddings.patch_embeddings.projection.weight", {H, C, P, P}, emb_train);
  const TensorId conv_b = b.param(pre + "embeddings.patch_embeddings.projection.bias", {H}, emb_train);
  if (!built_on_device) own();
  const TensorId shared_table =
      s.beit_shared_rel_pos
          ? b.param(pre + "encoder.relative_position_bias.relative_position_bias_table", {table_rows(side), s.num_heads},
                    !layer_frozen(cfg, 0))
          : kNoTensor;
  std::vector<BeitLayerParams> layers;
  layers.reserve(static_cast<size_t>(s.num_layers));
  for (int64_t i = 0; i < s.num_layers; ++i)
    layers.push_back(
        layer_params(b, s, pre + "encoder.layer." + std::to_string(i) + ".", side, !layer_frozen(cfg, i)));
  const std::string final_ln = s.beit_mean_pooling ? pre + "pooler.layernorm" : pre + "layernorm";
  const TensorId lnf_w = b.param(final_ln + ".weight", {H});
  const TensorId lnf_b = b.param(final_ln + ".bias", {H});
  const TensorId cls_w = b.param("classifier.weight", {NL, H});
  const TensorId cls_b = b.param("classifier.bias", {NL});

  // The batch: pixel_values in the model's dtype (fp32 under amp), then the labels.
  const TensorId x = b.input({B, C, R, R}, b.param_dtype());
  const TensorId labels = b.training() ? b.input({B}, DType::i64) : kNoTensor;

  // BeitEmbeddings. With the absolute table, BeitPatchEmbeddings interpolates its patch rows (a [1, H, side, side]
  // bicubic output) and adds them to the conv output before flattening; the cls token gets the first row.
  TensorId conv = b.conv2d(x, conv_w, conv_b, P, 0, {B, H, side, side});
  if (pos != kNoTensor)
    conv = b.add(conv, b.generic_one("upsample_bicubic2d", {pos}, {1, H, side, side}, b.dtype(pos)));
  const TensorId patches = b.view_copying_grad(conv, {B, n, H});
  TensorId cls_tok = b.view(cls, {B, 1, H});
  if (pos != kNoTensor) cls_tok = b.add(cls_tok, b.generic_one("slice", {pos}, {1, 1, H}, b.dtype(pos)));
  TensorId h = b.dropout(b.cat("cat", {cls_tok, patches}, 1, std::nullopt, /*cast_part_grads=*/true), s.embd_dropout);
  const TensorId embedding_output = h;
  b.hold(embedding_output);  // bound in BeitModel.forward until it returns

  for (int64_t i = 0; i < s.num_layers; ++i) {
    const double rate = hfbackbone::block_drop_path(s.drop_path_rate, i, s.num_layers);
    TensorId shared = kNoTensor;
    if (shared_table != kNoTensor) {
      shared = relative_position_bias(b, shared_table, side, s.num_heads);
      b.hold(shared);  // the loop's relative_position_bias until the next layer rebinds it
    }
    h = beit_layer(b, s, layers[static_cast<size_t>(i)], pre + "encoder.layer." + std::to_string(i),
                   layer_checkpointed(cfg, i), rate, side, shared, h);
    if (shared != kNoTensor) b.drop(shared);
  }
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
  if (seq != h) b.drop(h);
  // BeitForImageClassification: outputs (sequence_output, pooler_output) bound until it returns
  hfbackbone::classifier_tail(b, {seq, pooled}, pooled, cls_w, cls_b, labels);
}

}  // namespace memplan
