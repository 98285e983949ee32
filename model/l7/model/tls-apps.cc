#include "tls-apps.h"

#include <ns3/inet-socket-address.h>
#include <ns3/packet.h>
#include <ns3/simulator.h>
#include <ns3/tcp-socket-factory.h>
#include <ns3/uinteger.h>

namespace routertwin
{
using namespace ns3;

size_t
TlsFirstRecordBytes(const std::string& b)
{
    if (b.size() < 5)
        return 0;
    return 5 + ((static_cast<uint8_t>(b[3]) << 8) | static_cast<uint8_t>(b[4]));
}

namespace
{
std::string
Drain(Ptr<Socket> s)
{
    std::string out;
    while (Ptr<Packet> p = s->Recv())
    {
        std::string chunk(p->GetSize(), '\0');
        p->CopyData(reinterpret_cast<uint8_t*>(chunk.data()), chunk.size());
        out += chunk;
    }
    return out;
}
} // namespace

NS_OBJECT_ENSURE_REGISTERED(TlsServerApp);
NS_OBJECT_ENSURE_REGISTERED(TlsClientApp);

TypeId
TlsServerApp::GetTypeId()
{
    static TypeId tid = TypeId("routertwin::TlsServerApp")
                            .SetParent<Application>()
                            .AddConstructor<TlsServerApp>()
                            .AddAttribute("Port", "TCP port listened on.", UintegerValue(443),
                                          MakeUintegerAccessor(&TlsServerApp::m_port),
                                          MakeUintegerChecker<uint16_t>());
    return tid;
}

void
TlsServerApp::StartApplication()
{
    m_listen = Socket::CreateSocket(GetNode(), TcpSocketFactory::GetTypeId());
    m_listen->Bind(InetSocketAddress(Ipv4Address::GetAny(), m_port));
    m_listen->Listen();
    m_listen->SetAcceptCallback(MakeNullCallback<bool, Ptr<Socket>, const Address&>(),
                                MakeCallback(&TlsServerApp::Accept, this));
}

void
TlsServerApp::StopApplication()
{
    if (m_listen)
        m_listen->Close();
}

void
TlsServerApp::Accept(Ptr<Socket> s, const Address&)
{
    m_in[s] = "";
    s->SetRecvCallback(MakeCallback(&TlsServerApp::Read, this));
}

void
TlsServerApp::Read(Ptr<Socket> s)
{
    std::string& in = m_in[s];
    const bool answered = !in.empty() && in.size() >= TlsFirstRecordBytes(in) && TlsFirstRecordBytes(in) > 0;
    in += Drain(s);
    const size_t n = TlsFirstRecordBytes(in);
    if (answered || n == 0 || in.size() < n)
        return;
    m_records.push_back(in.substr(0, n));
    s->Send(reinterpret_cast<const uint8_t*>(m_answer.data()), static_cast<uint32_t>(m_answer.size()), 0);
    s->Close();
}

TypeId
TlsClientApp::GetTypeId()
{
    static TypeId tid = TypeId("routertwin::TlsClientApp")
                            .SetParent<Application>()
                            .AddConstructor<TlsClientApp>()
                            .AddAttribute("Remote", "The virtual service's address.",
                                          Ipv4AddressValue(Ipv4Address("198.18.1.1")),
                                          MakeIpv4AddressAccessor(&TlsClientApp::m_vip), MakeIpv4AddressChecker())
                            .AddAttribute("Port", "The SSL service's port.", UintegerValue(443),
                                          MakeUintegerAccessor(&TlsClientApp::m_port),
                                          MakeUintegerChecker<uint16_t>());
    return tid;
}

void
TlsClientApp::StartApplication()
{
    m_running = true;
    Connect();
}

void
TlsClientApp::StopApplication()
{
    // The stop ends the client: the open connection's answer or close
    // (Read, Ended: m_open) and a connection Next already scheduled
    // (Connect: m_running) start nothing after it.
    m_running = false;
    if (m_socket && m_open)
    {
        m_open = false;
        m_socket->Close();
    }
}

void
TlsClientApp::Connect()
{
    if (!m_running || m_next >= m_records.size())
        return;
    m_in.clear();
    m_open = true;
    m_socket = Socket::CreateSocket(GetNode(), TcpSocketFactory::GetTypeId());
    m_socket->Bind();
    m_socket->SetConnectCallback(MakeCallback(&TlsClientApp::Connected, this), MakeCallback(&TlsClientApp::Ended, this));
    m_socket->SetRecvCallback(MakeCallback(&TlsClientApp::Read, this));
    m_socket->SetCloseCallbacks(MakeCallback(&TlsClientApp::Ended, this), MakeCallback(&TlsClientApp::Reset, this));
    m_socket->Connect(InetSocketAddress(m_vip, m_port));
}

void
TlsClientApp::Connected(Ptr<Socket> s)
{
    const std::string& r = m_records[m_next];
    s->Send(reinterpret_cast<const uint8_t*>(r.data()), static_cast<uint32_t>(r.size()), 0);
}

void
TlsClientApp::Read(Ptr<Socket> s)
{
    if (s != m_socket)
    {
        Drain(s); // an earlier connection, closing
        return;
    }
    m_in += Drain(s);
    const size_t n = TlsFirstRecordBytes(m_in);
    if (m_open && n > 0 && m_in.size() >= n)
        Next();
}

void
TlsClientApp::Ended(Ptr<Socket> s)
{
    if (s == m_socket && m_open) // not an earlier connection's close
        Next();
}

void
TlsClientApp::Reset(Ptr<Socket> s)
{
    if (s != m_socket)
        return;
    ++m_resets;
    Ended(s);
}

void
TlsClientApp::Next()
{
    const size_t n = TlsFirstRecordBytes(m_in);
    m_answers.push_back(n > 0 && m_in.size() >= n ? m_in.substr(0, n) : "");
    m_open = false;
    m_socket->Close();
    ++m_next;
    Simulator::ScheduleNow(&TlsClientApp::Connect, this);
}

} // namespace routertwin
