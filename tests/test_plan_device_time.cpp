// The step time on another GPU (engine/plan/time_model.h): the timeline's GPU columns are scaled to that GPU
// before the critical path is taken. A step the H200's host bounds can be bound by the GPU elsewhere; scaling the
// H200's critical path afterwards kept it host-bound (Llama-2-7B LoRA b1 s2048 on an RTX 4090: 281 ms, under its
// own GPU work).
#include <catch2/catch.hpp>

#include "engine/arch/builders.h"
#include "engine/estimate.h"
#include "engine/plan/time_model.h"
#include "engine/time/case_time.h"
#include "models/zoo.h"

using namespace memplan;

TEST_CASE("plan: a step on a slower GPU takes at least that GPU's work, and the H200's time at scale 1", "[plan][time]") {
  const ModelSpec m = load_zoo_model("llama-3.2-1b");
  RunConfig c;
  c.batch_size = 1;
  c.seq_len = 2048;
  c.precision = Precision::bf16;
  c.lora.r = 16;
  c.lora.alpha = 32;
  c.lora.all_linear = true;
  c.lora.dropout = 0.05;
  validate_run_config(c, m);
  const Graph g = build_graph(m, c);
  const timing::Timeline t = timing::training_timeline(g, c, timing::h200_op_rates());
  const timing::Coefficients& coef = timing::h200_coefficients();
  // on the H200 this step is host-bound in the model (peft's Python per adapted module)
  REQUIRE(timing::predict(timing::critical_path(t, coef), coef).cpu_bound);

  plan::DeviceRates h200;  // the time scales at 1: the step-time model as fitted
  CHECK(plan::timed_single_gpu_step_s(g, c, h200) ==
        Approx(timing::predict(timing::critical_path(t, coef), coef).total_s).epsilon(1e-12));

  plan::DeviceRates slow;  // a GPU 8x slower in GEMMs and bandwidth (an RTX 4090 is about 6x in bf16 GEMMs)
  slow.time_scale_matmul = slow.time_scale_fp32_matmul = slow.time_scale_hbm = 8;
  timing::Features all{};  // every chunk's scaled GPU work: a lower bound on the step, however host and GPU overlap
  for (const timing::Features& chunk : plan::scaled_timeline(t, slow, false))
    for (size_t j = 0; j < all.size(); ++j) all[j] += chunk[j];
  const double gpu_work_s = timing::predict(all, coef).gpu_s;
  const double step_s = plan::timed_single_gpu_step_s(g, c, slow);
  CHECK(step_s >= gpu_work_s);
  CHECK(step_s > 2 * plan::timed_single_gpu_step_s(g, c, h200));
}
