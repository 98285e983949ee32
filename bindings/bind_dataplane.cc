#include "bindings.h"
#include "dp.h"
#include "least-squares.h"

#include <pybind11/eigen.h>
#include <pybind11/stl.h>

#include <string>
#include <vector>

namespace py = pybind11;

namespace routertwin::bindings
{

void
BindDataPlane(py::module_& m)
{
    m.def(
        "internet_checksum",
        [](py::bytes data) {
            std::string s = data;
            return dp_csum(s.data(), s.size(), nullptr);
        },
        "RFC 1071 Internet checksum of bytes (host-order int).");
    m.def("drop_reason_names", []() {
        std::vector<std::string> names;
        for (int r = 0; r < DP_DROP__COUNT; ++r)
        {
            names.emplace_back(dp_drop_reason_name(static_cast<dp_drop_reason_t>(r)));
        }
        return names;
    });
    m.def(
        "least_squares",
        [](const Eigen::MatrixXd& A, const Eigen::VectorXd& b) {
            auto fit = FitLeastSquares(A, b);
            py::dict d;
            d["x"] = fit.x;
            d["stderr"] = fit.stderr_;
            d["cov"] = fit.cov;
            d["identified"] = fit.identified;
            d["rss"] = fit.rss;
            d["rank"] = fit.rank;
            d["dof"] = fit.dof;
            return d;
        },
        "Least squares A x = b with covariance (Eigen, model/common least-squares.h): dict of x, stderr, "
        "cov (identified columns), identified, rss, rank, dof.");
    m.def("ops_counter_names", []() {
        std::vector<std::string> names;
        for (unsigned i = 0; i < DP_OPS_NUM_COUNTERS; ++i)
        {
            names.emplace_back(dp_ops_counter_name(i));
        }
        return names;
    });
}

} // namespace routertwin::bindings
