// mpt (family set 49): MptForCausalLM, MPT's own eager attention with ALiBi. Written from the code index's modeling
// file without a device: the importer's class defaults, refusals naming the field, what the fp32 ALiBi sum and the
// attention's fp32 copies cost against a bf16 model (derived by hand), and the zoo entries' parameter counts. The
// held-out rows (calibrate/cases/families49-input.jsonl) are predicted in data/validation/predictions/.
#include <catch2/catch.hpp>

#include <functional>
#include <string>

#include "engine/errors.h"
#include "engine/estimate.h"
#include "family_test_helpers.h"
#include "models/hf_config.h"
#include "models/param_count.h"
#include "models/zoo.h"

using memplan::ModelSpec;
using memplan::RunConfig;
using memplan::TransformerSpec;

namespace {

TransformerSpec import(const std::string& text) { return memplan::testing::import_config(text); }
std::string error_of(const std::function<void()>& fn) { return memplan::testing::input_error_of(fn); }
using memplan::testing::starts_with;

}  // namespace

TEST_CASE("mpt importer: class defaults and attn_config", "[family][set49][importer]") {
  // MptConfig(): d_model 2048, 16 heads, 24 layers, expansion_ratio 4, max_seq_len 2048, vocabulary 50368.
  const TransformerSpec s = import(R"({"model_type": "mpt"})");
  CHECK(s.model_type == "mpt");
  CHECK(s.hidden_size == 2048);
  CHECK(s.num_heads == 16);
  CHECK(s.head_dim == 128);
  CHECK(s.num_layers == 24);
  CHECK(s.intermediate_size == 8192);
  CHECK(s.max_position_embeddings == 2048);
  CHECK(s.vocab_size == 50368);
  CHECK(s.attn_dropout == 0.0);
  CHECK(s.mpt_clip_qkv == 0.0);
  CHECK(s.tie_word_embeddings);
  const TransformerSpec c = import(R"({"model_type": "mpt", "attn_config": {"attn_pdrop": 0.1, "clip_qkv": 8}})");
  CHECK(c.attn_dropout == 0.1);
  CHECK(c.mpt_clip_qkv == 8.0);
}

TEST_CASE("mpt: refusals name the field", "[family][set49]") {
  CHECK(starts_with(error_of([] { import(R"({"model_type": "mpt", "attn_config": "torch"})"); }), "config.attn_config:"));
  CHECK(starts_with(error_of([] { import(R"({"model_type": "mpt", "attn_config": {"attn_pdrop": 2}})"); }),
                    "config.attn_config.attn_pdrop:"));
  CHECK(starts_with(error_of([] { import(R"({"model_type": "mpt", "attn_config": {"clip_qkv": -1}})"); }),
                    "config.attn_config.clip_qkv:"));
  CHECK(starts_with(error_of([] { import(R"({"model_type": "mpt", "d_model": 1000, "n_heads": 16})"); }), "config."));
  // No SDPA path, and ALiBi is max_seq_len long.
  const ModelSpec m = memplan::testing::model_of_config(R"({"model_type": "mpt", "n_layers": 1, "max_seq_len": 512})");
  RunConfig cfg;
  cfg.batch_size = 1;
  cfg.seq_len = 256;
  cfg.attn = memplan::AttnImpl::sdpa;
  CHECK(starts_with(error_of([&] { memplan::estimate(m, cfg); }), "attn:"));
  cfg.attn = memplan::AttnImpl::eager;
  cfg.seq_len = 513;
  CHECK(starts_with(error_of([&] { memplan::estimate(m, cfg); }), "seq_len:"));
}

TEST_CASE("mpt: clip_qkv adds one fused-projection-sized tensor a layer, derived by hand", "[family][set49]") {
  // clamp(mixed_qkv) is a new [B, S, 3H] tensor that ClampBackward keeps (its input) besides the projection, which
  // past_key_value's views keep: one [B, S, 3H] block more a layer while the forward's saved tensors pile up.
  // bf16, B 2, S 256, H 512: 2 * 256 * 1536 * 2 bytes = 1.5 MiB a layer; with 4 layers the peak grows by 4 of them
  // at most (the last one's clamp output may be freed before the peak).
  const std::string fields = R"("d_model": 512, "n_heads": 8, "n_layers": 4, "max_seq_len": 1024, "vocab_size": 4096)";
  const ModelSpec plain = memplan::testing::model_of_config(R"({"model_type": "mpt", )" + fields + "}");
  const ModelSpec clip =
      memplan::testing::model_of_config(R"({"model_type": "mpt", "attn_config": {"clip_qkv": 6}, )" + fields + "}");
  RunConfig cfg;
  cfg.precision = memplan::Precision::bf16;
  cfg.batch_size = 2;
  cfg.seq_len = 256;
  cfg.attn = memplan::AttnImpl::eager;
  const int64_t block = int64_t{2} * 256 * 1536 * 2;
  const int64_t extra = memplan::estimate(clip, cfg).peak_allocated_bytes() -
                        memplan::estimate(plain, cfg).peak_allocated_bytes();
  CHECK(extra >= 3 * block);
  CHECK(extra <= 4 * block);
}

TEST_CASE("mpt: parameter counts, derived by hand", "[family][set49]") {
  // mpt-7b: wte 50432*4096 = 206,569,472; a block: norm_1 4,096, Wqkv 3*4096*4096 = 50,331,648, out_proj 16,777,216,
  // norm_2 4,096, up_proj 4*4096*4096 = 67,108,864, down_proj 67,108,864 -> 201,334,784, x 32 = 6,442,713,088;
  // norm_f 4,096 (no biases anywhere; lm_head tied): 6,649,286,656.
  CHECK(memplan::param_count(memplan::load_zoo_model("mpt-7b")) == 6'649'286'656);
  // mpt-30b: 50432*7168 = 361,496,576; a block 2*7168 + 12*7168^2 = 616,577,024, x 48 = 29,595,697,152; + 7,168:
  // 29,957,200,896.
  CHECK(memplan::param_count(memplan::load_zoo_model("mpt-30b")) == 29'957'200'896);
}
