// Reading a runner's config dict from Python: the key walk and the value
// type checks the run_* bindings share. Every error is std::invalid_argument
// "key 'K': ..." (pybind11 turns it into ValueError), so a bad scenario value
// is reported by the name the user wrote.
#ifndef ROUTERTWIN_DICT_CONFIG_H
#define ROUTERTWIN_DICT_CONFIG_H

#include <pybind11/pybind11.h>

#include "config-keys.h"

#include <cstdint>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>

namespace routertwin::bindings
{

/// An int or a float, not a bool (Python's bool is an int subclass).
inline bool
IsNumber(const pybind11::handle& v)
{
    return !pybind11::isinstance<pybind11::bool_>(v) &&
           (pybind11::isinstance<pybind11::int_>(v) || pybind11::isinstance<pybind11::float_>(v));
}

/// Value of `key` as a double; throws unless IsNumber.
inline double
Num(const std::string& key, const pybind11::handle& v)
{
    if (!IsNumber(v))
    {
        throw std::invalid_argument("key '" + key + "': must be a number");
    }
    return v.cast<double>();
}

/// Value of `key` as an int in 0..2^32-1; throws otherwise (bools included).
inline unsigned
Uint(const std::string& key, const pybind11::handle& v)
{
    if (pybind11::isinstance<pybind11::bool_>(v) || !pybind11::isinstance<pybind11::int_>(v) ||
        v.cast<int64_t>() < 0 || v.cast<int64_t>() > 0xFFFFFFFFll)
    {
        throw std::invalid_argument("key '" + key + "': must be a non-negative integer");
    }
    return v.cast<unsigned>();
}

/// Value of `key` as a bool; throws unless it is True or False.
inline bool
Bool(const std::string& key, const pybind11::handle& v)
{
    if (!pybind11::isinstance<pybind11::bool_>(v))
    {
        throw std::invalid_argument("key '" + key + "': must be true or false");
    }
    return v.cast<bool>();
}

/// Value of `key` as a string; throws unless it is a str.
inline std::string
Str(const std::string& key, const pybind11::handle& v)
{
    if (!pybind11::isinstance<pybind11::str>(v))
    {
        throw std::invalid_argument("key '" + key + "': must be a string");
    }
    return v.cast<std::string>();
}

/// Calls read(key, value) for every entry of `config`, in dict order. Keys
/// must be str. A std::invalid_argument from `read` whose message does not
/// already start with "key '" is re-thrown prefixed with "key 'K': ", so a
/// parser that knows nothing of keys (e.g. ParseSonetRate) still names one.
template <class Read>
void
ForEachKey(const pybind11::dict& config, Read&& read)
{
    for (const auto& [k, v] : config)
    {
        if (!pybind11::isinstance<pybind11::str>(k))
        {
            throw std::invalid_argument("config keys must be strings");
        }
        const std::string key = pybind11::cast<std::string>(k);
        try
        {
            read(key, v);
        }
        catch (const std::invalid_argument& e)
        {
            const std::string m = e.what();
            if (m.rfind("key '", 0) == 0)
            {
                throw;
            }
            throw std::invalid_argument("key '" + key + "': " + m);
        }
    }
}

/// A dict value as the scenario helpers' FromKeys take it: bool, int,
/// float, str, or a dict of names to numbers.
inline ConfigValue
ToConfigValue(const std::string& key, const pybind11::handle& v)
{
    // bool before int: Python's bool is an int subclass.
    if (pybind11::isinstance<pybind11::bool_>(v))
    {
        return v.cast<bool>();
    }
    if (pybind11::isinstance<pybind11::int_>(v))
    {
        try
        {
            return v.cast<int64_t>();
        }
        catch (const pybind11::cast_error&)
        {
            throw std::invalid_argument("key '" + key + "': integer out of range");
        }
    }
    if (pybind11::isinstance<pybind11::float_>(v))
    {
        return v.cast<double>();
    }
    if (pybind11::isinstance<pybind11::str>(v))
    {
        return v.cast<std::string>();
    }
    if (pybind11::isinstance<pybind11::dict>(v))
    {
        std::map<std::string, double> m;
        for (const auto& [k, x] : v.cast<pybind11::dict>())
        {
            if (!pybind11::isinstance<pybind11::str>(k) || !IsNumber(x))
            {
                throw std::invalid_argument("key '" + key + "': must map names to numbers");
            }
            m[k.cast<std::string>()] = x.cast<double>();
        }
        return m;
    }
    throw std::invalid_argument("key '" + key + "': unsupported value type " +
                                std::string(Py_TYPE(v.ptr())->tp_name));
}

/// Every entry of `config` as the scenario helpers' FromKeys take them.
inline std::map<std::string, ConfigValue>
ConfigKeys(const pybind11::dict& config)
{
    std::map<std::string, ConfigValue> keys;
    ForEachKey(config, [&](const std::string& key, const pybind11::handle& v) {
        keys.emplace(key, ToConfigValue(key, v));
    });
    return keys;
}

/// A config key's reader: given the key as the user wrote it and its value.
using Setter = std::function<void(const std::string&, const pybind11::handle&)>;

/// Every entry of `d` through its reader in `table`; a key `table` lacks is
/// "key 'PREFIX KEY': unknown key".
inline void
Read(const pybind11::dict& d, const std::string& prefix, const std::map<std::string, Setter>& table)
{
    ForEachKey(d, [&](const std::string& key, const pybind11::handle& v) {
        const auto it = table.find(key);
        if (it == table.end())
        {
            throw std::invalid_argument("key '" + prefix + key + "': unknown key");
        }
        it->second(prefix + key, v);
    });
}

} // namespace routertwin::bindings

#endif
