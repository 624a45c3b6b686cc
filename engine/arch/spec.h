// Architecture specifications: the hyperparameters that decide memory, independent of where they came from
// (HF config.json, the bundled zoo, or code). Importers in models/ fill these; builders in engine/arch/ turn
// them into a Graph for a given run configuration.
//
// Contract: every field holds the value transformers/torchvision would use, defaults applied by the importer.
// Builders never guess; a field a builder needs but the importer could not determine is an InputError there.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace memplan {

struct NativeGraph;  // engine/arch/native/native.h

// Values that only one family's builder reads, declared in a header of that family's own
// (engine/arch/<group>/<family>_fields.h: `struct XFields : FamilyFields {...}`), so that adding a family does not
// touch this header, which some 180 translation units include. The importer sets TransformerSpec::family_fields;
// the builder reads it with family_fields<XFields>(spec) (engine/arch/family_fields.h), an InputError naming the
// model_type when it is absent or another family's.
struct FamilyFields {
  virtual ~FamilyFields() = default;
};

// Decoder-only causal LMs and BERT-style encoders from Hugging Face transformers.
struct TransformerSpec {
  // gpt2: learned positions, Conv1D; llama: every rotary decoder-only causal LM (the builder is chosen by
  // model_type, engine/arch/builders.h transformer_builder); bert: encoders; t5: encoder-decoders.
  enum class Family : uint8_t { gpt2, llama, bert, t5 };
  Family family = Family::llama;
  std::string model_type;  // as in config.json: gpt2, llama, mistral, qwen2, mixtral, bert
  std::shared_ptr<const FamilyFields> family_fields;  // see FamilyFields; null for families without such values

  int64_t vocab_size = 0;
  int64_t hidden_size = 0;
  int64_t num_layers = 0;
  int64_t num_heads = 0;
  int64_t num_kv_heads = 0;        // == num_heads for MHA
  int64_t head_dim = 0;            // hidden_size / num_heads unless the config overrides it
  int64_t intermediate_size = 0;   // MLP inner size (gpt2: n_inner or 4*n_embd)
  int64_t max_position_embeddings = 0;
  int64_t type_vocab_size = 0;     // bert token-type embeddings
  int64_t ernie_task_type_vocab = 0;  // ernie use_task_id: task_type_vocab_size (0: no task-type embeddings)
  // config.json's use_cache (its text_config's for a composite config): false makes transformers' generate() run
  // without a KV cache unless the caller passes use_cache=True. The inference replay models the cached generate()
  // only; the CLI warns when this is false (data/validation/NOTES.md, family sets 45 .. 49).
  bool config_use_cache = true;
  double mpt_clip_qkv = 0;            // mpt attn_config.clip_qkv: Wqkv's output clamped to +/- this (0: none)
  bool tie_word_embeddings = false;
  std::string hidden_act;          // gelu_new, gelu, silu, relu, ...

  // Dropout probabilities as transformers applies them in training mode.
  double embd_dropout = 0.0;       // gpt2 embd_pdrop; bert hidden_dropout_prob on embeddings
  double resid_dropout = 0.0;      // gpt2 resid_pdrop; bert hidden_dropout_prob
  double attn_dropout = 0.0;       // gpt2 attn_pdrop; llama attention_dropout; bert attention_probs_dropout_prob

  bool attention_bias = false;     // q/k/v/o biases (llama attention_bias); qwen2 has q/k/v bias, no o bias
  bool qkv_bias = false;
  bool o_bias = false;
  bool mlp_bias = false;
  int64_t sliding_window = 0;      // 0: full attention
  int64_t first_sliding_layer = 0; // layers [first_sliding_layer, num_layers) use sliding_window; earlier
                                   // layers attend fully (qwen2 max_window_layers; 0 for mistral)

  // Mixture of experts (mixtral): 0 experts means a dense MLP.
  int64_t num_experts = 0;
  int64_t num_experts_per_tok = 0;
  // deepseek_v2: routed experts of moe_intermediate_size, always-on shared experts, dense first layers.
  int64_t moe_intermediate_size = 0;
  int64_t num_shared_experts = 0;
  int64_t first_dense_layers = 0;

  // Per-layer attention pattern when it is not "layers >= first_sliding_layer slide" (gemma2 alternates
  // sliding and global layers): non-empty => sliding_layers[i] != 0 iff layer i uses sliding_window.
  std::vector<uint8_t> sliding_layers;

  // Multi-head latent attention (deepseek_v2/v3), active when kv_lora_rank > 0: keys and values are
  // up-projected from a compressed latent of kv_lora_rank plus a shared rope key of qk_rope_head_dim.
  int64_t kv_lora_rank = 0;
  int64_t q_lora_rank = 0;         // 0: q_proj is a plain linear (V2-Lite)
  int64_t qk_nope_head_dim = 0;
  int64_t qk_rope_head_dim = 0;
  int64_t v_head_dim = 0;

  // ---- fields of the families added for issue 12. Each block belongs to the builders named in its
  // heading; a field means the same thing wherever another builder reads it. Defaults are "absent".
  // [qwen3 / qwen3_moe / olmo2]
  // qwen3_moe: per decoder layer, whether it carries Qwen3MoeSparseMoeBlock (Qwen3MoeDecoderLayer.__init__: layer
  // i is sparse iff i is not in config.mlp_only_layers (default []), num_experts > 0 and (i + 1) %
  // config.decoder_sparse_step == 0 (default 1)); the other layers run a dense MLP of intermediate_size. Empty:
  // no MoE layer. Routed experts are moe_intermediate_size wide (config.moe_intermediate_size, default 768).
  std::vector<uint8_t> moe_layers;
  // qwen3_moe config.norm_topk_prob (default false): the router renormalises its top-k weights to sum to 1.
  bool norm_topk_prob = false;
  // qwen2_moe: Qwen2MoeSparseMoeBlock's always-on shared expert, a SwiGLU of shared_expert_intermediate_size
  // (default 5632) gated by sigmoid(shared_expert_gate(x)). 0: none.
  int64_t shared_expert_intermediate_size = 0;
  // [gemma / gemma2 / gemma3_text]
  // Final logit softcapping, logits = tanh(logits / cap) * cap after lm_head (Gemma2/Gemma3ForCausalLM.forward):
  // config.final_logit_softcapping, gemma2 default 30.0, gemma3_text default None; 0: none (gemma).
  double final_logit_softcapping = 0.0;
  // Attention logit softcapping in eager attention (gemma2 eager_attention_forward: scores / cap, tanh, * cap);
  // config.attn_logit_softcapping, gemma2 default 50.0. SDPA ignores it (integrations/sdpa_attention.py takes
  // no softcap), and Gemma3Attention never passes it, so gemma3_text leaves this 0.
  double attn_logit_softcapping = 0.0;
  // Non-empty when only part of the config is modelled (a multimodal gemma3 config: its text_config's decoder);
  // the model's name carries it.
  std::string modelled_part;
  // [phi3 / gpt_neox / starcoder2]
  // Partial rotary embedding: the rotary embedding covers the first rotary_dim entries of each head, the rest
  // passes through (apply_rotary_pos_emb slices q/k and cats the parts back). phi3: int(head_dim *
  // partial_rotary_factor) (default factor 1.0); gpt_neox: int(head_dim * rotary_pct) (default 0.25).
  // 0: the whole head (every other family).
  int64_t rotary_dim = 0;
  // gpt_neox use_parallel_residual (default true): x + attn(ln1(x)) + mlp(ln2(x)); false: sequential.
  // stablelm use_parallel_residual (default false): x + attn(ln1(x)) + mlp(ln1(x)), one norm.
  bool parallel_residual = false;
  // [phi / stablelm / cohere]
  // qk_layernorm (default false): nn.LayerNorm over head_dim on the query and key heads before the rotary
  // embedding (phi: one LayerNorm each, on the [B, H, S, D] head views; stablelm: one LayerNorm per head;
  // cohere use_qk_norm: its Python LayerNorm over (heads, head_dim) on the [B, S, H, D] views).
  bool qk_layernorm = false;
  // lm_head has a bias (PhiForCausalLM: nn.Linear(hidden, vocab, bias=True)).
  bool lm_head_bias = false;
  // [deepseek_v2 / deepseek_v3 / gpt_oss]
  // MoE router of deepseek_v2 (DeepseekV2TopkRouter): config.topk_method, "greedy" (default) or
  // "group_limited_greedy" (adds the per-group max, a group mask and a masked score copy); deepseek_v3 routes
  // with sigmoid scores plus e_score_correction_bias over groups (noaux_tc), spelled "noaux_tc" here.
  std::string moe_topk_method;
  int64_t moe_n_group = 0;          // config.n_group (v2 default None -> 0; v3 default 8)
  int64_t moe_topk_group = 0;       // config.topk_group (v2 default None -> 0; v3 default 4)
  bool moe_norm_topk_prob = false;  // deepseek_v3 config.norm_topk_prob (default True): sum + in-place divide
  bool rope_interleave = false;     // deepseek_v3 config.rope_interleave (default True): even/odd rotary slices
  // deepseek_v32 DeepseekV32Indexer (DeepSeek Sparse Attention): index_n_heads query heads of index_head_dim over
  // one shared key, scoring every key per query; the attention keeps the index_topk best (all keys when fewer).
  int64_t index_n_heads = 0, index_head_dim = 0, index_topk = 0;
  // glm_moe_dsa config.indexer_types: 1 where layer i is "shared" (no indexer; the previous full layer's top-k),
  // 0 where it is "full"; empty: every layer full.
  std::vector<uint8_t> index_shared_layers;
  // [t5]
  // T5Config (configuration_t5.py): hidden_size = d_model, num_heads, head_dim = d_kv (inner = heads * d_kv
  // may differ from d_model), intermediate_size = d_ff, hidden_act = the dense activation of feed_forward_proj
  // ("gated-gelu" -> gelu_new), resid/attn/embd_dropout = dropout_rate; num_layers is the encoder's.
  int64_t num_decoder_layers = 0;              // num_decoder_layers (None -> num_layers)
  int64_t relative_attention_num_buckets = 0;  // relative_attention_num_buckets (32): [buckets, heads] bias table
  bool gated_ffn = false;                      // feed_forward_proj "gated-<act>": wi_0, wi_1, wo (else wi, wo)
  // transformers 5.17 always ties lm_head to the shared embedding; scale_decoder_outputs (sequence_output *
  // d_model**-0.5 before lm_head) is true unless the config says tie_word_embeddings false (v1.1, flan); mt5:
  // always false, umt5: always true (their forwards; models/hf/import_mt5.cpp).
  bool scale_decoder_outputs = false;
  // [roberta / xlm-roberta]
  // Learned position ids start at pad_token_id + 1 (create_position_ids_from_input_ids): of the
  // max_position_embeddings rows the first position_id_offset are never used, so a sequence may hold
  // max_position_embeddings - position_id_offset tokens (514 - 2 = 512 for roberta-base). 0 elsewhere.
  int64_t position_id_offset = 0;
  // [opt]
  // word_embed_proj_dim (None -> hidden_size): the token embedding's and lm_head's width; when it differs from
  // hidden_size, project_in / project_out (no bias) map between the two. 0: hidden_size.
  int64_t word_embed_proj_dim = 0;
  // do_layer_norm_before false (OPT-350M): each LayerNorm runs after its residual add, and there is no final
  // norm. no_final_norm: no final_layer_norm (post-LN, or _remove_final_layer_norm).
  bool post_layer_norm = false;
  bool no_final_norm = false;
  // layer_norm_elementwise_affine (default true): the LayerNorms have weight and bias.
  bool norm_affine = true;
  // Learned absolute positions in a family other than gpt2 / bert (opt): seq_len plus fed-back tokens may not
  // pass max_position_embeddings (estimate.cpp checks it).
  bool learned_positions = false;
  // [modernbert]
  // ModernBertConfig (5.17). The attention pattern is sliding_layers (layer_types, default every
  // global_attn_every_n_layers-th layer full) with sliding_window = config.sliding_window = local_attention // 2,
  // the half-width: a token attends to those at distance <= sliding_window, and the mask exists once the
  // sequence holds sliding_window tokens or more. attention_bias covers Wqkv and Wo, mlp_bias Wi and Wo;
  // embd_dropout = embedding_dropout, attn_dropout = attention_dropout (SDPA and out_drop), resid_dropout =
  // mlp_dropout; hidden_act = hidden_activation.
  bool norm_bias = false;                // norm_bias (default false): every LayerNorm has a bias
  bool classifier_bias = false;          // classifier_bias (default false): head.dense has a bias
  bool decoder_bias = false;             // decoder_bias (default true): the MLM decoder has a [V] bias
  std::string classifier_activation;     // classifier_activation (default "gelu"): the head's activation
  // [smollm3 / olmo / olmoe]
  // smollm3: per decoder layer, whether SmolLM3Attention applies the rotary embedding (config.no_rope_layers[i]
  // truthy; SmolLM3Config.__post_init__ derives it as (i + 1) % no_rope_layer_interval != 0, interval 4). A 0
  // entry is a NoPE layer: q and k go to the attention as the projections' head views. Empty: every layer rotary.
  std::vector<uint8_t> rope_layers;
  // olmo, olmoe: config.clip_qkv (default None -> 0): OlmoAttention / OlmoeAttention clamp the q, k and v projections' outputs in place
  // to [-clip_qkv, clip_qkv] (clamp_, whose autograd node keeps a clone of the unclamped input). 0: no clamp.
  double clip_qkv = 0.0;
  // [gpt_bigcode / gptj]
  // gpt_bigcode config.multi_query (default true): c_attn projects q (hidden) plus one shared key and value head
  // ([B, S, H + 2 * head_dim], split on its last dim); false: num_heads key / value heads, c_attn's output viewed
  // [B, S, heads, 3 * head_dim] and split per head. num_kv_heads is 1 or num_heads accordingly. gptj leaves it
  // false (its rotary_dim, lm_head_bias and parallel residual are the fields above).
  bool multi_query = false;
  // [falcon / bloom]
  // falcon new_decoder_architecture (default false; Falcon-40B / 11B): query_key_value holds num_kv_heads groups
  // of (num_heads / num_kv_heads queries, one key, one value); _split_heads copies q and broadcasts k / v to all
  // num_heads heads (the cache then holds num_heads heads). num_kv_heads is the groups' count here, 1 for
  // multi_query (one key and one value head after the queries), else num_heads ([nh, 3, hd] per position).
  bool falcon_new_decoder_architecture = false;
  // falcon parallel_attn (default true): attention and MLP read the same normed input and add to one residual;
  // false: sequential, with post_attention_layernorm between them (the old architecture only).
  bool falcon_parallel_attn = true;
  // falcon num_ln_in_parallel_attn (None -> 2 under new_decoder_architecture, else 1): 2 gives ln_attn and ln_mlp.
  int64_t falcon_num_ln_in_parallel_attn = 1;
  // bloom apply_residual_connection_post_layernorm (default false): the residual of both blocks is the LayerNorm's
  // output instead of its input.
  bool residual_post_layernorm = false;
  // [granitemoe / granitemoeshared]
  // granitemoeshared config.shared_intermediate_size (default 0): > 0 gives every layer GraniteMoeSharedMLP, a
  // fused input_linear [2 * size, hidden] chunked into silu(gate) * up, then output_linear [hidden, size], added
  // to the MoE block's output. 0: none (granitemoe, and granitemoeshared's default).
  int64_t granite_shared_intermediate_size = 0;
  // [granite_swa / granitemoe_swa] (granite's multipliers, sliding_window / sliding_layers from layer_types, and
  // granitemoeshared's shared MLP on the MoE one). config.layer_rope_theta: one GraniteSWARotaryEmbedding per distinct
  // non-zero theta (granite_swa_rope_tables; all run before the layers and bound until the model returns); a
  // layer whose theta is 0 (granite_swa_nope_layers[i] != 0) skips apply_rotary_pos_emb (NoPE).
  int64_t granite_swa_rope_tables = 1;
  std::vector<uint8_t> granite_swa_nope_layers;
  // [bart / mbart / whisper] (the encoder-decoders of family t5 beside T5 itself)
  // BartConfig (5.17), MBartConfig and WhisperConfig alike: hidden_size = d_model, num_layers / num_heads /
  // intermediate_size the encoder's (encoder_layers, encoder_attention_heads, encoder_ffn_dim), num_decoder_layers =
  // decoder_layers, embd_dropout = resid_dropout = dropout, attn_dropout = attention_dropout, hidden_act =
  // activation_function; bart / mbart position tables hold max_position_embeddings + 2 rows (ids offset by 2);
  // whisper's max_position_embeddings is the decoder's table (max_target_positions).
  int64_t decoder_num_heads = 0;          // decoder_attention_heads (self- and cross-attention); 0: num_heads
  int64_t decoder_intermediate_size = 0;  // decoder_ffn_dim (fc1 / fc2 of the decoder layers); 0: intermediate_size
  double activation_dropout = 0.0;        // activation_dropout: dropout after the FFN's activation (training)
  bool scale_embedding = false;           // scale_embedding: the token embeddings are multiplied by sqrt(d_model)
                                          // (always a multiply: by 1.0 when false)
  int64_t num_mel_bins = 0;               // whisper: input_features channels (conv1's in_channels)
  int64_t max_source_positions = 0;       // whisper: encoder positions; input frames must be 2x this
  // [llama4_text]
  // Llama4TextConfig (5.17). Reused fields: rope_layers = no_rope_layers (0: a NoPE layer); moe_layers = layer i
  // carries Llama4TextMoe (moe_layers, else every interleave_moe_layer_step-th layer), whose num_experts routed
  // experts and shared expert are intermediate_size wide (moe_intermediate_size mirrors it); sliding_window =
  // attention_chunk_size and sliding_layers = the "chunked_attention" layers of layer_types: the cache keeps them
  // as DynamicSlidingWindowLayer(attention_chunk_size), but their mask is chunked (below), not a sliding window.
  // chunked_attention: the layers sliding_layers marks attend within aligned chunks of sliding_window tokens
  // (create_chunked_causal_mask), not through a window. False everywhere but llama4_text.
  bool chunked_attention = false;
  // intermediate_size_mlp (default 16384): the width of Llama4TextMLP on the dense (non-MoE) layers.
  int64_t intermediate_size_mlp = 0;
  // use_qk_norm (default true): Llama4TextL2Norm (no weight) on q and k after the rotary embedding, RoPE layers only.
  bool l2_qk_norm = false;
  // attn_temperature_tuning (default true): NoPE layers scale q by log1p(floor((pos + 1) / floor_scale)) *
  // attn_scale + 1 (an fp32 [S] vector; the product promotes q to fp32, then casts back).
  bool attn_temperature_tuning = false;
  // [deberta-v2]
  // DebertaV2Config (5.17) as DisentangledSelfAttention, DebertaV2Encoder and the heads read it. hidden_act is
  // the intermediate's and the MLM transform's activation; resid_dropout = hidden_dropout_prob (every dropout but
  // the attention probabilities', also pos_dropout on the relative embeddings), attn_dropout =
  // attention_probs_dropout_prob. type_vocab_size 0: no token-type embeddings.
  // relative_attention (default false): rel_embeddings of [2 * span, H], span = position_buckets when > 0, else
  // max_relative_positions; without it no relative_pos, no rel_embeddings and no c2p / p2c terms.
  bool deberta_relative_attention = false;
  int64_t deberta_position_buckets = 0;        // position_buckets (default -1 -> 0: no log buckets)
  int64_t deberta_max_relative_positions = 0;  // max_relative_positions, < 1 resolved to max_position_embeddings
  bool deberta_c2p = false;                    // "c2p" in pos_att_type: content->position term
  bool deberta_p2c = false;                    // "p2c" in pos_att_type: position->content term
  // share_att_key (default false): the positional q / k come from query_proj / key_proj; false: pos_key_proj
  // (c2p) and pos_query_proj (p2c) of their own.
  bool deberta_share_att_key = false;
  bool deberta_norm_rel_ebd = false;           // "layer_norm" in norm_rel_ebd: encoder.LayerNorm over rel_embeddings
  // position_biased_input (default true): absolute position embeddings added to the word embeddings; false: the
  // embeddings make a zeros_like [B, S, H] in their place (and seq_len is not bounded by max_position_embeddings).
  bool deberta_position_biased_input = true;
  // Sequence classification: ContextPooler's dropout (pooler_dropout, default 0) and activation
  // (pooler_hidden_act, default "gelu"); the classifier's dropout (cls_dropout, None -> hidden_dropout_prob).
  double deberta_pooler_dropout = 0.0;
  std::string deberta_pooler_act;
  double deberta_cls_dropout = 0.0;
  // legacy (default true): DebertaV2ForMaskedLM's head is LegacyDebertaV2OnlyMLMHead (cls.predictions: dense, act,
  // LayerNorm, a decoder nn.Linear tied to the word embeddings with cls.predictions.bias); false:
  // DebertaV2OnlyMLMHead (lm_predictions.lm_head: dense, act, LayerNorm, matmul with the embedding's weight.t(),
  // + bias).
  bool deberta_legacy_mlm_head = true;
  // [classification heads: RunConfig::task seq_cls / token_cls]
  // What ...ForSequenceClassification / ...ForTokenClassification read of the config beyond the base model's keys
  // (decoders: engine/arch/decoders/parts/heads_decoder.cpp, importer models/hf/import_cls_heads.cpp; encoders:
  // engine/arch/encoders/heads_encoder.cpp and modernbert.cpp, read by each family's importer; deberta-v2 has its own).
  // config.pad_token_id is not None (decoders): the sequence head pools the last token that is not pad_token_id (the
  // value changes no allocation); without one transformers raises at batch size > 1, so the builder refuses that.
  bool has_pad_token_id = false;
  // The nn.Dropout probability the head applies before its classifier; 0: no dropout kernel. Decoders
  // (GenericForTokenClassification): classifier_dropout, else hidden_dropout, else 0.1 (token head only; the
  // sequence head has none). bert, roberta: classifier_dropout, None -> hidden_dropout_prob, for both; distilbert:
  // seq_classif_dropout (0.2) / dropout (0.1); modernbert: classifier_dropout (0.0) for both.
  double seq_cls_dropout = 0.0;
  double token_cls_dropout = 0.0;
  // getattr(config, "token_classification_bias", True) (decoders): the token head's score Linear has a
  // [num_labels] bias (the sequence head's never has).
  bool token_cls_bias = true;
  // modernbert classifier_pooling "mean" (default "cls"): ModernBertForSequenceClassification averages the last
  // hidden states over the attention mask (all ones when none is passed) instead of taking the first token's.
  bool cls_mean_pooling = false;
  // config.problem_type (PreTrainedConfig, default None -> ""): the loss of ...ForSequenceClassification. "" (with
  // num_labels > 1 and integer labels) and "single_label_classification" are cross entropy, the one modelled;
  // the heads refuse "regression" (MSELoss, also what num_labels == 1 picks) and "multi_label_classification"
  // (BCEWithLogitsLoss over float labels) naming it. ...ForTokenClassification ignores it (cross entropy always).
  std::string problem_type;
  // [vit]
  // ViTForImageClassification (engine/arch/vision/hf_vit.cpp, models/hf/import_vit.cpp): the input is pixel_values
  // [B, num_channels, image_size, image_size] in the model's dtype and one int64 label per image; the encoder's
  // sequence is the (image_size / patch_size)^2 patch tokens plus the cls token (hf_image_tokens), which the case
  // loader and the CLI put in RunConfig::seq_len (never given by the user). 0 everywhere else: not an image model.
  int64_t image_size = 0;        // config.image_size (224): the square image side the model accepts
  int64_t patch_size = 0;        // config.patch_size (16): the patch Conv2d's kernel and stride
  int64_t num_channels = 0;      // config.num_channels (3)
  int64_t image_num_labels = 0;  // len(config.id2label) or config.num_labels (2): the classifier's width
  // [gpt_neo]
  // config.attention_types expanded (GPTNeoConfig.attention_layers): gpt_neo_local_layers[i] != 0 iff layer i is
  // "local". Both kinds run the same eager attention over a sliced bool [1, 1, P, P] buffer (P =
  // max_position_embeddings), and the DynamicCache keeps every token of both, so memory does not depend on it.
  std::vector<uint8_t> gpt_neo_local_layers;
  // config.window_size (default 256): the local layers' mask is tril(ones) xor tril(ones, -window_size).
  int64_t gpt_neo_window_size = 0;
  // [electra]
  // ElectraConfig.embedding_size (default 128): the width of the word, position and token-type embeddings and of
  // their LayerNorm, and the generator head's output (ElectraGeneratorPredictions.dense: hidden_size ->
  // embedding_size, its LayerNorm, generator_lm_head: embedding_size -> vocab_size). When it differs from
  // hidden_size, ElectraModel has embeddings_project (nn.Linear(embedding_size, hidden_size), with bias) between
  // the embeddings and the encoder. 0: not electra.
  int64_t embedding_size = 0;
  // [m2m_100]
  // M2M100Config.pad_token_id (1): M2M100SinusoidalPositionalEmbedding's padding_idx. Position ids are
  // padding_idx + the running count of non-pad tokens (cumsum of input_ids.ne(pad)), looked up in a table of
  // max_position_embeddings + 2 rows that forward rebuilds once padding_idx + 1 + past + length exceeds it (not
  // modelled: the builder refuses such lengths naming them).
  int64_t m2m_padding_idx = 1;
  // encoder_layerdrop / decoder_layerdrop (M2M100Config default 0.05; NLLB checkpoints 0): each training step
  // draws torch.rand([]) on the CPU per layer and skips the layer below the probability. The builder replays the
  // step in which every layer runs (the one that sets the peak); the draws take no device memory.
  double m2m_encoder_layerdrop = 0.0, m2m_decoder_layerdrop = 0.0;
  // [glm4_moe]
  // Glm4MoeConfig.use_qk_norm (default false): Glm4MoeAttention's q_norm / k_norm, an RMSNorm with a [head_dim]
  // weight over the [B, S, H, D] head views of q_proj / k_proj, run after all three projections and before the
  // transpose and the (partial) rotary embedding. Read by the glm4_moe builder only.
  bool qk_head_rms_norm = false;
  // config.eos_token_id is None (Glm4MoeConfig's default; the key absent or null): generate() has no EOS tensor,
  // so _get_logits_processor builds no MinNewTokensLengthLogitsProcessor for min_new_tokens (generation/utils.py).
  // Read by engine/inference_replay.cpp; false (an EOS id configured) for every importer that does not set it.
  bool generate_without_eos = false;
  // [albert]
  // AlbertConfig (engine/arch/encoders/albert.cpp, models/hf/import_albert.cpp). albert also reads embedding_size
  // (the [electra] field, same meaning: the embeddings' width, the MLM head's dense output; AlbertTransformer's
  // embedding_hidden_mapping_in maps it to hidden_size always, even when equal).
  // num_hidden_groups (default 1): parameter sets of AlbertLayerGroup; layer application i (of num_layers) runs
  // group int(i / (num_layers / num_hidden_groups)), so consecutive applications share one group's parameters.
  // 1 <= albert_num_hidden_groups <= num_layers (the importer refuses more groups than layers). 0: not albert.
  int64_t albert_num_hidden_groups = 0;
  // inner_group_num (default 1): AlbertLayers in each group, all run (in order) by every application of the
  // group, each with parameters of its own. num_layers * albert_inner_group_num <= kMaxLayers. 0: not albert.
  int64_t albert_inner_group_num = 0;
  // [dinov2]
  // Dinov2ForImageClassification (engine/arch/vision/hf_dinov2.cpp, models/hf/import_dinov2.cpp) and
  // DeiTForImageClassification (engine/arch/vision/hf_deit.cpp, models/hf/import_deit.cpp) also fill [vit]'s fields.
  // Tokens the embeddings put before the patches besides the cls token: DeiT's distillation token (1); 0 for every
  // other model. hf_image_tokens adds it.
  int64_t image_extra_tokens = 0;
  // Dinov2Config.use_swiglu_ffn (false): Dinov2SwiGLUFFN (weights_in [2 * intermediate_size, H], chunk(2),
  // silu(x1) * x2, weights_out) instead of Dinov2MLP (fc1, hidden_act, fc2). Either way intermediate_size holds the
  // hidden width the importer derived from mlp_ratio.
  bool dinov2_swiglu_ffn = false;
  // Dinov2Config.use_mask_token (true): Dinov2Embeddings registers mask_token [1, H], a trainable parameter the
  // classifier's forward never reads (no gradient, so AdamW keeps no state for it); counted in p.numel().
  bool dinov2_mask_token = false;
  // Dinov2Config.drop_path_rate (0.0): Dinov2DropPath on both residual branches when > 0 (nn.Identity otherwise).
  double drop_path_rate = 0.0;
  // [phimoe]
  // PhimoeConfig.input_jitter_noise (default 0.0): in training, PhimoeSparseMoeBlock and then PhimoeTopKRouter
  // each multiply the MoE input in place by a uniform noise tensor of its size, which the product's backward
  // keeps. 0: no jitter. Read by the phimoe builder only (the experts' width is moe_intermediate_size, set to
  // config.intermediate_size by the importer).
  double phimoe_input_jitter_noise = 0.0;
  // rope_type longrope: its original_max_position_embeddings (PhimoeForCausalLM.prepare_inputs_for_generation
  // drops the cache and reruns the whole sequence at the decode step whose input first exceeds it: not modelled,
  // the builder refuses such a generate()). 0: default rope (no such step).
  int64_t phimoe_longrope_original_max = 0;
  // [lfm2]
  // Lfm2Config.layer_types (or, when absent, full_attn_idxs: "full_attention" for the listed indices, "conv" for
  // the rest; both absent: every layer attends): lfm2_conv_layers[i] != 0 iff layer i is an Lfm2ShortConv layer
  // (in_proj to 3 x hidden, B * x, a depthwise causal conv1d of conv_L_cache taps, C * conv, out_proj; one conv
  // state [B, hidden, conv_L_cache] per such layer in generate()'s cache), else Lfm2Attention (GQA with q / k
  // RMSNorm over head_dim before the rotary embedding; K / V in the cache). One entry per layer for lfm2, empty
  // for every other model_type. Read by engine/arch/decoders/dense/lfm2.cpp only.
  std::vector<uint8_t> lfm2_conv_layers;
  int64_t lfm2_conv_kernel = 0;  // config.conv_L_cache (3): the depthwise conv's taps and the cached state's length
  bool lfm2_conv_bias = false;   // config.conv_bias (false): biases on conv, in_proj and out_proj
  // [whisper / mbart generate]
  // generate() as transformers 5.17 runs it for whisper (WhisperGenerationMixin.generate, short-form) and mbart
  // (GenerationMixin.generate), read by engine/inference_replay.cpp and the whisper builder. 0 (every other
  // importer): the replay's older model of generate() (the caller's ids and an attention mask of [B, S + step]).
  // > 0: the decoder's prompt length, `decoder_input_ids` [B, prompt] (mbart: [decoder_start_token_id], 1;
  // whisper: its init tokens [decoder_start, <|notimestamps|>], 2, one forward over both). generate() then keeps
  // the caller's encoder input (the measured prefill's first input: ids or log-mel features) and grows
  // decoder_input_ids by one column a step, with no attention mask (an encoder-decoder builds none).
  int64_t generate_decoder_prompt = 0;
  // The logits processors after the two min-length ones, in generate()'s order (generation/logits_process.py):
  // SuppressTokensAtBeginLogitsProcessor (whisper's begin_suppress_tokens not null): arange(V) int64 and an isin
  // bool [V] every step, a torch.where [B, V] fp32 only at the first step (input_ids of begin_index tokens);
  bool generate_begin_suppress = false;
  // SuppressTokensLogitsProcessor (whisper's suppress_tokens not null): arange, isin and a torch.where [B, V]
  // every step;
  bool generate_suppress = false;
  // ForcedEOSTokenLogitsProcessor (forced_eos_token_id not null: mbart's default 2): a torch.full_like [B, V] fp32
  // at the last step (input_ids of max_length - 1 tokens), written in place.
  bool generate_forced_eos = false;
  // [minimax_m2 / lfm2_moe]
  // minimax_m2 (engine/arch/decoders/moe/minimax_m2.cpp) needs no field of its own: every layer is a sparse MoE
  // of num_experts (num_local_experts) x num_experts_per_tok experts, moe_intermediate_size wide
  // (config.intermediate_size), with a sigmoid router and the e_score_correction_bias buffer; rotary_dim is
  // int(head_dim * partial_rotary_factor). lfm2_moe (engine/arch/decoders/moe/lfm2_moe.cpp) reads [lfm2]'s fields,
  // first_dense_layers (config.num_dense_layers: Lfm2MoeMLP of intermediate_size on layers below it, the sparse
  // block after), num_experts, num_experts_per_tok, moe_intermediate_size, norm_topk_prob, and:
  // Lfm2MoeConfig.use_expert_bias (default true): the sparse block's fp32 expert_bias buffer [E] is added to the
  // sigmoid scores to choose the experts (the weights are gathered from the unbiased scores); false: the top-k of
  // the scores themselves. Read by lfm2_moe.cpp only.
  bool lfm2_moe_expert_bias = false;
  // [gemma4]
  // Gemma4TextConfig (transformers 5.17 models/gemma4; engine/arch/decoders/dense/gemma4.cpp, models/hf/import_gemma4.cpp).
  // head_dim / num_kv_heads are the sliding layers'; per_layer_config (from global_head_dim and, when
  // attention_k_eq_v, num_global_key_value_heads) overrides both on the full-attention layers:
  int64_t gemma4_global_head_dim = 0;  // head_dim of the full-attention layers (global_head_dim, default 512)
  int64_t gemma4_global_kv_heads = 0;  // their KV heads (num_global_key_value_heads under attention_k_eq_v, else
                                       // num_key_value_heads)
  // attention_k_eq_v (default false): full-attention layers have no v_proj; value_states is k_proj's head view,
  // which v_norm then normalises (keys through k_norm and the rotary embedding, values without either).
  bool gemma4_k_eq_v = false;
  // hidden_size_per_layer_input (default 256; 0: none): per-layer input embeddings (PLE). The model holds one packed
  // embed_tokens_per_layer [gemma4_ple_vocab, num_layers * size] (scaled by sqrt(size)), per_layer_model_projection
  // [num_layers * size, hidden] and per_layer_projection_norm [size]; each layer a per_layer_input_gate [size,
  // hidden], per_layer_projection [hidden, size] and post_per_layer_input_norm [hidden].
  int64_t gemma4_ple_size = 0;
  int64_t gemma4_ple_vocab = 0;        // vocab_size_per_layer_input (default 262144)
  // num_kv_shared_layers (default 0): the last this many layers compute no keys or values (no k_proj, v_proj,
  // k_norm); each reuses those of the last earlier layer of its own attention type, which keeps them in
  // shared_kv_states. 0 <= gemma4_kv_shared_layers < num_layers.
  int64_t gemma4_kv_shared_layers = 0;
  // use_double_wide_mlp (default false): the KV-shared layers' MLP is 2 * intermediate_size wide.
  bool gemma4_double_wide_mlp = false;
  // enable_moe_block (default false): every layer runs, beside its dense MLP, the router (RMSNorm without weight,
  // * scale * hidden**-0.5, proj [num_experts, hidden], softmax, top-k of top_k_experts renormalised, *
  // per_expert_scale) and num_experts experts of moe_intermediate_size (num_experts, num_experts_per_tok and
  // moe_intermediate_size hold those keys).
  bool gemma4_moe = false;
  // [gemma3n]
  // Gemma3nTextConfig (transformers 5.17 models/gemma3n; engine/arch/decoders/dense/gemma3n.cpp,
  // models/hf/import_gemma3n.cpp). It also reads [gemma4]'s gemma4_ple_size / gemma4_ple_vocab
  // (hidden_size_per_layer_input, always on: default 256; vocab_size_per_layer_input) and gemma4_kv_shared_layers
  // (num_kv_shared_layers, default 15), which mean the same modules there. Per layer: gemma3n_intermediate[i]
  // (intermediate_size, an int for all layers or a list) and gemma3n_sparse_layers[i] != 0 where
  // activation_sparsity_pattern[i] > 0 (the MLP's gate goes through _gaussian_topk: mean, std, relu(x - cutoff)).
  std::vector<int64_t> gemma3n_intermediate;
  std::vector<uint8_t> gemma3n_sparse_layers;
  int64_t gemma3n_altup_inputs = 0;   // altup_num_inputs (default 4): the residual stream is [K, B, S, H]
  int64_t gemma3n_laurel_rank = 0;    // laurel_rank (default 64): linear_left [rank, H], linear_right [H, rank]
  bool gemma3n_altup_correct_scale = false;  // altup_correct_scale (default true): first_prediction * correct_output_scale
  // [qwen3_next]
  // Qwen3NextConfig / Qwen3_5TextConfig / Qwen3_5MoeTextConfig (5.17) layer_types (default: "full_attention" every
  // full_attention_interval-th layer, "linear_attention" elsewhere): qwen3_next_linear_layers[i] != 0 iff layer i is
  // a GatedDeltaNet layer, else gated full attention. One entry per layer for qwen3_next / qwen3_5_text /
  // qwen3_5_moe_text, empty for every other model_type. Read by engine/arch/decoders/moe/qwen3_next.cpp only.
  std::vector<uint8_t> qwen3_next_linear_layers;
  // The GatedDeltaNet's sizes: linear_num_key_heads (query / key heads, 16), linear_num_value_heads (value heads,
  // 32; a multiple of the key heads), linear_key_head_dim / linear_value_head_dim (128), linear_conv_kernel_dim (4:
  // the depthwise causal conv's taps and the cached conv state's length). 0 for other model_types.
  int64_t linear_num_key_heads = 0, linear_num_value_heads = 0, linear_key_head_dim = 0, linear_value_head_dim = 0,
          linear_conv_kernel = 0;

  // [qwen2_vl / qwen2_5_vl]
  // The vision tower of Qwen2-VL / Qwen2.5-VL (config.vision_config; the text fields above hold the decoder):
  // vl_vision_depth blocks (0 for every other model_type) of width vl_vision_width (Qwen2-VL embed_dim, Qwen2.5-VL
  // hidden_size) with vl_vision_heads heads (head_dim = width / heads, a multiple of 4: the 2-D rotary gives the
  // h and w positions head_dim / 4 frequencies each), an MLP of width vl_vision_mlp (Qwen2-VL: embed_dim *
  // mlp_ratio, fc1 / act / fc2; Qwen2.5-VL: intermediate_size, gate / up / down; all with biases) and activation
  // vl_vision_act ("quick_gelu" / "silu"); the bias-free Conv3d patch embedding over vl_in_channels x
  // vl_temporal_patch x vl_patch x vl_patch pixels; the PatchMerger (LayerNorm / RMSNorm over the width, the
  // vl_merge^2 patches of a merge block concatenated, Linear + GELU + Linear to vl_merger_out, the text hidden
  // size). Qwen2.5-VL only: vl_window_size (pixels; windows of vl_window_size / vl_patch / vl_merge merged tokens
  // a side) and vl_fullatt_blocks (blocks attending over the whole image; the others over windows).
  // vl_mrope_section: M-RoPE's temporal / height / width frequency counts, summing to head_dim / 2.
  int64_t vl_vision_depth = 0, vl_vision_width = 0, vl_vision_heads = 0, vl_vision_mlp = 0, vl_patch = 0,
          vl_temporal_patch = 0, vl_merge = 0, vl_in_channels = 0, vl_merger_out = 0, vl_window_size = 0;
  std::string vl_vision_act;
  std::vector<int64_t> vl_fullatt_blocks;
  std::vector<int64_t> vl_mrope_section;

  // [dbrx / jetmoe]
  // dbrx (engine/arch/decoders/moe/dbrx.cpp, models/hf/import_dbrx.cpp) also reads clip_qkv (attn_config.clip_qkv,
  // never 0 for dbrx: the importer refuses None), num_experts / num_experts_per_tok / moe_intermediate_size
  // (ffn_config.moe_num_experts / moe_top_k / ffn_hidden_size) and resid_dropout (resid_pdrop).
  // ffn_config.moe_normalize_expert_weights is not None (default 1.0): DbrxFFN divides the top-k weights by their
  // p-norm (torch.norm over the K weights; the value of p changes no allocation). False: no division.
  bool dbrx_normalize_expert_weights = false;
  // ffn_config.moe_jitter_eps is not None (default None; the published DBRX configs set 0): in training DbrxRouter
  // multiplies the FFN's input in place by a uniform noise tensor of its size, which the product's backward keeps.
  bool dbrx_moe_jitter = false;

  // [wav2vec2]
  // Wav2Vec2Config / HubertConfig / WavLMConfig (5.17), read by models/hf/import_wav2vec2.cpp for model_types
  // wav2vec2, hubert and wavlm and by engine/arch/audio/ only; empty / 0 / false for every other model_type.
  // The conv feature encoder: one entry per conv layer (conv_dim, conv_stride, conv_kernel; all three the same
  // length, num_feat_extract_layers), each an nn.Conv1d (bias iff speech_conv_bias) followed by its norm and GELU.
  std::vector<int64_t> speech_conv_dim, speech_conv_stride, speech_conv_kernel;
  bool speech_conv_bias = false;
  // feat_extract_norm "layer": a LayerNorm over channels on every conv layer (the conv output transposed);
  // "group" (false): a GroupNorm (groups = channels) on the first conv layer only.
  bool speech_layer_norm_convs = false;
  // The positional conv embedding: nn.Conv1d(H, H, num_conv_pos_embeddings, padding = K // 2,
  // groups = num_conv_pos_embedding_groups) under weight norm (dim 2), then SamePad (drops the last frame for an
  // even K) and GELU.
  int64_t speech_pos_conv_kernel = 0, speech_pos_conv_groups = 0;
  // do_stable_layer_norm: pre-norm encoder layers and a final LayerNorm after them (false: post-norm layers and the
  // LayerNorm before them).
  bool speech_stable_layer_norm = false;
  // feat_proj_dropout and final_dropout (the CTC head's dropout); activation_dropout lives in activation_dropout,
  // hidden_dropout in resid_dropout, attention_dropout in attn_dropout.
  double speech_feat_proj_dropout = 0.0, speech_final_dropout = 0.0;
  // hubert feat_proj_layer_norm (true; wav2vec2 and wavlm always have the projection's LayerNorm). Wav2Vec2 and
  // WavLM return the normed features as extract_features (bound until the model returns); HuBERT does not.
  bool speech_feat_proj_layer_norm = true;
  // SpecAugment in training: apply_spec_augment and mask_time_prob > 0 mask whole time spans of mask_time_length
  // frames (at least mask_time_min_masks spans) with the masked_spec_embed parameter (registered iff
  // mask_time_prob > 0 or mask_feature_prob > 0; mask_feature_prob > 0 is refused by the importer).
  bool speech_spec_augment = false;
  double speech_mask_time_prob = 0.0;
  int64_t speech_mask_time_length = 0, speech_mask_time_min_masks = 0;
  bool speech_masked_spec_embed = false;
  // ctc_loss_reduction: true "mean" (wavlm's default), false "sum" (wav2vec2's and hubert's default).
  bool speech_ctc_mean = false;
  // The CTC blank (pad_token_id, default 0).
  int64_t speech_blank = 0;
  // The sequence-classification head: projector Linear(H, classifier_proj_size), mean over frames, classifier.
  int64_t speech_classifier_proj_size = 0;
  // layerdrop: in training each encoder layer (wavlm: but the first) is skipped with this probability; the
  // builders model every layer running (the step's memory with no layer skipped, its upper bound).
  double speech_layerdrop = 0.0;
  // WavLM's gated relative position bias: num_buckets and max_bucket_distance (the first layer's rel_attn_embed
  // [num_buckets, heads]).
  int64_t wavlm_num_buckets = 0, wavlm_max_distance = 0;

  // [qwen2_audio]
  // Qwen2AudioForConditionalGeneration (transformers 5.17 models/qwen2_audio; engine/arch/audio/qwen2_audio.cpp,
  // models/hf/import_qwen2_audio.cpp): the decoder fields above hold text_config's Qwen2 model; these hold
  // audio_config's Qwen2AudioEncoder (a Whisper-style encoder: two Conv1d + GELU, a frozen position table, pre-LN
  // layers, AvgPool1d(2, 2), LayerNorm) and num_mel_bins / max_source_positions above its conv input channels and
  // positions (every clip is 2 x max_source_positions mel frames, max_source_positions / 2 audio tokens after the
  // pool). audio_layers is 0 for every other model_type (the builders' and the case reader's test).
  int64_t audio_layers = 0;        // encoder_layers (32)
  int64_t audio_d_model = 0;       // d_model (1280): the encoder's width; head_dim = d_model / heads
  int64_t audio_heads = 0;         // encoder_attention_heads (20)
  int64_t audio_ffn = 0;           // encoder_ffn_dim (5120): fc1 / fc2
  std::string audio_act;           // activation_function ("gelu")
  double audio_dropout = 0.0, audio_attn_dropout = 0.0, audio_act_dropout = 0.0;  // dropout, attention_dropout,
                                                                                  // activation_dropout

  // [t5gemma]
  // T5GemmaConfig (transformers 5.17 models/t5gemma; engine/arch/seq2seq/t5gemma.cpp, models/hf/import_t5gemma.cpp):
  // two T5GemmaModuleConfig stacks of Gemma-2 layers that may differ in every width. The fields above hold the
  // decoder's (vocab_size = decoder.vocab_size, the lm_head's rows; hidden_size, intermediate_size, num_heads,
  // num_kv_heads, head_dim, hidden_act, sliding_window, sliding_layers (num_decoder_layers entries),
  // attn_logit_softcapping, final_logit_softcapping, attention_bias), except num_layers, the encoder's layer count
  // as for every encoder-decoder (num_decoder_layers the decoder's; layer indices count the encoder's first).
  // These hold the encoder's own widths; t5gemma_enc_hidden is 0 for every other model_type.
  int64_t t5gemma_enc_vocab = 0, t5gemma_enc_hidden = 0, t5gemma_enc_intermediate = 0, t5gemma_enc_heads = 0,
          t5gemma_enc_kv_heads = 0, t5gemma_enc_head_dim = 0, t5gemma_enc_sliding_window = 0;
  std::vector<uint8_t> t5gemma_enc_sliding_layers;  // encoder.layer_types ("sliding_attention" -> 1)
  std::string t5gemma_enc_act;                      // encoder.hidden_activation
  double t5gemma_enc_attn_softcap = 0.0;            // encoder.attn_logit_softcapping (0: None)
  bool t5gemma_enc_attention_bias = false;          // encoder.attention_bias

  // [mamba]
  // MambaConfig / Mamba2Config (5.17) mixer sizes, read by engine/arch/ssm/ only; 0 / false for other model_types.
  // ssm_state_size: state_size (mamba 16, mamba2 128). ssm_inner_size: the mixer's intermediate_size
  // (int(expand * hidden_size); mamba reads config.intermediate_size, which the config derives so).
  // ssm_conv_kernel: conv_kernel (4), the depthwise causal conv's taps and the cached conv state's length.
  // ssm_time_step_rank: mamba's dt_proj rank (time_step_rank, "auto" = ceil(hidden / 16)).
  // ssm_bias: use_bias (false), biases on in_proj / out_proj; ssm_conv_bias: use_conv_bias (true), the conv's bias.
  // ssm_residual_in_fp32: residual_in_fp32 (true), the block's residual cast to fp32 before the add.
  int64_t ssm_state_size = 0, ssm_inner_size = 0, ssm_conv_kernel = 0, ssm_time_step_rank = 0;
  bool ssm_bias = false, ssm_conv_bias = false, ssm_residual_in_fp32 = false;
  // mamba2's multi-head SSD: ssm_num_heads (num_heads, 128) x ssm_head_dim (head_dim, 64) == ssm_inner_size,
  // ssm_groups (n_groups, 8) dividing the heads (B and C are per group), ssm_chunk_size (chunk_size, 256): the
  // chunked scan pads the sequence to a multiple of it. 0 for mamba.
  int64_t ssm_num_heads = 0, ssm_head_dim = 0, ssm_groups = 0, ssm_chunk_size = 0;

  // [qwen3_vl]
  // Qwen3VLForConditionalGeneration / Qwen3VLMoeForConditionalGeneration (transformers 5.17 models/qwen3_vl,
  // models/qwen3_vl_moe; engine/arch/vlm/qwen3_vl.cpp, models/hf/import_qwen3_vl.cpp). The decoder fields above hold
  // text_config's (qwen3_vl_moe also [qwen3_moe]'s num_experts, num_experts_per_tok, moe_intermediate_size,
  // moe_layers); these hold vision_config's, the Qwen3VLVisionModel the images run through. All 0 / empty for every
  // other model_type; the builder reads them only for images (RunConfig image_grid, images_per_sample), but the
  // tower's parameters count (and are moved to the GPU) either way.
  int64_t qwen3vl_depth = 0;           // depth (27): Qwen3VLVisionBlock count
  int64_t qwen3vl_hidden = 0;          // hidden_size (1152): the tower's width; head_dim = hidden / heads
  int64_t qwen3vl_intermediate = 0;    // intermediate_size (4304): the blocks' MLP (linear_fc1, gelu, linear_fc2)
  int64_t qwen3vl_heads = 0;           // num_heads (16)
  int64_t qwen3vl_in_channels = 0;     // in_channels (3)
  int64_t qwen3vl_patch = 0;           // patch_size (16): the Conv3d's spatial kernel and stride
  int64_t qwen3vl_temporal_patch = 0;  // temporal_patch_size (2): its temporal kernel and stride
  int64_t qwen3vl_merge = 0;           // spatial_merge_size (2): merge^2 patches become one text token
  int64_t qwen3vl_out_hidden = 0;      // out_hidden_size (3584): the mergers' output width (the text hidden size)
  int64_t qwen3vl_num_pos = 0;         // num_position_embeddings (2304): rows of the learned position table
  // deepstack_visual_indexes ([8, 16, 24]): after block deepstack[k] a deepstack merger (a post-shuffle LayerNorm
  // over merge^2 x hidden, linear_fc1, GELU, linear_fc2) makes features that are added to text layer k's output at
  // the image positions. Distinct indexes below qwen3vl_depth.
  std::vector<int64_t> qwen3vl_deepstack;

  // [clip / siglip / siglip2]
  // Contrastive image-text models (CLIPModel, SiglipModel, Siglip2Model; engine/arch/vlm/): the fields above hold the
  // text tower (text_config's vocab_size, hidden_size, num_hidden_layers, num_attention_heads (head_dim = hidden /
  // heads), intermediate_size, max_position_embeddings, hidden_act); these the vision tower (vision_config) and the
  // heads. 0 / empty / false for every other model_type.
  int64_t vision_hidden_size = 0, vision_num_layers = 0, vision_num_heads = 0, vision_intermediate_size = 0;
  std::string vision_hidden_act;   // quick_gelu (CLIP), gelu_pytorch_tanh (SigLIP), gelu
  int64_t vision_image_size = 0;   // clip / siglip: the square image side pixel_values have; 0 for siglip2 (NaFlex)
  int64_t vision_patch_size = 0;   // the patch Conv2d's kernel and stride (siglip2: the patch Linear's side)
  int64_t vision_num_channels = 0; // 3
  int64_t vision_num_patches = 0;  // siglip2: the position table's rows (num_patches, a square: side x side)
  // clip: projection_dim, the bias-free visual / text projections' width; siglip / siglip2: the text head's width
  // (text_config.projection_size, default text hidden_size; a Linear with bias).
  int64_t projection_dim = 0;
  bool vision_use_head = false;    // siglip / siglip2: vision_config.vision_use_head (default true): the MAP head
  bool clip_legacy_eos = false;    // clip: text_config.eos_token_id == 2 (pooled at the ids' argmax, not the eos)

  // [idefics3 / smolvlm]
  // Idefics3ForConditionalGeneration / SmolVLMForConditionalGeneration (engine/arch/vlm/idefics3.cpp, smolvlm.cpp):
  // the fields above hold the Llama text model (text_config); these the SigLIP-like vision transformer
  // (vision_config) and the connector. id3_vision_layers is 0 for every other model_type (the builders' and the
  // case reader's test for these two types).
  int64_t id3_vision_layers = 0, id3_vision_hidden = 0, id3_vision_heads = 0, id3_vision_mlp = 0;
  std::string id3_vision_act;    // the vision MLP's activation: gelu_pytorch_tanh (default), gelu, quick_gelu
  int64_t id3_image_size = 0;    // vision_config.image_size: the side of every sub-image (the processor's tiles)
  int64_t id3_patch = 0;         // vision_config.patch_size: the patch Conv2d's kernel and stride
  int64_t id3_channels = 0;      // vision_config.num_channels
  // The connector's pixel shuffle: each sub-image's (image_size / patch)^2 patches become that many / scale^2
  // image tokens of width vision hidden * scale^2 (then modality_projection to the text hidden size). Must divide
  // image_size / patch for images (the builder refuses them otherwise; text-only runs build).
  int64_t id3_scale_factor = 0;

  // [granitemoehybrid / bamba]
  // The Mamba2 / attention hybrids (engine/arch/ssm/granitemoehybrid.cpp, bamba.cpp; models/hf/
  // import_granitemoehybrid.cpp, import_bamba.cpp). hybrid_attention_layers[i] != 0 iff decoder layer i is an
  // attention layer ("full_attention" of GraniteMoeHybridConfig.layer_types, or an index of BambaConfig's
  // attn_layer_indices), else a Mamba2 mixer layer ("linear_attention") whose sizes are [mamba]'s ssm_* fields
  // (mamba_n_heads, mamba_d_head, mamba_n_groups, mamba_d_state, mamba_d_conv, mamba_chunk_size, int(mamba_expand
  // * hidden_size), mamba_conv_bias, mamba_proj_bias). One entry per layer for these two model_types, empty for
  // every other. hybrid_rope: the attention layers apply the rotary embedding (granitemoehybrid:
  // position_embedding_type == "rope"; otherwise no rotary module exists and q / k go to the attention as
  // projected; bamba: always, over rotary_dim = int(head_dim * partial_rotary_factor 0.5)). The feed-forward is
  // the granite fields' shared MLP (granite_shared_intermediate_size) plus the routed experts when num_experts > 0
  // (granitemoehybrid), or a SwiGLU of intermediate_size (bamba).
  std::vector<uint8_t> hybrid_attention_layers;
  bool hybrid_rope = false;

  // [falcon_h1 / nemotron_h]
  // The Mamba2 hybrids (engine/arch/ssm/falcon_h1.cpp, nemotron_h.cpp; models/hf/import_falcon_h1.cpp,
  // import_nemotron_h.cpp). Their mixers' sizes are [mamba]'s fields (ssm_inner_size = ssm_num_heads x
  // ssm_head_dim, ssm_groups, ssm_state_size, ssm_conv_kernel, ssm_chunk_size, ssm_conv_bias; ssm_bias: in_proj's
  // bias), the attention's the decoder fields (num_heads, num_kv_heads, head_dim; qkv_bias / o_bias), the MLP's
  // intermediate_size and mlp_bias. false / empty for every other model_type.
  // falcon_h1: ssm_out_bias = projectors_bias (false), the mixer's out_proj bias. ssm_rms_norm = mamba_rms_norm
  // (false): FalconH1RMSNormGated after the scan (with ssm_norm_before_gate = mamba_norm_before_gate (true) the RMS
  // before the gate's product), else `y * silu(gate)`. The muP multipliers' values change no allocation (each is a
  // product made whatever its value), so they are not kept.
  bool ssm_out_bias = false, ssm_rms_norm = false, ssm_norm_before_gate = false;
  // nemotron_h: layers_block_type (or hybrid_override_pattern) as one char per block, num_layers of them: 'M' a
  // NemotronHMamba2Mixer, '*' a NemotronHAttention (no positions), '-' a ReLU^2 NemotronHMLP.
  std::string hybrid_pattern;

  // [convnext / convnextv2 / swin]
  // Hugging Face vision backbones as image classifiers (ConvNextForImageClassification,
  // ConvNextV2ForImageClassification: engine/arch/vision/hf_convnext.cpp, models/hf/import_convnext.cpp;
  // SwinForImageClassification: engine/arch/vision/hf_swin.cpp, models/hf/import_swin.cpp). They also fill [vit]'s
  // image_size, patch_size (the stem's kernel and stride), num_channels and image_num_labels (so hf_image_tokens is
  // > 0 and the case loader puts (image_size / patch_size)^2 + 1 in RunConfig::seq_len: the builders read the image
  // from image_size and ignore seq_len) and [dinov2]'s drop_path_rate (the rate of the last block; block i of n runs
  // DropPath at drop_path_rate * i / (n - 1), identity at 0). Empty / 0 / false for every other model_type.
  // Each stage's channel width (convnext: hidden_sizes; swin: embed_dim * 2^i) and block count (depths), one
  // entry per stage, same length.
  std::vector<int64_t> stage_widths;
  std::vector<int64_t> stage_depths;
  // convnext: config.layer_scale_init_value > 0 (default 1e-6): ConvNextLayer's layer_scale_parameter [C] multiplies
  // the block's output (a trainable fp32 parameter: under autocast the product is fp32). convnextv2 never has it.
  bool convnext_layer_scale = false;
  // convnextv2: ConvNextV2GRN (global response normalisation, weight and bias [1, 1, 1, 4C]) after the GELU.
  bool convnext_grn = false;
  // swin: num_heads per stage (same length as stage_depths), window_size (7), the MLP's hidden width per stage
  // int(mlp_ratio * width) (mlp_ratio 4.0), use_absolute_embeddings (false: a [1, num_patches, embed_dim]
  // position table added after the embeddings' norm when true).
  std::vector<int64_t> swin_stage_heads;
  std::vector<int64_t> swin_stage_mlp;
  int64_t swin_window_size = 0;
  bool swin_absolute_embeddings = false;

  // [llava]
  // LlavaForConditionalGeneration and PaliGemmaForConditionalGeneration (transformers 5.17 models/llava,
  // models/paligemma; engine/arch/vlm/llava.cpp, paligemma.cpp; models/hf/import_llava.cpp). model_type stays
  // "llava" / "paligemma"; the decoder fields above hold text_config's as its own importer reads them (mm_text_type
  // names it), the [clip / siglip] vision_* fields hold vision_config's tower and projection_dim the projector's
  // output width (the text hidden size). Empty / 0 / false for every other model_type.
  std::string mm_text_type;        // text_config.model_type: llama, mistral, qwen2 (llava); gemma, gemma2 (paligemma)
  bool mm_vision_clip = false;     // the tower is CLIPVisionModel (class position, pre_layrnorm); false: SiglipVisionModel
  // llava vision_feature_layer: the hidden_states indices (0 = the embeddings' output, negative from the end of the
  // num_layers + 1 entries) concatenated along the features, in the config's order; one entry for an int.
  // paligemma: empty (the tower's last_hidden_state after post_layernorm).
  std::vector<int64_t> mm_feature_layers;
  bool mm_feature_full = false;    // llava vision_feature_select_strategy "full"; false: "default" drops position 0
  std::string mm_projector_act;    // llava projector_hidden_act (gelu): linear_1, act, linear_2
  bool mm_projector_bias = false;  // llava multimodal_projector_bias; paligemma's one linear always has a bias
  int64_t mm_image_tokens = 0;     // image tokens per image in the text (llava: positions kept; paligemma: patches)
  // llava_next image_grid_pinpoints, flattened [h0, w0, h1, w1, ...] (pixels): the tile grids anyres picks from
  // (engine/arch/vlm/llava_next.cpp). mm_image_tokens then counts the base tile's features only. Empty otherwise.
  std::vector<int64_t> mm_grid_pinpoints;
  // llava_onevision vision_aspect_ratio "anyres_max_N": N, the base tiles' worth of features an anyres image keeps
  // (a larger unpadded map is resized bilinearly, engine/arch/vlm/llava_onevision.cpp). 0 for every other type.
  int64_t mm_anyres_max_patches = 0;

  // [mllama]
  // MllamaForConditionalGeneration / MllamaForCausalLM (transformers 5.17 models/mllama; engine/arch/vlm/mllama.cpp,
  // models/hf/import_mllama.cpp). model_type "mllama" (vision + text) or "mllama_text_model" (MllamaForCausalLM).
  // The decoder fields above hold text_config's (a Llama decoder whose layers listed in mllama_cross_layers are
  // cross-attention layers; the embedding has vocab_size + 8 rows); the [clip / siglip] vision_* fields hold
  // vision_config's tower (hidden_size, intermediate_size, num_hidden_layers (the local transformer),
  // attention_heads, hidden_act, image_size, patch_size, num_channels). Empty / 0 for every other model_type.
  std::vector<int64_t> mllama_cross_layers;        // text_config.cross_attention_layers, distinct, in range
  int64_t mllama_global_layers = 0;                // vision_config.num_global_layers (the gated transformer)
  int64_t mllama_max_tiles = 0;                    // vision_config.max_num_tiles (4): tiles per image, padded
  int64_t mllama_aspect_ratios = 0;                // len(vision_config.supported_aspect_ratios) (max_aspect_ratio_id)
  std::vector<int64_t> mllama_intermediate_layers; // vision_config.intermediate_layers_indices (local layer outputs)

  // [jamba]
  // JambaConfig (5.17) layer pattern, read by models/hf/import_jamba.cpp and engine/arch/ssm/jamba.cpp only; 0 for
  // every other model_type. Layer i is an attention layer iff i % jamba_attn_period == jamba_attn_offset
  // (attn_layer_period 8 / attn_layer_offset 4), else a Mamba-1 layer (JambaMambaMixer: the [mamba] fields
  // ssm_state_size, ssm_inner_size, ssm_conv_kernel, ssm_time_step_rank, ssm_bias, ssm_conv_bias). Its
  // feed-forward is the sparse MoE block (num_experts experts of intermediate_size, num_experts_per_tok routed)
  // iff i % jamba_expert_period == jamba_expert_offset and num_experts > 1 (expert_layer_period 2 /
  // expert_layer_offset 1), else JambaMLP (intermediate_size). Each offset is below its period (> 0).
  int64_t jamba_attn_period = 0, jamba_attn_offset = 0, jamba_expert_period = 0, jamba_expert_offset = 0;

  // [resnet]
  // ResNetConfig (transformers models/resnet/configuration_resnet.py), read by models/hf/import_resnet.cpp and
  // engine/arch/vision/hf_resnet.cpp only (ResNetForImageClassification; not torchvision's ResNet, VisionSpec).
  // The stages' widths and block counts are [convnext]'s stage_widths (hidden_sizes) and stage_depths (depths);
  // [vit]'s image_size (the config's image_size when given, else 224: ResNetConfig has none), num_channels and
  // image_num_labels; patch_size holds the stem's overall stride 4 (conv 7x7 / 2, max pool 3x3 / 2) so that the
  // image-model routing of hf_image_tokens applies. 0 / false for every other model_type.
  int64_t resnet_embedding_size = 0;            // embedding_size (64): the stem conv's output channels
  bool resnet_bottleneck = false;               // layer_type "bottleneck" (1x1, 3x3, 1x1 at width / 4); "basic"
  bool resnet_downsample_in_first_stage = false;  // the first stage's first block strides 2
  bool resnet_downsample_in_bottleneck = false;   // a bottleneck strides in its first 1x1 instead of its 3x3

  // [dinov3_vit]
  // DINOv3ViTConfig, read by models/hf/import_dinov3_vit.cpp and engine/arch/vision/hf_dinov3.cpp only (DINOv3ViTModel:
  // inference of the bare backbone; transformers 5.17 has no image-classification class for it). With [vit]'s image
  // fields and image_extra_tokens = num_register_tokens. The projections' biases (query_bias True, key_bias False,
  // value_bias True, proj_bias True; mlp_bias is mlp_bias), use_gated_mlp (gate / up / down with hidden_act) and
  // the layer scale (always present: layerscale_value only sets its initial value). False for every other type.
  bool dinov3_query_bias = false, dinov3_key_bias = false, dinov3_value_bias = false, dinov3_proj_bias = false;
  bool dinov3_gated_mlp = false;

  // [segformer]
  // SegformerConfig (transformers models/segformer/configuration_segformer.py), read by
  // models/hf/import_segformer.cpp and engine/arch/vision/hf_segformer.cpp only (SegformerForImageClassification,
  // SegformerForSemanticSegmentation). One entry per encoder block (num_encoder_blocks of them): [convnext]'s
  // stage_widths (hidden_sizes) and stage_depths (depths), and the lists below. [vit]'s image_size (the config's
  // image_size key when given, else 224: SegformerConfig has none), num_channels and image_num_labels; patch_size
  // holds the first overlapping patch embedding's stride (routing only: hf_image_tokens > 0). [dinov2]'s
  // drop_path_rate (0.1: SegformerDropPath at linspace(0, rate, sum(depths)) per layer), resid_dropout
  // (hidden_dropout_prob: the self-output's and both Mix-FFN dropouts), attn_dropout (attention_probs_dropout_prob).
  // Empty / 0 for every other model_type.
  std::vector<int64_t> seg_patch_sizes;  // patch_sizes (7, 3, 3, 3): block i's embedding Conv2d kernel, padding k // 2
  std::vector<int64_t> seg_strides;      // strides (4, 2, 2, 2): that conv's stride
  std::vector<int64_t> seg_sr_ratios;    // sr_ratios (8, 4, 2, 1): the keys' / values' sequence reduction (> 1: a conv)
  std::vector<int64_t> seg_heads;        // num_attention_heads (1, 2, 5, 8)
  std::vector<int64_t> seg_mlp;          // int(hidden_sizes[i] * mlp_ratios[i]): the Mix-FFN's hidden width
  int64_t seg_decoder_hidden_size = 0;   // decoder_hidden_size (256): the all-MLP decode head's width
  double seg_classifier_dropout = 0.0;   // classifier_dropout_prob (0.1): the decode head's dropout before its classifier

  // [esm]
  // EsmConfig, read by models/hf/import_esm.cpp and engine/arch/encoders/esm.cpp only; false for every other
  // model_type. esm_rotary: position_embedding_type "rotary" (ESM-2: one rotary embedding, applied in every
  // self-attention to the scaled query and the key, no position table; seq_len unbounded); false: "absolute"
  // (ESM-1b: a learned table indexed from pad_token_id + 1, position_id_offset = pad + 1). esm_token_dropout:
  // token_dropout (the masked tokens' embeddings zeroed and the rest rescaled by a per-sequence ratio, in fp32 for
  // 16-bit embeddings). esm_emb_layer_norm_before: a LayerNorm on the embeddings (ESM-1b). mask_token_id is only
  // read for its range.
  bool esm_rotary = false;
  bool esm_token_dropout = false;
  bool esm_emb_layer_norm_before = false;

  // [beit / data2vec-vision]
  // BeitConfig / Data2VecVisionConfig, read by models/hf/import_beit.cpp and engine/arch/vision/hf_beit.cpp only
  // (BeitForImageClassification; Data2VecVisionForImageClassification runs the same statements under its own
  // names). With [vit]'s image fields and [dinov2]'s drop_path_rate (BeitEncoder's linspace: layer i of n at
  // drop_path_rate * i / (n - 1), nn.Identity at 0). False for every other model_type.
  bool beit_abs_pos = false;         // use_absolute_position_embeddings: a [1, patches + 1, H] table
  bool beit_rel_pos = false;         // use_relative_position_bias: a BeitRelativePositionBias per layer
  bool beit_shared_rel_pos = false;  // use_shared_relative_position_bias: one in the encoder, passed to every layer
  bool beit_layer_scale = false;     // layer_scale_init_value > 0: lambda_1 / lambda_2 [H] per layer
  bool beit_mean_pooling = false;    // use_mean_pooling: BeitPooler's LayerNorm over the patch tokens' mean
  bool beit_mask_token = false;      // use_mask_token: a [1, 1, H] parameter the classifier never reads

  // [internvl]
  // InternVLConfig / InternVLVisionConfig (transformers 5.17 configuration_internvl.py), read by
  // models/hf/import_internvl.cpp and engine/arch/vlm/internvl.cpp only. The decoder fields above hold text_config's
  // (qwen2 / llama / mistral, as llava's), the [clip / siglip] vision_* fields InternVLVisionModel's widths (square
  // image_size / patch_size), mm_projector_act the projector's activation and mm_image_tokens the image tokens of
  // one tile (after the pixel shuffle: (image_size / patch_size * downsample_ratio)^2, 256 at 448 / 14 / 0.5).
  // False / 0 for every other model_type.
  bool ivl_attention_bias = false;  // vision attention_bias: q_proj / k_proj / v_proj with biases
  bool ivl_qk_norm = false;         // use_qk_norm: InternVLVisionRMSNorm [hidden] on the q and k projections
  bool ivl_rms_norm = false;        // norm_type "rms_norm": layernorm_before / _after are InternVLVisionRMSNorm
  bool ivl_abs_pos = false;         // use_absolute_position_embeddings: a [1, patches + 1, hidden] parameter
  bool ivl_mask_token = false;      // use_mask_token: a [1, 1, hidden] parameter never read (no bool_masked_pos)
  bool ivl_final_norm = false;      // use_mean_pooling false: InternVLVisionModel.layernorm is an nn.LayerNorm
  int64_t ivl_shuffle = 0;          // 1 / downsample_ratio: pixel_shuffle's factor per side (2 at ratio 0.5)
};

// Whether decoder layer i attends through the sliding window.
inline bool layer_is_sliding(const TransformerSpec& s, int64_t i) {
  if (s.sliding_window <= 0) return false;
  if (!s.sliding_layers.empty()) return s.sliding_layers[static_cast<size_t>(i)] != 0;
  return i >= s.first_sliding_layer;
}

// The encoder's tokens of a Hugging Face image model (spec.image_size > 0): (image_size / patch_size)^2 + 1
// (+ image_extra_tokens: DeiT's distillation token); 0 for every other model.
inline int64_t hf_image_tokens(const TransformerSpec& s) {
  if (s.image_size <= 0 || s.patch_size <= 0) return 0;
  const int64_t side = s.image_size / s.patch_size;
  return side * side + 1 + s.image_extra_tokens;
}

// The frames a speech encoder's conv feature encoder makes of `samples` waveform samples (wav2vec2 / hubert / wavlm:
// _get_feat_extract_output_lengths, floor((L - kernel) / stride) + 1 per conv layer); 0 when the waveform is too
// short for the convolutions, and 0 for every model without them.
inline int64_t speech_frames(const TransformerSpec& s, int64_t samples) {
  if (s.speech_conv_kernel.empty()) return 0;
  int64_t len = samples;
  for (size_t i = 0; i < s.speech_conv_kernel.size(); ++i) {
    if (len < s.speech_conv_kernel[i]) return 0;
    len = (len - s.speech_conv_kernel[i]) / s.speech_conv_stride[i] + 1;
  }
  return len;
}

// torchvision classification models.
struct VisionSpec {
  // One value per torchvision model file (engine/arch/<family>.cpp mirrors torchvision/models/<file>.py).
  enum class Family : uint8_t {
    resnet, vit, convnext, efficientnet, mobilenet_v2, mobilenet_v3, swin, densenet, vgg, regnet
  };
  Family family = Family::resnet;
  std::string name;                // resnet50, vit_b_16, ...
  int64_t num_classes = 1000;
  // resnet (also resnext / wide_resnet: Bottleneck width = planes * width_per_group / 64 * groups)
  std::vector<int64_t> blocks_per_stage;  // e.g. {3,4,6,3}; convnext / swin / densenet / efficientnet stage depths
  bool bottleneck = true;
  int64_t groups = 1;                     // resnet: grouped 3x3 (resnext)
  int64_t width_per_group = 64;           // resnet: base width (wide_resnet 128)
  // vit
  int64_t patch_size = 0;
  int64_t num_layers = 0;
  int64_t num_heads = 0;
  int64_t hidden_dim = 0;
  int64_t mlp_dim = 0;
  int64_t default_image_size = 224;
  // convnext: channels per stage (the downsampler after stage i maps stage_channels[i] -> [i + 1]).
  // swin: embed_dim in stage_channels[0] (doubling per stage), heads per stage in stage_heads.
  std::vector<int64_t> stage_channels;
  std::vector<int64_t> stage_heads;
  int64_t window_size = 7;                // swin (v1 and v2)
  bool v2 = false;                        // swin_v2 (cosine attention, CPB MLP, res-post-norm); efficientnet_v2
  // The builder's defaults as torchvision's model functions pass them.
  double stochastic_depth_prob = 0.0;     // convnext, efficientnet, swin
  double dropout = 0.0;                   // classifier dropout (efficientnet, mobilenet, vgg 0.5)
  // efficientnet_b*: width / depth multipliers (efficientnet_v2 uses its fixed table)
  double width_mult = 1.0, depth_mult = 1.0;
  // densenet: growth_rate, bn_size, num_init_features; block config in blocks_per_stage
  int64_t growth_rate = 32, bn_size = 4, num_init_features = 64;
  // vgg: the cfg list, 0 for "M" (max pool); batch_norm for vgg*_bn
  std::vector<int64_t> vgg_cfg;
  bool batch_norm = false;
  // regnet: BlockParams.from_init_params(depth, w_0, w_a, w_m, group_width, se_ratio)
  int64_t regnet_depth = 0, regnet_w0 = 0, regnet_group_width = 0;
  double regnet_wa = 0, regnet_wm = 0, regnet_se_ratio = 0;
};

struct ModelSpec {
  enum class Kind : uint8_t { transformer, vision, graph };
  Kind kind = Kind::transformer;
  std::string name;          // for reports
  TransformerSpec transformer;
  VisionSpec vision;
  std::shared_ptr<const NativeGraph> graph;  // Kind::graph: the user's description (shared, immutable)
};

}  // namespace memplan
