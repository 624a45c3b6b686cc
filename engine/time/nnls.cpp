// Lawson-Hanson active set (see nnls.h); variable names follow the book (P passive set, Z = not P, w gradient).
#include "engine/time/nnls.h"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "engine/errors.h"

namespace memplan::timing {

namespace {
// Least squares on the columns in `p`, scattered back into an n-vector (zeros elsewhere).
Eigen::VectorXd solve_on(const Eigen::MatrixXd& A, const Eigen::VectorXd& b, const std::vector<bool>& p) {
  std::vector<Eigen::Index> cols;
  for (Eigen::Index j = 0; j < A.cols(); ++j)
    if (p[static_cast<size_t>(j)]) cols.push_back(j);
  Eigen::VectorXd z = Eigen::VectorXd::Zero(A.cols());
  if (cols.empty()) return z;
  Eigen::MatrixXd Ap(A.rows(), static_cast<Eigen::Index>(cols.size()));
  for (size_t i = 0; i < cols.size(); ++i) Ap.col(static_cast<Eigen::Index>(i)) = A.col(cols[i]);
  const Eigen::VectorXd zp = Ap.colPivHouseholderQr().solve(b);
  for (size_t i = 0; i < cols.size(); ++i) z(cols[i]) = zp(static_cast<Eigen::Index>(i));
  return z;
}
}  // namespace

NnlsResult nnls(const Eigen::MatrixXd& A, const Eigen::VectorXd& b, double tol) {
  const Eigen::Index m = A.rows(), n = A.cols();
  if (m < 1 || n < 1) throw InputError("nnls", std::to_string(m) + "x" + std::to_string(n), "needs a non-empty matrix");
  if (b.size() != m) throw InputError("nnls.b", std::to_string(b.size()), "must have one entry per row of A");
  if (!A.allFinite() || !b.allFinite()) throw InputError("nnls", "A, b", "must be finite");
  if (tol < 0) tol = 10 * std::numeric_limits<double>::epsilon() * A.cwiseAbs().maxCoeff() * static_cast<double>(std::max(m, n)) *
                     std::max(1.0, b.cwiseAbs().maxCoeff());
  NnlsResult r;
  r.x = Eigen::VectorXd::Zero(n);
  std::vector<bool> p(static_cast<size_t>(n), false);
  const int cap = 30 * static_cast<int>(n);
  for (;;) {
    const Eigen::VectorXd w = A.transpose() * (b - A * r.x);
    Eigen::Index t = -1;
    double best = tol;
    for (Eigen::Index j = 0; j < n; ++j)
      if (!p[static_cast<size_t>(j)] && w(j) > best) best = w(j), t = j;
    if (t < 0) break;  // Kuhn-Tucker conditions hold: w_j <= 0 on Z, x optimal
    if (++r.iterations > cap) {
      r.converged = false;
      break;
    }
    p[static_cast<size_t>(t)] = true;
    for (;;) {
      Eigen::VectorXd z = solve_on(A, b, p);
      bool feasible = true;
      for (Eigen::Index j = 0; j < n; ++j)
        if (p[static_cast<size_t>(j)] && z(j) <= 0) feasible = false;
      if (feasible) {
        r.x = z;
        break;
      }
      // alpha = min over P with z_j <= 0 of x_j / (x_j - z_j): the farthest feasible point on the segment
      double alpha = 1;
      for (Eigen::Index j = 0; j < n; ++j)
        if (p[static_cast<size_t>(j)] && z(j) <= 0) alpha = std::min(alpha, r.x(j) / (r.x(j) - z(j)));
      r.x += alpha * (z - r.x);
      for (Eigen::Index j = 0; j < n; ++j)
        if (p[static_cast<size_t>(j)] && r.x(j) <= tol) p[static_cast<size_t>(j)] = false, r.x(j) = 0;
    }
  }
  r.residual_norm = (A * r.x - b).norm();
  return r;
}

}  // namespace memplan::timing
