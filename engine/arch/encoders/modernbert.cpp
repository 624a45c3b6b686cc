// ModernBertForMaskedLM (transformers 5.17 models/modernbert/modeling_modernbert.py), training forward + masked-LM
// loss. Stages, in the order the Python runs them:
//   ModernBertModel.forward: position_ids = arange(S)[None] (a local until forward returns); embeddings
//     drop(norm(tok_embeddings(ids))) (LayerNorm without bias unless norm_bias; dropout p 0 returns its input);
//     mask_kwargs keeps the embeddings' output bound until forward returns; the masks: full attention none (SDPA
//     and eager skip a bidirectional mask without padding), sliding attention a [1, 1, S, S] bool mask once
//     S >= config.sliding_window (= local_attention // 2): abs(q_idx - kv_idx) <= window, built from two
//     int64 [1, 1, S, S] temporaries (the difference and its abs), then `& (q_idx >= 0)`; eager turns it into a
//     [B, 1, S, S] additive mask of the hidden dtype (torch.where), the bool dropped. Then one rotary cos / sin
//     pair per layer type (LlamaRotaryEmbedding's statements, llama_parts.h rotary_cos_sin), bound until return.
//   ModernBertEncoderLayer: attn_output = attn(attn_norm(h)) (attn_norm is Identity in layer 0), bound until the
//     layer returns; h = h + attn_output; h = h + mlp(mlp_norm(h)) (the normed input is the call's argument).
//   ModernBertAttention: qkv = Wqkv(x) viewed [B, S, 3, H, D] and unbound (UnbindBackward stacks the three
//     gradients into one fresh qkv-sized buffer), each transposed to [B, H, S, D]; apply_rotary_pos_emb in fp32:
//     (q.float() * cos) + (rotate_half(q.float()) * sin), where each q.float() is a copy unless q is fp32 (two
//     copies per tensor), the fp32 results are locals until both are cast back in the return statement; SDPA
//     (bool mask on sliding layers: the kernel's float bias of it is saved) or eager attention; Wo; out_drop.
//   ModernBertMLP: input, gate = Wi(x).chunk(2); Wo(drop(act(input) * gate)).
//   final_norm; ModernBertPredictionHead norm(act(dense(h))); decoder (tied to tok_embeddings, with a bias);
//   ForMaskedLMLoss: logits.float() (a copy unless fp32, a local until the loss returns), cross entropy.
// Parameters in registration order: embeddings (tok_embeddings, norm), per layer attn_norm (not in layer 0),
// attn.Wqkv, attn.Wo, mlp_norm, mlp.Wi, mlp.Wo; final_norm; the rotary buffers (inv_freq and original_inv_freq
// per layer type, sorted by name); head.dense, head.norm; decoder (weight when untied, bias).
// Task::feature (inference): ModernBertModel alone (no head parameters), last_hidden_state returned. Inference
// (model.eval(), inference_mode): dropout the identity, nothing saved, no labels, no loss.
// Not modelled (the importer refuses): sparse_prediction (data-dependent row selection), flash attention's
// unpadding path, rope types other than the default one.
#include <tuple>

#include "engine/arch/encoders/bert_parts.h"
#include "engine/arch/decoders/parts/llama_parts.h"
#include "engine/arch/decoders/parts/phi_parts.h"
#include "engine/errors.h"

namespace memplan {

namespace {

struct MbLinear {
  TensorId w = kNoTensor, b = kNoTensor;
};
MbLinear mb_linear(GraphBuilder& b, const std::string& name, int64_t out, int64_t in, bool bias, bool train) {
  MbLinear l;
  l.w = b.param(name + ".weight", {out, in}, train);
  if (bias) l.b = b.param(name + ".bias", {out}, train);
  return l;
}
struct MbNorm {
  TensorId w = kNoTensor, b = kNoTensor;
};
MbNorm mb_norm(GraphBuilder& b, const TransformerSpec& s, const std::string& name, bool train) {
  MbNorm n;
  n.w = b.param(name + ".weight", {s.hidden_size}, train);
  if (s.norm_bias) n.b = b.param(name + ".bias", {s.hidden_size}, train);
  return n;
}
TensorId apply(GraphBuilder& b, const MbLinear& l, TensorId x) { return b.linear(x, l.w, l.b); }
TensorId apply(GraphBuilder& b, const MbNorm& n, TensorId x) { return b.layer_norm(x, n.w, n.b); }

struct MbLayer {
  bool has_attn_norm = false;
  MbNorm attn_norm, mlp_norm;
  MbLinear wqkv, wo, wi, mlp_wo;
};

MbLayer layer_params(GraphBuilder& b, const TransformerSpec& s, int64_t i, bool train) {
  const int64_t H = s.hidden_size, I = s.intermediate_size;
  const std::string p = "model.layers." + std::to_string(i) + ".";
  MbLayer w;
  w.has_attn_norm = i != 0;
  if (w.has_attn_norm) w.attn_norm = mb_norm(b, s, p + "attn_norm", train);
  w.wqkv = mb_linear(b, p + "attn.Wqkv", 3 * H, H, s.attention_bias, train);
  w.wo = mb_linear(b, p + "attn.Wo", H, H, s.attention_bias, train);
  w.mlp_norm = mb_norm(b, s, p + "mlp_norm", train);
  w.wi = mb_linear(b, p + "mlp.Wi", 2 * I, H, s.mlp_bias, train);
  w.mlp_wo = mb_linear(b, p + "mlp.Wo", H, I, s.mlp_bias, train);
  return w;
}

// The sliding-window mask of create_bidirectional_sliding_window_mask (sdpa_mask, non-vmap): [1, 1, S, S] bool.
TensorId sliding_bool_mask(GraphBuilder& b, int64_t S) {
  auto op = [&](std::string_view name, std::vector<TensorId> reads, Shape shape, DType t) {
    return b.generic_one(name, std::move(reads), std::move(shape), t);
  };
  // abs(q_idx - kv_idx) <= window: the difference and its abs are int64 temporaries of the expression.
  TensorId diff = op("sub", {}, {1, 1, S, S}, DType::i64);
  TensorId le = op("le", {op("abs", {diff}, {1, 1, S, S}, DType::i64)}, {1, 1, S, S}, DType::boolean);
  // and_masks: result = ones(()) & overlay, then & bidirectional (q_idx >= 0, [1, 1, S, 1]).
  TensorId first = op("and", {le}, {1, 1, S, S}, DType::boolean);
  TensorId ge = op("ge", {}, {1, 1, S, 1}, DType::boolean);
  return op("and", {first, ge}, {1, 1, S, S}, DType::boolean);
}

// apply_rotary_pos_emb for one tensor: (x.float() * cos) + (rotate_half(x.float()) * sin), left to right; each
// x.float() is its own call (a fresh copy when x is not fp32, freed once its product or rotate_half is done).
TensorId rotate_fp32(GraphBuilder& b, TensorId x, TensorId cos, TensorId sin) {
  const TensorId a = b.mul(b.to(x, DType::f32), cos);
  const TensorId c = b.mul(rotate_half(b, b.to(x, DType::f32)), sin);
  return b.add(a, c);
}

// ModernBertAttention.forward on the normed input x. Returns Wo's output (after out_drop).
TensorId attention(GraphBuilder& b, const TransformerSpec& s, const MbLayer& w, TensorId x, TensorId cos,
                   TensorId sin, TensorId mask) {
  const auto& cfg = b.config();
  const int64_t B = cfg.batch_size, S = cfg.seq_len, nh = s.num_heads, hd = s.head_dim;
  const TensorId qkv = apply(b, w.wqkv, x);
  b.hold(qkv);
  // view(B, S, 3, H, D).unbind(-3), each .transpose(1, 2): views of qkv (one backward node stacking the three
  // gradients into a fresh qkv-sized buffer).
  const std::vector<TensorId> parts = b.split(qkv, 3, {B, nh, S, hd});
  const TensorId q = parts[0], k = parts[1], v = parts[2];
  const DType dt = b.dtype(q);
  const TensorId qe32 = rotate_fp32(b, q, cos, sin);
  b.hold(qe32);  // q_embed / k_embed: locals until `return q_embed.to(dt), k_embed.to(dt)`
  const TensorId ke32 = rotate_fp32(b, k, cos, sin);
  b.hold(ke32);
  const TensorId qe = b.to(qe32, dt);
  b.hold(qe);
  const TensorId ke = b.to(ke32, dt);
  b.hold(ke);
  b.drop(qe32);
  b.drop(ke32);
  TensorId ctx;
  if (cfg.attn == AttnImpl::sdpa) {
    // sdpa_attention_forward: is_causal False; the fused kernel's output is laid out [B, S, H, D], so
    // transpose(1, 2).contiguous() is a view.
    ctx = b.sdpa(qe, ke, v, s.attn_dropout, false, mask);
  } else {
    // eager_attention_forward. torch.matmul copies an operand whose batch and head dims cannot merge: the
    // rotated q / k keep the [B, S, H, D] memory order of the qkv views (elementwise ops and .float() / .to()
    // copies follow their input's layout), and v is a strided view of qkv (whole-run bf16 stream: a copy of q,
    // of k and of v, each saved by its bmm).
    TensorId scores = b.scalar_op("mul_scalar", b.matmul(qe, ke, {B, nh, S, S}, true, true), false);
    if (mask != kNoTensor) scores = b.add(scores, mask);
    // softmax(..., dtype=float32).to(query.dtype): one statement, the scores bound until it is done.
    b.hold(scores);
    TensorId probs = b.to(b.softmax_last(b.to(scores, DType::f32)), dt);
    b.drop(scores);
    probs = b.dropout(probs, s.attn_dropout);
    ctx = b.contiguous_copy(b.matmul(probs, v, {B, nh, S, hd}, false, true), {B, S, nh, hd}, /*grad_copied=*/true);
  }
  const TensorId out = b.dropout(apply(b, w.wo, b.view(ctx, {B, S, nh * hd})), s.attn_dropout);
  for (TensorId t : {qe, ke, qkv}) b.drop(t);  // locals of the attention until it returns
  return out;
}

TensorId mlp(GraphBuilder& b, const TransformerSpec& s, const MbLayer& w, TensorId x) {
  const int64_t B = b.config().batch_size, S = b.config().seq_len, I = s.intermediate_size;
  const std::vector<TensorId> halves = b.split(apply(b, w.wi, x), 2, {B, S, I});  // input, gate: locals
  // The locals keep Wi's output alive until the MLP returns, after Wo. Held in inference only: in training the
  // activation saves `input` anyway.
  if (!b.training()) b.hold(halves[0]);
  const TensorId prod = b.mul(activation(b, s.hidden_act, halves[0]), halves[1]);
  const TensorId out = apply(b, w.mlp_wo, b.dropout(prod, s.resid_dropout));
  if (!b.training()) b.drop(halves[0]);
  return out;
}

// ModernBertPredictionHead: norm(act(dense(x))). Each module's output is the next call's argument and stays
// referenced until that call returns (whole-run amp stream: the bf16 activation freed after the norm's output
// exists).
TensorId prediction_head(GraphBuilder& b, const TransformerSpec& s, const MbLinear& dense, const MbNorm& norm,
                         TensorId x) {
  const TensorId act = activation(b, s.classifier_activation, apply(b, dense, x));
  b.hold(act);
  const TensorId t = apply(b, norm, act);
  b.drop(act);
  return t;
}

struct ClsHead {
  MbLinear dense;
  MbNorm norm;
  MbLinear classifier;
};

// ModernBertForSequenceClassification / ModernBertForTokenClassification after the final norm's output `last`
// (outputs[0], bound until the forward returns):
//   seq_cls, classifier_pooling "cls": last_hidden_state[:, 0] (heads_encoder.cpp first_token);
//            "mean": attention_mask = torch.ones([B, S], bool) (the harness passes none; a local until return),
//            (last * mask.unsqueeze(-1)).sum(dim=1) / mask.sum(dim=1, keepdim=True): the [B, S, H] product is a
//            temporary of the expression (MulBackward keeps only the mask, SumBackward nothing: its gradient is
//            an expanded view, so backward writes one fresh [B, S, H] gradient, grad * mask), the int64 [B, 1]
//            count, the division (saving the count);
//   then the prediction head, drop (classifier_dropout), classifier; token_cls the same on every position, the
//   head's output bound in the rebound local until return. Cross entropy (heads_encoder.cpp cls_loss).
void classification_tail(GraphBuilder& b, const TransformerSpec& s, const ClsHead& w, TensorId last,
                         TensorId labels) {
  const auto& cfg = b.config();
  const int64_t B = cfg.batch_size, S = cfg.seq_len, H = s.hidden_size;
  b.hold(last);
  TensorId x = last, mask = kNoTensor;
  const bool seq = cfg.task == Task::seq_cls;
  if (seq && s.cls_mean_pooling) {
    mask = b.generic_one("ones", {}, {B, S}, DType::boolean);
    b.hold(mask);
    const DType dt = b.dtype(last);
    const int64_t product_bytes = B * S * H * static_cast<int64_t>(dtype_bytes(dt));
    const TensorId sum = b.generic({"mul_sum", {last, mask}, {{{B, H}, dt}}, {1}, {}, {product_bytes}, {}})[0];
    const TensorId count = b.generic_one("sum", {mask}, {B, 1}, DType::i64);
    x = b.binary("div", sum, count, false, true);
  } else if (seq) {
    x = first_token(b, last);
  }
  x = b.dropout(prediction_head(b, s, w.dense, w.norm, x), seq ? s.seq_cls_dropout : s.token_cls_dropout);
  if (!seq) b.hold(x);  // last_hidden_state = self.drop(self.head(...)): the rebound local until return
  const TensorId logits = apply(b, w.classifier, x);
  cls_loss(b, logits, labels, {last, mask, seq ? kNoTensor : x});
}

}  // namespace

void build_modernbert(GraphBuilder& b, const TransformerSpec& s) {
  const auto& cfg = b.config();
  if (s.sliding_layers.size() != static_cast<size_t>(s.num_layers))
    throw InputError("model.layer_types", std::to_string(s.sliding_layers.size()),
                     "needs one entry per layer (" + std::to_string(s.num_layers) + ")");
  const int64_t B = cfg.batch_size, S = cfg.seq_len, H = s.hidden_size, V = s.vocab_size, hd = s.head_dim;
  const bool emb_train = !cfg.freeze_embeddings;
  hf_construction_scalar(b);
  const TensorId tok = b.param("model.embeddings.tok_embeddings.weight", {V, H}, emb_train);
  const MbNorm emb_norm = mb_norm(b, s, "model.embeddings.norm", emb_train);
  std::vector<MbLayer> layers;
  layers.reserve(static_cast<size_t>(s.num_layers));
  for (int64_t i = 0; i < s.num_layers; ++i) layers.push_back(layer_params(b, s, i, !layer_frozen(cfg, i)));
  const MbNorm final_norm = mb_norm(b, s, "model.final_norm", emb_train);
  bool any_full = false, any_sliding = false;
  for (uint8_t sl : s.sliding_layers) (sl ? any_sliding : any_full) = true;
  // ModernBertRotaryEmbedding: inv_freq and original_inv_freq per layer type (non-persistent buffers, fp32 in
  // every precision's whole-run stream).
  for (int types = (any_full ? 1 : 0) + (any_sliding ? 1 : 0); types > 0; --types) {
    b.buffer("model.rotary_emb.inv_freq", {hd / 2}, DType::f32);
    b.buffer("model.rotary_emb.original_inv_freq", {hd / 2}, DType::f32);
  }
  // The classification models' head and classifier are trained whatever freeze_embeddings says (the masked LM's
  // head shares the embedding's fate).
  const bool lm = cfg.task == Task::lm;
  const bool feature = cfg.task == Task::feature;  // AutoModel: ModernBertModel, no head
  const bool head_train = emb_train || !lm;
  MbLinear head_dense;
  MbNorm head_norm;
  if (!feature) {
    head_dense = mb_linear(b, "head.dense", H, H, s.classifier_bias, head_train);
    head_norm = mb_norm(b, s, "head.norm", head_train);
  }
  TensorId decoder = kNoTensor, decoder_bias = kNoTensor;
  MbLinear classifier;
  if (feature) {
  } else if (lm) {
    decoder = s.tie_word_embeddings ? tok : b.param("decoder.weight", {V, H}, emb_train);
    decoder_bias = s.decoder_bias ? b.param("decoder.bias", {V}, emb_train) : kNoTensor;
  } else {
    check_cls_loss(b, s);
    classifier = mb_linear(b, "classifier", cfg.num_labels, H, true, true);
  }

  const TensorId ids = b.input({B, S}, DType::i64);
  const TensorId labels = task_labels(b, ids);
  const TensorId position_ids = b.generic_one("arange", {}, {1, S}, DType::i64);
  b.hold(position_ids);
  const TensorId we = b.embedding(ids, tok);
  TensorId h = b.dropout(apply(b, emb_norm, we), s.embd_dropout);
  const TensorId embeds = h;
  b.hold(embeds);  // mask_kwargs["inputs_embeds"]: bound until ModernBertModel.forward returns
  TensorId sliding_mask = kNoTensor;
  if (any_sliding && S >= s.sliding_window) {
    sliding_mask = sliding_bool_mask(b, S);
    if (cfg.attn == AttnImpl::eager) {
      // eager_mask: torch.where(mask, 0.0, min) at the batch-expanded size, in the hidden states' dtype.
      sliding_mask = b.generic_one("where", {sliding_mask}, {B, 1, S, S}, b.dtype(h));
    }  // SDPA takes the bool mask expanded to [B, 1, S, S], a view
    b.hold(sliding_mask);
  }
  // One cos / sin pair per layer type, in the hidden states' dtype, bound in position_embeddings until return.
  TensorId cos_full = kNoTensor, sin_full = kNoTensor, cos_sl = kNoTensor, sin_sl = kNoTensor;
  if (any_full) std::tie(cos_full, sin_full) = rotary_cos_sin(b, 1, S, hd, b.dtype(h));
  if (any_sliding) std::tie(cos_sl, sin_sl) = rotary_cos_sin(b, 1, S, hd, b.dtype(h));
  for (TensorId t : {cos_full, sin_full, cos_sl, sin_sl})
    if (t != kNoTensor) b.hold(t);

  for (int64_t i = 0; i < s.num_layers; ++i) {
    const MbLayer& w = layers[static_cast<size_t>(i)];
    const bool sliding = s.sliding_layers[static_cast<size_t>(i)] != 0;
    b.begin_layer("model.layers." + std::to_string(i), layer_checkpointed(cfg, i));
    const TensorId layer_in = h;
    b.hold(layer_in);  // the model's loop variable, until the layer returns
    TensorId x = h;
    if (w.has_attn_norm) {
      x = apply(b, w.attn_norm, h);
      b.hold(x);  // the attention call's argument until it returns
    }
    const TensorId a = attention(b, s, w, x, sliding ? cos_sl : cos_full, sliding ? sin_sl : sin_full,
                                 sliding ? sliding_mask : kNoTensor);
    if (x != h) b.drop(x);
    b.hold(a);  // attn_output, until the layer returns
    const TensorId h1 = b.add(h, a);
    const TensorId n2 = apply(b, w.mlp_norm, h1);
    b.hold(n2);  // the MLP call's argument until it returns
    const TensorId m = mlp(b, s, w, n2);
    b.drop(n2);
    h = b.add(h1, m);
    b.drop(a);
    if (layer_in != embeds) b.drop(layer_in);
    b.end_layer();
  }
  b.hold(h);  // `hidden_states = self.final_norm(hidden_states)` rebinds once the norm has returned
  const TensorId last = apply(b, final_norm, h);
  for (TensorId t : {h, embeds, position_ids, sliding_mask, cos_full, sin_full, cos_sl, sin_sl})
    if (t != kNoTensor) b.drop(t);

  if (feature) {  // BaseModelOutput(last_hidden_state)
    forward_output(b, {last});
    return;
  }
  if (!lm) {
    classification_tail(b, s, {head_dense, head_norm, classifier}, last, labels);
    return;
  }
  // ModernBertForMaskedLM.forward: outputs (last_hidden_state) bound until it returns, after the loss.
  b.hold(last);
  // decoder(head(h)): the head's output is the decoder's argument, referenced until it returns (whole-run amp
  // stream: the fp32 head output freed after the logits).
  const TensorId t = prediction_head(b, s, head_dense, head_norm, last);
  b.hold(t);
  const TensorId logits = b.linear(t, decoder, decoder_bias);
  b.drop(t);
  if (!b.training()) {  // MaskedLMOutput(logits=logits): no labels, no loss
    forward_output(b, {logits});
    return;
  }
  b.mark_model_end();
  b.hold(logits);  // MaskedLMOutput.logits
  const TensorId f = b.to(logits, DType::f32);
  b.hold(f);  // ForMaskedLMLoss's local `logits` (fp32) until it returns
  const TensorId loss = b.cross_entropy(b.view(f, {B * S, V}), b.view(ids, {B * S}));
  b.drop(f);
  b.drop(logits);
  b.drop(last);
  b.exit_autocast();
  b.set_loss(loss);
}

}  // namespace memplan
