#include "least-squares.h"

#include <cmath>
#include <limits>
#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

namespace routertwin
{

LeastSquaresFit
FitLeastSquares(const Eigen::MatrixXd& A, const Eigen::VectorXd& b)
{
    if (A.rows() != b.size())
    {
        throw std::invalid_argument("least squares: A has " + std::to_string(A.rows()) + " rows, b " +
                                    std::to_string(b.size()));
    }
    if (!A.allFinite() || !b.allFinite())
    {
        throw std::invalid_argument("least squares: A or b holds a non-finite value");
    }
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const Eigen::Index n = A.rows(), p = A.cols();
    LeastSquaresFit fit;
    fit.x = Eigen::VectorXd::Zero(p);
    fit.stderr_ = Eigen::VectorXd::Constant(p, nan);
    fit.identified = Eigen::Matrix<bool, Eigen::Dynamic, 1>::Constant(p, false);

    // The pivoted QR orders columns by how much new direction they add; its
    // rank keeps the first `rank` pivots, the rest are dependent on them.
    Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(A);
    const Eigen::Index rank = qr.rank();
    std::vector<Eigen::Index> keep;
    for (Eigen::Index k = 0; k < rank; ++k)
    {
        keep.push_back(qr.colsPermutation().indices()(k));
    }
    std::sort(keep.begin(), keep.end());
    Eigen::MatrixXd Ak(n, static_cast<Eigen::Index>(keep.size()));
    for (size_t j = 0; j < keep.size(); ++j)
    {
        Ak.col(static_cast<Eigen::Index>(j)) = A.col(keep[j]);
    }
    Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qk(Ak);
    const Eigen::VectorXd xk = qk.solve(b);
    const Eigen::VectorXd r = Ak * xk - b;
    fit.rss = r.squaredNorm();
    fit.rank = static_cast<int>(keep.size());
    fit.dof = static_cast<int>(n) - fit.rank;
    const Eigen::MatrixXd ata_inv =
        (Ak.transpose() * Ak).ldlt().solve(Eigen::MatrixXd::Identity(Ak.cols(), Ak.cols()));
    const double sigma2 = fit.dof > 0 ? fit.rss / fit.dof : nan;
    fit.cov = sigma2 * ata_inv;
    for (size_t j = 0; j < keep.size(); ++j)
    {
        const auto jj = static_cast<Eigen::Index>(j);
        fit.x(keep[j]) = xk(jj);
        fit.identified(keep[j]) = true;
        fit.stderr_(keep[j]) = std::sqrt(fit.cov(jj, jj));
    }
    return fit;
}

} // namespace routertwin
