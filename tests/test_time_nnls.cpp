// NNLS (engine/time/nnls.h) on constructed problems whose solutions are known in closed form, and the time fit's
// alternation on rows built from known coefficients.
#include <catch2/catch.hpp>

#include <cmath>

#include "engine/errors.h"
#include "engine/time/nnls.h"
#include "engine/time/step_time.h"

using memplan::timing::nnls;

TEST_CASE("nnls: consistent system with a positive solution is solved exactly", "[time][nnls]") {
  // A = [[1,0],[0,2],[1,1]], x* = (3, 0.5): b = A x* = (3, 1, 3.5). The unconstrained least-squares solution is x*
  // itself (zero residual) and it is positive, so NNLS must return it.
  Eigen::MatrixXd A(3, 2);
  A << 1, 0, 0, 2, 1, 1;
  Eigen::VectorXd b(3);
  b << 3, 1, 3.5;
  const auto r = nnls(A, b);
  CHECK(r.converged);
  CHECK(r.x(0) == Approx(3).epsilon(1e-12));
  CHECK(r.x(1) == Approx(0.5).epsilon(1e-12));
  CHECK(r.residual_norm < 1e-12);
}

TEST_CASE("nnls: a negative unconstrained component is clamped to zero", "[time][nnls]") {
  // A = I (2x2), b = (2, -1): min (x0 - 2)^2 + (x1 + 1)^2 over x >= 0 separates per coordinate: x = (2, 0),
  // residual |(0, 1)| = 1.
  Eigen::MatrixXd A = Eigen::MatrixXd::Identity(2, 2);
  Eigen::VectorXd b(2);
  b << 2, -1;
  const auto r = nnls(A, b);
  CHECK(r.x(0) == Approx(2));
  CHECK(r.x(1) == 0);
  CHECK(r.residual_norm == Approx(1));
}

TEST_CASE("nnls: correlated columns, the constraint binds on one", "[time][nnls]") {
  // A = [[1,1],[1,2],[1,3]], b = (3, 2, 1): the unconstrained fit is the line b = 4 - t, x = (4, -1). With x1 >= 0
  // the best is x1 = 0 and x0 = mean(b) = 2 (derivative of sum (x0 - b_i)^2), residual sqrt(1 + 0 + 1).
  Eigen::MatrixXd A(3, 2);
  A << 1, 1, 1, 2, 1, 3;
  Eigen::VectorXd b(3);
  b << 3, 2, 1;
  const auto r = nnls(A, b);
  CHECK(r.x(0) == Approx(2));
  CHECK(r.x(1) == 0);
  CHECK(r.residual_norm == Approx(std::sqrt(2.0)));
}

TEST_CASE("nnls: all-negative correlation gives x = 0", "[time][nnls]") {
  // A = [[1],[1]], b = (-1, -2): A^T b = -3 < 0 at x = 0, the Kuhn-Tucker point: x = 0, residual |b| = sqrt 5.
  Eigen::MatrixXd A(2, 1);
  A << 1, 1;
  Eigen::VectorXd b(2);
  b << -1, -2;
  const auto r = nnls(A, b);
  CHECK(r.x(0) == 0);
  CHECK(r.residual_norm == Approx(std::sqrt(5.0)));
}

TEST_CASE("nnls: bad input is refused", "[time][nnls]") {
  Eigen::MatrixXd A(2, 2);
  A << 1, 0, 0, 1;
  Eigen::VectorXd b(3);
  b << 1, 2, 3;
  CHECK_THROWS_AS(nnls(A, b), memplan::InputError);
  Eigen::VectorXd b2(2);
  b2 << 1, std::nan("");
  CHECK_THROWS_AS(nnls(A, b2), memplan::InputError);
}

TEST_CASE("time fit: the critical path of host and GPU in issue order", "[time][nnls]") {
  using namespace memplan::timing;
  // Three chunks, host then GPU seconds (coefficients 1): host 1, 5, 1; GPU 4, 1, 4. The flow shop's makespan is
  // max over k of host(<= k) + gpu(>= k): k=0: 1 + 9 = 10, k=1: 6 + 5 = 11, k=2: 7 + 4 = 11 -> 11 (the first
  // maximum, k=1: host of chunks 0-1, GPU of chunks 1-2). max(host, GPU) would say 9, the sum 16.
  Coefficients c;
  c.c[kGemm] = 1;
  c.c[kCpuHost] = 1;
  auto chunk = [](double host, double gpu) {
    Features f{};
    f[kCpuHost] = host, f[kGemm] = gpu;
    return f;
  };
  const Timeline t = {chunk(1, 4), chunk(5, 1), chunk(1, 4)};
  const Features p = critical_path(t, c);
  CHECK(p[kCpuHost] == Approx(6));
  CHECK(p[kGemm] == Approx(5));
  CHECK(predict(p, c).total_s == Approx(11));
  // a GPU-bound and a host-bound extreme: the whole GPU side after the first chunk's issue / the whole host side
  CHECK(predict(critical_path({chunk(1, 10), chunk(1, 10)}, c), c).total_s == Approx(21));
  CHECK(predict(critical_path({chunk(10, 1), chunk(10, 1)}, c), c).total_s == Approx(21));
}

TEST_CASE("time fit: recovers known coefficients through the critical path", "[time][nnls]") {
  using namespace memplan::timing;
  // Timelines made from chosen coefficients: gemm 1.2, mem 1.5, kernels 3 us, host 1.4 x the measured host
  // seconds, step 1 ms. Some rows are GPU-bound (large gemm seconds), some host-bound (much host work, little
  // GPU work), some mixed (host-heavy and GPU-heavy chunks alternate, so neither side hides the other). The
  // targets are predict() of the critical path under the known coefficients, so a correct fit reproduces them.
  Coefficients truth;
  truth.c[kGemm] = 1.2, truth.c[kMem] = 1.5, truth.c[kKernels] = 3e-6, truth.c[kCpuHost] = 1.4, truth.c[kStep] = 1e-3;
  auto chunk = [](double gemm, double mem, double kernels, double host) {
    Features f{};
    f[kGemm] = gemm, f[kMem] = mem, f[kKernels] = kernels, f[kCpuHost] = host;
    return f;
  };
  auto row = [&](std::initializer_list<Features> chunks) {
    Timeline t(chunks);
    Features opt{};
    opt[kStep] = 1;
    t.push_back(opt);
    return t;
  };
  std::vector<Timeline> rows = {
      row({chunk(0.050, 0.010, 500, 0.002), chunk(0.050, 0.010, 500, 0.002)}),
      row({chunk(0.020, 0.020, 800, 0.004), chunk(0.030, 0.010, 700, 0.003)}),
      row({chunk(0.100, 0.005, 1500, 0.005)}),
      row({chunk(0.002, 0.001, 300, 0.020), chunk(0.001, 0.001, 200, 0.015)}),  // host-bound
      row({chunk(0.001, 0.002, 400, 0.030)}),                                   // host-bound
      row({chunk(0.030, 0.001, 100, 0.001), chunk(0.001, 0.001, 100, 0.025), chunk(0.030, 0.001, 100, 0.001)}),
      row({chunk(0.010, 0.010, 900, 0.010), chunk(0.002, 0.020, 300, 0.012)}),
  };
  std::vector<double> y;
  for (const auto& t : rows) y.push_back(predict(critical_path(t, truth), truth).total_s);
  REQUIRE(predict(critical_path(rows[4], truth), truth).cpu_bound);
  Coefficients start;
  start.c.fill(1);
  start.c[kKernels] = 2e-6, start.c[kStep] = 0;
  const FitResult r = fit(rows, y, start, {});
  for (size_t i = 0; i < rows.size(); ++i)
    CHECK(predict(critical_path(rows[i], r.coef), r.coef).total_s == Approx(y[i]).epsilon(1e-6));
  CHECK(r.coef.c[kGemm] == Approx(1.2).epsilon(1e-4));
  CHECK(r.coef.c[kCpuHost] == Approx(1.4).epsilon(1e-4));
  CHECK(r.cpu_bound[4]);
  CHECK_FALSE(r.cpu_bound[2]);
}
