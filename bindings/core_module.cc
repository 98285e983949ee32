// routertwin._core: the pybind11 module. Each bind_*.cc file adds one area.
#include "bindings.h"

PYBIND11_MODULE(_core, m)
{
    m.doc() = "RouterTwin native core: data-plane functions and scenario runners";
    m.attr("__version__") = RT_VERSION;
    routertwin::bindings::BindDataPlane(m);
    routertwin::bindings::BindLpm(m);
    routertwin::bindings::BindPipeline(m);
    routertwin::bindings::BindRouter(m);
    routertwin::bindings::BindLb(m);
    routertwin::bindings::BindHosts(m);
    routertwin::bindings::BindL7(m);
    routertwin::bindings::BindL7Pair(m);
}
