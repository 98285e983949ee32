#include "bindings.h"
#include "dp.h"
#include "least-squares.h"

#include <pybind11/eigen.h>
#include <pybind11/stl.h>

#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace py = pybind11;

namespace routertwin::bindings
{

namespace
{

// A service's ACL patterns in one dp_urlrule table (runners/lb/content.py's Switch).
class UrlTerms
{
  public:
    explicit UrlTerms(const std::vector<std::tuple<std::string, std::string, bool>>& terms)
    {
        static const std::map<std::string, dp_urlrule_kind_t> kinds = {
            {"beg", DP_URL_PATH_BEG}, {"sub", DP_URL_PATH_SUB}, {"end", DP_URL_PATH_END}, {"str", DP_URL_HOST}};
        dp_urlrule_config_t cfg{};
        cfg.max_rules = static_cast<uint32_t>(terms.size() ? terms.size() : 1);
        cfg.max_pattern_bytes = 1;
        for (const auto& t : terms)
        {
            cfg.max_pattern_bytes += static_cast<uint32_t>(std::get<1>(t).size() + 1);
        }
        cfg.order = DP_URLRULE_FIRST;
        mem_.resize((dp_urlrule_memory_size(&cfg) + 7) / 8);
        table_ = dp_urlrule_create(mem_.data(), mem_.size() * 8, &cfg);
        if (table_ == nullptr)
        {
            throw py::value_error("dp_urlrule_create refused the table");
        }
        for (size_t i = 0; i < terms.size(); ++i)
        {
            const auto& [match, pattern, icase] = terms[i];
            auto k = kinds.find(match);
            if (k == kinds.end())
            {
                throw py::value_error("term " + std::to_string(i) + ": match must be str, beg, end or sub");
            }
            // dp_urlrule_add reads a C string: a NUL inside would silently cut the pattern short
            if (pattern.find('\0') != std::string::npos)
            {
                throw py::value_error("term " + std::to_string(i) + ": the pattern has a NUL byte (the core's "
                                      "patterns are C strings)");
            }
            if (dp_urlrule_add(table_, k->second, icase ? DP_URL_ICASE : 0, pattern.c_str(), 0,
                               static_cast<uint32_t>(i), nullptr) < 0)
            {
                throw py::value_error("dp_urlrule_add refused term " + std::to_string(i));
            }
            exact_.push_back(k->second == DP_URL_HOST);
        }
    }

    size_t Size() const { return exact_.size(); }

    // The subject goes by pointer and length, never as a C string: a NUL in it is compared as a byte.
    std::pair<bool, uint64_t> Eval(size_t term, const std::string& subject) const
    {
        if (term >= exact_.size())
        {
            throw py::index_error("no term " + std::to_string(term));
        }
        const auto* s = reinterpret_cast<const uint8_t*>(subject.data());
        const auto n = static_cast<uint32_t>(subject.size());
        const bool exact = exact_[term];
        dp_urlrule_req_t req{exact ? nullptr : s, exact ? 0u : n, exact ? s : nullptr, exact ? n : 0u};
        dp_ops_t ops{};
        const bool hit = dp_urlrule_eval(table_, static_cast<uint32_t>(term), &req, &ops) == 1;
        return {hit, ops.bytes_parsed};
    }

  private:
    std::vector<uint64_t> mem_;  // the table's memory (never resized after create)
    dp_urlrule_table_t* table_ = nullptr;
    std::vector<bool> exact_;
};

} // namespace

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
    m.def(
        "url_rules_eval",
        [](const std::vector<std::pair<std::string, std::string>>& rules, const std::string& order,
           bool evaluate_all, const std::string& path, const std::string& host) {
            static const std::map<std::string, dp_urlrule_kind_t> kinds = {
                {"path_beg", DP_URL_PATH_BEG}, {"path_sub", DP_URL_PATH_SUB}, {"path_end", DP_URL_PATH_END},
                {"ext", DP_URL_EXT},           {"host", DP_URL_HOST}};
            if (order != "first" && order != "precedence")
            {
                throw py::value_error("order must be 'first' or 'precedence', not '" + order + "'");
            }
            dp_urlrule_config_t cfg{};
            cfg.max_rules = static_cast<uint32_t>(rules.size() ? rules.size() : 1);
            cfg.max_pattern_bytes = 1;
            for (const auto& r : rules)
            {
                cfg.max_pattern_bytes += static_cast<uint32_t>(r.second.size() + 1);
            }
            cfg.order = order == "first" ? DP_URLRULE_FIRST : DP_URLRULE_PRECEDENCE;
            std::vector<uint64_t> mem((dp_urlrule_memory_size(&cfg) + 7) / 8);
            dp_urlrule_table_t* t = dp_urlrule_create(mem.data(), mem.size() * 8, &cfg);
            if (t == nullptr)
            {
                throw py::value_error("dp_urlrule_create refused the table");
            }
            for (size_t i = 0; i < rules.size(); ++i)
            {
                auto k = kinds.find(rules[i].first);
                if (k == kinds.end())
                {
                    throw py::value_error("unknown rule kind '" + rules[i].first + "'");
                }
                if (dp_urlrule_add(t, k->second, 0, rules[i].second.c_str(), 0, static_cast<uint32_t>(i),
                                   nullptr) < 0)
                {
                    throw py::value_error("dp_urlrule_add refused rule " + std::to_string(i));
                }
            }
            dp_urlrule_req_t req{reinterpret_cast<const uint8_t*>(path.data()), static_cast<uint32_t>(path.size()),
                                 reinterpret_cast<const uint8_t*>(host.data()), static_cast<uint32_t>(host.size())};
            dp_ops_t ops{};
            std::vector<uint32_t> matched;
            if (evaluate_all)
            {
                std::vector<uint32_t> idx(rules.size() ? rules.size() : 1);
                int n = dp_urlrule_match_all(t, &req, idx.data(), static_cast<uint32_t>(idx.size()), &ops);
                for (int i = 0; i < n; ++i)
                {
                    matched.push_back(dp_urlrule_get(t, idx[i])->target);
                }
            }
            else
            {
                uint32_t target = 0;
                if (dp_urlrule_match(t, &req, &target, &ops) >= 0)
                {
                    matched.push_back(target);
                }
            }
            py::dict d;
            d["matched"] = matched;
            d["rules_evaluated"] = ops.rules_evaluated;
            d["bytes_compared"] = ops.bytes_parsed;
            return d;
        },
        py::arg("rules"), py::arg("order"), py::arg("evaluate_all"), py::arg("path"), py::arg("host") = "",
        "The C core's URL rules (dp_urlrule) on one request: rules as (kind, pattern) in the order added "
        "(kind: path_beg, path_sub, path_end, ext, host; target = index); first match (dp_urlrule_match) or "
        "every rule (dp_urlrule_match_all). Returns matched (rule indices), rules_evaluated and "
        "bytes_compared (the core's rules_evaluated and bytes_parsed counters).");
    // Each term is one pattern of an HAProxy ACL: (match, pattern, icase). The core compares
    // bytes; which string it compares is the subject a caller gives each evaluation (the request's
    // path, a Host value, ...): a prefix, suffix or substring test runs the core's PATH_* kind on a
    // request whose path is the subject, an exact test its HOST kind (equality) on one whose Host is
    // the subject. dp_urlrule_eval then counts exactly the comparisons of that one test. The table
    // is built once (a service's rules) and evaluated term by term, so a caller that
    // short-circuits as HAProxy does runs and counts only the tests HAProxy would make.
    py::class_<UrlTerms>(m, "UrlTerms",
                         "The C core's URL rule matching (dp_urlrule_eval), one term at a time: terms as "
                         "(match, pattern, icase) with match str (equal), beg, end or sub.")
        .def(py::init<const std::vector<std::tuple<std::string, std::string, bool>>&>(), py::arg("terms"))
        .def("__len__", &UrlTerms::Size)
        .def("eval", &UrlTerms::Eval, py::arg("term"), py::arg("subject"),
             "Term `term` on the string `subject`: (hit, bytes_compared), the core's verdict and the "
             "bytes_parsed of that one test.");
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
