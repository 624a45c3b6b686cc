// Architecture builders: ModelSpec + RunConfig -> Graph of one forward pass plus loss, mirroring the model code
// that runs (transformers 5.17 modeling files, torchvision 0.26), op by op, with its Python variable lifetimes.
//
// Arithmetic: builders multiply single dimensions (batch x seq, 3 x hidden, heads x head_dim) unchecked; that
// is safe because estimate() runs check_limits (engine/limits.h) first, which bounds every such product far
// below 2^63. Element counts and bytes of whole tensors go through checked_mul in GraphBuilder.
#pragma once
#include "engine/arch/spec.h"
#include "engine/graph.h"
#include "engine/graph_builder.h"
#include "engine/run_config.h"

namespace memplan {

Graph build_graph(const ModelSpec& spec, const RunConfig& cfg);

// Per-family builders; each appends to `b` and sets the loss (training) or builds one inference pass
// (b.pass()). A builder that does not model one of the two modes throws InputError saying so.
using TransformerBuilder = void (*)(GraphBuilder& b, const TransformerSpec& s);
// The builder of `s.model_type` (one file per modeling file in engine/arch/).
TransformerBuilder transformer_builder(const TransformerSpec& s);
void build_gpt2(GraphBuilder& b, const TransformerSpec& s);
void build_llama(GraphBuilder& b, const TransformerSpec& s);       // llama, mistral, qwen2, mixtral
void build_bert(GraphBuilder& b, const TransformerSpec& s);
void build_qwen3(GraphBuilder& b, const TransformerSpec& s);       // engine/arch/decoders/dense/qwen3.cpp
void build_qwen3_moe(GraphBuilder& b, const TransformerSpec& s);   // engine/arch/decoders/moe/qwen3_moe.cpp
void build_olmo2(GraphBuilder& b, const TransformerSpec& s);       // engine/arch/decoders/dense/olmo2.cpp
void build_gemma(GraphBuilder& b, const TransformerSpec& s);       // engine/arch/decoders/dense/gemma.cpp
void build_gemma2(GraphBuilder& b, const TransformerSpec& s);      // engine/arch/decoders/dense/gemma2.cpp
void build_gemma3(GraphBuilder& b, const TransformerSpec& s);      // engine/arch/decoders/dense/gemma3.cpp (gemma3_text)
void build_phi3(GraphBuilder& b, const TransformerSpec& s);        // engine/arch/decoders/dense/phi3.cpp
void build_gpt_neox(GraphBuilder& b, const TransformerSpec& s);    // engine/arch/decoders/gpt/gpt_neox.cpp
void build_starcoder2(GraphBuilder& b, const TransformerSpec& s);  // engine/arch/decoders/dense/starcoder2.cpp
void build_deepseek_v2(GraphBuilder& b, const TransformerSpec& s); // engine/arch/decoders/moe/deepseek_v2.cpp
void build_deepseek_v3(GraphBuilder& b, const TransformerSpec& s); // engine/arch/decoders/moe/deepseek_v3.cpp
void build_gpt_oss(GraphBuilder& b, const TransformerSpec& s);     // engine/arch/decoders/moe/gpt_oss.cpp
void build_t5(GraphBuilder& b, const TransformerSpec& s);          // engine/arch/seq2seq/t5.cpp
void build_granite(GraphBuilder& b, const TransformerSpec& s);     // engine/arch/decoders/dense/granite.cpp
void build_phi(GraphBuilder& b, const TransformerSpec& s);         // engine/arch/decoders/gpt/phi.cpp
void build_stablelm(GraphBuilder& b, const TransformerSpec& s);    // engine/arch/decoders/dense/stablelm.cpp
void build_cohere(GraphBuilder& b, const TransformerSpec& s);      // engine/arch/decoders/dense/cohere.cpp
void build_roberta(GraphBuilder& b, const TransformerSpec& s);     // engine/arch/encoders/roberta.cpp (and xlm-roberta)
void build_opt(GraphBuilder& b, const TransformerSpec& s);         // engine/arch/decoders/gpt/opt.cpp
void build_qwen2_moe(GraphBuilder& b, const TransformerSpec& s);   // engine/arch/decoders/moe/qwen2_moe.cpp
void build_distilbert(GraphBuilder& b, const TransformerSpec& s);  // engine/arch/encoders/distilbert.cpp
void build_glm4(GraphBuilder& b, const TransformerSpec& s);        // engine/arch/decoders/dense/glm4.cpp
void build_nemotron(GraphBuilder& b, const TransformerSpec& s);    // engine/arch/decoders/dense/nemotron.cpp
void build_modernbert(GraphBuilder& b, const TransformerSpec& s);  // engine/arch/encoders/modernbert.cpp
void build_olmoe(GraphBuilder& b, const TransformerSpec& s);       // engine/arch/decoders/moe/olmoe.cpp
void build_granitemoe(GraphBuilder& b, const TransformerSpec& s);  // engine/arch/decoders/moe/granitemoe.cpp (+ granitemoeshared)
void build_granite_swa(GraphBuilder& b, const TransformerSpec& s);     // engine/arch/decoders/dense/granite_swa.cpp (GraniteSWAForCausalLM)
void build_granitemoe_swa(GraphBuilder& b, const TransformerSpec& s);  // engine/arch/decoders/moe/granitemoe_swa.cpp (GraniteMoeSWAForCausalLM)
void build_smollm3(GraphBuilder& b, const TransformerSpec& s);     // engine/arch/decoders/dense/smollm3.cpp
void build_olmo(GraphBuilder& b, const TransformerSpec& s);        // engine/arch/decoders/dense/olmo.cpp
void build_gpt_bigcode(GraphBuilder& b, const TransformerSpec& s); // engine/arch/decoders/gpt/gpt_bigcode.cpp
void build_gptj(GraphBuilder& b, const TransformerSpec& s);        // engine/arch/decoders/gpt/gptj.cpp
void build_falcon(GraphBuilder& b, const TransformerSpec& s);      // engine/arch/decoders/gpt/falcon.cpp
void build_bloom(GraphBuilder& b, const TransformerSpec& s);       // engine/arch/decoders/gpt/bloom.cpp
void build_ernie4_5(GraphBuilder& b, const TransformerSpec& s);    // engine/arch/decoders/dense/ernie4_5.cpp
void build_exaone4(GraphBuilder& b, const TransformerSpec& s);     // engine/arch/decoders/dense/exaone4.cpp
void build_seed_oss(GraphBuilder& b, const TransformerSpec& s);    // engine/arch/decoders/dense/seed_oss.cpp
void build_arcee(GraphBuilder& b, const TransformerSpec& s);       // engine/arch/decoders/dense/arcee.cpp
void build_bart(GraphBuilder& b, const TransformerSpec& s);        // engine/arch/seq2seq/bart.cpp
void build_llama4(GraphBuilder& b, const TransformerSpec& s);      // engine/arch/decoders/moe/llama4.cpp (llama4_text)
void build_hunyuan_v1_dense(GraphBuilder& b, const TransformerSpec& s);  // engine/arch/decoders/dense/hunyuan_v1_dense.cpp
void build_apertus(GraphBuilder& b, const TransformerSpec& s);     // engine/arch/decoders/dense/apertus.cpp
void build_deberta_v2(GraphBuilder& b, const TransformerSpec& s);  // engine/arch/encoders/deberta_v2.cpp (deberta-v2)
void build_mbart(GraphBuilder& b, const TransformerSpec& s);       // engine/arch/seq2seq/mbart.cpp
void build_marian(GraphBuilder& b, const TransformerSpec& s);      // engine/arch/seq2seq/marian.cpp
void build_pegasus(GraphBuilder& b, const TransformerSpec& s);     // engine/arch/seq2seq/marian.cpp
void build_m2m_100(GraphBuilder& b, const TransformerSpec& s);     // engine/arch/seq2seq/m2m_100.cpp
void build_whisper(GraphBuilder& b, const TransformerSpec& s);     // engine/arch/seq2seq/whisper.cpp
void build_cohere2(GraphBuilder& b, const TransformerSpec& s);     // engine/arch/decoders/dense/cohere2.cpp
void build_hf_vit(GraphBuilder& b, const TransformerSpec& s);      // engine/arch/vision/hf_vit.cpp (vit: ViTForImageClassification)
void build_hf_dinov2(GraphBuilder& b, const TransformerSpec& s);   // engine/arch/vision/hf_dinov2.cpp (Dinov2ForImageClassification)
void build_hf_deit(GraphBuilder& b, const TransformerSpec& s);     // engine/arch/vision/hf_deit.cpp (DeiTForImageClassification)
void build_hf_convnext(GraphBuilder& b, const TransformerSpec& s); // engine/arch/vision/hf_convnext.cpp (convnext, convnextv2)
void build_hf_swin(GraphBuilder& b, const TransformerSpec& s);     // engine/arch/vision/hf_swin.cpp (SwinForImageClassification)
void build_hf_swinv2(GraphBuilder& b, const TransformerSpec& s);   // engine/arch/vision/hf_swinv2.cpp (Swinv2ForImageClassification)
void build_gpt_neo(GraphBuilder& b, const TransformerSpec& s);     // engine/arch/decoders/gpt/gpt_neo.cpp
void build_electra(GraphBuilder& b, const TransformerSpec& s);     // engine/arch/encoders/electra.cpp
void build_esm(GraphBuilder& b, const TransformerSpec& s);         // engine/arch/encoders/esm.cpp
void build_hf_resnet(GraphBuilder& b, const TransformerSpec& s);   // engine/arch/vision/hf_resnet.cpp (resnet)
void build_hf_dinov3(GraphBuilder& b, const TransformerSpec& s);   // engine/arch/vision/hf_dinov3.cpp (dinov3_vit)
void build_hf_beit(GraphBuilder& b, const TransformerSpec& s);     // engine/arch/vision/hf_beit.cpp (beit, data2vec-vision)
void build_hf_segformer(GraphBuilder& b, const TransformerSpec& s);  // engine/arch/vision/hf_segformer.cpp (segformer)
void build_glm4_moe(GraphBuilder& b, const TransformerSpec& s);    // engine/arch/decoders/moe/glm4_moe.cpp
void build_phimoe(GraphBuilder& b, const TransformerSpec& s);      // engine/arch/decoders/moe/phimoe.cpp
void build_umt5(GraphBuilder& b, const TransformerSpec& s);        // engine/arch/seq2seq/umt5.cpp (mt5 runs build_t5)
void build_albert(GraphBuilder& b, const TransformerSpec& s);      // engine/arch/encoders/albert.cpp
void build_mpnet(GraphBuilder& b, const TransformerSpec& s);       // engine/arch/encoders/mpnet.cpp
void build_olmo3(GraphBuilder& b, const TransformerSpec& s);       // engine/arch/decoders/dense/olmo3.cpp
void build_lfm2(GraphBuilder& b, const TransformerSpec& s);        // engine/arch/decoders/dense/lfm2.cpp
void build_minimax_m2(GraphBuilder& b, const TransformerSpec& s);  // engine/arch/decoders/moe/minimax_m2.cpp
void build_lfm2_moe(GraphBuilder& b, const TransformerSpec& s);    // engine/arch/decoders/moe/lfm2_moe.cpp
void build_ernie4_5_moe(GraphBuilder& b, const TransformerSpec& s); // engine/arch/decoders/moe/ernie4_5_moe.cpp
void build_mistral4(GraphBuilder& b, const TransformerSpec& s);    // engine/arch/decoders/moe/mistral4.cpp
void build_ministral3(GraphBuilder& b, const TransformerSpec& s);  // engine/arch/decoders/dense/ministral3.cpp
void build_gemma4(GraphBuilder& b, const TransformerSpec& s);      // engine/arch/decoders/dense/gemma4.cpp (gemma4_text)
void build_gemma3n(GraphBuilder& b, const TransformerSpec& s);     // engine/arch/decoders/dense/gemma3n.cpp (gemma3n_text)
void build_qwen3_next(GraphBuilder& b, const TransformerSpec& s);  // engine/arch/decoders/moe/qwen3_next.cpp (+ qwen3_5_text, qwen3_5_moe_text)
void build_qwen2_vl(GraphBuilder& b, const TransformerSpec& s);    // engine/arch/vlm/qwen2_vl.cpp (Qwen2VLForConditionalGeneration)
void build_qwen2_5_vl(GraphBuilder& b, const TransformerSpec& s);  // engine/arch/vlm/qwen2_5_vl.cpp
void build_helium(GraphBuilder& b, const TransformerSpec& s);      // engine/arch/decoders/dense/helium.cpp
void build_glm(GraphBuilder& b, const TransformerSpec& s);         // engine/arch/decoders/dense/glm.cpp
void build_hunyuan_v1_moe(GraphBuilder& b, const TransformerSpec& s);  // engine/arch/decoders/moe/hunyuan_v1_moe.cpp
void build_dots1(GraphBuilder& b, const TransformerSpec& s);       // engine/arch/decoders/moe/dots1.cpp
void build_dbrx(GraphBuilder& b, const TransformerSpec& s);        // engine/arch/decoders/moe/dbrx.cpp
void build_jetmoe(GraphBuilder& b, const TransformerSpec& s);      // engine/arch/decoders/moe/jetmoe.cpp
void build_wav2vec2(GraphBuilder& b, const TransformerSpec& s);    // engine/arch/audio/wav2vec2.cpp (ForCTC, seq_cls, feature)
void build_hubert(GraphBuilder& b, const TransformerSpec& s);      // engine/arch/audio/hubert.cpp
void build_wavlm(GraphBuilder& b, const TransformerSpec& s);       // engine/arch/audio/wavlm.cpp (eager only)
void build_mamba(GraphBuilder& b, const TransformerSpec& s);       // engine/arch/ssm/mamba.cpp
void build_mamba2(GraphBuilder& b, const TransformerSpec& s);      // engine/arch/ssm/mamba2.cpp
void build_granitemoehybrid(GraphBuilder& b, const TransformerSpec& s);  // engine/arch/ssm/granitemoehybrid.cpp
void build_bamba(GraphBuilder& b, const TransformerSpec& s);       // engine/arch/ssm/bamba.cpp
void build_falcon_mamba(GraphBuilder& b, const TransformerSpec& s);  // engine/arch/ssm/falcon_mamba.cpp
void build_qwen3_vl(GraphBuilder& b, const TransformerSpec& s);    // engine/arch/vlm/qwen3_vl.cpp (+ qwen3_vl_moe)
void build_clip(GraphBuilder& b, const TransformerSpec& s);        // engine/arch/vlm/clip.cpp (CLIPModel, contrastive)
void build_siglip(GraphBuilder& b, const TransformerSpec& s);      // engine/arch/vlm/siglip.cpp (SiglipModel, contrastive)
void build_siglip2(GraphBuilder& b, const TransformerSpec& s);     // engine/arch/vlm/siglip.cpp (Siglip2Model, NaFlex)
void build_idefics3(GraphBuilder& b, const TransformerSpec& s);    // engine/arch/vlm/idefics3.cpp (Idefics3ForConditionalGeneration)
void build_smolvlm(GraphBuilder& b, const TransformerSpec& s);     // engine/arch/vlm/smolvlm.cpp (SmolVLMForConditionalGeneration)
void build_falcon_h1(GraphBuilder& b, const TransformerSpec& s);   // engine/arch/ssm/falcon_h1.cpp
void build_nemotron_h(GraphBuilder& b, const TransformerSpec& s);  // engine/arch/ssm/nemotron_h.cpp
void build_llava(GraphBuilder& b, const TransformerSpec& s);       // engine/arch/vlm/llava.cpp (LlavaForConditionalGeneration)
void build_paligemma(GraphBuilder& b, const TransformerSpec& s);   // engine/arch/vlm/paligemma.cpp
void build_llava_next(GraphBuilder& b, const TransformerSpec& s);  // engine/arch/vlm/llava_next.cpp (LlavaNextForConditionalGeneration)
void build_llava_onevision(GraphBuilder& b, const TransformerSpec& s);  // engine/arch/vlm/llava_onevision.cpp
void build_xlm_roberta_xl(GraphBuilder& b, const TransformerSpec& s);  // engine/arch/encoders/xlm_roberta_xl.cpp
void build_mpt(GraphBuilder& b, const TransformerSpec& s);  // engine/arch/decoders/gpt/mpt.cpp (MptForCausalLM)
void build_biogpt(GraphBuilder& b, const TransformerSpec& s);  // engine/arch/decoders/gpt/biogpt.cpp (BioGptForCausalLM)
void build_codegen(GraphBuilder& b, const TransformerSpec& s);  // engine/arch/decoders/gpt/codegen.cpp (CodeGenForCausalLM)
void build_nanochat(GraphBuilder& b, const TransformerSpec& s);  // engine/arch/decoders/dense/nanochat.cpp (NanoChatForCausalLM)
void build_vaultgemma(GraphBuilder& b, const TransformerSpec& s);  // engine/arch/decoders/dense/vaultgemma.cpp (VaultGemmaForCausalLM)
void build_deepseek_v32(GraphBuilder& b, const TransformerSpec& s);  // engine/arch/decoders/moe/deepseek_v32.cpp (DeepseekV32ForCausalLM)
void build_glm_moe_dsa(GraphBuilder& b, const TransformerSpec& s);  // engine/arch/decoders/moe/glm_moe_dsa.cpp (GlmMoeDsaForCausalLM)
void build_solar_open(GraphBuilder& b, const TransformerSpec& s);  // engine/arch/decoders/moe/solar_open.cpp (SolarOpenForCausalLM)
void build_t5gemma(GraphBuilder& b, const TransformerSpec& s);  // engine/arch/seq2seq/t5gemma.cpp (T5GemmaForConditionalGeneration)
void build_ernie(GraphBuilder& b, const TransformerSpec& s);  // engine/arch/encoders/ernie.cpp (ErnieForMaskedLM / heads)
void build_mllama(GraphBuilder& b, const TransformerSpec& s);      // engine/arch/vlm/mllama.cpp (MllamaForConditionalGeneration / MllamaForCausalLM)
void build_internvl(GraphBuilder& b, const TransformerSpec& s);    // engine/arch/vlm/internvl.cpp (InternVLForConditionalGeneration)
void build_jamba(GraphBuilder& b, const TransformerSpec& s);       // engine/arch/ssm/jamba.cpp
void build_qwen2_audio(GraphBuilder& b, const TransformerSpec& s);  // engine/arch/audio/qwen2_audio.cpp (Qwen2AudioForConditionalGeneration)
void build_resnet(GraphBuilder& b, const VisionSpec& s);
void build_vit(GraphBuilder& b, const VisionSpec& s);
void build_vision(GraphBuilder& b, const VisionSpec& s);  // by family (engine/arch/vision/vision.cpp)
// The torchvision model file a family mirrors, as `memplan models` names it: "resnet", "vit", "convnext", ...
const char* vision_family_name(VisionSpec::Family f);

// The family a model's measurements speak for: the builder that replays it, named by the first model_type
// transformer_builder maps to that builder ("llama" for mistral / qwen2 / mixtral, "roberta" for xlm-roberta and
// camembert, "beit" for data2vec-vision); "torchvision/<file>" for a torchvision model (vision_family_name);
// "native" for a native graph. The verdict's error bands ask whether this family has measured cases
// (engine/verdict.h).
std::string model_family(const ModelSpec& m);

// Shared pieces of HF causal LMs.
// ForCausalLMLoss: logits.float(), labels padded by one and shifted (.contiguous()), cross entropy (mean).
TensorId causal_lm_loss(GraphBuilder& b, TensorId logits, TensorId labels);
// The training tail of a CausalLM forward: lm_head over the final hidden states (with `bias`; `logits_op` applied
// to its output, a rebinding statement), the model's end, ForCausalLMLoss against the input ids, the autocast
// cache cleared, the loss set. The forward keeps hidden_states bound until it returns, after the loss (traces).
void causal_lm_training_head(GraphBuilder& b, TensorId hidden, TensorId head_weight, TensorId ids,
                             TensorId bias = kNoTensor, TensorId (*logits_op)(GraphBuilder&, TensorId) = nullptr);
// The end of a CausalLM forward once the final norm has returned its output `hidden` (the model's locals dropped
// by the caller): lm_head, "lm_head.weight" [V, H] (trainable unless cfg.freeze_embeddings), or the embedding
// `embed` itself when s.tie_word_embeddings, where nn.Linear creates the head's own weight before tie_weights()
// replaces it (a construction temporary of the embedding's size, whole runs); "lm_head.bias" [V] after the weight
// when `head_bias` (phi). Then inference_head in inference, causal_lm_training_head against `ids` in training,
// `logits_op` applied to lm_head's output in both. With cfg.task seq_cls / token_cls: decoder_cls_head instead
// (no lm_head, no tied head's temporary).
void causal_lm_tail(GraphBuilder& b, const TransformerSpec& s, TensorId hidden, TensorId embed, TensorId ids,
                    bool head_bias = false, TensorId (*logits_op)(GraphBuilder&, TensorId) = nullptr);
// causal_lm_tail's end for builders that registered lm_head's weight `head` (and `bias`) with the other parameters
// (gpt_bigcode, gptj): the tied embedding's construction temporary, then inference_head / causal_lm_training_head.
// Task::lm only (their classification classes have no lm_head; a task for them needs the head chosen before the
// parameters are registered).
void causal_lm_head_forward(GraphBuilder& b, const TransformerSpec& s, TensorId hidden, TensorId embed, TensorId head,
                            TensorId ids, TensorId bias = kNoTensor,
                            TensorId (*logits_op)(GraphBuilder&, TensorId) = nullptr);
// The classification heads of decoder-only models (engine/arch/decoders/parts/heads_decoder.cpp), in place of the CausalLM head
// when cfg.task is seq_cls or token_cls: "score.weight" [num_labels, H] (and "score.bias" for token_cls with
// s.token_cls_bias), the head's forward over the last hidden state `hidden`, its loss against `labels` (made by
// task_labels when kNoTensor), the autocast cache cleared, the loss set. transformers 5.17
// GenericForSequenceClassification / GenericForTokenClassification and GPT2ForSequenceClassification; refuses
// (InputError) seq_cls without s.has_pad_token_id at batch size > 1, regression and multi-label problem types.
// causal_lm_tail calls it; a builder that does not end in causal_lm_tail (gpt2) calls it itself.
void decoder_cls_head(GraphBuilder& b, const TransformerSpec& s, TensorId hidden, TensorId ids,
                      TensorId labels = kNoTensor);
// The labels a head's loss reads: `ids` itself for Task::lm (the masked-LM heads score the inputs; the causal heads
// their shifted copy), else a fresh int64 input, [B] for seq_cls or [B, S] for token_cls, made right after the input
// ids (a training batch: the ids, then the labels; inputs are allocated in creation order at the step's start).
// Inference passes no labels: kNoTensor for every task but lm (ids, unread).
TensorId task_labels(GraphBuilder& b, TensorId ids);
// Refuses (InputError naming config.problem_type or num_labels) a sequence-classification loss other than cross
// entropy: problem_type "regression" (MSELoss; also what num_labels == 1 picks when problem_type is None) or
// "multi_label_classification" (BCEWithLogitsLoss over float labels). Neither was measured. No-op for other tasks.
void check_cls_loss(const GraphBuilder& b, const TransformerSpec& s);
// LlamaRMSNorm as written in Python: x.to(f32), pow(2).mean(-1), x * rsqrt(var + eps), weight * x.to(input dtype),
// one kernel per step. Shared by llama.cpp and native graphs' rms_norm, and by the modeling files that copy it
// (Qwen3RMSNorm, Exaone4RMSNorm). `held_input`: the caller's frame binds x (the call's argument) until the norm
// returns, for an input nothing else holds (a projection's head view, the attention's or the MLP's output;
// measured in the olmo2 whole-run streams, olmo2.cpp).
TensorId rms_norm(GraphBuilder& b, TensorId x, TensorId w, bool held_input = false);
// Whether layer `i` is activation-checkpointed / frozen under `cfg`.
bool layer_checkpointed(const RunConfig& cfg, int64_t i);
bool layer_frozen(const RunConfig& cfg, int64_t i);

// ACT2FN["gelu_new"] (NewGELUActivation): the tanh formula written out in Python, each operator a kernel of its own
// (x^3, two scalar products, a sum, tanh saving its result, 1 + t, the final product): gpt2, t5, phi.
TensorId gelu_new(GraphBuilder& b, TensorId x);
// The attention implementation from_config picks when none is asked for (transformers 5.17): sdpa where the
// model class supports it (`_supports_sdpa`), else eager (gptj, bloom, gpt_oss). Vision and native models: sdpa.
AttnImpl default_attn(const ModelSpec& spec);
// Whether the model reads images from the run (RunConfig::images_per_sample, image_grid, image_splits, image_hw,
// image_tiles): the vision-language models and SigLIP 2's NaFlex grid (kImageModelTypes). The case reader and the
// CLI refuse those keys and flags on any other model; each builder refuses the ones it does not read (image_grid
// for llava ...).
bool takes_images(const TransformerSpec& s);
inline constexpr const char* kImageModelTypes =
    "qwen2_vl, qwen2_5_vl, qwen3_vl, qwen3_vl_moe, siglip2, idefics3, smolvlm, llava, paligemma, llava_next, llava_onevision, mllama, internvl";
// The longest input sequence the model's position table holds (0: no table bounds it; rotary and relative
// positions): learned absolute positions (gpt2, the bert family, `learned_positions`: GPT-J, OPT, GPT-Neo,
// StarCoder, Marian / Pegasus, mBART, ESM-1b) hold max_position_embeddings - position_id_offset tokens (ESM-2's
// rotary positions: 0); BART's table
// max_position_embeddings (its offset rows come on top); M2M-100 / NLLB's sinusoidal table the positions from
// pad_token_id + 1 up to its max_position_embeddings + 2 rows. The estimate refuses a longer seq_len naming it;
// the CLI's default sequence stays within it.
int64_t position_limit(const TransformerSpec& s);
// Whether the builder of `model_type` replays `task`'s head (Task::lm: every family). A new (type, task) pair is
// one row of the table in common.cpp, added with the measured cases that pin it.
bool task_modelled(std::string_view model_type, Task task);
// Refuses (InputError naming `task` / `num_labels`) a task the model's builder does not replay, a non-positive
// num_labels, a vision or native model with a task, and inference with one. Called before every graph build.
void check_task(const ModelSpec& spec, const RunConfig& cfg);
// ---- inference (GraphBuilder::pass())
// One inference forward of `spec` (cfg.mode must be inference). Forward-only models (forward_only_inference) are
// built with pass {0, seq_len, false}, the one forward they run.
Graph build_inference_graph(const ModelSpec& spec, const RunConfig& cfg, const InferencePass& pass);
// Whether inference of `spec` is one forward of the batch with no KV cache and no generate() (replay_inference's
// forward-only pass; the harness's _infer_forward): the encoders (bert, roberta, xlm-roberta, camembert, electra,
// distilbert, modernbert, deberta-v2, albert, mpnet) with every head (lm: the masked-LM head, seq_cls, token_cls,
// feature), the Hugging Face image classifiers (vit, dinov2, deit), the contrastive image-text models (clip, siglip,
// siglip2: the forward without the loss) and the torchvision models.
bool forward_only_inference(const ModelSpec& spec);
// The end of a forward-only inference pass: the model output's tensors (`outputs`, kNoTensor skipped) stay bound
// until the forward returns (the harness drops them after reading its peak); marks the model's end. A builder
// calls it instead of its loss when !b.training().
void forward_output(GraphBuilder& b, std::initializer_list<TensorId> outputs);
// DynamicLayer.update (transformers 5.17 cache_utils.py): keys = torch.cat([keys, k], dim=-2), then the same
// for values; the prefill cats onto an empty tensor, so even then the cache is a fresh copy. Every decode step
// reallocates each layer's K and V (old and new live together during the cat). DynamicSlidingWindowLayer
// (window > 0) cats the same way but keeps only `full[:, :, -window + 1:]`, a view: the storage of the whole
// cat stays alive, so after a long prefill it holds every prompt token until the first decode step replaces it
// with a window-sized one. Returns the full (key, value) states the attention uses.
std::pair<TensorId, TensorId> kv_update(GraphBuilder& b, TensorId k, TensorId v, int64_t window);
// Every transformers model built from a config on the device allocates one element of the default dtype before
// its first parameter and keeps it for the run (every whole-run HF recording starts with a 2-byte bf16 or a
// 4-byte fp32 block; torchvision models do not). It opens the first, small-pool segment, which cudaMalloc
// places above everything else, so the large segments' addresses (and best-fit ties) depend on it.
void hf_construction_scalar(GraphBuilder& b);
// The attention mask transformers 5.17 materialises for one attention type, or kNoTensor when SDPA may skip it
// (_ignore_causal_mask_sdpa: full causal with query == kv length or one query, and kv shorter than the window).
// SDPA: a bool [P, 1, q, kv] mask (P = B when generate() passes its attention_mask, else 1: expanded view);
// eager: always materialised in the model dtype (eager_mask).
TensorId inference_mask(GraphBuilder& b, int64_t window, DType model_dtype);
// The float mask eager attention adds: a [bool_rows, 1, q, kv] bool mask, then the batch-expanded
// [B, 1, q, kv] additive mask in `dtype` built from it, the bool freed at once (whole-run streams: GPT-2 small
// training, Llama-3.2-1B inference prefill, 4 MiB bool then 32 MiB bf16 for b4 s2048).
TensorId eager_mask(GraphBuilder& b, int64_t bool_rows, int64_t q, int64_t kv, DType dtype);
// The SDPA sliding-window bool mask as masking_utils.sdpa_mask evaluates sliding_window_causal_mask_function =
// and_masks(sliding_window_overlay, causal_mask_function) on broadcast index tensors (model-independent code):
// ones(()) & (kv > q - window), then & (kv <= q), each comparison and each & a fresh [1, 1, q, kv] bool; inside
// generate() (rows > 1) the padding mask adds & a [rows, 1, 1, kv] gather, giving [rows, 1, q, kv]. Whole-run
// gemma3 streams: 1 MiB a, a, f, a, a, f, f for s1024. Used by gemma_parts, qwen3 and exaone4; phi_parts keeps its
// own (generate() nests one more & there).
TensorId sliding_sdpa_mask(GraphBuilder& b, int64_t rows, int64_t q, int64_t kv);
// create_sliding_window_causal_mask in one inference pass (window > 0): eager, inference_mask's float mask; SDPA,
// skipped as inference_mask decides, else sliding_sdpa_mask over [rows, 1, q, kv] (rows = B inside generate()).
TensorId inference_sliding_mask(GraphBuilder& b, int64_t window, DType model_dtype);
// causal_mask_mapping of a model with full and sliding layers (qwen3, exaone4), or create_causal_mask alone
// (want_full, no sliding: olmo, olmo2, ernie4_5, gpt_bigcode), made before the rotary / position embedding and held
// until the model's forward returns: the full mask when `want_full`, the sliding one when `any_sliding`
// (s.sliding_window). Training: eager materialises each as a float mask; SDPA skips the full one and the sliding
// one while the window covers the sequence (_ignore_causal_mask_sdpa), else sliding_sdpa_mask. Inference:
// inference_mask / inference_sliding_mask. Each is kNoTensor where not made.
struct CausalMasks {
  TensorId full = kNoTensor, sliding = kNoTensor;
};
CausalMasks full_and_sliding_masks(GraphBuilder& b, const TransformerSpec& s, bool want_full, bool any_sliding,
                                   DType model_dtype);
// lm_head over hidden[:, -logits_to_keep:, :] (a view); the logits stay referenced by the output to the end.
TensorId inference_head(GraphBuilder& b, TensorId hidden, TensorId head_weight, TensorId bias = kNoTensor,
                        TensorId (*logits_op)(GraphBuilder&, TensorId) = nullptr);

}  // namespace memplan
