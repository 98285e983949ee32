// TLS ClientHello session-ID extraction (dp_tls). Hellos are assembled
// here field by field from RFC 5246 7.4.1.2 / RFC 8446 4.1.2, and two were
// written by OpenSSL 3.0.19 through Python 3.11's ssl module into a
// MemoryBIO (ssl.SSLContext(PROTOCOL_TLS_CLIENT), maximum_version TLS 1.2
// resp. 1.3, server_hostname "www.example.com", wrap_bio + do_handshake
// until SSLWantReadError, then the outgoing BIO read; not reproducible
// byte for byte since random and key shares are fresh each run, so the
// bytes are committed here and in core/golden/make_vectors.py).
#include "dp_tls.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

namespace {

std::vector<uint8_t> Unhex(const std::string &h)
{
    std::vector<uint8_t> v;
    for (size_t i = 0; i + 1 < h.size(); i += 2)
        v.push_back((uint8_t)std::stoi(h.substr(i, 2), nullptr, 16));
    return v;
}

const char *kOpenSsl12 =
    "16030100b5010000b10303c1d297e364dcb1ed9a240110592e2952518efaed500940cc52d5fc1d4ef68aeb00001ec02c"
    "c030c02bc02fcca9cca8c024c028c023c027009f009e006b006700ff0100006a00000014001200000f7777772e657861"
    "6d706c652e636f6d000b000403000102000a000c000a001d0017001e00190018002300000016000000170000000d002a"
    "0028040305030603080708080809080a080b080408050806040105010601030303010302040205020602";
const char *kOpenSsl13 =
    "1603010200010001fc030336ed2d31d3c0779682f7f5ccb62f10d2f4873b085ab87ed7cf91af50faa890cb2027375c75"
    "f3e78298e1a09cb4b4433d59e2ce9bbbd5705e2a6da609162fc070ff0024130213031301c02cc030c02bc02fcca9cca8"
    "c024c028c023c027009f009e006b006700ff0100018f00000014001200000f7777772e6578616d706c652e636f6d000b"
    "000403000102000a00160014001d0017001e0019001801000101010201030104002300000016000000170000000d002a"
    "0028040305030603080708080809080a080b080408050806040105010601030303010302040205020602002b00050403"
    "040303002d00020101003300260024001d00205be4fb55e6256c03a2a4129e267b0f1e74de81548604a7a70085ecbfcb"
    "150a20001500de0000000000000000000000000000000000000000000000000000000000000000000000000000000000"
    "000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
    "000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
    "000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
    "00000000000000000000000000000000000000000000000000000000000000000000000000";

void Put16(std::vector<uint8_t> &v, size_t n)
{
    v.push_back(uint8_t(n >> 8));
    v.push_back(uint8_t(n));
}

// A ClientHello record built from its fields; lengths computed here.
struct Hello {
    uint16_t record_version = 0x0301, client_version = 0x0303;
    std::vector<uint8_t> sid, suites = {0x00, 0x2f, 0xc0, 0x2b}, comp = {0};
    std::vector<std::pair<uint16_t, std::vector<uint8_t>>> ext;
    bool with_ext = true;
    std::vector<uint8_t> Body() const
    {
        std::vector<uint8_t> b;
        Put16(b, client_version);
        for (int i = 0; i < 32; i++)
            b.push_back(uint8_t(0xA0 + i));
        b.push_back(uint8_t(sid.size()));
        b.insert(b.end(), sid.begin(), sid.end());
        Put16(b, suites.size());
        b.insert(b.end(), suites.begin(), suites.end());
        b.push_back(uint8_t(comp.size()));
        b.insert(b.end(), comp.begin(), comp.end());
        if (with_ext) {
            std::vector<uint8_t> e;
            for (auto &x : ext) {
                Put16(e, x.first);
                Put16(e, x.second.size());
                e.insert(e.end(), x.second.begin(), x.second.end());
            }
            Put16(b, e.size());
            b.insert(b.end(), e.begin(), e.end());
        }
        return b;
    }
    std::vector<uint8_t> Record() const
    {
        std::vector<uint8_t> b = Body(), r = {22, uint8_t(record_version >> 8), uint8_t(record_version)};
        Put16(r, b.size() + 4);
        r.push_back(1);
        r.push_back(uint8_t(b.size() >> 16));
        Put16(r, b.size() & 0xFFFF);
        r.insert(r.end(), b.begin(), b.end());
        return r;
    }
};

std::vector<uint8_t> Sni(const std::string &name)
{
    std::vector<uint8_t> e;
    Put16(e, name.size() + 3);
    e.push_back(0);
    Put16(e, name.size());
    e.insert(e.end(), name.begin(), name.end());
    return e;
}

int Parse(const std::vector<uint8_t> &r, dp_tls_hello_t *h, dp_ops_t *ops = nullptr)
{
    return dp_tls_parse_client_hello(r.data(), r.size(), h, ops);
}

TEST(Tls, HandBuiltTls12HelloGivesItsSessionIdAndServerName)
{
    Hello hb;
    for (int i = 0; i < 32; i++)
        hb.sid.push_back(uint8_t(i * 7));
    hb.ext = {{0, Sni("shop.example")}, {0xff01, {0}}};
    std::vector<uint8_t> r = hb.Record();
    dp_tls_hello_t h;
    dp_ops_t ops = {};
    ASSERT_EQ(Parse(r, &h, &ops), DP_TLS_OK);
    EXPECT_EQ(h.session_id_len, 32);
    EXPECT_EQ(std::memcmp(h.session_id, hb.sid.data(), 32), 0);
    EXPECT_EQ(h.client_version, 0x0303);
    EXPECT_EQ(h.max_version, 0x0303);
    EXPECT_EQ(h.record_version, 0x0301);
    EXPECT_EQ(h.cipher_suites, 2);
    EXPECT_EQ(h.extensions, 2);
    EXPECT_EQ(std::string((const char *)r.data() + h.sni_off, h.sni_len), "shop.example");
    EXPECT_EQ(h.record_len, r.size());
    EXPECT_EQ(ops.bytes_parsed, r.size());
    // Without extensions (TLS 1.0 style) and with an empty session ID.
    Hello bare;
    bare.with_ext = false;
    bare.client_version = 0x0301;
    ASSERT_EQ(Parse(bare.Record(), &h), DP_TLS_OK);
    EXPECT_EQ(h.session_id_len, 0);
    EXPECT_EQ(h.max_version, 0x0301);
}

TEST(Tls, Tls13SupportedVersionsSkipGrease)
{
    Hello hb;
    hb.sid.assign(32, 0x55);
    hb.ext = {{43, {6, 0x3a, 0x3a, 0x03, 0x04, 0x03, 0x03}}};
    dp_tls_hello_t h;
    ASSERT_EQ(Parse(hb.Record(), &h), DP_TLS_OK);
    EXPECT_EQ(h.max_version, 0x0304);
    EXPECT_EQ(h.client_version, 0x0303);
}

TEST(Tls, OpenSslHellosParse)
{
    for (int v = 0; v < 2; v++) {
        std::vector<uint8_t> r = Unhex(v ? kOpenSsl13 : kOpenSsl12);
        dp_tls_hello_t h;
        dp_ops_t ops = {};
        ASSERT_EQ(Parse(r, &h, &ops), DP_TLS_OK) << v;
        // RFC 5246 7.4.1.2: the session ID length is the byte after the
        // 5 + 4 header bytes, 2 version bytes and 32 random bytes.
        EXPECT_EQ(h.session_id_len, r[43]);
        EXPECT_EQ(h.session_id_len, v ? 32 : 0); // OpenSSL's 1.3 compatibility mode sends 32 random bytes
        EXPECT_EQ(std::memcmp(h.session_id, r.data() + 44, h.session_id_len), 0);
        EXPECT_EQ(h.max_version, v ? 0x0304 : 0x0303);
        EXPECT_EQ(std::string((const char *)r.data() + h.sni_off, h.sni_len), "www.example.com");
        EXPECT_EQ(ops.bytes_parsed, r.size());
        // Every truncation is "more", never an error or a read past len.
        for (size_t n = 0; n < r.size(); n++) {
            std::vector<uint8_t> cut(r.begin(), r.begin() + n);
            EXPECT_EQ(Parse(cut, &h), DP_TLS_MORE) << n;
        }
    }
}

TEST(Tls, EveryLengthFieldIsChecked)
{
    Hello hb;
    hb.sid.assign(16, 1);
    hb.ext = {{0, Sni("a.b")}, {43, {2, 3, 4}}};
    const std::vector<uint8_t> good = hb.Record();
    dp_tls_hello_t h;
    ASSERT_EQ(Parse(good, &h), DP_TLS_OK);
    auto expect = [&](std::vector<uint8_t> r, int rc, const char *what) {
        dp_ops_t ops = {};
        EXPECT_EQ(Parse(r, &h, &ops), rc) << what;
        EXPECT_EQ(h.session_id_len, 0) << what;
        EXPECT_LE(ops.bytes_parsed, r.size()) << what;
    };
    std::vector<uint8_t> r = good;
    r[0] = 23;
    expect(r, DP_TLS_ENOTHANDSHAKE, "application data");
    r = good;
    r[1] = 2;
    expect(r, DP_TLS_ENOTHANDSHAKE, "SSL 2");
    r = good;
    r[5] = 2;
    expect(r, DP_TLS_ENOTHELLO, "server hello");
    r = good;
    r[8]++;
    expect(r, DP_TLS_EFRAGMENTED, "handshake longer than the record");
    r = good;
    r[8]--;
    expect(r, DP_TLS_EMALFORMED, "handshake shorter than the record");
    r = good;
    r[43] = 33;
    expect(r, DP_TLS_EMALFORMED, "session ID over 32");
    size_t cs = 44 + 16;
    r = good;
    r[cs + 1] = 3;
    expect(r, DP_TLS_EMALFORMED, "odd cipher suite length");
    r = good;
    r[cs + 1] = 0;
    expect(r, DP_TLS_EMALFORMED, "no cipher suite");
    r = good;
    r[cs + 6] = 0;
    expect(r, DP_TLS_EMALFORMED, "no compression method");
    size_t el = cs + 2 + 4 + 2;
    r = good;
    r[el + 1]++;
    expect(r, DP_TLS_EMALFORMED, "extensions length past the end");
    r = good;
    r[el + 5]++;
    expect(r, DP_TLS_EMALFORMED, "extension length past the block");
    r = good;
    r[el + 2 + 4 + 1]++;
    expect(r, DP_TLS_EMALFORMED, "server_name list length");
    std::vector<uint8_t> big = {22, 3, 1, 0x40, 0x01};
    big.resize(5 + 0x4001);
    expect(big, DP_TLS_EMALFORMED, "record over 2^14");
    dp_ops_t ops = {};
    r = good;
    r[43] = 33;
    Parse(r, &h, &ops);
    EXPECT_EQ(ops.bytes_parsed, 43u); // record, handshake header, version, random
}

// A full TLS 1.2 handshake and a resumption attempt by OpenSSL 3.0.19
// through Python 3.11's ssl module, client and server in one process over
// MemoryBIOs (server: a self-signed RSA 2048 certificate, OP_NO_TICKET,
// maximum_version TLS 1.2): the server's first record (its ServerHello
// alone) and the second connection's ClientHello, which offers the session
// ID the first ServerHello chose. Random bytes are fresh each run: the
// bytes are committed here.
const char *kOpenSslServerHello12 =
    "160303005d020000590303a8f787e3d61b6b301dea5b5f9b4be7c895cc6f41203685c57070102382a0c5572026978ee5"
    "2e5bc22cc6941e1fb527a4ee566844f958be0a22591c5b546610edafc030000011ff01000100000b0004030001020017"
    "0000";
const char *kOpenSslFirstHello12 =
    "16030100b1010000ad030341adb575817636296570a2757fdd785721c8e583fcc05f7e257d3561fb80fcb300001ec02c"
    "c030c02bc02fcca9cca8c024c028c023c027009f009e006b006700ff0100006600000014001200000f7777772e657861"
    "6d706c652e636f6d000b000403000102000a000c000a001d0017001e001900180016000000170000000d002a00280403"
    "05030603080708080809080a080b080408050806040105010601030303010302040205020602";
const char *kOpenSslResumingHello12 =
    "16030100d1010000cd03030760d96903256c448a77f9c725d262cf0a1ca4319837078e4217fd459aa68a212026978ee5"
    "2e5bc22cc6941e1fb527a4ee566844f958be0a22591c5b546610edaf001ec02cc030c02bc02fcca9cca8c024c028c023"
    "c027009f009e006b006700ff0100006600000014001200000f7777772e6578616d706c652e636f6d000b000403000102"
    "000a000c000a001d0017001e001900180016000000170000000d002a0028040305030603080708080809080a080b0804"
    "08050806040105010601030303010302040205020602";

// A ServerHello record from its fields (RFC 5246 7.4.1.3), optionally
// followed in the same record by more handshake bytes.
std::vector<uint8_t> ServerHelloRecord(const std::vector<uint8_t> &sid, const std::vector<uint8_t> *ext,
                                       const std::vector<uint8_t> &after = {})
{
    std::vector<uint8_t> b = {0x03, 0x03};
    for (int i = 0; i < 32; i++)
        b.push_back(uint8_t(0x50 + i));
    b.push_back(uint8_t(sid.size()));
    b.insert(b.end(), sid.begin(), sid.end());
    b.insert(b.end(), {0x13, 0x01, 0x00});
    if (ext) {
        Put16(b, ext->size());
        b.insert(b.end(), ext->begin(), ext->end());
    }
    std::vector<uint8_t> r = {22, 3, 3};
    Put16(r, 4 + b.size() + after.size());
    r.push_back(2);
    r.push_back(0);
    Put16(r, b.size());
    r.insert(r.end(), b.begin(), b.end());
    r.insert(r.end(), after.begin(), after.end());
    return r;
}

TEST(TlsServerHello, RealOpenSslServerHelloGivesTheSessionIdItsClientOffersNext)
{
    const std::vector<uint8_t> sh = Unhex(kOpenSslServerHello12), ch1 = Unhex(kOpenSslFirstHello12),
                               ch2 = Unhex(kOpenSslResumingHello12);
    dp_tls_server_hello_t s;
    dp_tls_hello_t c1, c2;
    dp_ops_t ops = {};
    ASSERT_EQ(dp_tls_parse_server_hello(sh.data(), sh.size(), &s, &ops), DP_TLS_OK);
    // by offset (RFC 5246: 5 + 4 header bytes, version, 32 random bytes,
    // then the length byte at 43)
    ASSERT_EQ(s.session_id_len, sh[43]);
    EXPECT_EQ(s.session_id_len, 32);
    EXPECT_EQ(std::memcmp(s.session_id, sh.data() + 44, 32), 0);
    EXPECT_EQ(s.server_version, 0x0303);
    EXPECT_EQ(s.selected_version, 0x0303);
    EXPECT_EQ(s.cipher_suite, 0xc030); // TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384
    EXPECT_EQ(s.record_len, sh.size());
    EXPECT_EQ(ops.bytes_parsed, sh.size());
    for (size_t n = 0; n < sh.size(); ++n)
        EXPECT_EQ(dp_tls_parse_server_hello(sh.data(), n, &s, nullptr), DP_TLS_MORE) << n;
    // the first ClientHello offered nothing; the second offers that ID
    ASSERT_EQ(Parse(ch1, &c1), DP_TLS_OK);
    EXPECT_EQ(c1.session_id_len, 0);
    ASSERT_EQ(Parse(ch2, &c2), DP_TLS_OK);
    ASSERT_EQ(dp_tls_parse_server_hello(sh.data(), sh.size(), &s, nullptr), DP_TLS_OK);
    ASSERT_EQ(c2.session_id_len, 32);
    EXPECT_EQ(std::memcmp(c2.session_id, s.session_id, 32), 0);
    // a ClientHello is no ServerHello, and the other way round
    EXPECT_EQ(dp_tls_parse_server_hello(ch2.data(), ch2.size(), &s, nullptr), DP_TLS_ENOTSERVERHELLO);
    EXPECT_EQ(Parse(sh, &c1), DP_TLS_ENOTHELLO);
}

TEST(TlsServerHello, LengthsAreCheckedAgainstTheirContainers)
{
    dp_tls_server_hello_t s;
    const std::vector<uint8_t> sid(32, 0x77);
    // no extensions; then a Certificate message after it in the record
    std::vector<uint8_t> r = ServerHelloRecord(sid, nullptr);
    ASSERT_EQ(dp_tls_parse_server_hello(r.data(), r.size(), &s, nullptr), DP_TLS_OK);
    EXPECT_EQ(s.cipher_suite, 0x1301);
    const std::vector<uint8_t> cert = {11, 0, 0, 3, 0, 0, 0};
    r = ServerHelloRecord(sid, nullptr, cert);
    dp_ops_t ops = {};
    ASSERT_EQ(dp_tls_parse_server_hello(r.data(), r.size(), &s, &ops), DP_TLS_OK);
    EXPECT_EQ(ops.bytes_parsed, r.size() - cert.size());
    // TLS 1.3: supported_versions holds the selected version
    const std::vector<uint8_t> sv = {0x00, 0x2b, 0x00, 0x02, 0x03, 0x04};
    r = ServerHelloRecord(sid, &sv);
    ASSERT_EQ(dp_tls_parse_server_hello(r.data(), r.size(), &s, nullptr), DP_TLS_OK);
    EXPECT_EQ(s.selected_version, 0x0304);
    EXPECT_EQ(s.server_version, 0x0303);
    // supported_versions of 3 bytes; an extension running past its block;
    // a session ID of 33 bytes; a hello longer than its record
    const std::vector<uint8_t> sv3 = {0x00, 0x2b, 0x00, 0x03, 0x03, 0x04, 0x00};
    r = ServerHelloRecord(sid, &sv3);
    EXPECT_EQ(dp_tls_parse_server_hello(r.data(), r.size(), &s, nullptr), DP_TLS_EMALFORMED);
    const std::vector<uint8_t> over = {0xff, 0x01, 0x00, 0x09, 0x00};
    r = ServerHelloRecord(sid, &over);
    EXPECT_EQ(dp_tls_parse_server_hello(r.data(), r.size(), &s, nullptr), DP_TLS_EMALFORMED);
    EXPECT_EQ(s.session_id_len, 0); // nothing but record_len on an error
    EXPECT_EQ(s.record_len, r.size());
    r = ServerHelloRecord(std::vector<uint8_t>(33, 1), nullptr);
    EXPECT_EQ(dp_tls_parse_server_hello(r.data(), r.size(), &s, nullptr), DP_TLS_EMALFORMED);
    r = ServerHelloRecord(sid, nullptr);
    r[8] = uint8_t(r[8] + 1);
    EXPECT_EQ(dp_tls_parse_server_hello(r.data(), r.size(), &s, nullptr), DP_TLS_EFRAGMENTED);
    // an alert record, an SSLv2 start
    const std::vector<uint8_t> alert = {21, 3, 3, 0, 2, 2, 40};
    EXPECT_EQ(dp_tls_parse_server_hello(alert.data(), alert.size(), &s, nullptr), DP_TLS_ENOTHANDSHAKE);
    EXPECT_STREQ(dp_tls_status_name(DP_TLS_ENOTSERVERHELLO), "not_server_hello");
}

} // namespace
