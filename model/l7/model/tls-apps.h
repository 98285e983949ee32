// TLS end hosts for the web switch's SSL session-ID persistence (seed 003
// section 1.3 "SSL 交換"): only the first record each side sends, which is
// all the switch reads; nothing is encrypted. The bytes are the caller's
// (real ClientHello and ServerHello records in the tests).
//
// TlsClientApp opens one connection per record it is given, one after the
// other: it sends the record, reads the peer's first record (5 header bytes
// and the length they give), keeps it, closes, and opens the next.
// TlsServerApp answers the first whole record of each connection with its
// Answer bytes and closes; it keeps every first record it got.
#ifndef ROUTERTWIN_TLS_APPS_H
#define ROUTERTWIN_TLS_APPS_H

#include <ns3/application.h>
#include <ns3/ipv4-address.h>
#include <ns3/socket.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace routertwin
{

/// Bytes of the first TLS record at the start of b (5 + its length), or 0
/// when the header is not all there.
size_t TlsFirstRecordBytes(const std::string& b);

class TlsServerApp : public ns3::Application
{
  public:
    static ns3::TypeId GetTypeId();
    void SetAnswer(const std::vector<uint8_t>& record) { m_answer.assign(record.begin(), record.end()); }
    /// The first record of each connection, in order of arrival.
    const std::vector<std::string>& Records() const { return m_records; }

  private:
    void StartApplication() override;
    void StopApplication() override;
    void Accept(ns3::Ptr<ns3::Socket> s, const ns3::Address& from);
    void Read(ns3::Ptr<ns3::Socket> s);

    uint16_t m_port = 443;
    std::string m_answer;
    ns3::Ptr<ns3::Socket> m_listen;
    std::map<ns3::Ptr<ns3::Socket>, std::string> m_in;
    std::vector<std::string> m_records;
};

class TlsClientApp : public ns3::Application
{
  public:
    static ns3::TypeId GetTypeId();
    /// One more connection, opened with record.
    void AddConnection(const std::vector<uint8_t>& record) { m_records.emplace_back(record.begin(), record.end()); }
    /// The peer's first record on each connection ("" when it was reset
    /// or closed before one came).
    const std::vector<std::string>& Answers() const { return m_answers; }
    uint32_t ResetsReceived() const { return m_resets; }

  private:
    void StartApplication() override;
    void StopApplication() override;
    void Connect();
    void Connected(ns3::Ptr<ns3::Socket> s);
    void Read(ns3::Ptr<ns3::Socket> s);
    void Ended(ns3::Ptr<ns3::Socket> s);
    void Reset(ns3::Ptr<ns3::Socket> s);
    /// Keeps what came, closes, and goes on with the next connection.
    void Next();

    ns3::Ipv4Address m_vip;
    uint16_t m_port = 443;
    std::vector<std::string> m_records;
    std::vector<std::string> m_answers;
    std::string m_in;
    size_t m_next = 0;
    bool m_open = false;
    bool m_running = false;
    uint32_t m_resets = 0;
    ns3::Ptr<ns3::Socket> m_socket;
};

} // namespace routertwin

#endif
