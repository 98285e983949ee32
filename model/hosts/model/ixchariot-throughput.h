// IxChariot's Throughput.scr between two endpoints, as a pair of ns-3
// applications (seed 004: "添加测试脚本 Throughput.scr ... file_size 调整到最大
// 999999999"). The script, as Ixia documents it (IxChariot Scripts Guide,
// Throughput.scr; the benchmark the seed runs):
//   Endpoint 1: CONNECT_INITIATE; then for each timing record:
//     START_TIMER; SEND file_size bytes (in send_buffer_size pieces);
//     CONFIRM_REQUEST (wait for Endpoint 2's CONFIRM_ACKNOWLEDGE);
//     END_TIMER; then DISCONNECT.
//   Endpoint 2: CONNECT_ACCEPT; per record RECEIVE file_size bytes and
//     CONFIRM_ACKNOWLEDGE (a 1-byte reply).
// A record's response time is END_TIMER - START_TIMER; its throughput is
// file_size x 8 / response time (bits per second; IxChariot's "M" is 10^6).
// The connection is set up once, before the first timer: slow start falls
// into the first record only.
#ifndef ROUTERTWIN_IXCHARIOT_THROUGHPUT_H
#define ROUTERTWIN_IXCHARIOT_THROUGHPUT_H

#include "ns3/address.h"
#include "ns3/application.h"
#include "ns3/nstime.h"
#include "ns3/socket.h"
#include "ns3/traced-callback.h"

#include <cstdint>
#include <vector>

namespace routertwin
{

/// Endpoint 1: sends file_size bytes per record and times each record.
class IxChariotSender : public ns3::Application
{
  public:
    static ns3::TypeId GetTypeId();

    /// One timing record.
    struct Record
    {
        ns3::Time start;
        ns3::Time end;
        uint64_t bytes;
        double Seconds() const { return (end - start).GetSeconds(); }
    };
    const std::vector<Record>& Records() const { return m_records; }
    /// The socket, once started (to attach traces).
    ns3::Ptr<ns3::Socket> GetSocket() const { return m_socket; }
    /// Called back when the last record ends.
    void SetDoneCallback(ns3::Callback<void> done) { m_done = done; }
    /// Called back when the connection is up, just before the first record.
    void SetConnectedCallback(ns3::Callback<void> cb) { m_connected = cb; }

  protected:
    void DoDispose() override;

  private:
    void StartApplication() override;
    void StopApplication() override;
    void Connected(ns3::Ptr<ns3::Socket> s);
    void ConnectFailed(ns3::Ptr<ns3::Socket> s);
    void StartRecord();
    void Fill(ns3::Ptr<ns3::Socket> s, uint32_t available);
    void Confirm(ns3::Ptr<ns3::Socket> s);

    ns3::Address m_remote;
    uint64_t m_fileBytes = 999999999;
    uint32_t m_recordCount = 1;
    uint32_t m_sendBufferBytes = 65536;
    ns3::Ptr<ns3::Socket> m_socket;
    std::vector<Record> m_records;
    ns3::Time m_recordStart;
    uint64_t m_sentInRecord = 0;
    bool m_waitingConfirm = false;
    std::vector<uint8_t> m_chunk;
    ns3::Callback<void> m_done;
    ns3::Callback<void> m_connected;
    ns3::TracedCallback<double, double> m_recordTrace;
};

/// Endpoint 2: receives file_size bytes per record, acknowledges each, and
/// marks when half of a record had arrived (for the steady goodput of the
/// record's second half).
class IxChariotReceiver : public ns3::Application
{
  public:
    static ns3::TypeId GetTypeId();

    struct Mark
    {
        ns3::Time halfTime; ///< first delivery that passed half of the record
        uint64_t halfBytes; ///< the record's bytes delivered by then
        ns3::Time lastTime; ///< delivery of the record's last byte
    };
    const std::vector<Mark>& Marks() const { return m_marks; }
    uint64_t TotalBytes() const { return m_total; }
    ns3::Ptr<ns3::Socket> GetListener() const { return m_listener; }

  protected:
    void DoDispose() override;

  private:
    void StartApplication() override;
    void StopApplication() override;
    void Accepted(ns3::Ptr<ns3::Socket> s, const ns3::Address& from);
    void Received(ns3::Ptr<ns3::Socket> s);

    uint16_t m_port = 10115;
    uint64_t m_fileBytes = 999999999;
    ns3::Ptr<ns3::Socket> m_listener;
    ns3::Ptr<ns3::Socket> m_conn;
    uint64_t m_inRecord = 0;
    uint64_t m_total = 0;
    Mark m_current{};
    std::vector<Mark> m_marks;
};

} // namespace routertwin

#endif
