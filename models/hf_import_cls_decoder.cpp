// The config keys the classification heads of decoder-only models read beyond their base model's (transformers
// 5.17 modeling_layers.py GenericForSequenceClassification / GenericForTokenClassification, which llama, mistral,
// qwen2 and qwen3 use; modeling_gpt2.py GPT2ForSequenceClassification), and PreTrainedConfig's check of
// problem_type. The builder side is engine/arch/heads_decoder.cpp.
//   pad_token_id                 None unless set (LlamaConfig, MistralConfig, Qwen2Config, Qwen3Config,
//                                GPT2Config: no default pad token); compared with input_ids, so any integer
//   classifier_dropout           getattr(config, "classifier_dropout", None); when None, hidden_dropout; when that
//                                is None too, 0.1 (none of the five classes defines either key)
//   token_classification_bias    getattr(config, ..., True); None is falsy, so nn.Linear gets no bias
//   problem_type                 None, or one of PreTrainedConfig's three allowed values (it raises otherwise)
#include "models/hf_config_reader.h"

namespace memplan::hf {

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
  if (const json* pt = r.raw("problem_type")) {
    const std::string v = pt->is_string() ? pt->get<std::string>() : std::string();
    if (v != "regression" && v != "single_label_classification" && v != "multi_label_classification")
      throw InputError(r.name("problem_type"), dump_short(*pt),
                       "must be regression, single_label_classification or multi_label_classification "
                       "(PreTrainedConfig raises otherwise)");
    s.problem_type = v;
  }
}

}  // namespace memplan::hf
