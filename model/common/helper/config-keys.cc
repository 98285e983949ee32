#include "config-keys.h"

#include <cmath>
#include <stdexcept>

namespace routertwin::config
{

[[noreturn]] void
Bad(const std::string& key, const std::string& what)
{
    throw std::invalid_argument("key '" + key + "': " + what);
}

double
AsDouble(const std::string& key, const ConfigValue& v)
{
    if (const auto* d = std::get_if<double>(&v))
    {
        if (!std::isfinite(*d))
        {
            Bad(key, "must be a finite number");
        }
        return *d;
    }
    if (const auto* i = std::get_if<int64_t>(&v))
    {
        return static_cast<double>(*i);
    }
    Bad(key, "must be a number");
}

double
NonNeg(const std::string& key, const ConfigValue& v)
{
    const double d = AsDouble(key, v);
    if (d < 0)
    {
        Bad(key, "must be >= 0");
    }
    return d;
}

double
Positive(const std::string& key, const ConfigValue& v)
{
    const double d = AsDouble(key, v);
    if (d <= 0)
    {
        Bad(key, "must be > 0");
    }
    return d;
}

int64_t
AsInt(const std::string& key, const ConfigValue& v, int64_t lo, int64_t hi)
{
    const auto* i = std::get_if<int64_t>(&v);
    if (!i)
    {
        Bad(key, "must be an integer");
    }
    if (*i < lo || *i > hi)
    {
        Bad(key, "must be in " + std::to_string(lo) + ".." + std::to_string(hi));
    }
    return *i;
}

std::string
AsString(const std::string& key, const ConfigValue& v)
{
    const auto* s = std::get_if<std::string>(&v);
    if (!s)
    {
        Bad(key, "must be a string");
    }
    return *s;
}

bool
AsBool(const std::string& key, const ConfigValue& v)
{
    const auto* b = std::get_if<bool>(&v);
    if (!b)
    {
        Bad(key, "must be true or false");
    }
    return *b;
}

} // namespace routertwin::config
