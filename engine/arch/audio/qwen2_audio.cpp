// Qwen2AudioForConditionalGeneration (transformers 5.17 models/qwen2_audio/modeling_qwen2_audio.py, its text model
// models/qwen2/modeling_qwen2.py): a training step with audio clips (the harness plugin
// calibrate/harness_kinds/qwen2_audio.py), a text-only training step, or one text-only inference pass.
//
// Stages, as the model runs them:
//   Batch: input_ids [B, S] (audio_clips runs of n = max_source_positions / 2 audio tokens each, the processor's
//     expanded form: consecutive audio tokens take the masked_scatter path), input_features [B * k, num_mel_bins,
//     2 * max_source_positions] in the model's dtype (fp32 under amp), feature_attention_mask [B * k, 2P] int64
//     (all ones: every clip a whole 30 s window), labels [B, S] (the audio tokens masked to -100). Text only:
//     input_ids, which are also the labels.
//   Qwen2AudioModel.forward: inputs_embeds = embed_tokens(input_ids) (first, alive through the tower); the lengths
//     (feature_attention_mask.sum(-1), _get_feat_extract_output_lengths' two integer chains), the padding mask
//     ([B * k, P] bool from arange < lengths, its long copy, a zeros [B * k, P, 1] dummy of the embeddings' dtype),
//     create_bidirectional_mask: with no padding both SDPA and eager return None (_ignore_bidirectional_mask_sdpa
//     under allow_is_bidirectional_skip), so the encoder attends unmasked; all these locals live until the model's
//     forward returns.
//   Qwen2AudioEncoder: input_features.to(conv1's dtype) (no copy: the harness draws them in it), gelu(conv1),
//     gelu(conv2, stride 2) [B * k, d, P], .permute(0, 2, 1) + embed_positions.weight (the frozen [P, d]
//     parameter itself, no lookup: under amp bf16 + fp32 promotes, an fp32 stream in the conv's transposed
//     layout), dropout, the pre-LN layers (WhisperEncoderLayer's copy: mbart_parts.h with whisper's style, each
//     LayerNorm on a contiguous copy of the transposed stream), then .permute(0, 2, 1) (contiguous again),
//     avg_pooler (AvgPool1d(2, 2): avg_pool2d over the unsqueezed [B * k, d, 1, P], saving its input) and
//     .permute(0, 2, 1) (a transposed [B * k, P / 2, d] view) into layer_norm (a contiguous copy, as whisper's
//     final norm). No fp16 clamp outside the layers.
//   multi_modal_projector.linear (d -> hidden, bias); audio_tokens = input_ids == audio_token_id (bound until the
//     forward returns) and the legacy test (audio_tokens[:, :-1] & audio_tokens[:, 1:]).sum() == 0 (false here);
//     audio_features[arange(P / 2) < lengths] (boolean indexing: nonzero's int64 [N, 2] coordinates, saved, and
//     a gathered [N, hidden] copy, N = B * k * P / 2, whose backward zero-fills a projector-sized gradient);
//     (input_ids == id).sum().item(); special_audio_mask = (input_ids == id) (llava_parts.h
//     scatter_image_features: the same statements as get_placeholder_mask's); .to(inputs_embeds.dtype) (a copy
//     under amp: the projector ran in bf16, the embeddings are fp32); inputs_embeds.masked_scatter(mask[..., None],
//     features); then Qwen2Model (llama_parts.h llama_text_model) with attention_mask None and position_ids None.
//   Qwen2AudioForConditionalGeneration: logits = lm_head(hidden_states) over every position (forward has no
//     logits_to_keep: the harness's logits_to_keep=1 flows into the text model's kwargs unread, and generate()
//     passes none); labels given: shift_logits = logits[..., :-1, :].contiguous() (a copy in the logits' dtype:
//     no fp32 upcast; its backward a zero-filled logits-sized gradient), shift_labels = labels[..., 1:]
//     .contiguous(), nn.CrossEntropyLoss over shift_logits.view(-1, V). The harness passes no attention_mask, so
//     the masked branch (logits[..., :-1, :][mask != 0]) never runs.
// Python bindings that decide lifetimes: the model's forward keeps inputs_embeds' chain, the audio encoder's
// output (audio_outputs / selected_audio_feature), audio_features (the cast copy), audio_tokens, the placeholder
// mask and the small mask locals until it returns; ForConditionalGeneration keeps hidden_states, logits (the
// output) and shift_logits / shift_labels until the loss is returned.
// LoRA: peft's target_modules match the audio layers' q_proj / v_proj too (their names end with them): adapters
// there train with the decoder's (GraphBuilder::linear), the projector and every base weight frozen.
// Refused (InputError naming the key): audio in inference, quantization, frozen layers or embeddings, a subset of
// checkpointed layers, a task other than the causal-LM loss, the image keys, a seq_len shorter than the harness's
// layout.
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "engine/arch/builders.h"
#include "engine/arch/decoders/parts/llama_parts.h"
#include "engine/arch/seq2seq/mbart_parts.h"
#include "engine/arch/vlm/llava_parts.h"
#include "engine/checked.h"
#include "engine/errors.h"

namespace memplan {

namespace {

// Qwen2AudioAttention / Qwen2AudioEncoderLayer are WhisperAttention / WhisperEncoderLayer's copies: k_proj without
// a bias, q scaled before its contiguous head copy, the transposed residual stream.
constexpr BartStyle kQwen2Audio{/*k_bias=*/false, /*contiguous_heads=*/true, /*permuted_encoder_stream=*/true};

// The harness's layout (calibrate/harness_kinds/qwen2_audio.py): 4 text tokens, then each clip's audio tokens
// followed by 3 text tokens.
constexpr int64_t kPrefixTokens = 4, kGapTokens = 3;

// audio_config as a TransformerSpec the encoder-decoder parts read (hidden_size = d_model, num_heads /
// intermediate_size / hidden_act / the dropouts the encoder's).
TransformerSpec audio_spec(const TransformerSpec& s) {
  TransformerSpec a;
  a.model_type = "qwen2_audio_encoder";
  a.hidden_size = s.audio_d_model;
  a.num_layers = s.audio_layers;
  a.num_heads = s.audio_heads;
  a.head_dim = s.audio_d_model / s.audio_heads;
  a.intermediate_size = s.audio_ffn;
  a.hidden_act = s.audio_act;
  a.resid_dropout = s.audio_dropout;
  a.embd_dropout = s.audio_dropout;
  a.attn_dropout = s.audio_attn_dropout;
  a.activation_dropout = s.audio_act_dropout;
  return a;
}

struct AudioParams {
  TensorId conv1_w = kNoTensor, conv1_b = kNoTensor, conv2_w = kNoTensor, conv2_b = kNoTensor, pos = kNoTensor;
  std::vector<BartLayerParams> layers;
  TensorId ln_w = kNoTensor, ln_b = kNoTensor, proj_w = kNoTensor, proj_b = kNoTensor;
};

// model.audio_tower (conv1, conv2, embed_positions (requires_grad_(False)), layers, layer_norm; avg_pooler has no
// parameter) and model.multi_modal_projector.linear, in __init__ order. `train`: false for a text-only step (no
// gradient reaches them: AdamW keeps no state).
AudioParams audio_params(GraphBuilder& b, const TransformerSpec& s, const TransformerSpec& a, bool train) {
  const int64_t d = a.hidden_size;
  const std::string p = "model.audio_tower.";
  AudioParams w;
  w.conv1_w = b.param(p + "conv1.weight", {d, s.num_mel_bins, 3}, train);
  w.conv1_b = b.param(p + "conv1.bias", {d}, train);
  w.conv2_w = b.param(p + "conv2.weight", {d, d, 3}, train);
  w.conv2_b = b.param(p + "conv2.bias", {d}, train);
  w.pos = b.param(p + "embed_positions.weight", {s.max_source_positions, d}, false);
  for (int64_t i = 0; i < a.num_layers; ++i)
    w.layers.push_back(bart_layer_params(b, a, p, i, false, train, kQwen2Audio.k_bias));
  std::tie(w.ln_w, w.ln_b) = bart_norm_params(b, p + "layer_norm", d, train);
  w.proj_w = b.param("model.multi_modal_projector.linear.weight", {s.hidden_size, d}, train);
  w.proj_b = b.param("model.multi_modal_projector.linear.bias", {s.hidden_size}, train);
  return w;
}

// Qwen2AudioEncoder.forward over `features` [C, mel, 2P] (C clips), unmasked. Returns layer_norm's output
// [C, P / 2, d].
TensorId audio_encoder(GraphBuilder& b, const TransformerSpec& a, const AudioParams& w, TensorId features, int64_t P) {
  const int64_t C = b.shape(features)[0], d = a.hidden_size, Q = P / 2;
  const TensorId x = b.unary("gelu", b.conv1d(features, w.conv1_w, w.conv1_b, 1, 1), true, false);
  b.hold(x);
  const TensorId x2 = b.unary("gelu", b.conv1d(x, w.conv2_w, w.conv2_b, 2, 1), true, false);
  b.drop(x);
  const TensorId inputs_embeds = b.view(x2, {C, P, d});  // permute(0, 2, 1): bound until the encoder returns
  b.hold(inputs_embeds);
  // + embed_positions.weight: the parameter broadcast over the clips (frozen: no gradient to reduce for it).
  TensorId h = b.dropout(b.add(inputs_embeds, w.pos), a.resid_dropout);
  for (int64_t i = 0; i < a.num_layers; ++i)
    h = bart_encoder_layer(b, a, kQwen2Audio, w.layers[static_cast<size_t>(i)], i, h);
  // permute(0, 2, 1) gives back the conv layout, contiguous; avg_pool1d runs avg_pool2d on its unsqueezed view,
  // saving it (the last layer's output stays alive until backward) and writing a contiguous [C, d, 1, Q].
  const TensorId pooled = b.avg_pool2d(b.view(h, {C, d, 1, P}), {C, d, 1, Q});
  // permute(0, 2, 1): a transposed view; layer_norm works on a contiguous copy (forward and backward), as
  // whisper's final norm over its transposed stream.
  const TensorId out = b.layer_norm(b.view(pooled, {C, Q, d}), w.ln_w, w.ln_b, /*contiguous_copy=*/true,
                                    /*grad_contiguous=*/true);
  b.drop(inputs_embeds);
  return out;
}

// The run's clips per sample, after refusing what the builder does not replay.
int64_t check_run(const GraphBuilder& b, const TransformerSpec& s) {
  const auto& cfg = b.config();
  if (cfg.quant.enabled())
    throw InputError("quantization", "set", "a quantised base (QLoRA) of a qwen2_audio model is not modelled");
  if (!cfg.frozen_layers.empty())
    throw InputError("frozen_layers", std::to_string(cfg.frozen_layers.size()) + " layers",
                     "freezing layers of a qwen2_audio model is not modelled");
  if (cfg.freeze_embeddings) throw InputError("freeze_embeddings", "true", "is not modelled for a qwen2_audio model");
  if (!cfg.checkpoint_layers.empty())
    throw InputError("grad_checkpointing_layers", std::to_string(cfg.checkpoint_layers.size()) + " layers",
                     "a subset of checkpointed layers is not modelled for qwen2_audio (gradient_checkpointing_enable "
                     "wraps every layer of the audio encoder and of the decoder)");
  if (cfg.task != Task::lm) throw InputError("task", std::string(task_name(cfg.task)), "is not modelled for qwen2_audio");
  if (!cfg.image_grid.empty() || cfg.images_per_sample != 0 || !cfg.image_hw.empty() || !cfg.image_splits.empty() ||
      cfg.image_tiles != 0 || cfg.max_num_patches != 0)
    throw InputError("images_per_sample", "set", "qwen2_audio takes audio clips (audio_clips), not images");
  if (b.training() && cfg.seq_len < 2)
    throw InputError("seq_len", std::to_string(cfg.seq_len),
                     "must be at least 2 in training: the loss shifts the logits by one position");
  const int64_t k = cfg.audio_clips;
  if (k == 0) return 0;
  if (!b.training())
    throw InputError("audio_clips", std::to_string(k),
                     "inference with audio is not modelled for qwen2_audio (text-only prompts are)");
  const int64_t per_clip = s.max_source_positions / 2;
  const int64_t need = checked_add(kPrefixTokens, checked_mul(k, per_clip + kGapTokens, "audio_clips"), "audio_clips");
  if (cfg.seq_len < need)
    throw InputError("seq_len", std::to_string(cfg.seq_len),
                     "is too short for " + std::to_string(k) + " audio clips of " + std::to_string(per_clip) +
                         " tokens each (needs " + std::to_string(need) +
                         ": the harness's layout, calibrate/harness_kinds/qwen2_audio.py)");
  return k;
}

}  // namespace

void build_qwen2_audio(GraphBuilder& b, const TransformerSpec& s) {
  const int64_t k = check_run(b, s);
  const auto& cfg = b.config();
  const bool inf = !b.training(), with_audio = k > 0;
  const int64_t B = cfg.batch_size, S = inf ? b.pass().new_tokens : cfg.seq_len, H = s.hidden_size,
                V = s.vocab_size, P = s.max_source_positions, F = checked_mul(2, P, "max_source_positions"),
                Q = P / 2, clips = checked_mul(B, k, "audio_clips"), N = checked_mul(clips, Q, "audio_clips");
  const TransformerSpec a = audio_spec(s);

  hf_construction_scalar(b);
  // Parameters in __init__ order: model.audio_tower, model.multi_modal_projector, model.language_model
  // (embed_tokens here; layers and norm by llama_text_model), lm_head.
  const AudioParams aw = audio_params(b, s, a, with_audio && !inf);
  const TensorId embed = b.param("embed_tokens.weight", {V, H});

  // The batch, as the plugin draws it: input_ids, input_features, feature_attention_mask, labels (generate():
  // its position_ids).
  const TensorId ids = b.input({B, S}, DType::i64);
  const int64_t Prow = inf && b.pass().from_generate ? B : 1;
  if (Prow > 1) b.input({B, S}, DType::i64);
  TensorId features = kNoTensor, feat_mask = kNoTensor, labels = ids;
  if (with_audio) {
    features = b.input({clips, s.num_mel_bins, F}, b.param_dtype());
    feat_mask = b.input({clips, F}, DType::i64);
    labels = b.input({B, S}, DType::i64);
  }

  TensorId h = b.embedding(ids, embed);  // inputs_embeds
  TensorId audio_features = kNoTensor, mask = kNoTensor;
  std::vector<TensorId> locals;  // the model's forward's small locals, bound until it returns
  if (with_audio) {
    auto op = [&](std::string_view nm, std::vector<TensorId> reads, Shape shape, DType dt) {
      return b.generic_one(nm, std::move(reads), std::move(shape), dt);
    };
    auto keep = [&](TensorId t) {
      b.hold(t);
      locals.push_back(t);
      return t;
    };
    // _get_feat_extract_output_lengths(feature_attention_mask.sum(-1)): (L - 1) // 2 + 1, then (L - 2) // 2 + 1.
    const TensorId L = op("sum", {feat_mask}, {clips}, DType::i64);
    const TensorId feat_len = keep(op("add_scalar", {op("floor_divide", {op("sub_scalar", {L}, {clips}, DType::i64)},
                                                        {clips}, DType::i64)}, {clips}, DType::i64));
    keep(op("add_scalar", {op("floor_divide", {op("sub_scalar", {feat_len}, {clips}, DType::i64)}, {clips},
                              DType::i64)}, {clips}, DType::i64));  // audio_output_lengths
    // seq_range = arange(P).unsqueeze(0).expand(...) (bound), padding_mask = seq_range >= lengths, its long copy,
    // the zeros dummy of the embeddings' dtype; create_bidirectional_mask's bool copy and .all() are temporaries.
    keep(op("arange", {}, {P}, DType::i64));
    const TensorId padding = keep(op("ge", {feat_len}, {clips, P}, DType::boolean));
    const TensorId mask2d = keep(op("to_long", {op("bitwise_not", {padding}, {clips, P}, DType::boolean)}, {clips, P},
                                    DType::i64));
    keep(op("zeros", {}, {clips, P, 1}, b.dtype(h)));
    op("all", {op("to_bool", {mask2d}, {clips, P}, DType::boolean)}, {}, DType::boolean);

    const TensorId enc = audio_encoder(b, a, aw, features, P);
    b.hold(enc);  // audio_outputs.last_hidden_state / selected_audio_feature
    locals.push_back(enc);
    TensorId proj = b.linear(enc, aw.proj_w, aw.proj_b);  // multi_modal_projector
    // audio_tokens (bound) and the legacy-processing test.
    const TensorId audio_tokens = keep(op("eq", {ids}, {B, S}, DType::boolean));
    op("eq_scalar", {op("sum", {op("and", {audio_tokens}, {B, S - 1}, DType::boolean)}, {}, DType::i64)}, {},
       DType::boolean);
    // audio_features_mask = arange(P / 2)[None, :] < audio_output_lengths[:, None]; audio_features =
    // audio_features[mask]: nonzero's coordinates (saved by IndexBackward) and the gathered copy; the projector's
    // output is rebound (nothing saved it).
    const TensorId feat_mask2 = keep(op("lt", {op("arange", {}, {Q}, DType::i64)}, {clips, Q}, DType::boolean));
    const TensorId coords = op("nonzero", {feat_mask2}, {N, 2}, DType::i64);
    audio_features = b.generic_one("index", {proj, coords}, {N, H}, b.dtype(proj), {1});
    // n_audio_tokens = (input_ids == audio_token_id).sum().item()
    op("sum", {op("eq", {ids}, {B, S}, DType::boolean)}, {}, DType::i64);
    // special_audio_mask and .to(inputs_embeds' dtype), then masked_scatter (llava_parts.h).
    audio_features = b.to(audio_features, b.dtype(h));
    b.hold(audio_features);  // the model's local until its forward returns
    h = llava::scatter_image_features(b, h, ids, audio_features, N, mask);
  } else if (cfg.lora.enabled() && !inf) {
    // Text only under LoRA: peft still injects adapters into the audio layers' targeted linears; they never run.
    for (const BartLayerParams& l : aw.layers)
      for (TensorId lw : {l.sa.k, l.sa.v, l.sa.q, l.sa.o, l.fc1, l.fc2}) b.unreached_linear(lw);
    b.unreached_linear(aw.proj_w);
  }
  const TensorId hn = llama_text_model(b, s, h, Prow, /*batch_aware_eager=*/true);
  for (const char* nm : {"rotary_emb.inv_freq", "rotary_emb.original_inv_freq"}) b.buffer(nm, {s.head_dim / 2}, DType::f32);
  // Qwen2AudioModel.forward returns: its locals go.
  for (TensorId t : locals) b.drop(t);
  if (mask != kNoTensor) b.drop(mask);
  if (audio_features != kNoTensor) b.drop(audio_features);

  const TensorId head = s.tie_word_embeddings ? b.tied_param("lm_head.weight", embed)
                                              : b.param("lm_head.weight", {V, H});
  if (s.tie_word_embeddings) b.construction_temp(b.info(embed).bytes);  // the head's own weight before tie_weights()
  b.hold(hn);  // hidden_states, bound until forward returns
  const TensorId logits = b.linear(hn, head);  // every position: no logits_to_keep
  b.hold(logits);  // the output's logits
  b.mark_model_end();
  if (inf) {
    b.drop(hn);
    b.exit_autocast();
    return;
  }
  // shift_logits = logits[..., :-1, :].contiguous(); shift_labels = labels[..., 1:].contiguous()
  const int64_t n = checked_mul(B, S - 1, "batch_size");
  const TensorId sliced = b.view_copying_grad(logits, {B, S - 1, V}, b.info(logits).bytes);
  const TensorId shift_logits = b.contiguous_copy(sliced, {B, S - 1, V});
  b.hold(shift_logits);
  const TensorId shift_labels = b.generic_one("contiguous", {labels}, {B, S - 1}, DType::i64);
  b.hold(shift_labels);
  const TensorId loss = b.cross_entropy(b.view(shift_logits, {n, V}), b.view(shift_labels, {n}));
  for (TensorId t : {shift_logits, shift_labels, logits, hn}) b.drop(t);
  b.exit_autocast();
  b.set_loss(loss);
}

}  // namespace memplan
