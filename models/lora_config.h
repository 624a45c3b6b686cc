// The `lora` and `quantization` objects of validation cases and native models (data/validation/CASE-FORMAT.md):
//   "lora": {"r": 16, "alpha": 32, "dropout": 0.05, "target_modules": ["q_proj", ...] | "all-linear",
//            "modules_to_save": [...], "merged": false}
//   "quantization": {"base": "nf4" | "fp4" | "int8", "double_quant": true, "compute_dtype": "bf16" | "fp16"}
// Defaults are the harness's (calibrate/harness.py apply_lora): r 8, alpha 8, dropout 0, "all-linear".
#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "engine/run_config.h"

namespace memplan {

// `where` prefixes field names in errors ("" for a case, "lora" is appended).
LoraConfig parse_lora_json(const nlohmann::json& j, const std::string& where = "");
QuantConfig parse_quant_json(const nlohmann::json& j, const std::string& where = "");
// "q_proj,v_proj" or "all-linear" (CLI flags).
void set_lora_targets(LoraConfig& c, const std::string& list, const std::string& field);
bool parse_quant_base(const std::string& s, QuantBase& out);
// The canonical objects the parsers read back (native graphs' `lora` / `quantization` blocks): defaults omitted
// but r, alpha and target_modules; integral numbers as integers.
nlohmann::ordered_json lora_to_json(const LoraConfig& c);
nlohmann::ordered_json quant_to_json(const QuantConfig& q);

}  // namespace memplan
