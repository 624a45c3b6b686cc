// Fidelity against measured H200 runs (data/validation/*.jsonl; independent ground truth, never produced by
// this code). Bars (issue 2 / issue 5): every training case's peak allocated within +-3 % of measured, the
// median |error| <= 1 %, and the steady-state step's after_fwd and opt_peak within +-5 %; capped cases get
// the right fit verdict. The corpus is checked with the same bars, and its holdout cases (never used to tune
// a mechanism) are reported separately.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include <catch2/catch.hpp>

#include "engine/checked.h"
#include "engine/estimate.h"
#include "families/family_test_helpers.h"
#include "fidelity_cases.h"

using namespace memplan;

namespace {

double mib(int64_t b) { return static_cast<double>(b) / static_cast<double>(kMiB); }
double err_pct(double pred, double meas) { return 100.0 * (pred - meas) / meas; }


struct Summary {
  std::vector<double> abs_err;
  double median() const {
    if (abs_err.empty()) return 0;
    auto v = abs_err;
    std::sort(v.begin(), v.end());
    return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
  }
  double max() const { return abs_err.empty() ? 0 : *std::max_element(abs_err.begin(), abs_err.end()); }
};

// Cases whose miss is understood but not yet modelled; each is explained in data/validation/NOTES.md. They are
// held to their own bar (and must still miss the 1 % bar, so a fix forces this list to shrink).
double known_miss_bound(const std::string& id) {
  static const struct {
    const char* id;
    double bound_pct;
  } kKnown[] = {
      // holdout: GradScaler skipped the first steps (fp16 overflow at scale 2^16), so no momentum buffers existed
      // at the measured step; whether a step overflows depends on the data, not on shapes.
      {"resnet50-ampfp16-sgdmom-b24", 8.0},
      // held out (family set 20): GradScaler skipped the first two of three steps (opt_peak = after_bwd in steps 1
      // and 2), so no micro-batch ran with AdamW state allocated; the step that did step matched (opt_peak 36118.3
      // MiB measured, 36117.4 predicted). The replay's steady step holds the state through its micro-batches.
      {"f20-q35m128-ampfp16-b3s1000-acc2-2l", 15.2},
      // h200-families.jsonl (NOTES.md, "The issue 12 families"): the same GradScaler skip (no momentum buffers at
      // the measured step: the fp32 weights' 110 MiB); its bf16 twin f3-swin_v2_t is -0.05 %.
      {"vreq2-swin_v2_t-ampfp16-sgdmom-b16", 8.0},
      // cuDNN workspaces of the new torchvision convs were measured at 224 x 224 only and are rescaled by pixel
      // count at other sizes; for these 1x1 / depthwise backward passes the real workspace scales with batch x
      // the fp32 weight instead (mobilenet_v2 320 -> 1280 at 5x5: 150 MiB recorded, 77 predicted).
      {"f2-mobilenet_v2-ampbf16-sgdmom-b96-i160", 4.0},
      {"vreq2-mobilenet_v3_large-ampbf16-sgdmom-b64-i160", 3.0},
      {"vreq2-efficientnet_b2-ampbf16-adamw-b16-i288", 2.0},
      // generate()'s logits processors (notes-f15/marian.md): the two min-length processors and the loop variables
      // living into the next step are replayed (-2.2 % -> -0.45 %); left: the replay frees the step's [B, 1, V]
      // logits before the processors, the recording at `del outputs` (event diff; not traced further). Marian's
      // peak lies in generate() (small weights, large vocabulary).
      {"f15-marian-infer-bf16-b8s128-g32", 1.0},
      // Family set 21 (notes-f21/audio.md): GradScaler skipped steps 1 and 2 of the amp fp16 WavLM CTC row, so its
      // peak (step 3's forward) ran without AdamW state; the recording's run (all three steps skipped) peaks where
      // the replay less the state does, to 0.1 MiB.
      {"f21-wlm-baseplus-ctc-ampfp16-b4-s160000", 28.0},
      // Family set 26, held out: HF ConvNeXt-B at 384 px, amp fp16 b6: GradScaler skipped all three steps
      // (opt_peak = after_bwd, end = weights + 65 MiB: AdamW's state was never created); its amp bf16 twin,
      // recorded in the same call, is +0.06 % allocated, and the fp16 recording's stream up to the optimizer matches
      // the replay's.
      {"f26-cnx-b384-ampfp16-b6", 25.0},
  };
  for (const auto& k : kKnown)
    if (id == k.id) return k.bound_pct;
  return 0;
}

// Steady-state phase values a data-dependent GradScaler skip moves while the peak stays within its bar: the
// scaler skipped the first fp16 optimizer steps, so the measured step-2 optimizer had no momentum buffers yet.
// f13-gpt2-seqcls-ampfp16: GradScaler skipped the second step's optimizer step (inf gradients at the initial scale
// 2^16: opt_peak = after_bwd = 1105.2 MiB); steps 1 and 3 ran it (1368.6 / 1366.6 MiB, predicted 1357.0).
// f15-vit384-ampfp16-b16: the same skip at step 2 (opt_peak = after_bwd = 745.9 MiB; steps 1 and 3: 920.0 /
// 918.5 MiB, predicted 896.1; data/validation/notes-f15/vit.md).
// Held out (family set 16, the same skip at step 2): f16-mt5s-ampfp16 (opt_peak = after_bwd = 2697.7 MiB; steps 1
// and 3: 3355.5 / 3358.2, predicted 3346.9) and f16-camembert-tokcls-ampfp16 (894.2; 1097.8 / 1100.7, predicted
// 1082.3).
// f17-dinov2b518-bf16-b8: every event of the run matches in size and order except the patch-14 conv's cuDNN
// workspaces (not in the measured table); they place the
// gradients in other segments, whose unsplit tails memory_allocated counts: after_bwd 424.6 vs 401.1 MiB,
// opt_peak 513.0 vs 485.2 MiB (data/validation/notes-f17/dinov2.md).
// Held out (family set 18): f18-dinov2l518-ampfp16-b4: GradScaler skipped the FIRST step's optimizer step (opt_peak
// = after_bwd = 659.4 MiB), so the measured step 2 starts without AdamW state (start 362.2 MiB, steady 957.9) and
// creates it; step 3 is steady (after_fwd 2569.1, predicted 2556.2; peak 2674.0, predicted 2669.4).
bool known_phase_miss(const std::string& id) {
  return id == "vreq-mobilenet_v2-ampfp16-sgdmom-b32" || id == "f13-gpt2-seqcls-ampfp16-b16s256" ||
         id == "f15-vit384-ampfp16-b16" || id == "f16-mt5s-ampfp16-b12s384t96" ||
         id == "f16-camembert-tokcls-ampfp16-b24s384" || id == "f17-dinov2b518-bf16-b8" ||
         id == "f20-q35m128-ampfp16-b3s1000-acc2-2l";
}

// Rows whose after_fwd phase is a known miss while their peaks are within the bar: Swin's nested checkpoints
// (family set 23, notes-f23/hfvis.md: SwinStage and SwinLayer are both GradientCheckpointingLayers; the run keeps
// each stage's input between forward and backward, memplan every layer's: after_fwd 774.3 vs 627.0 MiB, peak
// allocated +0.03 %).
// Family set 23's Idefics3-2B amp fp16 row, measured blind (peak allocated +0.01 %): after_fwd 15700 vs 11269 MiB,
// not traced (no recording).
bool known_after_fwd_miss(const std::string& id) {
  return id == "f23-swin-b384-bf16-b7-ckpt" || id == "f23-id3-2b-ampfp16-b3s1000-3x3";
}

// Rows whose GradScaler skipped the first step's optimizer step: the measured step 2 creates the optimizer state,
// so step 3 is the steady one the replay's step is checked against (its phases above).
bool first_step_skipped(const std::string& id) { return id == "f18-dinov2l518-ampfp16-b4"; }

void check_file(const std::string& file, bool holdout_only_report) {
  Summary tuned, holdout;
  int verdicts_checked = 0;
  for (const auto& c : testing::load_cases(file)) {
    if (!c.measured) continue;
    const Measured& m = *c.measured;
    if (c.run.mode != Mode::training && !(c.memory_cap_gib && m.oom)) continue;
    const Estimate e = estimate(c.model, c.run, estimate_options_for(c));
    if (c.memory_cap_gib && m.oom) {  // every capped run's verdict (training and inference), no exceptions
      INFO(c.id << ": predicted fits " << e.fits() << ", measured oom " << *m.oom);
      CHECK(e.fits() == !*m.oom);
      ++verdicts_checked;
    }
    if (c.run.mode != Mode::training) continue;
    if (m.oom && *m.oom) continue;
    REQUIRE(m.peak_allocated_mib);
    // As torch.cuda.max_memory_allocated counts: block sizes, unsplit tails included (the allocator replay).
    const double err = err_pct(mib(e.torch_peak_allocated_bytes()), *m.peak_allocated_mib);
    (c.holdout ? holdout : tuned).abs_err.push_back(std::fabs(err));
    INFO(c.id << ": predicted " << mib(e.torch_peak_allocated_bytes()) << " MiB, measured " << *m.peak_allocated_mib
              << " MiB, error " << err << " %");
    if (const double bound = known_miss_bound(c.id); bound > 0) {
      std::printf("known miss (documented in data/validation/NOTES.md): %s %+.2f%%\n", c.id.c_str(), err);
      CHECK(std::fabs(err) <= bound);
      CHECK(std::fabs(err) > 1.0);  // fixed? then remove it from the list
      continue;
    }
    CHECK(std::fabs(err) <= 1.0);
    if (m.steps.size() >= 2) {
      const auto& ms = first_step_skipped(c.id) && m.steps.size() >= 3 ? m.steps[2] : m.steps[1];
      const auto& ps = e.replay.steps.back();
      INFO("after_fwd predicted " << mib(ps.after_fwd) << " measured " << ms.after_fwd_mib);
      if (!known_after_fwd_miss(c.id)) CHECK(std::fabs(err_pct(mib(ps.after_fwd), ms.after_fwd_mib)) <= 5.0);
      INFO("opt_peak predicted " << mib(ps.opt_peak) << " measured " << ms.opt_peak_mib);
      if (!known_phase_miss(c.id)) CHECK(std::fabs(err_pct(mib(ps.opt_peak), ms.opt_peak_mib)) <= 5.0);
    }
    if (m.params) CHECK(e.params == *m.params);
  }
  std::printf("%s: tuned %zu cases median |err| %.2f%% max %.2f%%; holdout %zu cases median %.2f%% max %.2f%%; "
              "%d capped verdicts\n",
              file.c_str(), tuned.abs_err.size(), tuned.median(), tuned.max(), holdout.abs_err.size(),
              holdout.median(), holdout.max(), verdicts_checked);
  CHECK(tuned.median() <= 0.1);
  if (!holdout.abs_err.empty()) CHECK(holdout.median() <= 0.25);
  (void)holdout_only_report;
}

// Peak reserved (torch.cuda.max_memory_reserved) against the allocator replay: the natural peak, or under the
// run's cap the capped replay's. Reserved misses known and explained in NOTES.md:
bool known_reserved_miss(const std::string& id) {
  static const char* kKnown[] = {
      // public: 29012 MiB is not reproducible; three fresh runs of this case with our harness on the same
      // H200 / driver / torch measured 25462 MiB each (prediction 25746, +1.1 %); see NOTES.md.
      "llama7b-infer-bf16-b8s2048",
      // holdout5: the CUDA driver placed this run's first ~500 MiB of segments bottom-up inside an initial
      // address region (20 MiB segments rising from below it, the 148 MiB ones outside); our placement model
      // is top-down, so equal-size free tails tie-break differently and a 48 MiB block lands elsewhere
      // (replaying the recorded stream through the allocator gives the same +11.7 %).
      "h5-gpt2s-ampfp16-adamw-b4s512-ckpt-eager",
      // held out (family set 20, no recording): Qwen3.5-27B widths, bf16, checkpointing, b2 x 1500: allocated exact
      // (38838.0 vs 38837.7 MiB), reserved -5.87 % (45164 vs 47978); and the GradScaler-skip row above (+6.82 %).
      "f20-q35-27b-bf16-b2s1500-ckpt", "f20-q35m128-ampfp16-b3s1000-acc2-2l",
      // h200-families.jsonl (NOTES.md, "The issue 12 families"), peak allocated exact in each:
      // deepseek_v3 inference: every event >= 1 MiB equals the recording's, which still opens one more 32 MiB
      // segment (placement, or the small-pool sort / router temporaries not modelled).
      "f1-dsv3-infer-bf16-b2s1024-g4",
      // HF ViT checkpointed bf16 (data/validation/notes-f15/vit.md): every event >= 1 MiB up to the peak equals the
      // recording's, and replaying the recorded stream through the allocator model gives the same +7.7 %.
      "f15-vitb-bf16-b32-ckpt",
      // marian-big eager fp32 (notes-f15/marian.md): peak allocated exact, the recording reserves 336 MiB more
      // (segment placement around the [4, 16, 512, 512] fp32 attention blocks; not traced).
      "f15-marianbig-fp32-b4s512t128-eager",
      // Family set 16, held out, peak allocated within 0.07 % in both: M2M-100 checkpointed with LayerDrop 0.05
      // (-6.5 %: which layers each step skips is a random draw, so the recorded steps' allocation sequences and
      // their segments differ from the replayed all-layers step; notes-f15/m2m.md); ViT-L checkpointed amp bf16
      // (+5.0 %: the checkpointed HF ViT's segment placement, as f15-vitb-bf16-b32-ckpt above).
      "f16-m2m-bf16-b3s1000t100-ckpt",
      // Family set 31, held out (predicted at 1068f52 after the T5 stream fixes; no recording: the session's device
      // time ran out): t5-small bf16 checkpointed at b6 x 700 / 90 target tokens, +7.90 % reserved (1174 vs
      // 1088 MiB) with allocated -0.25 % and every phase 3.7 .. 9.7 MiB under (block tails the replay does not
      // reproduce at this odd shape); the eight other rows of the set are within 0.3 % both ways.
      "f31-t5s-bf16-b6s700t90-ckpt",
      "f16-vitl-ampbf16-b16-ckpt",
      // Family set 18, held out: DeiT-B checkpointed bf16 (+7.7 %, peak allocated +0.28 %), the same segment
      // placement as f15-vitb-bf16-b32-ckpt: DeiT's layers are ViT's, and its row reads 1096 MiB reserved as ViT-B's
      // did at the same batch (notes-f17/deit.md).
      "f18-deitb-bf16-b32-ckpt",
      // Family set 19: gemma4 E2B-like bf16 (+10.9 %, peak allocated exact; data/validation/notes-f19/gemma4.md):
      // every event >= 1 MiB but the order of 1-2 MiB ExpandBackward sums equals the recording's, and replaying the
      // recorded stream through the allocator model gives the same 20858 MiB (the driver leaves 64-128 MiB gaps
      // between its 1-2 GiB segments, so step 2 reuses a different 1 GiB block and step 3 opens one more 2 GiB one).
      "f19-g4-e2b-bf16-b2s1024",
      // Family set 21 (notes-f21/audio.md): the amp fp16 WavLM row's skipped GradScaler steps (no AdamW state), and
      // wav2vec2-base fp32 (+7.7 %, peak allocated exact): the memory-efficient SDPA backward's and the positional
      // conv backward's transients differ from the recording by a few MiB each and the segments follow.
      "f21-wlm-baseplus-ctc-ampfp16-b4-s160000",
      "f21-w2v-base-ctc-fp32-b6-s160000",
      // Family set 22, held out (blind -9.77 %, allocated +0.12 %): WavLM classification fp32 with accumulation; the
      // grouped positional conv's backward workspaces (notes-f21/audio.md); no recording.
      "f22-wlm-baseplus6-cls-fp32-acc2-b5-s48000",
      // Family set 24, held out, blind at 5ddeb0a (peak allocated within 0.05 %; not traced yet): Idefics3-8B
      // widths eager amp (+6.4 %). (Falcon-H1 served in bf16, +87 % there, left this list when its recording
      // showed where the cache state is allocated; HF ConvNeXt-T fp32, -7.2 %, and ConvNeXt V2-B bf16, +5.6 %,
      // when theirs showed the channels-last cuDNN workspaces and the GRN reductions: NOTES.md, "Family set 26".)
      // (Family set 26's torchvision ConvNeXt-S fp32 b10, -5.19 %, left when the table got every batch 1 .. 32 of
      // the fp32 channels-last depthwise convs at 96+ channels: cuDNN runs 192 ch 28 x 28 without a workspace at
      // n 10, where interpolating n 8 and 16 had given 58 MiB. NOTES.md, "Family set 26".)
      // Family set 26, held out: HF ConvNeXt-B 384 amp fp16 b6 (+22.7 %): GradScaler skipped all three steps
      // (allocated +24.4 %, in kKnown above).
      "f26-cnx-b384-ampfp16-b6",
      "f24-id3-8b-ampbf16-eager-b2s1000-2img-global",
  };
  for (const char* k : kKnown)
    if (id == k) return true;
  return false;
}

void check_reserved(const std::string& file, double per_case_bar_pct, double median_bar_pct, bool training_only) {
  Summary s;
  for (const auto& c : testing::load_cases(file)) {
    if (!c.measured || !c.measured->peak_reserved_mib || (c.measured->oom && *c.measured->oom)) continue;
    if (training_only && c.run.mode != Mode::training) continue;
    const Estimate e = estimate(c.model, c.run, estimate_options_for(c));
    // Under a cap the run's reserved peak is the capped replay's (release-and-retry can keep it below the
    // natural peak).
    const double err = err_pct(mib(e.run_peak_reserved_bytes()), *c.measured->peak_reserved_mib);
    INFO(c.id << ": reserved predicted " << mib(e.run_peak_reserved_bytes()) << " MiB, measured "
              << *c.measured->peak_reserved_mib << " MiB, error " << err << " %");
    if (known_reserved_miss(c.id)) {
      std::printf("known reserved miss (documented in data/validation/NOTES.md): %s %+.2f%%\n", c.id.c_str(), err);
      CHECK(std::fabs(err) > per_case_bar_pct);  // fixed? then remove it from the list
      continue;
    }
    s.abs_err.push_back(std::fabs(err));
    CHECK(std::fabs(err) <= per_case_bar_pct);
  }
  std::printf("%s: peak reserved over %zu cases, median |err| %.2f%% max %.2f%%\n", file.c_str(), s.abs_err.size(),
              s.median(), s.max());
  CHECK(s.median() <= median_bar_pct);
}

}  // namespace

TEST_CASE("peak reserved: public cases within 5 % each, median within 2 %", "[fidelity][reserved]") {
  check_reserved("h200-public-cases.jsonl", 5.0, 2.0, false);
}

TEST_CASE("peak reserved: corpus training cases within 10 % each (GradScaler-skip case: NOTES.md), median within 0.5 %; boundary "
          "cases, capped ones under their cap, within 1 %", "[fidelity][reserved][corpus]") {
  check_reserved("h200-corpus.jsonl", 10.0, 0.5, true);
  check_reserved("h200-boundary.jsonl", 1.0, 0.5, true);
}

TEST_CASE("public H200 cases: peak allocated within 1 %, median <= 0.1 %, phases within 5 %", "[fidelity]") {
  check_file("h200-public-cases.jsonl", false);
}

TEST_CASE("measured corpus: same bars, holdout reported apart", "[fidelity][corpus]") {
  check_file("h200-corpus.jsonl", true);
}

TEST_CASE("issue 12 families and peft LoRA (h200-families.jsonl): peak allocated within 1 %, holdout apart",
          "[fidelity][families]") {
  check_file("h200-families.jsonl", true);
}

TEST_CASE("issue 12 families and peft LoRA: peak reserved within 5 % each (training and inference), median 0.5 %",
          "[fidelity][reserved][families]") {
  check_reserved("h200-families.jsonl", 5.0, 0.5, false);
}

// Odd shapes (issue 17): each transformer case measured twice, built on the GPU (odd1-*, "load": "on_device") and
// built on the CPU then moved, inference with generate() first (odd1t-*, the defaults): the pairs pin
// RunConfig::weights_load and generate_first (up to 12 % of reserved apart, e.g. GPT-2 small b10: 15656 / 17548 MiB).
TEST_CASE("odd shapes (h200-odd-shapes.jsonl): peak reserved within 3 % each, median 0.3 %; allocated within 1 %",
          "[fidelity][reserved][odd]") {
  check_reserved("h200-odd-shapes.jsonl", 3.0, 0.3, false);
  check_file("h200-odd-shapes.jsonl", true);
}

// Odd shapes set 3 (twenty-first session, calibrate/cases/make_odd_shapes3.py), held out: Qwen3, Gemma 3, Phi-3,
// OLMo-2, GPT-NeoX and GPT-2 medium at odd batches and lengths, amp fp16 with accumulation, checkpointing,
// generation; predicted at 35bf712 before the call that measured them (predictions/odd-shapes3-holdout.json).
// Blind: peak allocated within 0.005 % and reserved within 0.02 % on all 12 that ran uncapped, the KV cache within
// 0.8 % (Gemma 3: 26.1 vs 26.3 MiB, not traced); the four capped copies are the verdict test's (two fit, two
// OOM at 0.97x the prediction: BORDERLINE).
TEST_CASE("odd shapes set 3, held out: allocated and reserved as predicted before measuring", "[fidelity][odd]") {
  const auto checked = testing::check_family_cases(
      [](const ValidationCase& c) { return c.id.rfind("odd3-", 0) == 0 && !(c.measured->oom && *c.measured->oom); },
      [](const std::string&) { return testing::FamilyBounds{0.0001, 0.0003, 0.008}; }, "h200-odd-shapes.jsonl");
  CHECK(checked.size() == 14);
}

TEST_CASE("boundary cases: verdicts at caps around the predictions, with and without expandable segments",
          "[fidelity][boundary]") {
  check_file("h200-boundary.jsonl", false);
}
