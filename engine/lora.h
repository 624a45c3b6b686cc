// LoRA adapters as peft 0.21 adds them (peft/tuners/lora/layer.py, model.py, tuners_utils.py), hooked into
// GraphBuilder at the two places every architecture builder goes through: param() (which parameters train) and
// linear() (which linears gain an adapter). Builders need no change.
//
// Mechanisms (each from peft / torch sources, checked against whole-run H200 recordings of five peft runs):
//  - get_peft_model freezes every base parameter (tuners_utils.py BaseTuner._mark_only_adapters_as_trainable,
//    bias="none"); frozen linears save their weight, not their input, for the input gradient (mm derivative:
//    self needs mat2, mat2's gradient needs self), and nothing at all where their input needs no gradient.
//  - Each targeted nn.Linear / Conv1D gets lora_A = nn.Linear(in, r, bias=False) and lora_B = nn.Linear(r, out,
//    bias=False) (layer.py LoraLayer.update_layer), registered after the base layer's own parameters. With a 16-bit
//    base they are upcast to fp32 (peft_model.py / tuners_utils.py cast_adapter_dtype, autocast_adapter_dtype=True).
//  - Forward (layer.py Linear.forward): result = base_layer(x); x = x.to(lora_A.weight.dtype) (_cast_input_dtype,
//    a copy only when the dtypes differ, alive until forward returns); result = result + lora_B(lora_A(dropout(x)))
//    * scaling (nn.Dropout when lora_dropout > 0, else nn.Identity); result.to(torch_result_dtype). Type
//    promotion makes a bf16 result + an fp32 product an fp32 tensor, cast back at the end. Under autocast the
//    lora linears cast their input and (cached, trainable leaf) weight to the low dtype like any linear.
//  - The layer's input stays referenced until Linear.forward returns even though forward rebinds `x`: the
//    caller's frame holds the argument (`self.o_proj(attn_output)`, `self.down_proj(act * up)`), so a frozen
//    base whose input nothing saves still keeps it through the adapter path (whole-run Mistral-shape stream
//    under checkpointing: the 112 MiB down_proj input is freed after the lora sum, in forward and recompute).
//  - target_modules: a module key matches a name when key == name or key ends with "." + name
//    (tuners_utils.py check_target_module_exists); "all-linear" (_maybe_include_all_linear_layers): every
//    nn.Linear / Conv1D except the model's output embedding (lm_head, or the tied embedding used as the head).
//  - modules_to_save (other.py ModulesToSaveWrapper): the original module stays, frozen and unused; a trainable
//    deep copy is used in its place (its parameters register after the original's). The wrapped module is the
//    outermost whose key ends with an entry, its whole subtree copied; with a classification task (peft's
//    task_type SEQ_CLS / TOKEN_CLS) "classifier" and "score" join the entries.
//  - With gradient checkpointing enabled on the base model, PeftModel calls enable_input_require_grads()
//    (peft_model.py _prepare_model_for_gradient_checkpointing): the embedding output requires grad.
#pragma once
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/graph.h"
#include "engine/run_config.h"

namespace memplan {

class GraphBuilder;

namespace lora {

// "layers.0.self_attn.q_proj.weight" -> "layers.0.self_attn.q_proj"
std::string_view module_of(std::string_view param_name);
// An adapter's own parameter (lora_A / lora_B of some module): never frozen, never itself targeted.
bool is_adapter_param(std::string_view param_name);
// peft's key match: module == target, or module ends with "." + target.
bool key_matches(std::string_view module, std::string_view target);
// modules_to_save: peft matches by key.endswith(target) (other.py _set_trainable).
bool saved_module(const LoraConfig& c, std::string_view module);
// The modules_to_save entries a task head adds: get_peft_model with task_type SEQ_CLS / TOKEN_CLS builds
// PeftModelFor{Sequence,Token}Classification, which extends modules_to_save with "classifier" and "score"
// (peft_model.py classifier_module_names) so that the new head trains as a full copy while the base is frozen.
// Neither needs to match (a model has one of them). Empty for every other task.
std::vector<std::string_view> task_modules_to_save(Task task);
bool key_ends_with(std::string_view module, std::string_view entry);

// What one builder has seen: which targets and modules_to_save entries matched (peft refuses a target that
// matches nothing), and which weights are input embeddings (a tied output head is one of them).
struct Tracker {
  std::vector<char> target_hit;
  std::vector<char> save_hit;
  std::vector<TensorId> embedding_weights;
  std::vector<TensorId> quantized;  // weights already given their bitsandbytes storage
  TensorId input_embedding = kNoTensor;  // the first embedding's weight: get_input_embeddings()
  // Each adapted module's lora_A / lora_B weights (adapter_weights), made at its first call: a module the forward
  // calls twice (DeBERTa's shared key_proj / query_proj over the relative embeddings) has one adapter.
  std::map<std::string, std::pair<TensorId, TensorId>, std::less<>> adapters;
};

// transformers' gradient_checkpointing_enable (modeling_utils.py, main_input_name "input_ids") and peft's
// _prepare_model_for_gradient_checkpointing call enable_input_require_grads(): a forward hook on
// get_input_embeddings() runs output.requires_grad_(True), so with a frozen embedding (LoRA, frozen embeddings)
// its output becomes a grad-requiring leaf and backward runs down to it (whole-run GPT-2 LoRA stream under
// checkpointing: the embedding dropout saves its mask, ln_1 / dropout backward of layer 0 run). The leaf is
// referenced by its AccumulateGrad node, so it outlives the model's locals until backward ends. The hook fires
// on every call of that module (T5's shared embedding in encoder and decoder).
bool input_requires_grad(Tracker& t, const RunConfig& cfg, TensorId embedding_weight);

// Whether the linear whose weight is `weight` (named `weight_name`) gets an adapter.
bool targets(const LoraConfig& c, Tracker& t, std::string_view weight_name, TensorId weight);

// Whether bitsandbytes replaces this linear (transformers integrations/bitsandbytes.py: every nn.Linear but the
// modules get_keys_to_not_convert returns, i.e. the output embedding / tied head).
bool quantizable(Tracker& t, std::string_view weight_name, TensorId weight);

// peft's update_layer for `module`: lora_A = nn.Linear(in, r) and lora_B = nn.Linear(r, out), no bias, upcast to
// fp32 (cast_adapter_dtype); registered at the module's first use and returned as they are after.
std::pair<TensorId, TensorId> adapter_weights(GraphBuilder& b, Tracker& t, std::string_view module, int64_t in,
                                              int64_t out);

// Emits peft's adapter path after the base linear: returns the new result. `x` is the linear's input as the
// module received it (before autocast's casts), `base_out` base_layer(x); `in` / `out` the layer's features.
TensorId adapt(GraphBuilder& b, Tracker& t, TensorId x, TensorId base_out, std::string_view module, int64_t in, int64_t out);

// After the build: an InputError naming lora.target_modules / lora.modules_to_save for an entry that matched
// no module (peft raises ValueError "Target modules ... not found in the base model").
void check_matched(const LoraConfig& c, const Tracker& t);

// Adapter parameter count of one adapted linear (lora_A + lora_B, bias="none").
inline int64_t adapter_params(int64_t r, int64_t in, int64_t out) { return r * in + out * r; }

}  // namespace lora
}  // namespace memplan
