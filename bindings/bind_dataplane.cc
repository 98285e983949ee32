#include "bindings.h"
#include "dp.h"

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
