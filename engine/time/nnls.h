// Non-negative least squares: min ||A x - b||_2 subject to x >= 0 (Lawson & Hanson, "Solving Least Squares
// Problems", 1974, ch. 23, algorithm NNLS), on Eigen (header-only; the engine's one linear-algebra dependency).
//
// Contract: A is m x n (m >= 1, n >= 1), b has m entries, every entry finite; throws InputError otherwise.
// Every unknown is constrained (the time model's coefficients are efficiencies and per-kernel costs: >= 0).
// tol < 0: 10 eps x max|A| x max(m, n) x max(1, max|b|), the book's choice scaled to the data.
// The active-set loop: P (passive, x > 0) starts empty; while some w_j = [A^T (b - A x)]_j > tol for j outside
// P, move the largest into P, solve the unconstrained least squares on P's columns (column-pivoting QR:
// rank-deficient sets still give a minimum-norm-ish solution), and while that solution has a non-positive entry,
// step from x towards it as far as feasibility allows and drop the columns that hit zero. Terminates in finitely
// many steps (each outer step strictly lowers the residual); capped at 30 n outer iterations all the same.
#pragma once
#include <Eigen/Dense>

namespace memplan::timing {

struct NnlsResult {
  Eigen::VectorXd x;
  double residual_norm = 0;  // ||A x - b||_2
  int iterations = 0;
  bool converged = true;     // false only when the iteration cap was hit (x is still feasible)
};

NnlsResult nnls(const Eigen::MatrixXd& A, const Eigen::VectorXd& b, double tol = -1);

}  // namespace memplan::timing
