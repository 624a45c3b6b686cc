#include "engine/inference_replay.h"

#include <cassert>
#include <climits>
#include <string>

#include "engine/arch/builders.h"
#include "engine/checked.h"
#include "engine/errors.h"

namespace memplan {

namespace {

// Runs inference Graphs (one per forward) against one MemoryTracker. Weights are allocated once and bound to
// every Graph's parameters by creation order (the builders create them identically for every pass); KV slots
// carry their storages from one pass to the next.
class PassRunner {
 public:
  PassRunner(MemoryTracker& mem, const InferenceReplayOptions& opt) : mem_(mem), opt_(opt) {}

  // on_device: construction's own tensors too (RunConfig::weights_load); model.to("cuda") moves only the
  // parameters and buffers.
  void allocate_weights(const Graph& g, bool on_device) {
    if (on_device)
      for (int64_t b : g.build_persistent_bytes) weights_.push_back(mem_.alloc(b, Row::weights));
    for (const auto& t : g.tensors)
      if (t.kind == TensorKind::param || t.kind == TensorKind::buffer) weights_.push_back(mem_.alloc(t.bytes, Row::weights));
    // all alive together until construction drops them (as in step_replay.cpp: T5's two embed_tokens and lm_head)
    if (on_device) mem_.transients_together(g.build_temp_bytes);
  }

  // Runs one forward. Returns the blocks still referenced at its end that the cache does not own (the model
  // output: logits), left live for the caller to free. `bound_inputs`: blocks the caller allocated for the graph's
  // inputs (in creation order) and keeps across forwards; null: the forward allocates its inputs.
  std::vector<int32_t> run(const Graph& g, const std::vector<int32_t>* bound_inputs = nullptr) {
    const size_t n = g.tensors.size();
    refs_.assign(n, 0);
    block_.assign(n, -1);
    std::vector<bool> cache_storage(n, false);
    for (TensorId t : g.cache_out) cache_storage[static_cast<size_t>(storage(g, t))] = true;
    std::vector<std::vector<TensorId>> releases(g.ops.size());
    size_t w = 0;
    for (size_t t = 0; t < n; ++t) {
      const auto& ti = g.tensors[t];
      if (ti.kind == TensorKind::param || ti.kind == TensorKind::buffer) {
        assert(w < weights_.size() && "passes must create the same parameters");
        block_[t] = weights_[w++];
        refs_[t] = INT32_MAX / 2;
        continue;
      }
      const int32_t r = g.py_release_op[t];
      if (r >= 0 && r < static_cast<int32_t>(g.ops.size())) releases[static_cast<size_t>(r)].push_back(static_cast<TensorId>(t));
    }
    if (slots_.size() < g.cache_out.size()) slots_.resize(g.cache_out.size(), -1);
    for (size_t j = 0; j < g.cache_in.size(); ++j) {
      const TensorId t = g.cache_in[j];
      if (t == kNoTensor) continue;
      assert(slots_[j] >= 0 && "a decode pass reads a slot no earlier pass filled");
      block_[static_cast<size_t>(t)] = slots_[j];
      refs_[static_cast<size_t>(t)] = 1;  // the cache's reference, dropped when the update rebinds the slot
      slots_[j] = -1;
    }
    size_t next_input = 0;
    for (size_t t = 0; t < n; ++t) {
      if (g.tensors[t].kind != TensorKind::input) continue;
      if (!bound_inputs) {
        create(g, static_cast<TensorId>(t), Row::inputs);
        continue;
      }
      assert(next_input < bound_inputs->size() && "one bound block per input");
      block_[t] = (*bound_inputs)[next_input++];
      refs_[t] = INT32_MAX / 2;  // the caller's: never freed by the forward
    }
    for (size_t i = 0; i < g.ops.size(); ++i) {
      const Op& op = g.ops[i];
      mem_.here.op = static_cast<int32_t>(i);
      for (TensorId o : op.outs)
        create(g, o, cache_storage[static_cast<size_t>(storage(g, o))] ? Row::kv_cache : Row::transient);
      workspaces(g.name_of(op.name));  // once the GEMM's output exists (whole-run streams, as in training)
      for (int64_t b : op.fwd_temp_bytes) mem_.workspace(b, op.optional_workspaces);
      for (TensorId t : releases[i]) unref(g, t);
    }
    mem_.here.op = -1;
    for (size_t j = 0; j < g.cache_out.size(); ++j) {
      const auto s = static_cast<size_t>(storage(g, g.cache_out[j]));
      assert(block_[s] >= 0);
      slots_[j] = block_[s];
      block_[s] = -1;  // ownership moves to the cache
    }
    std::vector<int32_t> left;
    for (size_t t = 0; t < n; ++t) {
      const auto& ti = g.tensors[t];
      if (ti.kind == TensorKind::param || ti.kind == TensorKind::buffer) continue;
      if (bound_inputs && ti.kind == TensorKind::input) continue;
      if (block_[t] >= 0 && refs_[t] > 0) left.push_back(block_[t]);
    }
    return left;
  }

  void free_cache() {
    for (int32_t& b : slots_)
      if (b >= 0) { mem_.free(b); b = -1; }
  }

 private:
  static TensorId storage(const Graph& g, TensorId t) { return g.tensors[static_cast<size_t>(t)].storage; }
  void create(const Graph& g, TensorId t, Row row) {
    const auto s = static_cast<size_t>(storage(g, t));
    if (s == static_cast<size_t>(t) && block_[s] < 0) block_[s] = mem_.alloc(g.tensors[s].bytes, row);
    ++refs_[s];
  }
  void unref(const Graph& g, TensorId t) {
    const auto s = static_cast<size_t>(storage(g, t));
    assert(refs_[s] > 0);
    if (--refs_[s] == 0 && block_[s] >= 0) {
      mem_.free(block_[s]);
      block_[s] = -1;
    }
  }
  void workspaces(const std::string& op) {
    const bool gemm = op == "linear" || op == "addmm" || op == "matmul";
    if (gemm && !gemm_ws_) {
      gemm_ws_ = true;
      mem_.alloc(opt_.cublas_workspace_bytes, Row::library_workspace);
    }
    if (op == "addmm" && !lt_ws_) {
      lt_ws_ = true;
      mem_.alloc(opt_.cublaslt_workspace_bytes, Row::library_workspace);
    }
  }

  MemoryTracker& mem_;
  const InferenceReplayOptions& opt_;
  std::vector<int32_t> weights_, slots_, refs_, block_;
  bool gemm_ws_ = false, lt_ws_ = false;
};

// The forward-only run (forward_only_inference): weights, the batch (allocated once, kept), the measured forward
// (its output dropped after it), then opt.forward_repeats more forwards as the harness times them.
InferenceResult replay_forward_only(const ModelSpec& spec, const RunConfig& cfg, const InferenceReplayOptions& opt) {
  if (cfg.generate_tokens != 0) {
    const std::string what = spec.kind == ModelSpec::Kind::transformer ? spec.transformer.model_type : spec.name;
    throw InputError("generate_tokens", std::to_string(cfg.generate_tokens),
                     "does not apply to " + what + ": its inference is one forward of the batch (no KV cache, no "
                     "generate()); use 0");
  }
  if (opt.forward_repeats < 0)
    throw InputError("forward_repeats", std::to_string(opt.forward_repeats), "must be non-negative");
  InferenceResult res;
  MemoryTracker mem;
  PassRunner runner(mem, opt);
  // The measured forward is the process's first (InferencePass::first_call); the timed ones repeat the second graph.
  const Graph first = build_inference_graph(spec, cfg, InferencePass{0, cfg.seq_len, false, true});
  const Graph g = build_inference_graph(spec, cfg, InferencePass{0, cfg.seq_len, false, false});
  mem.here = Location{0, 0, Phase::build, -1, false};
  runner.allocate_weights(first, cfg.weights_load == WeightsLoad::on_device);
  res.weights_bytes = mem.current_bytes();
  res.first_pass_event = mem.event_count();
  // The batch: token ids [B, S] (or images), made once before the measured forward and kept by the caller.
  std::vector<int32_t> inputs;
  for (const auto& t : g.tensors)
    if (t.kind == TensorKind::input) inputs.push_back(mem.alloc(t.bytes, Row::inputs));
  for (int64_t i = 0; i <= opt.forward_repeats; ++i) {
    mem.here = Location{static_cast<int32_t>(i), 0, Phase::prefill, -1, false};
    mem.reset_peak();
    if (i == 0) res.prefill_begin_event = mem.event_count();
    for (int32_t b : runner.run(i == 0 ? first : g, &inputs)) mem.free(b);  // del out
    if (i == 0) {
      res.prefill_peak = mem.peak();
      res.prefill_peak_bytes = res.prefill_peak.bytes;
      res.measured_end_event = mem.event_count();
    }
  }
  for (int32_t b : inputs) mem.free(b);
  res.forward_only = true;
  // The harness's peak allocated is the measured forward's: a library workspace the first forward creates after
  // its peak (a CNN's cuBLAS workspace at its classifier) stays for the timed forwards and raises theirs, which
  // only the reserved peak covers (whole-run ResNet-50 / EfficientNet-B0 / DenseNet-121 streams: +33 MiB).
  res.peak = res.prefill_peak;
  res.events = mem.take_events();
  return res;
}

int64_t bytes_of(std::initializer_list<int64_t> dims, int64_t elem) {
  int64_t n = elem;
  for (int64_t d : dims) n = checked_mul(n, d, "generate buffer bytes");
  return n;
}

}  // namespace

bool no_cache_generate_modelled(const ModelSpec& spec) {
  if (spec.kind != ModelSpec::Kind::transformer) return false;
  const TransformerSpec& ts = spec.transformer;
  if (ts.num_experts > 0) return false;
  static const char* const kTypes[] = {"gpt2", "llama", "mistral", "qwen2", "qwen3", "gpt_neox", "phi3", "opt", "mpt"};
  for (const char* t : kTypes)
    if (ts.model_type == t) return true;
  return false;
}

InferenceResult replay_inference(const ModelSpec& spec, const RunConfig& cfg, const InferenceReplayOptions& opt) {
  if (cfg.mode != Mode::inference) throw InputError("mode", "training", "replay_inference needs mode inference");
  if (cfg.generate_tokens < 0)
    throw InputError("generate_tokens", std::to_string(cfg.generate_tokens), "must be non-negative");
  if (forward_only_inference(spec)) return replay_forward_only(spec, cfg, opt);
  if (cfg.seq_len <= 0) throw InputError("seq_len", std::to_string(cfg.seq_len), "must be a positive prompt length");
  InferenceResult res;
  MemoryTracker mem;
  PassRunner runner(mem, opt);
  const int64_t B = cfg.batch_size, S = cfg.seq_len, V = spec.transformer.vocab_size;

  Graph prefill = build_inference_graph(spec, cfg, InferencePass{0, S, false});
  mem.here = Location{0, 0, Phase::build, -1, false};
  runner.allocate_weights(prefill, cfg.weights_load == WeightsLoad::on_device);
  res.weights_bytes = mem.current_bytes();
  res.first_pass_event = mem.event_count();

  // The measured prefill (stage 2) and generate() (stage 3), in the run's order (RunConfig::generate_first).
  const auto measured_prefill = [&] {
    mem.here = Location{0, 0, Phase::prefill, -1, false};
    mem.reset_peak();
    const int64_t before = mem.current_bytes();
    for (int32_t b : runner.run(prefill)) mem.free(b);  // the harness drops the logits
    res.prefill_peak = mem.peak();
    res.prefill_peak_bytes = res.prefill_peak.bytes;
    res.kv_cache_bytes = mem.current_bytes() - before;
    res.prefill_end_event = mem.event_count();
    res.kv_cache_entries_bytes = mem.ledger()[Row::kv_cache];
    runner.free_cache();
  };
  const auto generate = [&] {
    mem.here = Location{1, 0, Phase::prefill, -1, false};
    mem.reset_peak();
    // generate(): attention_mask of ones, cache_position, unfinished_sequences; input_ids is the caller's.
    // An encoder-decoder replayed exactly (TransformerSpec::generate_decoder_prompt > 0): the caller's encoder
    // input (the measured prefill's first input) stays bound, input_ids are decoder_input_ids [B, prompt], and no
    // attention mask is made.
    const TransformerSpec& ts = spec.transformer;
    const int64_t prompt = ts.generate_decoder_prompt;
    int32_t caller = -1, attn = -1, ids = -1;
    if (prompt > 0) {
      for (const auto& t : prefill.tensors)
        if (t.kind == TensorKind::input) {
          caller = mem.alloc(t.bytes, Row::inputs);
          break;
        }
      ids = mem.alloc(bytes_of({B, prompt}, 8), Row::inputs);
    } else {
      ids = mem.alloc(bytes_of({B, S}, 8), Row::inputs);
      attn = mem.alloc(bytes_of({B, S}, 8), Row::inputs);
    }
    const int32_t cache_pos = mem.alloc(bytes_of({prompt > 0 ? prompt : S}, 8), Row::inputs);
    const int32_t unfinished = mem.alloc(bytes_of({B}, 8), Row::inputs);
    int64_t decode_peak = 0;
    int32_t prev_scores = -1, prev_processed = -1;  // the loop variables next_token_logits / next_token_scores
    const bool no_cache = !ts.config_use_cache && no_cache_generate_modelled(spec);
    res.generate_without_cache = no_cache;
    for (int64_t step = 0; step < cfg.generate_tokens; ++step) {
      const int64_t len = S + step;  // tokens in input_ids before this step's token is appended
      InferencePass pass = step == 0 ? InferencePass{0, S, true} : InferencePass{len - 1, 1, true};
      if (no_cache) {  // past_key_values None: the whole sequence again, nothing cached
        pass = InferencePass{0, len, true};
        pass.use_cache = false;
      }
      mem.here = Location{static_cast<int32_t>(step + 1), 0, step == 0 ? Phase::prefill : Phase::decode, -1, false};
      if (step > 0) mem.reset_window();
      const Graph g = build_inference_graph(spec, cfg, pass);
      const std::vector<int32_t> outputs = runner.run(g);
      // next_token_logits = logits[:, -1, :].to(float32, copy=True), then the logits processors. With an EOS id
      // and the harness's min_new_tokens, generate() builds two (_prepare_generated_length also sets min_length):
      // MinLengthLogitsProcessor (arange [V], isin [V] bool, scores.clone(), torch.where: the clone dies on the
      // rebind) and MinNewTokensLengthLogitsProcessor (clone first, then arange, isin, where); the list frees the
      // first's result when the second returns. next_token_logits and next_token_scores are _sample's loop
      // variables: the previous step's die only when the new ones are bound, so they live through this step's
      // forward. Five [B, V] fp32 blocks a step, five live at once (whole-run generate streams of marian, bart,
      // llama4, granitemoe: notes-f15/marian.md; the peak of a small model with a large vocabulary lies there:
      // Opus-MT -3.9 % allocated, -8.5 % reserved with one processor and the step's blocks freed at its end).
      // No processor without an EOS id (whole-run glm4_moe generate stream, eos_token_id None): the scores are
      // the logits copy itself.
      const int32_t scores = mem.alloc(bytes_of({B, V}, 4), Row::transient);
      if (prev_scores >= 0) mem.free(prev_scores);
      prev_scores = scores;
      std::vector<int32_t> step_blocks;
      int32_t cur = -1;  // the processors' current output (-1: the scores themselves)
      if (!spec.transformer.generate_without_eos) {
        const int32_t vocab1 = mem.alloc(bytes_of({V}, 8), Row::transient);
        const int32_t mask1 = mem.alloc(bytes_of({V}, 1), Row::transient);
        const int32_t clone1 = mem.alloc(bytes_of({B, V}, 4), Row::transient);
        const int32_t min_length_out = mem.alloc(bytes_of({B, V}, 4), Row::transient);
        mem.free(clone1);
        mem.free(mask1);
        mem.free(vocab1);
        const int32_t clone2 = mem.alloc(bytes_of({B, V}, 4), Row::transient);
        const int32_t vocab2 = mem.alloc(bytes_of({V}, 8), Row::transient);
        const int32_t mask2 = mem.alloc(bytes_of({V}, 1), Row::transient);
        const int32_t processed = mem.alloc(bytes_of({B, V}, 4), Row::transient);
        mem.free(clone2);
        mem.free(mask2);
        mem.free(vocab2);
        mem.free(min_length_out);
        cur = processed;
      }
      // The processors after those (TransformerSpec [whisper / mbart generate]): each one's locals die as it
      // returns, then the list's rebinding frees the scores it replaced (unless they are next_token_logits).
      const auto replace = [&](int32_t out) {
        if (cur >= 0) mem.free(cur);
        cur = out;
      };
      const auto suppress = [&](bool where) {  // arange(V), isin, [torch.where]
        const int32_t vocab = mem.alloc(bytes_of({V}, 8), Row::transient);
        const int32_t mask = mem.alloc(bytes_of({V}, 1), Row::transient);
        const int32_t out = where ? mem.alloc(bytes_of({B, V}, 4), Row::transient) : -1;
        mem.free(mask);
        mem.free(vocab);
        if (out >= 0) replace(out);
      };
      if (ts.generate_begin_suppress) suppress(step == 0);
      if (ts.generate_suppress) suppress(true);
      if (ts.generate_forced_eos && step == cfg.generate_tokens - 1)
        replace(mem.alloc(bytes_of({B, V}, 4), Row::transient));  // full_like, the EOS column written in place
      // next_token_scores rebound: the previous step's processed scores die
      if (prev_processed >= 0) mem.free(prev_processed);
      prev_processed = cur;
      const int32_t next = mem.alloc(bytes_of({B}, 8), Row::transient);  // argmax
      step_blocks.push_back(next);
      const int64_t ids_len = prompt > 0 ? prompt + step : len;
      const int32_t new_ids = mem.alloc(bytes_of({B, ids_len + 1}, 8), Row::inputs);
      mem.free(ids);
      ids = new_ids;
      if (attn >= 0) {
        const int32_t new_attn = mem.alloc(bytes_of({B, len + 1}, 8), Row::inputs);
        mem.free(attn);
        attn = new_attn;
      }
      for (int32_t b : outputs) mem.free(b);  // del outputs
      for (int32_t b : step_blocks) mem.free(b);
      if (step > 0) decode_peak = std::max(decode_peak, mem.window_peak());
    }
    for (int32_t b : {prev_scores, prev_processed})  // generate() returns: its locals die
      if (b >= 0) mem.free(b);
    res.generate_peak = mem.peak();
    res.generate_peak_bytes = res.generate_peak.bytes;
    res.decode_peak_bytes = decode_peak;
    res.final_kv_entries_bytes = mem.ledger()[Row::kv_cache];
    runner.free_cache();
    for (int32_t b : {ids, attn, cache_pos, unfinished, caller})
      if (b >= 0) mem.free(b);
  };
  PeakInfo run_peak = mem.peak();  // the weights alone
  const auto keep_max = [&run_peak](const PeakInfo& p) { if (p.bytes > run_peak.bytes) run_peak = p; };
  // Encoder-decoders keep the measured prefill first (the harness runs T5 that way: CASE-FORMAT.md).
  const bool gen_first = cfg.generate_first && cfg.generate_tokens > 0 &&
                         spec.transformer.family != TransformerSpec::Family::t5;
  if (gen_first) {
    generate();
    keep_max(res.generate_peak);
  }
  if (opt.measured_prefill) {
    res.prefill_begin_event = mem.event_count();
    measured_prefill();
    keep_max(res.prefill_peak);
  }
  if (!gen_first && cfg.generate_tokens > 0) {
    generate();
    keep_max(res.generate_peak);
  }
  res.peak = run_peak;
  res.events = mem.take_events();
  return res;
}

}  // namespace memplan
