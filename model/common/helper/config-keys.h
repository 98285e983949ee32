// Scenario configuration as it arrives from a Python dict: one value type
// and the checked conversions every scenario helper's FromKeys uses. Every
// error is std::invalid_argument "key 'K': ..." naming the key the user
// wrote (pybind11 turns it into ValueError, the Python side adds file and
// line).
#ifndef ROUTERTWIN_CONFIG_KEYS_H
#define ROUTERTWIN_CONFIG_KEYS_H

#include <cstdint>
#include <map>
#include <string>
#include <variant>

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

} // namespace config
} // namespace routertwin

#endif
