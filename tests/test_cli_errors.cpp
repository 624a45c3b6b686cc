// Bad input gets exit code 2 and one line naming the field and value; never a crash or a silent default.
// "Does not fit" is an answer (exit 0).
#include <catch2/catch.hpp>

#include "run_cli.h"

using memplan::testing::run_cli;
using memplan::testing::write_temp;

TEST_CASE("each kind of bad input exits 2 with one line naming the field", "[cli][errors]") {
  const std::string bad_json = write_temp("bad.json", "{\"model_type\": \"llama\", \"hidden_size\": ");
  const std::string unknown_type = write_temp("unknown_type.json", R"({"model_type": "rwkv", "hidden_size": 64})");
  const std::string neg_size = write_temp("neg.json", R"({"model_type": "llama", "hidden_size": -64})");
  const std::string convnext = write_temp("convnext.json", R"({"model_type": "convnext"})");
  const std::string odd_head = write_temp("odd_head.json", R"({"model_type": "olmo2", "hidden_size": 100, "num_attention_heads": 4})");
  const std::string overflow = write_temp(
      "overflow.json",
      R"({"model_type": "llama", "hidden_size": 4611686018427387904, "num_attention_heads": 1, "num_key_value_heads": 1, "intermediate_size": 8, "num_hidden_layers": 1, "vocab_size": 8})");
  struct Row {
    std::string args;
    std::string field;  // must appear in the message
  };
  const Row table[] = {
      {"estimate --model " + bad_json, "model"},                                   // malformed JSON
      {"estimate --model " + unknown_type, "model_type"},                          // unknown model_type
      {"estimate --model no-such-model-7b", "model"},                              // unknown zoo name
      {"estimate --model gpt2 --precision fp12", "--precision"},                   // unknown enum value
      {"estimate --model gpt2 --optimizer lion", "--optimizer"},
      {"estimate --model gpt2 --optimizer-impl turbo", "--optimizer-impl"},
      {"estimate --model gpt2 --attn flash9", "--attn"},
      {"estimate --model gpt2 --batch-size 0", "batch"},                            // non-positive sizes
      {"estimate --model gpt2 --batch-size -3", "batch"},
      {"estimate --model gpt2 --seq-len 4096", "seq_len"},                          // past n_positions
      {"estimate --model gpt2 --mode inference --seq-len 1024 --generate-tokens 32", "generate_tokens"},
      {"estimate --model gpt2 --grad-checkpointing 1,x", "--grad-checkpointing"},
      {"estimate --model gpt2 --gpu tpu-v9", "--gpu"},
      {"estimate --model " + neg_size, "hidden_size"},                             // negative size in a config
      {"estimate --model " + overflow + " --seq-len 8", "config.hidden_size"},     // past the size limits
      {"estimate --model llama-2-7b --batch-size 9223372036854775807 --seq-len 4096", "--batch-size"},
      {"estimate --model " + convnext + " --seq-len 16", "--seq-len: does not apply to convnext: its input is the config's image_size"},
      {"estimate --model " + odd_head, "config.hidden_size: gives an odd head_dim 25"},  // rotate_half pairs dimensions
      {"validate /nonexistent/cases.jsonl", "FILE"},
      {"explain-oom 'this is not an OOM message'", ""},
  };
  for (const auto& row : table) {
    DYNAMIC_SECTION(row.args) {
      const auto r = run_cli(row.args);
      INFO("stderr: " << r.err);
      CHECK(r.exit_code == 2);
      CHECK(r.err_lines() == 1);
      CHECK(r.err.find(row.field) != std::string::npos);
    }
  }
}

TEST_CASE("does not fit is an answer, not an error", "[cli][errors]") {
  const auto r = run_cli("estimate --model llama-2-7b --precision bf16 --gpu rtx-4090");
  CHECK(r.exit_code == 0);
  CHECK(r.out.rfind("DOES NOT FIT", 0) == 0);
  const auto j = run_cli("estimate --model gpt2 --batch-size 2 --seq-len 128 --gpu h200 --json");
  CHECK(j.exit_code == 0);
  CHECK(j.out.find("\"fits\": true") != std::string::npos);
}
