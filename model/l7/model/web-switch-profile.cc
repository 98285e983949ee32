#include "web-switch-profile.h"

#include <fstream>
#include <map>
#include <cstdlib>
#include <sstream>
#include <vector>
#include <stdexcept>
#include <utility>

namespace routertwin
{

const char*
KeepAliveName(KeepAliveStrategy k)
{
    switch (k)
    {
    case KeepAliveStrategy::RstServer: return "rst_server";
    case KeepAliveStrategy::ServerReuse: return "server_reuse";
    case KeepAliveStrategy::DowngradeClose: return "downgrade_close";
    case KeepAliveStrategy::Redirect302: return "redirect_302";
    case KeepAliveStrategy::None: return "none";
    }
    return "unknown";
}

WebSwitchProfile
LoadWebSwitchProfile(const std::string& path)
{
    std::ifstream in(path);
    if (!in)
        throw std::runtime_error(path + ": cannot be read");
    // (block, key) -> (value, line)
    std::map<std::pair<std::string, std::string>, std::pair<std::string, int>> kv;
    std::string line;
    std::vector<std::pair<size_t, std::string>> parents; // (indent, key) of the enclosing blocks
    for (int n = 1; std::getline(in, line); ++n)
    {
        const size_t hash = line.find('#');
        if (hash != std::string::npos)
            line.erase(hash);
        while (!line.empty() && (line.back() == ' ' || line.back() == '\r'))
            line.pop_back();
        if (line.empty())
            continue;
        const size_t colon = line.find(':');
        if (colon == std::string::npos)
            continue;
        const size_t indent = line.find_first_not_of(' ');
        std::string key = line.substr(indent, colon - indent);
        std::string value = line.substr(colon + 1);
        value.erase(0, value.find_first_not_of(' ') == std::string::npos ? value.size()
                                                                         : value.find_first_not_of(' '));
        while (!parents.empty() && parents.back().first >= indent)
            parents.pop_back();
        std::string block; // "features.l7" for a key two levels down
        for (const auto& [i, k] : parents)
            block += (block.empty() ? "" : ".") + k;
        kv[{block, key}] = {value, n};
        parents.emplace_back(indent, key);
    }
    auto get = [&](const std::string& b, const std::string& k) -> std::pair<std::string, int> {
        auto it = kv.find({b, k});
        if (it == kv.end() || it->second.first.empty())
            throw std::runtime_error(path + ":1: key '" + (b.empty() ? k : b + "." + k) + "': missing");
        return it->second;
    };
    auto number = [&](const std::string& k) {
        const auto [v, n] = get("costs", k);
        size_t used = 0;
        double x = -1;
        try
        {
            x = std::stod(v, &used);
        }
        catch (const std::exception&)
        {
            used = 0;
        }
        if (used != v.size() || !(x > 0))
            throw std::runtime_error(path + ":" + std::to_string(n) + ": key 'costs." + k +
                                     "': must be a positive number, not '" + v + "'");
        return x;
    };
    WebSwitchProfile p;
    p.platform = get("", "platform").first;
    p.vendor = get("product", "vendor").first;
    p.software = kv.count({"product", "software"}) ? kv[{"product", "software"}].first : "";
    const auto [ka, kaLine] = get("behaviour", "keepalive");
    static const std::map<std::string, KeepAliveStrategy> strategies = {
        {"rst_server", KeepAliveStrategy::RstServer},         {"server_reuse", KeepAliveStrategy::ServerReuse},
        {"downgrade_close", KeepAliveStrategy::DowngradeClose}, {"redirect_302", KeepAliveStrategy::Redirect302},
        {"none", KeepAliveStrategy::None}};
    if (!strategies.count(ka))
        throw std::runtime_error(path + ":" + std::to_string(kaLine) + ": key 'behaviour.keepalive': unknown '" +
                                 ka + "'");
    p.keepalive = strategies.at(ka);
    const auto [rm, rmLine] = get("behaviour", "rule_matching");
    static const std::map<std::string, RuleMatching> matchings = {{"first_match", RuleMatching::FirstMatch},
                                                                  {"best_match", RuleMatching::BestMatch},
                                                                  {"per_server_all", RuleMatching::PerServerAll},
                                                                  {"none", RuleMatching::None}};
    if (!matchings.count(rm))
        throw std::runtime_error(path + ":" + std::to_string(rmLine) + ": key 'behaviour.rule_matching': unknown '" +
                                 rm + "'");
    p.ruleMatching = matchings.at(rm);
    p.clockHz = number("clock_mhz") * 1e6;
    p.l4PacketCycles = number("l4_packet_cycles");
    if (kv.count({"costs", "io_bus_bytes_per_s"}))
    {
        p.ioBusBytesPerS = number("io_bus_bytes_per_s");
        p.ioBusCrossings = number("io_bus_crossings");
    }
    // a product without URL switching prices no L7 operation (3Com)
    if (p.keepalive != KeepAliveStrategy::None || kv.count({"costs", "l7_packet_cycles"}))
    {
        p.l7PacketCycles = number("l7_packet_cycles");
        p.connectionCycles = number("connection_cycles");
        p.parseByteCycles = number("parse_byte_cycles");
        p.ruleCycles = number("rule_cycles");
        p.ruleByteCycles = number("rule_byte_cycles");
        p.rewriteCycles = number("rewrite_cycles");
    }
    p.rstSeqDefect = p.vendor == "Cisco" && p.software == "WebNS 5.10";
    // a flow list: [insert, learn]
    const auto [methods, methodsLine] = get("behaviour", "cookie_methods");
    if (methods.size() < 2 || methods.front() != '[' || methods.back() != ']')
        throw std::runtime_error(path + ":" + std::to_string(methodsLine) +
                                 ": key 'behaviour.cookie_methods': not a [list]");
    std::stringstream list(methods.substr(1, methods.size() - 2));
    for (std::string m; std::getline(list, m, ',');)
    {
        m.erase(0, m.find_first_not_of(' '));
        m.erase(m.find_last_not_of(' ') + 1);
        if (m == "prearranged")
            p.cookiePrearranged = true;
        else if (m == "insert")
            p.cookieInsert = true;
        else if (m == "learn")
            p.cookieLearn = true;
        else
            throw std::runtime_error(path + ":" + std::to_string(methodsLine) +
                                     ": key 'behaviour.cookie_methods': unknown '" + m + "'");
    }
    auto flag = [&](const std::string& b, const std::string& k) {
        const auto [v, n] = get(b, k);
        if (v != "true" && v != "false")
            throw std::runtime_error(path + ":" + std::to_string(n) + ": key '" + b + "." + k +
                                     "': must be true or false, not '" + v + "'");
        return v == "true";
    };
    p.sslIdPersistence = flag("features.l7", "ssl_id_persistence");
    p.checkPing = flag("features.fault_tolerance", "check_ping");
    p.checkPort = flag("features.fault_tolerance", "check_port");
    p.checkWebPage = flag("features.fault_tolerance", "check_web_page");
    p.checkContent = flag("features.fault_tolerance", "check_content");
    p.activeBackup = flag("features.fault_tolerance", "active_backup");
    p.activeActive = flag("features.fault_tolerance", "active_active");
    const auto [unparsed, unparsedLine] = get("behaviour", "ssl_unparsed");
    if (unparsed != "forward" && unparsed != "reset")
        throw std::runtime_error(path + ":" + std::to_string(unparsedLine) +
                                 ": key 'behaviour.ssl_unparsed': unknown '" + unparsed + "'");
    p.sslUnparsedDrop = unparsed == "reset";
    const auto [malformed, malformedLine] = get("behaviour", "malformed_request");
    if (malformed != "reset" && malformed != "bad_request")
        throw std::runtime_error(path + ":" + std::to_string(malformedLine) +
                                 ": key 'behaviour.malformed_request': unknown '" + malformed + "'");
    p.malformedBadRequest = malformed == "bad_request";
    const auto [sync, syncLine] = get("behaviour", "session_sync");
    if (sync != "none" && sync != "persistence" && sync != "connections")
        throw std::runtime_error(path + ":" + std::to_string(syncLine) +
                                 ": key 'behaviour.session_sync': unknown '" + sync + "'");
    p.sessionSync = sync == "connections";
    p.persistenceSync = sync != "none";
    const auto [advert, advertLine] = get("behaviour", "failover_advert_interval_s");
    char* advertEnd = nullptr;
    p.failoverAdvertIntervalS = std::strtod(advert.c_str(), &advertEnd);
    // VRRPv3 carries it in centiseconds, 12 bits (RFC 5798 5.2.7)
    if (advert.empty() || *advertEnd != '\0' || !(p.failoverAdvertIntervalS >= 0.01) ||
        p.failoverAdvertIntervalS > 40.95)
        throw std::runtime_error(path + ":" + std::to_string(advertLine) +
                                 ": key 'behaviour.failover_advert_interval_s': a number of seconds in [0.01, 40.95], "
                                 "not '" + advert + "'");
    return p;
}

} // namespace routertwin
