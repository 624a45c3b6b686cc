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

TEST_CASE("time fit: recovers known coefficients, including the CPU-bound side of the max", "[time][nnls]") {
  using namespace memplan::timing;
  // Rows made from chosen coefficients: gemm 1.2, mem 1.5, kernels 3 us, cpu 12 us per op, step 1 ms. GPU-bound
  // rows have large gemm seconds; two CPU-bound rows have many ops and little GPU work. predict() of the known
  // coefficients gives the targets, so a correct fit reproduces them (up to the solver's precision).
  Coefficients truth;
  truth.c = {1.2, 0, 0, 0, 1.5, 0, 0, 3e-6, 12e-6, 1e-3, 0, 0, 0};
  std::vector<Features> rows;
  auto row = [](double gemm, double mem, double kernels, double cpu) {
    Features f{};
    f[kGemm] = gemm, f[kMem] = mem, f[kKernels] = kernels, f[kCpu] = cpu, f[kStep] = 1;
    return f;
  };
  rows.push_back(row(0.100, 0.020, 2000, 2000));
  rows.push_back(row(0.050, 0.030, 1500, 1500));
  rows.push_back(row(0.200, 0.010, 3000, 3000));
  rows.push_back(row(0.020, 0.040, 1000, 1000));
  rows.push_back(row(0.080, 0.005, 4000, 4000));
  rows.push_back(row(0.001, 0.001, 3000, 3000));  // CPU-bound: cpu 36 ms vs gpu ~12 ms
  rows.push_back(row(0.002, 0.001, 5000, 5000));  // CPU-bound
  std::vector<double> y;
  for (const auto& f : rows) y.push_back(predict(f, truth).total_s);
  REQUIRE(predict(rows[5], truth).cpu_bound);
  Coefficients start;
  start.c = {1, 1, 1, 1, 1, 1, 1, 2e-6, 1e-5, 0, 0, 0, 0};
  const FitResult r = fit(rows, y, start, {});
  for (size_t i = 0; i < rows.size(); ++i) CHECK(predict(rows[i], r.coef).total_s == Approx(y[i]).epsilon(1e-6));
  CHECK(r.coef.c[kGemm] == Approx(1.2).epsilon(1e-6));
  CHECK(r.coef.c[kCpu] == Approx(12e-6).epsilon(1e-6));
  CHECK(r.cpu_bound[5]);
  CHECK_FALSE(r.cpu_bound[0]);
}
