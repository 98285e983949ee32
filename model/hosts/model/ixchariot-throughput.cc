#include "ixchariot-throughput.h"

#include "ns3/inet-socket-address.h"
#include "ns3/log.h"
#include "ns3/packet.h"
#include "ns3/simulator.h"
#include "ns3/tcp-socket-factory.h"
#include "ns3/trace-source-accessor.h"
#include "ns3/uinteger.h"

#include <algorithm>

namespace routertwin
{

NS_LOG_COMPONENT_DEFINE("RouterTwinIxChariot");
NS_OBJECT_ENSURE_REGISTERED(IxChariotSender);
NS_OBJECT_ENSURE_REGISTERED(IxChariotReceiver);

ns3::TypeId
IxChariotSender::GetTypeId()
{
    static ns3::TypeId tid =
        ns3::TypeId("routertwin::IxChariotSender")
            .SetParent<ns3::Application>()
            .AddConstructor<IxChariotSender>()
            .AddAttribute("Remote", "Endpoint 2's address and port.", ns3::AddressValue(),
                          ns3::MakeAddressAccessor(&IxChariotSender::m_remote), ns3::MakeAddressChecker())
            .AddAttribute("FileSize", "Bytes sent per timing record (Throughput.scr file_size).",
                          ns3::UintegerValue(999999999), ns3::MakeUintegerAccessor(&IxChariotSender::m_fileBytes),
                          ns3::MakeUintegerChecker<uint64_t>(1))
            .AddAttribute("Records", "Timing records (number_of_timing_records).", ns3::UintegerValue(1),
                          ns3::MakeUintegerAccessor(&IxChariotSender::m_recordCount),
                          ns3::MakeUintegerChecker<uint32_t>(1))
            .AddAttribute("SendBufferSize", "Bytes per SEND call (send_buffer_size).", ns3::UintegerValue(65536),
                          ns3::MakeUintegerAccessor(&IxChariotSender::m_sendBufferBytes),
                          ns3::MakeUintegerChecker<uint32_t>(1))
            .AddTraceSource("Record", "A timing record ended: response time (s) and throughput (bit/s).",
                            ns3::MakeTraceSourceAccessor(&IxChariotSender::m_recordTrace),
                            "ns3::TracedValueCallback::Double");
    return tid;
}

void
IxChariotSender::StartApplication()
{
    m_socket = ns3::Socket::CreateSocket(GetNode(), ns3::TcpSocketFactory::GetTypeId());
    m_socket->Bind();
    m_socket->SetConnectCallback(ns3::MakeCallback(&IxChariotSender::Connected, this),
                                 ns3::MakeCallback(&IxChariotSender::ConnectFailed, this));
    m_socket->SetRecvCallback(ns3::MakeCallback(&IxChariotSender::Confirm, this));
    m_chunk.assign(m_sendBufferBytes, 0);
    m_socket->Connect(m_remote);
}

void
IxChariotSender::StopApplication()
{
    if (m_socket)
    {
        m_socket->Close();
    }
}

void
IxChariotSender::Connected(ns3::Ptr<ns3::Socket> s)
{
    s->SetSendCallback(ns3::MakeCallback(&IxChariotSender::Fill, this));
    if (!m_connected.IsNull())
    {
        m_connected();
    }
    StartRecord();
}

void
IxChariotSender::ConnectFailed(ns3::Ptr<ns3::Socket>)
{
    NS_LOG_WARN("connection to endpoint 2 failed");
}

void
IxChariotSender::StartRecord()
{
    m_recordStart = ns3::Simulator::Now();
    m_sentInRecord = 0;
    m_waitingConfirm = false;
    Fill(m_socket, m_socket->GetTxAvailable());
}

void
IxChariotSender::Fill(ns3::Ptr<ns3::Socket> s, uint32_t)
{
    while (!m_waitingConfirm && m_sentInRecord < m_fileBytes)
    {
        const uint64_t left = m_fileBytes - m_sentInRecord;
        const uint32_t want = static_cast<uint32_t>(std::min<uint64_t>(left, m_sendBufferBytes));
        const uint32_t room = s->GetTxAvailable();
        if (room == 0)
        {
            return; // the send callback calls back when the buffer drains
        }
        const int sent = s->Send(m_chunk.data(), std::min(want, room), 0);
        if (sent <= 0)
        {
            return;
        }
        m_sentInRecord += static_cast<uint64_t>(sent);
    }
    if (m_sentInRecord >= m_fileBytes)
    {
        m_waitingConfirm = true; // CONFIRM_REQUEST: the timer runs until the reply
    }
}

void
IxChariotSender::Confirm(ns3::Ptr<ns3::Socket> s)
{
    while (ns3::Ptr<ns3::Packet> p = s->Recv())
    {
        if (p->GetSize() == 0 || !m_waitingConfirm)
        {
            continue;
        }
        const Record r{m_recordStart, ns3::Simulator::Now(), m_fileBytes};
        m_records.push_back(r);
        m_recordTrace(r.Seconds(), 8.0 * static_cast<double>(r.bytes) / r.Seconds());
        if (m_records.size() < m_recordCount)
        {
            StartRecord();
        }
        else
        {
            m_waitingConfirm = false;
            if (!m_done.IsNull())
            {
                m_done();
            }
        }
    }
}

void
IxChariotSender::DoDispose()
{
    m_socket = nullptr;
    m_done = ns3::Callback<void>();
    m_connected = ns3::Callback<void>();
    ns3::Application::DoDispose();
}

ns3::TypeId
IxChariotReceiver::GetTypeId()
{
    static ns3::TypeId tid =
        ns3::TypeId("routertwin::IxChariotReceiver")
            .SetParent<ns3::Application>()
            .AddConstructor<IxChariotReceiver>()
            .AddAttribute("Port", "TCP port (IxChariot endpoints listen on 10115).", ns3::UintegerValue(10115),
                          ns3::MakeUintegerAccessor(&IxChariotReceiver::m_port),
                          ns3::MakeUintegerChecker<uint16_t>())
            .AddAttribute("FileSize", "Bytes per timing record.", ns3::UintegerValue(999999999),
                          ns3::MakeUintegerAccessor(&IxChariotReceiver::m_fileBytes),
                          ns3::MakeUintegerChecker<uint64_t>(1));
    return tid;
}

void
IxChariotReceiver::StartApplication()
{
    m_listener = ns3::Socket::CreateSocket(GetNode(), ns3::TcpSocketFactory::GetTypeId());
    m_listener->Bind(ns3::InetSocketAddress(ns3::Ipv4Address::GetAny(), m_port));
    m_listener->Listen();
    m_listener->SetAcceptCallback(ns3::MakeNullCallback<bool, ns3::Ptr<ns3::Socket>, const ns3::Address&>(),
                                  ns3::MakeCallback(&IxChariotReceiver::Accepted, this));
}

void
IxChariotReceiver::StopApplication()
{
    if (m_conn)
    {
        m_conn->Close();
    }
    if (m_listener)
    {
        m_listener->Close();
    }
}

void
IxChariotReceiver::Accepted(ns3::Ptr<ns3::Socket> s, const ns3::Address&)
{
    m_conn = s;
    s->SetRecvCallback(ns3::MakeCallback(&IxChariotReceiver::Received, this));
}

void
IxChariotReceiver::Received(ns3::Ptr<ns3::Socket> s)
{
    while (ns3::Ptr<ns3::Packet> p = s->Recv())
    {
        uint64_t bytes = p->GetSize();
        m_total += bytes;
        // A delivery may end one record and start the next only if the sender
        // sent ahead, which Throughput.scr does not (it waits for the confirm).
        m_inRecord += bytes;
        if (m_current.halfTime.IsZero() && 2 * m_inRecord >= m_fileBytes)
        {
            m_current.halfTime = ns3::Simulator::Now();
            m_current.halfBytes = m_inRecord;
        }
        if (m_inRecord >= m_fileBytes)
        {
            m_current.lastTime = ns3::Simulator::Now();
            m_marks.push_back(m_current);
            m_current = Mark{};
            m_inRecord = 0;
            const uint8_t ack = 1; // CONFIRM_ACKNOWLEDGE
            s->Send(&ack, 1, 0);
        }
    }
}

void
IxChariotReceiver::DoDispose()
{
    m_listener = nullptr;
    m_conn = nullptr;
    ns3::Application::DoDispose();
}

} // namespace routertwin
