// KV cache sizing per architecture family, independent of any replay: bytes per token per layer for a KV
// dtype and tensor-parallel degree, and what a sequence of N tokens holds under three sliding-window policies.
//
// Contract (one sequence; multiply by the batch):
//  - MHA / GQA / MQA: a layer stores K and V of num_kv_heads x head_dim per token (head_dim as the config says,
//    not hidden / heads). Under tensor parallelism T each rank holds num_kv_heads / T heads, or one replicated
//    head when num_kv_heads < T (vLLM replicates KV heads then).
//  - MLA (kv_lora_rank > 0): `latent` stores the compressed kv_lora_rank latent plus the qk_rope_head_dim rope
//    key per token per layer, shared by all heads and replicated on every TP rank (vLLM / SGLang);
//    transformers 5.17's DynamicCache holds the same `latent` layout (DeepseekV2/V3Attention.forward updates it
//    with the normed latent [B, 1, L, kv_lora_rank] as keys and the rotated rope key [B, 1, L, rope] as values,
//    before expand_kv). `hf_decompressed` (per head, keys of qk_nope + qk_rope and values of v_head_dim) is
//    what DeepSeek's remote-code modeling cached.
//  - KV dtype: auto = the model dtype; fp16/bf16 2 B; fp8 (e4m3) 1 B plus one fp32 scale per layer for K and
//    for V (per-tensor, vLLM's kv_cache_dtype=fp8); int8 1 B plus an fp16 scale and an fp16 zero point per
//    token per KV head for K and for V (asymmetric per-head int8, as LMDeploy's kv int8).
//  - Sliding layers: `hf_prefill` = what DynamicSlidingWindowLayer holds right after a prefill of N tokens
//    (a view of the whole cat: N); `hf_decode` = after a decode step (a fresh window-sized cat: min(N, window));
//    `ring` = a ring buffer / paged allocator that keeps only the window (min(N, window)).
#pragma once
#include <cstdint>
#include <string_view>
#include <vector>

#include "engine/arch/spec.h"
#include "engine/dtype.h"

namespace memplan {

enum class KvDtype : uint8_t { auto_, fp16, bf16, fp8, int8 };
enum class MlaLayout : uint8_t { latent, hf_decompressed };
enum class SlidingKeep : uint8_t { hf_prefill, hf_decode, ring };

bool parse_kv_dtype(std::string_view s, KvDtype& out);
std::string_view kv_dtype_name(KvDtype k);

struct KvLayer {
  int64_t bytes_per_token = 0;  // K + V (or the MLA latent + rope key), scales included
  int64_t window = 0;           // 0: full attention
  int64_t fixed_bytes = 0;      // per-layer constants (fp8 per-tensor scales)
};

struct KvModel {
  std::vector<KvLayer> layers;
  int64_t bytes_per_token_all_layers() const;  // as if every layer kept every token
  // Bytes one sequence of `tokens` holds.
  int64_t sequence_bytes(int64_t tokens, SlidingKeep keep) const;
  // Paged: each layer's tokens rounded up to whole blocks of `block_size`.
  int64_t sequence_bytes_paged(int64_t tokens, int64_t block_size, SlidingKeep keep) const;
};

// Throws InputError when tp does not divide num_heads or the KV dtype has no meaning for the model.
KvModel kv_model(const TransformerSpec& s, DType model_dtype, KvDtype kv, int64_t tp = 1,
                 MlaLayout mla = MlaLayout::latent);

}  // namespace memplan
