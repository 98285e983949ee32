// routertwin._core.Lpm: the core's DIR-24-8 table (core/include/dp/dp_lpm.h)
// built from numpy arrays, for imported FIBs (routertwin.fib): the truth
// tests compare its answers with the Linux kernel's, the import benchmark
// times its build, and the FIB-growth what-if reads its memory and probes.
#include "bindings.h"
#include "dp.h"

#include <pybind11/numpy.h>

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace py = pybind11;

namespace routertwin::bindings
{

namespace
{

using U32 = py::array_t<uint32_t, py::array::c_style | py::array::forcecast>;
using U8 = py::array_t<uint8_t, py::array::c_style | py::array::forcecast>;

class LpmTable
{
  public:
    LpmTable(const U32& prefixes, const U8& lengths, const U32& nextHops)
    {
        const size_t n = static_cast<size_t>(prefixes.size());
        if (static_cast<size_t>(lengths.size()) != n || static_cast<size_t>(nextHops.size()) != n)
        {
            throw std::invalid_argument("Lpm: prefixes, lengths and next_hops differ in length");
        }
        const uint32_t* p = prefixes.data();
        const uint8_t* l = lengths.data();
        const uint32_t* h = nextHops.data();
        // One second-level group per /24 that holds a rule longer than /24.
        std::vector<uint32_t> split;
        for (size_t i = 0; i < n; ++i)
        {
            if (l[i] > 24 && l[i] <= 32)
            {
                split.push_back(p[i] >> 8);
            }
        }
        std::sort(split.begin(), split.end());
        split.erase(std::unique(split.begin(), split.end()), split.end());
        dp_lpm_config_t cfg{};
        cfg.max_rules = static_cast<uint32_t>(std::max<size_t>(n, 1));
        cfg.tbl8_groups = static_cast<uint32_t>(split.size());
        const size_t bytes = dp_lpm_memory_size(&cfg);
        if (bytes == 0)
        {
            throw std::invalid_argument("Lpm: " + std::to_string(n) + " routes exceed dp_lpm's limits");
        }
        mem_.reset(new uint8_t[bytes]);
        lpm_ = dp_lpm_create(mem_.get(), bytes, &cfg);
        if (!lpm_)
        {
            throw std::runtime_error("Lpm: dp_lpm_create failed");
        }
        for (size_t i = 0; i < n; ++i)
        {
            int rc = dp_lpm_add(lpm_, p[i], l[i], h[i], &buildOps_);
            if (rc != 0)
            {
                throw std::invalid_argument("Lpm: route " + std::to_string(i) + " refused by dp_lpm_add (" +
                                            std::to_string(rc) + "): length > 32 or next hop > " +
                                            std::to_string(DP_LPM_MAX_NEXT_HOP));
            }
        }
    }

    // Next hop of every address, DP_LPM_MISS where no route matches; adds
    // the lookups' probes to the table's lookup counters.
    py::array_t<uint32_t> Lookup(const U32& addresses)
    {
        const size_t n = static_cast<size_t>(addresses.size());
        py::array_t<uint32_t> out(n);
        const uint32_t* a = addresses.data();
        uint32_t* o = out.mutable_data();
        {
            py::gil_scoped_release release;
            constexpr size_t kBatch = 64;
            for (size_t i = 0; i < n; i += kBatch)
            {
                dp_lpm_lookup_bulk(lpm_, a + i, o + i, static_cast<unsigned>(std::min(kBatch, n - i)),
                                   &lookupOps_);
            }
        }
        lookups_ += n;
        return out;
    }

    py::dict Stats() const
    {
        dp_lpm_stats_t s{};
        dp_lpm_get_stats(lpm_, &s);
        py::dict d;
        d["rules"] = s.rules;
        d["tbl8_groups_used"] = s.tbl8_groups_used;
        d["memory_bytes"] = s.memory_bytes;
        d["build_table_writes"] = buildOps_.table_writes;
        d["build_table_probes"] = buildOps_.table_probes;
        d["lookups"] = lookups_;
        d["lookup_table_probes"] = lookupOps_.table_probes;
        d["lookup_cache_lines"] = lookupOps_.cache_lines;
        return d;
    }

  private:
    std::unique_ptr<uint8_t[]> mem_;
    dp_lpm_t* lpm_ = nullptr;
    dp_ops_t buildOps_{};
    dp_ops_t lookupOps_{};
    uint64_t lookups_ = 0;
};

} // namespace

void
BindLpm(py::module_& m)
{
    m.attr("LPM_MISS") = DP_LPM_MISS;
    py::class_<LpmTable>(m, "Lpm",
                         "The core's DIR-24-8 IPv4 table (dp_lpm) holding the given routes: prefixes (host-order "
                         "uint32), lengths (0..32), next_hops (< 2^24), one per route; a later duplicate replaces "
                         "an earlier one.")
        .def(py::init<const U32&, const U8&, const U32&>(), py::arg("prefixes"), py::arg("lengths"),
             py::arg("next_hops"))
        .def("lookup", &LpmTable::Lookup, py::arg("addresses"),
             "Next hop of each host-order address (uint32 array), LPM_MISS where no route matches.")
        .def("stats", &LpmTable::Stats,
             "rules, tbl8_groups_used, memory_bytes, the build's table writes and probes, and the lookups' "
             "count, table probes and cache lines (dp_ops counters).");
}

} // namespace routertwin::bindings
