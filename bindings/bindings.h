// Registration functions of the _core module, one per area.
#ifndef ROUTERTWIN_BINDINGS_H
#define ROUTERTWIN_BINDINGS_H

#include <pybind11/pybind11.h>

namespace routertwin::bindings
{
/// dp_* functions of core/: checksums, URL rules (dp_urlrule), drop reason names, counter names.
void BindDataPlane(pybind11::module_& m);
/// routertwin._core.Lpm: the core's dp_lpm table over numpy arrays (bind_lpm.cc).
void BindLpm(pybind11::module_& m);
/// run_pipeline: RFC 2544 tester through a multi-core forwarding pipeline (model/).
void BindPipeline(pybind11::module_& m);
/// run_router, pos_*, fabric_uniform: POS line cards, cell fabric, router (model/).
void BindRouter(pybind11::module_& m);
/// run_lb: the Tolly testers against an L4 load balancer (model/lb).
void BindLb(pybind11::module_& m);
/// run_tcp_path: IxChariot Throughput.scr over a virtual L3 path (model/hosts).
void BindHosts(pybind11::module_& m);
/// routertwin._core.run_webbench_testbed: seed 003's testbed on the ns-3 web switch (bind_l7.cc).
void BindL7(pybind11::module_& m);
/// routertwin._core.run_redundant_pair: a failover on a pair of ns-3 web switches (bind_l7_pair.cc).
void BindL7Pair(pybind11::module_& m);
} // namespace routertwin::bindings

#endif
