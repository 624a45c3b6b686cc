// What the classification heads (RunConfig::task seq_cls / token_cls) read of a config beyond their model's keys:
// PreTrainedConfig.problem_type (transformers 5.17 configuration_utils.py) for every family, and the decoders' keys
// (modeling_layers.py GenericForSequenceClassification / GenericForTokenClassification, which llama, mistral, qwen2
// and qwen3 use; modeling_gpt2.py GPT2ForSequenceClassification). The encoders' head fields are read by each
// family's importer. Builders: engine/arch/decoders/parts/heads_decoder.cpp, heads_encoder.cpp.
//   pad_token_id                 None unless set (LlamaConfig, MistralConfig, Qwen2Config, Qwen3Config,
//                                GPT2Config: no default pad token); compared with input_ids, so any integer
//   classifier_dropout           getattr(config, "classifier_dropout", None); when None, hidden_dropout; when that
//                                is None too, 0.1 (none of the five classes defines either key)
//   token_classification_bias    getattr(config, ..., True); None is falsy, so nn.Linear gets no bias
#include "models/hf_config_reader.h"

namespace memplan::hf {

void read_problem_type(const ConfigReader& r, TransformerSpec& s) {
  // PreTrainedConfig accepts None or one of three names; anything else raises at construction.
  s.problem_type = r.string({"problem_type"}, "");
  if (!s.problem_type.empty() && s.problem_type != "regression" && s.problem_type != "single_label_classification" &&
      s.problem_type != "multi_label_classification")
    throw InputError(r.name("problem_type"), "\"" + s.problem_type + "\"",
                     "must be null, \"regression\", \"single_label_classification\" or \"multi_label_classification\"");
}

void read_decoder_cls_keys(const ConfigReader& r, TransformerSpec& s) {
  if (const json* pad = r.raw("pad_token_id")) {
    if (!pad->is_number_integer())
      throw InputError(r.name("pad_token_id"), dump_short(*pad),
                       "must be an integer token id (the sequence head compares input_ids with it)");
    s.has_pad_token_id = true;
  }
  if (auto p = r.opt_probability({"classifier_dropout"}))
    s.token_cls_dropout = *p;
  else
    s.token_cls_dropout = r.probability({"hidden_dropout"}, 0.1);
  s.token_cls_bias = !r.explicit_null("token_classification_bias") && r.boolean({"token_classification_bias"}, true);
  read_problem_type(r, s);
}

}  // namespace memplan::hf
