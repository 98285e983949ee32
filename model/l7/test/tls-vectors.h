// Real TLS records for the switch's SSL session-ID persistence tests
// (l7-test.cc, redundancy-test.cc).
#ifndef ROUTERTWIN_L7_TLS_VECTORS_H
#define ROUTERTWIN_L7_TLS_VECTORS_H

#include <cstdint>
#include <string>
#include <vector>

namespace routertwin::tls_vectors
{
// OpenSSL 3.0.19 (Python 3.11's ssl module over MemoryBIOs, TLS 1.2, as in
// core/tests/tls-test.cc): a first ClientHello (no session ID), the
// ServerHello of that handshake (the server chose session ID X), the
// client's next ClientHello (offering X), and the ServerHello of another
// full handshake (ID Y).
inline const char* kFirstHello =
    "16030100b1010000ad030341adb575817636296570a2757fdd785721c8e583fcc05f7e257d3561fb80fcb300001ec02c"
    "c030c02bc02fcca9cca8c024c028c023c027009f009e006b006700ff0100006600000014001200000f7777772e657861"
    "6d706c652e636f6d000b000403000102000a000c000a001d0017001e001900180016000000170000000d002a00280403"
    "05030603080708080809080a080b080408050806040105010601030303010302040205020602";
inline const char* kServerHelloX =
    "160303005d020000590303a8f787e3d61b6b301dea5b5f9b4be7c895cc6f41203685c57070102382a0c5572026978ee5"
    "2e5bc22cc6941e1fb527a4ee566844f958be0a22591c5b546610edafc030000011ff01000100000b0004030001020017"
    "0000";
inline const char* kResumingHelloX =
    "16030100d1010000cd03030760d96903256c448a77f9c725d262cf0a1ca4319837078e4217fd459aa68a212026978ee5"
    "2e5bc22cc6941e1fb527a4ee566844f958be0a22591c5b546610edaf001ec02cc030c02bc02fcca9cca8c024c028c023"
    "c027009f009e006b006700ff0100006600000014001200000f7777772e6578616d706c652e636f6d000b000403000102"
    "000a000c000a001d0017001e001900180016000000170000000d002a0028040305030603080708080809080a080b0804"
    "08050806040105010601030303010302040205020602";
inline const char* kServerHelloY =
    "160303005d020000590303f55c74ed3d44166aef254a188e5821cdd7f516531347766f733db572b51e24ec2018d9be22"
    "bc8adccde7bbbbac3e7b72e237738f74d0adc50bc3a5b6e11941979cc030000011ff01000100000b0004030001020017"
    "0000";

inline std::vector<uint8_t>
Unhex(const std::string& h)
{
    std::vector<uint8_t> v;
    for (size_t i = 0; i + 1 < h.size(); i += 2)
        v.push_back(static_cast<uint8_t>(std::stoi(h.substr(i, 2), nullptr, 16)));
    return v;
}

/// RFC 5246 7.4.1.2 / 7.4.1.3: the session ID's length is the byte at 43
/// of the record, the ID the bytes after it.
inline std::string
SessionIdAt43(const std::vector<uint8_t>& r)
{
    return std::string(r.begin() + 44, r.begin() + 44 + r[43]);
}

} // namespace routertwin::tls_vectors

#endif
