// FitLeastSquares against the closed form of simple linear regression
// (slope Sxy/Sxx, intercept ybar - slope xbar, standard errors
// sqrt(s^2/Sxx) and sqrt(s^2 (1/n + xbar^2/Sxx)), s^2 = RSS/(n-2)), and
// its handling of columns the data cannot identify.
#include "least-squares.h"

#include <gtest/gtest.h>

#include <cmath>

using routertwin::FitLeastSquares;

TEST(LeastSquares, MatchesTheClosedFormOfSimpleRegression)
{
    const double xs[] = {1, 2, 3, 5, 8, 13, 21};
    const double ys[] = {3.1, 4.9, 7.2, 10.8, 17.1, 27.2, 42.5};
    const int n = 7;
    Eigen::MatrixXd A(n, 2);
    Eigen::VectorXd b(n);
    double xbar = 0, ybar = 0;
    for (int i = 0; i < n; ++i)
    {
        A(i, 0) = 1;
        A(i, 1) = xs[i];
        b(i) = ys[i];
        xbar += xs[i] / n;
        ybar += ys[i] / n;
    }
    double sxx = 0, sxy = 0;
    for (int i = 0; i < n; ++i)
    {
        sxx += (xs[i] - xbar) * (xs[i] - xbar);
        sxy += (xs[i] - xbar) * (ys[i] - ybar);
    }
    const double slope = sxy / sxx, icept = ybar - slope * xbar;
    double rss = 0;
    for (int i = 0; i < n; ++i)
    {
        rss += std::pow(ys[i] - icept - slope * xs[i], 2);
    }
    const double s2 = rss / (n - 2);
    auto fit = FitLeastSquares(A, b);
    EXPECT_EQ(fit.rank, 2);
    EXPECT_EQ(fit.dof, 5);
    EXPECT_NEAR(fit.x(1), slope, 1e-12);
    EXPECT_NEAR(fit.x(0), icept, 1e-12);
    EXPECT_NEAR(fit.rss, rss, 1e-10);
    EXPECT_NEAR(fit.stderr_(1), std::sqrt(s2 / sxx), 1e-12);
    EXPECT_NEAR(fit.stderr_(0), std::sqrt(s2 * (1.0 / n + xbar * xbar / sxx)), 1e-12);
    EXPECT_NEAR(fit.cov(0, 1), -xbar * s2 / sxx, 1e-12); // Cov(a, b) = -xbar s^2 / Sxx
}

TEST(LeastSquares, ZeroAndDependentColumnsAreNotIdentified)
{
    // Columns: 1, x, 0, 2x (dependent on x). y = 2 + 3x exactly.
    Eigen::MatrixXd A(5, 4);
    Eigen::VectorXd b(5);
    for (int i = 0; i < 5; ++i)
    {
        A(i, 0) = 1;
        A(i, 1) = i;
        A(i, 2) = 0;
        A(i, 3) = 2 * i;
        b(i) = 2 + 3 * i;
    }
    auto fit = FitLeastSquares(A, b);
    EXPECT_EQ(fit.rank, 2);
    EXPECT_TRUE(fit.identified(0));
    EXPECT_FALSE(fit.identified(2));
    EXPECT_NE(fit.identified(1), fit.identified(3)); // one of x, 2x carries the slope
    EXPECT_NEAR(fit.x(0), 2, 1e-12);
    EXPECT_NEAR(fit.x(1) + 2 * fit.x(3), 3, 1e-12);
    EXPECT_EQ(fit.x(2), 0);
    EXPECT_TRUE(std::isnan(fit.stderr_(2)));
}

TEST(LeastSquares, MismatchedOrNonFiniteInputIsRefused)
{
    Eigen::MatrixXd A = Eigen::MatrixXd::Ones(3, 1);
    EXPECT_THROW(FitLeastSquares(A, Eigen::VectorXd::Ones(2)), std::invalid_argument);
    Eigen::VectorXd b = Eigen::VectorXd::Ones(3);
    b(1) = NAN;
    EXPECT_THROW(FitLeastSquares(A, b), std::invalid_argument);
}
