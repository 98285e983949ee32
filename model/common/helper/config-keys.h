// Scenario configuration as it arrives from a Python dict: one value type
// and the checked conversions every scenario helper's FromKeys uses. Every
// error is std::invalid_argument "key 'K': ..." naming the key the user
// wrote (pybind11 turns it into ValueError, the Python side adds file and
// line).
#ifndef ROUTERTWIN_CONFIG_KEYS_H
#define ROUTERTWIN_CONFIG_KEYS_H

#include <cstdint>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

namespace routertwin
{

/// One configuration value as it comes from a dict.
using ConfigValue = std::variant<bool, int64_t, double, std::string, std::map<std::string, double>>;

namespace config
{

/// Throws std::invalid_argument("key 'KEY': WHAT").
[[noreturn]] void Bad(const std::string& key, const std::string& what);

/// A finite number (an integer is accepted).
double AsDouble(const std::string& key, const ConfigValue& v);

/// A finite number >= 0.
double NonNeg(const std::string& key, const ConfigValue& v);

/// A finite number > 0.
double Positive(const std::string& key, const ConfigValue& v);

/// An integer in lo..hi.
int64_t AsInt(const std::string& key, const ConfigValue& v, int64_t lo, int64_t hi);

std::string AsString(const std::string& key, const ConfigValue& v);

bool AsBool(const std::string& key, const ConfigValue& v);

/// One key of a scenario helper's table: its name and how it sets Config.
template <typename Config>
struct Key
{
    const char* name;
    std::function<void(Config&, const std::string&, const ConfigValue&)> set;
};

/// The names of a key table, in table order (documentation order).
template <typename Config>
std::vector<std::string>
KeyNames(const std::vector<Key<Config>>& table)
{
    std::vector<std::string> names;
    for (const auto& k : table)
    {
        names.emplace_back(k.name);
    }
    return names;
}

/// Sets `values` on `config` through `table`. An unknown key, or a value a
/// setter refuses, throws std::invalid_argument naming the key; parsers
/// that know nothing of keys get the key named here.
template <typename Config>
void
ApplyKeys(const std::vector<Key<Config>>& table, const std::map<std::string, ConfigValue>& values,
          Config& config)
{
    for (const auto& [name, value] : values)
    {
        const Key<Config>* found = nullptr;
        for (const auto& k : table)
        {
            if (name == k.name)
            {
                found = &k;
                break;
            }
        }
        if (!found)
        {
            Bad(name, "unknown key");
        }
        try
        {
            found->set(config, name, value);
        }
        catch (const std::invalid_argument& e)
        {
            const std::string m = e.what();
            if (m.rfind("key '", 0) == 0)
            {
                throw;
            }
            Bad(name, m);
        }
    }
}

} // namespace config
} // namespace routertwin

#endif
