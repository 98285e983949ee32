#include "ethernet-framing.h"

#include <stdexcept>

namespace routertwin::ethernet
{

double
EthernetBitRate(const std::string& name)
{
    // Accept the spellings lab reports use ("10G", "10GbE", "10GE").
    std::string s = name;
    for (const char* suffix : {"GbE", "GE", "G"})
    {
        const std::string suf(suffix);
        if (s.size() > suf.size() && s.compare(s.size() - suf.size(), suf.size(), suf) == 0)
        {
            s.resize(s.size() - suf.size());
            break;
        }
    }
    static const struct
    {
        const char* gbit;
        double bps;
    } kSpeeds[] = {{"1", 1e9}, {"10", 10e9}, {"25", 25e9}, {"40", 40e9}, {"100", 100e9}, {"400", 400e9}};
    for (const auto& sp : kSpeeds)
    {
        if (s == sp.gbit)
        {
            return sp.bps;
        }
    }
    throw std::invalid_argument("unknown Ethernet speed '" + name +
                                "' (expected 1G, 10G, 25G, 40G, 100G or 400G)");
}

} // namespace routertwin::ethernet
