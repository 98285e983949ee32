// Ordinary least squares with the parameters' covariance (Eigen): the fit
// behind derived counter prices (instructions per unit of each dp_ops
// counter, over the cost harness's operations) and, on a board's results,
// cycles per unit. Every fitted number carries its standard error.
#ifndef ROUTERTWIN_LEAST_SQUARES_H
#define ROUTERTWIN_LEAST_SQUARES_H

#include <Eigen/Dense>

namespace routertwin
{

/// Result of FitLeastSquares(A, b): x minimizing |A x - b|.
struct LeastSquaresFit
{
    Eigen::VectorXd x;      ///< parameters; 0 for a column that is not identified
    Eigen::VectorXd stderr_; ///< standard error of each parameter (sqrt of cov's diagonal); NaN when
                             ///< dof is 0 or the column is not identified
    Eigen::MatrixXd cov;    ///< sigma^2 (A'A)^-1 over the identified columns, sigma^2 = rss / dof
    Eigen::Matrix<bool, Eigen::Dynamic, 1> identified; ///< false for an all-zero or linearly dependent column
    double rss = 0;         ///< residual sum of squares
    int rank = 0;           ///< identified columns
    int dof = 0;            ///< rows - rank
};

/// Fits A x = b (rows: observations, columns: parameters) by a
/// column-pivoting Householder QR. A column that is zero, or a linear
/// combination of earlier-pivoted ones (rank-revealing threshold of Eigen's
/// ColPivHouseholderQR), is reported as not identified and gets 0 with a
/// NaN error, instead of an arbitrary value. Throws std::invalid_argument
/// when A and b disagree in size or hold a non-finite value.
LeastSquaresFit FitLeastSquares(const Eigen::MatrixXd& A, const Eigen::VectorXd& b);

} // namespace routertwin

#endif
