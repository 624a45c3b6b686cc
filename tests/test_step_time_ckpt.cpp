// What non-reentrant activation checkpointing costs the host (engine/time/step_time.h OpRates::CkptHost, ninth
// session): calibrate/ckpt_host.py's rows fitted per part (forward, backward) as layer + saved x per-tensor, and
// the timeline charging each checkpointed layer once with it. Expected values are derived by hand from rows written
// in the test (least squares of two points is the line through them) or from the graph's own saved counts.
#include <catch2/catch.hpp>

#include <string>

#include "engine/errors.h"
#include "engine/graph_builder.h"
#include "engine/time/step_time.h"

using namespace memplan;
using namespace memplan::timing;

namespace {

// Two fp32 rows (saved 4 and 16) whose extras are chosen: forward extra = ckpt_fwd - plain_fwd, backward extra =
// ckpt_fwd_bwd - plain_fwd_bwd - ckpt_fwd.
//   saved 4:  forward 100 + 4 x 10 = 140, backward 300 + 4 x 5 = 320
//   saved 16: forward 100 + 16 x 10 = 260, backward 300 + 16 x 5 = 380
// plain_fwd 50, plain_fwd_bwd 200: ckpt_fwd = 50 + forward extra, ckpt_fwd_bwd = 200 + ckpt_fwd + backward extra.
constexpr const char* kTwoRows =
    "# block precision run ops saved plain_fwd_us plain_fwd_bwd_us ckpt_fwd_us ckpt_fwd_bwd_us\n"
    "a fp32 1 2 4 50 200 190 710\n"      // 190 = 50 + 140; 710 = 200 + 190 + 320
    "b fp32 1 8 16 50 200 310 890\n"     // 310 = 50 + 260; 890 = 200 + 310 + 380
    "a amp_bf16 1 2 4 50 200 9000 90000\n";  // autocast rows: checked, not used

RunConfig training(Precision p) {
  RunConfig c;
  c.mode = Mode::training;
  c.precision = p;
  return c;
}

// Two layers of one linear each (input [8, 64], weight [64, 64] trainable, saved: the input and the weight), the
// second checkpointed when `ckpt`; cross-entropy over the 64 outputs as the loss.
Graph two_layers(bool ckpt) {
  GraphBuilder b(training(Precision::fp32));
  TensorId x = b.input({8, 64}, DType::f32);
  const TensorId labels = b.input({8}, DType::i64);
  for (int l = 0; l < 2; ++l) {
    b.begin_layer("layer" + std::to_string(l), ckpt && l == 1);
    const TensorId w = b.param("w" + std::to_string(l), {64, 64}, true);
    x = b.linear(x, w, kNoTensor);
    b.end_layer();
  }
  b.set_loss(b.cross_entropy(x, labels));
  return b.finish();
}

double host_total(const Timeline& t) {
  double s = 0;
  for (const Features& f : t) s += f[kCpuHost];
  return s;
}

}  // namespace

TEST_CASE("checkpoint host rows: each part is the line through the fp32 rows; autocast rows are not used",
          "[time][ckpt]") {
  OpRates r;
  parse_ckpt_host(kTwoRows, r);
  CHECK(r.ckpt_host.fwd_layer_s == Approx(100e-6));
  CHECK(r.ckpt_host.fwd_saved_s == Approx(10e-6));
  CHECK(r.ckpt_host.bwd_layer_s == Approx(300e-6));
  CHECK(r.ckpt_host.bwd_saved_s == Approx(5e-6));
}

TEST_CASE("checkpoint host rows: a negative slope is 0 with the mean as the layer term; one saved count, the mean",
          "[time][ckpt]") {
  // forward extras 140 (saved 4) and 100 (saved 16): slope < 0 -> 0, layer = mean 120 us
  OpRates r;
  parse_ckpt_host("a fp32 1 2 4 50 200 190 710\nb fp32 1 8 16 50 200 150 730\n", r);
  CHECK(r.ckpt_host.fwd_saved_s == 0);
  CHECK(r.ckpt_host.fwd_layer_s == Approx(120e-6));
  // backward extras 320 and 380: the line as before
  CHECK(r.ckpt_host.bwd_layer_s == Approx(300e-6));
  CHECK(r.ckpt_host.bwd_saved_s == Approx(5e-6));
  // one saved count twice: no slope, the mean
  OpRates s;
  parse_ckpt_host("a fp32 1 2 4 50 200 190 710\nb fp32 2 2 4 50 200 170 690\n", s);  // forward 140, 120
  CHECK(s.ckpt_host.fwd_saved_s == 0);
  CHECK(s.ckpt_host.fwd_layer_s == Approx(130e-6));
  // no fp32 row: nothing charged
  OpRates n;
  parse_ckpt_host("a amp_bf16 1 2 4 50 200 190 710\n", n);
  CHECK(n.ckpt_host.fwd_layer_s == 0);
  CHECK(n.ckpt_host.bwd_layer_s == 0);
}

TEST_CASE("checkpoint host rows: malformed rows are input errors naming the line", "[time][ckpt]") {
  const char* bad[] = {
      "a fp32 2 4 50 200 190 710\n",           // eight fields (the run column missing)
      "a fp16 1 2 4 50 200 190 710\n",         // not fp32 / amp_bf16
      "a fp32 1 2 -4 50 200 190 710\n",        // saved < 0
      "a fp32 1 2 4 50 200 190 2e9\n",         // past 1e9 us
      "a fp32 1 2 4 50 x 190 710\n",           // not a number
  };
  for (const char* t : bad) {
    OpRates r;
    CHECK_THROWS_AS(parse_ckpt_host(t, r), InputError);
  }
}

TEST_CASE("checkpoint host: a checkpointed layer costs its recompute plus layer + saved x per-tensor, once per micro-batch",
          "[time][ckpt]") {
  OpRates r = h200_op_rates();  // the measured host classes; the checkpoint rows replaced by the test's
  r.ckpt_host = {};
  parse_ckpt_host(kTwoRows, r);
  const Graph plain = two_layers(false), ckpt = two_layers(true);
  // the checkpointed layer's ops and what they save (the linear's input and weight: 2)
  const LayerInfo& L = ckpt.layers[1];
  REQUIRE(L.checkpointed);
  double saved = 0;
  for (int32_t j = L.first_op; j < L.end_op; ++j)
    saved += static_cast<double>(ckpt.ops[static_cast<size_t>(j)].saved.size());
  CHECK(saved == 2);
  // the recompute re-issues the layer's forward (the difference to the plain graph, > 0); what this case pins is
  // the hooks' part on top of it: the forward's and the backward's terms at the graph's saved count
  const double hooks = 100e-6 + 10e-6 * saved + 300e-6 + 5e-6 * saved;
  for (const Precision p : {Precision::fp32, Precision::amp_bf16}) {  // the fp32 fit serves every precision
    RunConfig c = training(p);
    const double without = host_total(training_timeline(plain, c, r));
    const double with = host_total(training_timeline(ckpt, c, r));
    OpRates none = r;
    none.ckpt_host = {};
    const double recompute_only = host_total(training_timeline(ckpt, c, none));
    CHECK(recompute_only - without > 0);  // the re-issued forward
    CHECK(with - recompute_only == Approx(hooks));
    c.grad_accum_steps = 3;  // per micro-batch
    CHECK(host_total(training_timeline(ckpt, c, r)) - host_total(training_timeline(ckpt, c, none)) ==
          Approx(3 * hooks));
  }
}
