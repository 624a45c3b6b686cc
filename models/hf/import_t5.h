// The reading T5Config, MT5Config and UMT5Config share (models/hf/import_t5.cpp, import_mt5.cpp).
#pragma once
#include <string>

#include "models/hf_config_reader.h"

namespace memplan::hf {

// A class's defaults for the keys below (d_model 512, d_kv 64, 32 buckets, max distance 128 and dropout_rate 0.1
// are common to all three).
struct T5Defaults {
  int64_t vocab, d_ff, layers, heads;
  const char* feed_forward_proj;
};
// Sets the family to t5 and reads, in T5Config's order, the sizes, relative_attention_num_buckets / _max_distance,
// dropout_rate and feed_forward_proj: "<act>" or "gated-<act>" ("gated-gelu" means gelu_new) with an act the T5
// builder models, refused otherwise with a message naming `type`.
void read_t5_stacks(const ConfigReader& r, TransformerSpec& s, const T5Defaults& d, const std::string& type);

}  // namespace memplan::hf
