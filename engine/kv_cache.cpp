#include "engine/kv_cache.h"

#include <algorithm>

#include "engine/checked.h"
#include "engine/errors.h"

namespace memplan {

bool parse_kv_dtype(std::string_view s, KvDtype& out) {
  if (s == "auto") out = KvDtype::auto_;
  else if (s == "fp16") out = KvDtype::fp16;
  else if (s == "bf16") out = KvDtype::bf16;
  else if (s == "fp8" || s == "fp8_e4m3") out = KvDtype::fp8;
  else if (s == "int8") out = KvDtype::int8;
  else return false;
  return true;
}

std::string_view kv_dtype_name(KvDtype k) {
  switch (k) {
    case KvDtype::auto_: return "auto";
    case KvDtype::fp16: return "fp16";
    case KvDtype::bf16: return "bf16";
    case KvDtype::fp8: return "fp8";
    case KvDtype::int8: return "int8";
  }
  return "?";
}

int64_t KvModel::bytes_per_token_all_layers() const {
  int64_t n = 0;
  for (const auto& l : layers) n = checked_add(n, l.bytes_per_token, "kv bytes per token");
  return n;
}

namespace {
int64_t kept_tokens(const KvLayer& l, int64_t tokens, SlidingKeep keep) {
  if (l.window <= 0 || keep == SlidingKeep::hf_prefill) return tokens;
  return std::min(tokens, l.window);
}
}  // namespace

int64_t KvModel::sequence_bytes(int64_t tokens, SlidingKeep keep) const {
  int64_t n = 0;
  for (const auto& l : layers)
    n = checked_add(n, checked_add(checked_mul(l.bytes_per_token, kept_tokens(l, tokens, keep), "kv bytes"), l.fixed_bytes));
  return n;
}

int64_t KvModel::sequence_bytes_paged(int64_t tokens, int64_t block_size, SlidingKeep keep) const {
  int64_t n = 0;
  for (const auto& l : layers) {
    const int64_t kept = kept_tokens(l, tokens, keep);
    const int64_t blocks = (kept + block_size - 1) / block_size;
    n = checked_add(n, checked_mul(checked_mul(l.bytes_per_token, block_size, "kv block bytes"), blocks, "kv bytes"));
  }
  return n;
}

KvModel kv_model(const TransformerSpec& s, DType model_dtype, KvDtype kv, int64_t tp, MlaLayout mla) {
  if (tp <= 0) throw InputError("tensor_parallel", std::to_string(tp), "must be a positive integer");
  if (s.num_heads % tp != 0)
    throw InputError("tensor_parallel", std::to_string(tp),
                     "must divide num_attention_heads (" + std::to_string(s.num_heads) + ")");
  int64_t elem = dtype_bytes(model_dtype);
  if (kv == KvDtype::fp16 || kv == KvDtype::bf16) elem = 2;
  if (kv == KvDtype::fp8 || kv == KvDtype::int8) elem = 1;
  KvModel m;
  for (int64_t i = 0; i < s.num_layers; ++i) {
    KvLayer l;
    l.window = layer_is_sliding(s, i) ? s.sliding_window : 0;
    int64_t vectors_elems = 0;  // elements stored per token
    int64_t head_vectors = 0;   // vectors that carry an int8 scale + zero each
    if (s.kv_lora_rank > 0 && mla == MlaLayout::latent) {
      vectors_elems = s.kv_lora_rank + s.qk_rope_head_dim;
      head_vectors = 1;
    } else if (s.kv_lora_rank > 0) {
      const int64_t heads = s.num_heads / tp;
      vectors_elems = checked_mul(heads, s.qk_nope_head_dim + s.qk_rope_head_dim + s.v_head_dim);
      head_vectors = 2 * heads;
    } else {
      const int64_t kv_heads = s.num_kv_heads >= tp ? s.num_kv_heads / tp : 1;
      vectors_elems = checked_mul(checked_mul(2, kv_heads), s.head_dim);
      head_vectors = 2 * kv_heads;
    }
    l.bytes_per_token = checked_mul(vectors_elems, elem, "kv bytes per token");
    if (kv == KvDtype::int8) l.bytes_per_token = checked_add(l.bytes_per_token, checked_mul(head_vectors, 4));
    if (kv == KvDtype::fp8) l.fixed_bytes = 2 * 4;
    m.layers.push_back(l);
  }
  return m;
}

}  // namespace memplan
