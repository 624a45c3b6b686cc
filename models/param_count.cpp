#include "models/param_count.h"

#include <algorithm>

#include "engine/arch/builders.h"
#include "engine/checked.h"
#include "engine/errors.h"

namespace memplan {
namespace {

// Accumulates products of sizes with overflow checks.
struct Counter {
  int64_t total = 0;
  void add(int64_t a, int64_t b = 1, int64_t c = 1) {
    total = checked_add(total, checked_mul(checked_mul(a, b, "param_count"), c, "param_count"), "param_count");
  }
  // nn.Linear(in, out, bias)
  void linear(int64_t in, int64_t out, bool bias) {
    add(in, out);
    if (bias) add(out);
  }
  void layer_norm(int64_t n) { add(2, n); }  // weight + bias
};

int64_t gpt2(const TransformerSpec& s) {
  const int64_t h = s.hidden_size;
  Counter layer;
  layer.layer_norm(h);                            // ln_1
  layer.linear(h, 3 * h, true);                   // attn.c_attn
  layer.linear(h, h, true);                       // attn.c_proj
  layer.layer_norm(h);                            // ln_2
  layer.linear(h, s.intermediate_size, true);     // mlp.c_fc
  layer.linear(s.intermediate_size, h, true);     // mlp.c_proj
  Counter c;
  c.add(s.vocab_size, h);                         // wte
  c.add(s.max_position_embeddings, h);            // wpe
  c.add(s.num_layers, layer.total);
  c.layer_norm(h);                                // ln_f
  if (!s.tie_word_embeddings) c.add(s.vocab_size, h);  // lm_head, no bias
  return c.total;
}

int64_t deepseek_v2(const TransformerSpec& s) {
  const int64_t h = s.hidden_size, nh = s.num_heads;
  const int64_t qk = s.qk_nope_head_dim + s.qk_rope_head_dim;
  Counter attn;
  if (s.q_lora_rank > 0) {
    attn.linear(h, s.q_lora_rank, s.attention_bias);  // q_a_proj
    attn.add(s.q_lora_rank);                          // q_a_layernorm
    attn.linear(s.q_lora_rank, nh * qk, false);       // q_b_proj
  } else {
    attn.linear(h, nh * qk, false);                   // q_proj
  }
  attn.linear(h, s.kv_lora_rank + s.qk_rope_head_dim, s.attention_bias);  // kv_a_proj_with_mqa
  attn.add(s.kv_lora_rank);                                               // kv_a_layernorm
  attn.linear(s.kv_lora_rank, nh * (s.qk_nope_head_dim + s.v_head_dim), false);  // kv_b_proj
  attn.linear(nh * s.v_head_dim, h, s.attention_bias);                    // o_proj
  attn.add(2, h);                                                          // input / post-attention norms
  Counter dense, moe;
  dense.add(3, h, s.intermediate_size);                                    // gate, up, down
  moe.add(s.num_experts, 3 * h, s.moe_intermediate_size);                  // routed experts
  moe.add(3, h, checked_mul(s.num_shared_experts, s.moe_intermediate_size));  // shared experts (one MLP)
  moe.add(s.num_experts, h);                                               // router gate
  Counter c;
  c.add(s.vocab_size, h);
  c.add(s.num_layers, attn.total);
  c.add(s.first_dense_layers, dense.total);
  c.add(s.num_layers - s.first_dense_layers, s.num_experts > 0 ? moe.total : dense.total);
  c.add(h);
  if (!s.tie_word_embeddings) c.add(s.vocab_size, h);
  return c.total;
}

int64_t llama(const TransformerSpec& s) {
  const int64_t h = s.hidden_size;
  if (s.kv_lora_rank > 0) return deepseek_v2(s);
  const int64_t q_out = checked_mul(s.num_heads, s.head_dim, "param_count");
  const int64_t kv_out = checked_mul(s.num_kv_heads, s.head_dim, "param_count");
  Counter layer;
  layer.add(h);                                   // input_layernorm (RMSNorm weight)
  layer.linear(h, q_out, s.qkv_bias);             // q_proj
  layer.linear(h, kv_out, s.qkv_bias);            // k_proj
  layer.linear(h, kv_out, s.qkv_bias);            // v_proj
  layer.linear(q_out, h, s.o_bias);               // o_proj
  layer.add(h);                                   // post_attention_layernorm
  if (s.model_type == "gemma2") layer.add(2, h);  // pre_ / post_feedforward_layernorm
  Counter mlp;
  mlp.linear(h, s.intermediate_size, s.mlp_bias);  // gate_proj
  mlp.linear(h, s.intermediate_size, s.mlp_bias);  // up_proj
  mlp.linear(s.intermediate_size, h, s.mlp_bias);  // down_proj
  if (s.num_experts > 0) {
    layer.linear(h, s.num_experts, false);        // block_sparse_moe router gate
    layer.add(s.num_experts, mlp.total);          // experts (fused gate_up_proj + down_proj in 5.x)
  } else {
    layer.add(mlp.total);
  }
  Counter c;
  c.add(s.vocab_size, h);                         // embed_tokens
  c.add(s.num_layers, layer.total);
  c.add(h);                                       // final norm
  if (!s.tie_word_embeddings) c.add(s.vocab_size, h);  // lm_head, no bias
  return c.total;
}

int64_t bert(const TransformerSpec& s) {
  const int64_t h = s.hidden_size;
  Counter layer;
  layer.linear(h, h, true);                       // attention.self.query
  layer.linear(h, h, true);                       // attention.self.key
  layer.linear(h, h, true);                       // attention.self.value
  layer.linear(h, h, true);                       // attention.output.dense
  layer.layer_norm(h);                            // attention.output.LayerNorm
  layer.linear(h, s.intermediate_size, true);     // intermediate.dense
  layer.linear(s.intermediate_size, h, true);     // output.dense
  layer.layer_norm(h);                            // output.LayerNorm
  Counter c;
  c.add(s.vocab_size, h);                         // word_embeddings
  c.add(s.max_position_embeddings, h);            // position_embeddings
  c.add(s.type_vocab_size, h);                    // token_type_embeddings
  c.layer_norm(h);                                // embeddings.LayerNorm
  c.add(s.num_layers, layer.total);
  c.linear(h, h, true);                           // cls.predictions.transform.dense
  c.layer_norm(h);                                // cls.predictions.transform.LayerNorm
  c.add(s.vocab_size);                            // cls.predictions.bias
  // Untied (transformers 5.x): the decoder weight is its own, and decoder.bias is no longer tied to
  // cls.predictions.bias, so both vocab-sized biases count (measured: 5.17.0, meta device).
  if (!s.tie_word_embeddings) c.linear(h, s.vocab_size, true);
  return c.total;
}

int64_t resnet(const VisionSpec& s) {
  const int64_t expansion = s.bottleneck ? 4 : 1;
  Counter c;
  c.add(3, 64, 7 * 7);                            // conv1 (no bias)
  c.add(2, 64);                                   // bn1
  int64_t in = 64;
  const int64_t planes_of_stage[4] = {64, 128, 256, 512};
  for (size_t stage = 0; stage < s.blocks_per_stage.size() && stage < 4; ++stage) {
    const int64_t planes = planes_of_stage[stage];
    const int64_t out = planes * expansion;
    for (int64_t b = 0; b < s.blocks_per_stage[stage]; ++b) {
      if (s.bottleneck) {
        c.add(in, planes);                        // conv1 1x1
        c.add(planes, planes, 9);                 // conv2 3x3
        c.add(planes, out);                       // conv3 1x1
        c.add(2, 2 * planes + out);               // bn1, bn2, bn3
      } else {
        c.add(in, planes, 9);                     // conv1 3x3
        c.add(planes, planes, 9);                 // conv2 3x3
        c.add(2, 2 * planes);                     // bn1, bn2
      }
      // downsample (1x1 conv + BN) on the first block when stride != 1 or channels change
      const bool stride2 = b == 0 && stage > 0;
      if (b == 0 && (stride2 || in != out)) {
        c.add(in, out);
        c.add(2, out);
      }
      in = out;
    }
  }
  c.linear(512 * expansion, s.num_classes, true);  // fc
  return c.total;
}

int64_t vit(const VisionSpec& s) {
  const int64_t h = s.hidden_dim;
  const int64_t side = s.default_image_size / s.patch_size;
  const int64_t seq = side * side + 1;            // patches + class token
  Counter layer;
  layer.layer_norm(h);                            // ln_1
  layer.add(3 * h, h);                            // self_attention.in_proj_weight
  layer.add(3 * h);                               // self_attention.in_proj_bias
  layer.linear(h, h, true);                       // self_attention.out_proj
  layer.layer_norm(h);                            // ln_2
  layer.linear(h, s.mlp_dim, true);               // mlp.0
  layer.linear(s.mlp_dim, h, true);               // mlp.3
  Counter c;
  c.add(3 * s.patch_size * s.patch_size, h);      // conv_proj weight
  c.add(h);                                       // conv_proj bias
  c.add(h);                                       // class_token
  c.add(seq, h);                                  // encoder.pos_embedding
  c.add(s.num_layers, layer.total);
  c.layer_norm(h);                                // encoder.ln
  c.linear(h, s.num_classes, true);               // heads.head
  return c.total;
}

// Families without a closed form here: the parameters their builder registers (a one-token training graph in
// fp32), which is what the replay holds in memory. Every builder registers each nn.Parameter of the modeling
// code (tied ones once), so this equals model.num_parameters(); tests/test_importers.cpp asserts it against
// published counts.
int64_t graph_params(const TransformerSpec& spec) {
  ModelSpec m;
  m.kind = ModelSpec::Kind::transformer;
  m.name = spec.model_type;
  m.transformer = spec;
  RunConfig cfg;
  cfg.batch_size = 1;
  cfg.seq_len = 1;
  cfg.target_len = 1;
  // whisper's encoder takes exactly 2 x max_source_positions frames (its builder refuses any other seq_len).
  if (spec.max_source_positions > 0) cfg.seq_len = 2 * spec.max_source_positions;
  // An image model's (vit) sequence is its patch count + 1, fixed by the config (its builder refuses any other).
  if (hf_image_tokens(spec) > 0) cfg.seq_len = hf_image_tokens(spec);
  // A speech encoder (wav2vec2 / hubert / wavlm) takes a waveform: the shortest power-of-two length whose frames
  // cover SpecAugment's mask span (its builder refuses a waveform too short for its convolutions).
  if (!spec.speech_conv_kernel.empty()) {
    cfg.audio_samples = 1;
    const int64_t need = std::max<int64_t>(spec.speech_mask_time_length, 1);
    while (speech_frames(spec, cfg.audio_samples) < need && cfg.audio_samples < (int64_t{1} << 40))
      cfg.audio_samples *= 2;
    cfg.seq_len = speech_frames(spec, cfg.audio_samples);
  }
  // Eager: every family has it (gpt_oss has no SDPA path), and the attention implementation registers no
  // parameters.
  cfg.attn = AttnImpl::eager;
  const Graph g = build_graph(m, cfg);
  int64_t n = 0;
  for (const auto& t : g.tensors)
    if (t.kind == TensorKind::param) n = checked_add(n, t.bytes / dtype_bytes(t.dtype), "param_count");
  return n;
}

bool has_closed_form(const std::string& type) {
  for (const char* t : {"gpt2", "bert", "llama", "mistral", "qwen2", "mixtral", "gemma2", "deepseek_v2", ""})
    if (type == t) return true;
  return false;
}

}  // namespace

int64_t param_count(const TransformerSpec& spec) {
  if (!has_closed_form(spec.model_type)) return graph_params(spec);
  switch (spec.family) {
    case TransformerSpec::Family::gpt2: return gpt2(spec);
    case TransformerSpec::Family::llama: return llama(spec);
    case TransformerSpec::Family::bert: return bert(spec);
    case TransformerSpec::Family::t5: return graph_params(spec);
  }
  return 0;
}

// torchvision families without a closed form here (and grouped / widened ResNets): the parameters their
// builder registers, from a one-image training graph at the default image size (each builder registers every
// nn.Parameter as the module constructors create them; tests/families/test_family_vision.cpp asserts the counts against
// torchvision's published figures).
static int64_t vision_graph_params(const VisionSpec& spec) {
  ModelSpec m;
  m.kind = ModelSpec::Kind::vision;
  m.name = spec.name;
  m.vision = spec;
  RunConfig cfg;
  cfg.batch_size = 1;
  cfg.image_size = spec.default_image_size;
  cfg.precision = Precision::fp32;
  const Graph g = build_graph(m, cfg);
  int64_t n = 0;
  for (const auto& t : g.tensors)
    if (t.kind == TensorKind::param) n = checked_add(n, t.bytes / dtype_bytes(t.dtype), "param_count");
  return n;
}

int64_t param_count(const VisionSpec& spec) {
  if (spec.family == VisionSpec::Family::resnet && spec.groups == 1 && spec.width_per_group == 64)
    return resnet(spec);
  if (spec.family == VisionSpec::Family::vit) return vit(spec);
  return vision_graph_params(spec);
}

int64_t param_count(const ModelSpec& spec) {
  switch (spec.kind) {
    case ModelSpec::Kind::transformer: return param_count(spec.transformer);
    case ModelSpec::Kind::vision: return param_count(spec.vision);
    case ModelSpec::Kind::graph: break;
  }
  throw InputError("model", spec.name, "closed-form parameter count covers transformer and vision specs only");
}

}  // namespace memplan
