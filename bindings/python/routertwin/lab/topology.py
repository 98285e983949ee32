"""The three L3 paths of seed 004 (ZStack, IxChariot over GbE), rebuilt from
network namespaces on this machine.

The seed's addresses are 192.168.<vlan>.<host>; the lab keeps the VLAN and
host numbers and moves them into the RFC 2544 benchmarking range
198.18.0.0/15, so 192.168.106.101 becomes 198.18.106.101. Every namespace is
`<prefix>-<pid>-<role>`; every link is created directly inside its
namespaces (`ip link add ... netns A type veth peer ... netns B`), so nothing
ever exists in the machine's own namespace and deleting the lab's
namespaces removes every link, rule and qdisc it made.

    vm106 --br106(host1)--[up106]-- switch --[up107]--br107(host2)-- vm107        flat-direct
                                      |   \\--[up99]--br99(host2)-- eip108 (DNAT/SNAT) --br108-- vm108   flat-eip
                                      |                      \\-- vrouter (DNAT/SNAT) --br109-- vm109   vpc-eip
                                      \\--[up108]: VLAN 108's L2 reaching the switch (ebtables keep the
                                                   distributed gateway 198.18.108.1 off it)

[upNNN] are the physical GbE links of the seed's testbed, shaped with tc.
"""

from __future__ import annotations

from dataclasses import dataclass

from routertwin.lab.system import LabError, run

# Per-frame bytes a GbE wire carries that the kernel's qdisc does not count:
# preamble+SFD 8, FCS 4, inter-frame gap 12 (IEEE 802.3 clause 3/4). A qdisc
# counts the Ethernet header (14) and the IP packet (qdisc_pkt_len, per GSO
# segment).
WIRE_EXTRA_BYTES = 24
ETH_HEADER_BYTES = 14
MTU = 1500

# tbf: bucket of 128 KiB: at least one whole 64 KiB GSO super-packet with its
# per-segment headers (~68 KB as the qdisc counts it), else tbf splits every
# one in software; 128 KiB is ~1 ms at 1 Gbit/s, so above the shaped rate
# only for the first millisecond of a run (+0.5 Mbit/s on a 2 s average at
# most). Queue: 5 ms at the shaped rate (625 KB at 1 Gbit/s), the order of a
# GbE switch port's packet buffer, far above this path's bandwidth-delay
# product (RTT < 0.2 ms), so one TCP flow keeps the link busy through a loss.
TBF_BURST_BYTES = 128 * 1024
TBF_LATENCY_MS = 5


def tbf_rate_bps(wire_rate_bps: float, mtu: int = MTU) -> int:
    """The tbf rate that passes full-size frames at a wire's frame rate: tbf
    counts MTU+14 bytes per frame, the wire spends MTU+38 (1e9 -> 984.4 Mbit/s
    for MTU 1500). A size table (`stab overhead 24`) would be the direct way,
    but it adds its overhead once per GSO super-packet, not per segment."""
    return int(round(wire_rate_bps * (mtu + ETH_HEADER_BYTES) / (mtu + ETH_HEADER_BYTES + WIRE_EXTRA_BYTES)))


def goodput_ceiling_bps(wire_rate_bps: float, mss: int, mtu: int = MTU) -> float:
    """TCP goodput of a full-size segment stream at wire rate: payload MSS of
    every MTU+38 bytes on the wire (1448/1538 x 1 Gbit/s = 941.5 Mbit/s with
    TCP timestamps)."""
    return wire_rate_bps * mss / (mtu + ETH_HEADER_BYTES + WIRE_EXTRA_BYTES)


@dataclass(frozen=True)
class LabPath:
    """One of the seed's L3 paths: the iperf3 client runs in `client`, the
    server in `server`; the client connects to `target` (the server's own
    address, or its EIP). `hops` lists what a data packet crosses, in order;
    `seed_case` and `seed_mbps` cite the seed's table."""
    name: str
    server: str
    server_address: str
    target: str
    nat: str  # "" or the namespace doing DNAT/SNAT
    hops: tuple[str, ...]
    seed_case: str
    seed_mbps: float


CLIENT = "vm106"
CLIENT_ADDRESS = "198.18.106.101"

PATHS: dict[str, LabPath] = {p.name: p for p in (
    LabPath("flat-direct", "vm107", "198.18.107.101", "198.18.107.101", "",
         ("veth vm106-host1", "bridge br106", "wire up106", "route switch", "wire up107", "bridge br107",
          "veth host2-vm107"),
         "case 1 (IxChariot-106-101 to IxChariot-107-101)", 927.122),
    LabPath("flat-eip", "vm108", "198.18.108.102", "198.18.99.102", "eip108",
         ("veth vm106-host1", "bridge br106", "wire up106", "route switch", "wire up99", "bridge br99",
          "veth host2-eip108", "route+DNAT eip108", "veth eip108-host2", "bridge br108 (ebtables)",
          "veth host2-vm108"),
         "case 3 (IxChariot-106-101 to IxChariot-108-102, EIP 192.168.99.102)", 937.869),
    LabPath("vpc-eip", "vm109", "198.18.109.101", "198.18.99.101", "vrouter",
         ("veth vm106-host1", "bridge br106", "wire up106", "route switch", "wire up99", "bridge br99",
          "veth host2-vrouter", "route+DNAT vrouter", "veth vrouter-host2", "bridge br109",
          "veth host2-vm109"),
         "case 2 (IxChariot-106-101 to IxChariot-109-101, EIP 192.168.99.101)", 905.304),
)}

ROLES = ("vm106", "host1", "switch", "host2", "vm107", "eip108", "vm108", "vrouter", "vm109")

ROLE_DOC = {
    "vm106": "the IxChariot endpoint that sends (IxChariot-106-101): iperf3 client",
    "host1": "vm106's hypervisor: Linux bridge br106 between the VM's vNIC and the GbE uplink",
    "switch": "the physical L3 switch: routes VLANs 106, 107 and 99; L2 bridge for VLAN 108",
    "host2": "the servers' hypervisor: bridges br107, br108, br109 and br99 (public VLAN 99); "
             "ebtables on br108",
    "vm107": "IxChariot-107-101, flat network, no EIP: iperf3 server",
    "eip108": "the flat network's EIP namespace on host2: gateway of VLAN 108, iptables DNAT/SNAT "
              "198.18.99.102 <-> 198.18.108.102",
    "vm108": "IxChariot-108-102 behind the flat EIP: iperf3 server",
    "vrouter": "the VPC's virtual router (vyos in the seed, a namespace here): iptables DNAT/SNAT "
               "198.18.99.101 <-> 198.18.109.101",
    "vm109": "IxChariot-109-101 in the VPC behind the vrouter's EIP: iperf3 server",
}

# The distributed gateway's MAC on host2 (locally administered, so it cannot
# be any real NIC's).
GATEWAY108_MAC = "02:00:c6:12:6c:01"


@dataclass(frozen=True)
class Veth:
    ns_a: str
    name_a: str
    ns_b: str
    name_b: str
    wire: bool = False  # a GbE link of the seed: shaped at both ends


VETHS = (
    Veth("vm106", "eth0", "host1", "vnet106"),
    Veth("host1", "up106", "switch", "p106", wire=True),
    Veth("host2", "up107", "switch", "p107", wire=True),
    Veth("host2", "up99", "switch", "p99", wire=True),
    Veth("host2", "up108", "switch", "p108", wire=True),
    Veth("vm107", "eth0", "host2", "vnet107"),
    Veth("vm108", "eth0", "host2", "vnet108"),
    Veth("eip108", "gw", "host2", "eip108-gw"),
    Veth("eip108", "pub", "host2", "eip108-pub"),
    Veth("vm109", "eth0", "host2", "vnet109"),
    Veth("vrouter", "priv", "host2", "vr-priv"),
    Veth("vrouter", "pub", "host2", "vr-pub"),
)

BRIDGES = {  # namespace -> bridge -> ports
    "host1": {"br106": ("vnet106", "up106")},
    "host2": {"br107": ("vnet107", "up107"), "br108": ("vnet108", "eip108-gw", "up108"),
              "br109": ("vnet109", "vr-priv"), "br99": ("up99", "eip108-pub", "vr-pub")},
    "switch": {"br108": ("p108",)},
}

ADDRESSES = {  # namespace -> (device, address/prefix)
    "vm106": (("eth0", "198.18.106.101/24"),),
    "switch": (("p106", "198.18.106.1/24"), ("p107", "198.18.107.1/24"), ("p99", "198.18.99.1/24")),
    "vm107": (("eth0", "198.18.107.101/24"),),
    "eip108": (("gw", "198.18.108.1/24"), ("pub", "198.18.99.102/24")),
    "vm108": (("eth0", "198.18.108.102/24"),),
    "vrouter": (("priv", "198.18.109.1/24"), ("pub", "198.18.99.101/24")),
    "vm109": (("eth0", "198.18.109.101/24"),),
}

DEFAULT_ROUTES = {"vm106": "198.18.106.1", "vm107": "198.18.107.1", "vm108": "198.18.108.1",
                  "vm109": "198.18.109.1", "eip108": "198.18.99.1", "vrouter": "198.18.99.1"}
FORWARDING = ("switch", "eip108", "vrouter")
# The seed's CentOS 6.9 VMs run CUBIC (its default since 2.6.19), and so does
# the twin's ns-3 TCP. A new namespace inherits the machine's default (often
# bbr) and may not change it to an algorithm outside
# tcp_allowed_congestion_control (tcp_set_default_congestion_control: only
# the initial namespace may), so the sender asks for it per socket instead
# (iperf3 -C, setsockopt TCP_CONGESTION, which CAP_NET_ADMIN permits).
CONGESTION_CONTROL = "cubic"
TCP_SYSCTLS = ("tcp_congestion_control", "tcp_wmem", "tcp_rmem", "tcp_timestamps", "tcp_sack",
               "tcp_window_scaling")


def nat_rules(eip: str, private: str) -> str:
    """iptables-restore input of an EIP: inbound to the EIP is DNATed to the
    VM, the VM's own connections leave SNATed to the EIP (conntrack reverses
    each for the replies)."""
    return ("*nat\n"
            f"-A PREROUTING -d {eip}/32 -j DNAT --to-destination {private}\n"
            f"-A POSTROUTING -s {private}/32 -j SNAT --to-source {eip}\n"
            "COMMIT\n")


NAT = {"eip108": ("198.18.99.102", "198.18.108.102"), "vrouter": ("198.18.99.101", "198.18.109.101")}

# ZStack's flat network has its gateway in a namespace on every host (same
# IP and MAC everywhere); ebtables keep that gateway on the host: its ARP and
# frames never leave through the uplink, and ARP for it from outside is not
# answered here. (Seed 004, section 6: "使用 ebtables 去解决 mac 地址冲突".)
EBTABLES_HOST2 = (
    ["-A", "FORWARD", "-o", "up108", "-p", "ARP", "--arp-ip-src", "198.18.108.1", "-j", "DROP"],
    ["-A", "FORWARD", "-i", "up108", "-p", "ARP", "--arp-ip-dst", "198.18.108.1", "-j", "DROP"],
    ["-A", "FORWARD", "-o", "up108", "-s", GATEWAY108_MAC, "-j", "DROP"],
)


@dataclass
class Lab:
    """The namespaces of one run; `build()` makes them, `teardown()` removes
    whatever exists of them (safe to call at any point, twice)."""
    prefix: str
    pid: int
    wire_rate_bps: float

    def ns(self, role: str) -> str:
        return f"{self.prefix}-{self.pid}-{role}"

    def _batch(self, role: str | None, tool: str, lines: list[str]) -> None:
        if not lines:
            return
        cmd = [tool] + (["-n", self.ns(role)] if role else []) + ["-batch", "-"]
        proc = _run_input(cmd, "\n".join(lines) + "\n")
        if proc.returncode != 0:
            raise LabError(f"routertwin lab: '{' '.join(cmd)}' failed: {proc.stderr.strip()}")

    def build(self, say) -> None:
        for role in ROLES:
            run(["ip", "netns", "add", self.ns(role)])
        say(f"{len(ROLES)} namespaces {self.ns('*')} created")
        self._batch(None, "ip", [f"link add {v.name_a} netns {self.ns(v.ns_a)} type veth peer name {v.name_b} "
                                 f"netns {self.ns(v.ns_b)}" for v in VETHS])
        for role in ROLES:
            lines = ["link set lo up"]
            for bridge, ports in BRIDGES.get(role, {}).items():
                lines.append(f"link add {bridge} type bridge")
                lines += [f"link set {port} master {bridge}" for port in ports]
                lines.append(f"link set {bridge} up")
            if role == "eip108":
                lines.append(f"link set gw address {GATEWAY108_MAC}")
            for v in VETHS:
                for ns, name in ((v.ns_a, v.name_a), (v.ns_b, v.name_b)):
                    if ns == role:
                        lines.append(f"link set {name} up")
            lines += [f"addr add {addr} dev {dev}" for dev, addr in ADDRESSES.get(role, ())]
            if role in DEFAULT_ROUTES:
                lines.append(f"route add default via {DEFAULT_ROUTES[role]}")
            self._batch(role, "ip", lines)
        for role in FORWARDING:
            run(["ip", "netns", "exec", self.ns(role), "sh", "-c", "echo 1 > /proc/sys/net/ipv4/ip_forward"])
        for role, (eip, private) in NAT.items():
            proc = _run_input(["ip", "netns", "exec", self.ns(role), "iptables-restore"], nat_rules(eip, private))
            if proc.returncode != 0:
                raise LabError(f"routertwin lab: iptables-restore in {self.ns(role)} failed: {proc.stderr.strip()}")
        for rule in EBTABLES_HOST2:
            run(["ip", "netns", "exec", self.ns("host2"), "ebtables"] + rule)
        rate = tbf_rate_bps(self.wire_rate_bps)
        for v in VETHS:
            if v.wire:
                for ns, name in ((v.ns_a, v.name_a), (v.ns_b, v.name_b)):
                    run(["tc", "-n", self.ns(ns), "qdisc", "add", "dev", name, "root", "tbf", "rate", f"{rate}bit",
                         "burst", str(TBF_BURST_BYTES), "latency", f"{TBF_LATENCY_MS}ms"])
        say(f"veth pairs, bridges, routes, iptables NAT, ebtables and tbf at {rate / 1e6:.1f} Mbit/s "
            f"(wire {self.wire_rate_bps / 1e6:g} Mbit/s) in place")

    def tcp_settings(self, role: str) -> dict[str, str]:
        """The TCP sysctls of an endpoint namespace, as the kernel reports them."""
        out = run(["ip", "netns", "exec", self.ns(role), "sh", "-c",
                   "; ".join(f"echo {k}=$(cat /proc/sys/net/ipv4/{k})" for k in TCP_SYSCTLS)]).stdout
        return dict(line.split("=", 1) for line in out.splitlines() if "=" in line)

    def nat_counters(self, role: str) -> dict[str, int]:
        """Packets that hit the DNAT and SNAT rule of `role`'s NAT table (a
        NAT rule sees the first packet of each connection)."""
        out = run(["ip", "netns", "exec", self.ns(role), "iptables", "-t", "nat", "-L", "-n", "-v", "-x"]).stdout
        counts = {}
        for line in out.splitlines():
            fields = line.split()
            if len(fields) > 2 and fields[2] in ("DNAT", "SNAT"):
                counts[fields[2]] = counts.get(fields[2], 0) + int(fields[0])
        return counts

    def teardown(self) -> list[str]:
        """Deletes this run's namespaces (their processes first); returns the
        names it deleted."""
        from routertwin.lab.system import delete_namespaces, namespaces

        mine = [n for n in namespaces() if n.startswith(f"{self.prefix}-{self.pid}-")]
        delete_namespaces(mine)
        return mine


def _run_input(cmd: list[str], text: str):
    import subprocess

    from routertwin.lab.system import COMMAND_TIMEOUT_S

    try:
        return subprocess.run(cmd, input=text, capture_output=True, text=True, timeout=COMMAND_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise LabError(f"routertwin lab: '{' '.join(cmd)}' did not finish within {COMMAND_TIMEOUT_S:g} s") from None
