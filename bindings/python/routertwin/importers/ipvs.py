"""Linux IPVS rules as `ipvsadm -S -n` prints them -> an lb scenario's `balancer`.

Parsing only: IPVS cannot be loaded on these machines. The format is
ipvsadm(8) (ipvsadm 1.31; https://manpages.ubuntu.com/manpages/jammy/man8/ipvsadm.8.html):
one command per line, `-A|--add-service` for a virtual service and
`-a|--add-server` for a real server of one, the service named by
`-t|--tcp-service`, `-u|--udp-service` (ADDR:PORT) or `-f|--fwmark-service`
(a firewall mark) or `--sctp-service`, then

- for a service: `-s|--scheduler` (rr, wrr, lc, wlc, lblc, lblcr, dh, sh,
  sed, nq, fo, ovf, mh, twos; default wlc), `-p|--persistent [timeout]`
  (default 300 s), `-M|--netmask`, `-b|--sched-flags`;
- for a real server: `-r|--real-server ADDR[:PORT]` (the service's port when
  absent), `-g|--gatewaying` (direct routing, the default), `-i|--ipip`
  (tunnel), `-m|--masquerading` (NAT), `-w|--weight` (0..65535, default 1),
  `-x|--u-threshold`, `-y|--l-threshold`, `--tun-type` and its options.

Mapped: services, their real servers and weights, schedulers dp_sched has
(rr wrr lc wlc sh, and mh as maglev: IPVS's mh is Maglev hashing), direct
routing and tunnelling. Listed by line: the other schedulers, persistence
(not modelled yet), netmasks, scheduler flags, thresholds, masquerading (the
twin has full NAT, which also rewrites the client's address), firewall-mark
and SCTP services. A real server before its service, an unknown option, a
bad address, port or weight is an `ImportFileError` naming the line.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from routertwin.importers._lbcommon import Imported, ImportFileError, NotModelled, case_suffix, read_text
from routertwin.runners.lb.balancer import check_host, join_endpoint, split_endpoint

KIND = "ipvs"
HELP = ("Linux IPVS rules as `ipvsadm -S -n` prints them, as an lb scenario's balancer (parsing "
        'only; docs/import-lb.md)')

SCHEDULERS = {"rr": "rr", "wrr": "wrr", "lc": "lc", "wlc": "wlc", "sh": "sh", "mh": "maglev",
              "lblc": None, "lblcr": None, "dh": None, "sed": None, "nq": None, "fo": None, "ovf": None,
              "twos": None}
FORWARDING = {"-g": "dr", "--gatewaying": "dr", "-i": "tunnel", "--ipip": "tunnel", "-m": "masq",
              "--masquerading": "masq"}
_SERVICE = {"-t": "tcp", "--tcp-service": "tcp", "-u": "udp", "--udp-service": "udp",
            "-f": "fwmark", "--fwmark-service": "fwmark", "--sctp-service": "sctp"}
# option -> words of value (the service and server options ipvsadm -S writes, and their long names)
_VALUE = {"-s": 1, "--scheduler": 1, "-M": 1, "--netmask": 1, "-b": 1, "--sched-flags": 1,
          "-r": 1, "--real-server": 1, "-w": 1, "--weight": 1, "-x": 1, "--u-threshold": 1,
          "-y": 1, "--l-threshold": 1, "--tun-type": 1, "--tun-port": 1, "--tun-nocsum": 0,
          "--tun-csum": 0, "--tun-remcsum": 0, "-6": 0, "--ipv6": 0}


# The fill-SERVICE case (docs/import-lb.md, "Table fill"). IPVS has no connection limit: its table
# (conn_tab, chained buckets) grows until memory runs out. An entry is a struct ip_vs_conn from the
# "ip_vs_conn" slab cache: about 272 bytes on x86-64 by our sum of the fields of include/net/ip_vs.h
# (torvalds/linux as stored at 0134e89c, a Linux 3.x version; no debug options), rounded to 320 by the
# cache's hardware-cache alignment. Approximate: later kernels add fields (an RCU head, ...), a
# netfilter conntrack entry may come on top; not measured on a running kernel.
CONN_BYTES = 320
MEMORY_ASSUMED = 1 << 30  # assumption: 1 GiB given over to the entries (the rules do not say)
# ip_vs_proto_tcp.c tcp_timeouts: FIN_WAIT and TIME_WAIT 2 min: a closed connection's entry stays
LINGER_MS = 120_000
REFUSED_AS = ("an entry that cannot be allocated: ip_vs_conn_new fails, the scheduler returns no "
              "connection and the packet is dropped (NF_DROP); IPVS counts it nowhere (ipvsadm -L --stats "
              "does not see it); the drop_entry/drop_packet defenses (amemthresh) are not modelled")


def _fill_cases(services: list[dict], shown: str) -> list[dict]:
    """Per virtual service: the entries MEMORY_ASSUMED holds at CONN_BYTES
    each, held a lifetime plus LINGER_MS (runners/lb/tablefill.py)."""
    return [{"id": "fill-" + case_suffix(s["name"]), "method": "tablefill", "tablefill": {
        "memory_bytes": MEMORY_ASSUMED,
        "limit_source": f"memory only (IPVS has no connection limit); {MEMORY_ASSUMED >> 20} MiB assumed: edit "
                        "memory_bytes",
        "bytes_per_connection": CONN_BYTES,
        "bytes_source": "struct ip_vs_conn, about 272 bytes (x86-64, Linux 3.x include/net/ip_vs.h) in a "
                        "cache-aligned slab: 320 (approximate; conntrack not counted)",
        "linger_ms": LINGER_MS, "refused_as": REFUSED_AS, "counter": "ipvs_conn_alloc_failed"}}
        for s in services]


def _endpoint(shown: str, no: int, text: str, what: str, port_needed: bool) -> tuple[str, int | None]:
    try:
        host, port = split_endpoint(text)
        host = check_host(host, wildcard=False)
    except ValueError as exc:
        raise ImportFileError(shown, no, f"{what} '{text}': {exc}") from None
    if port is None and port_needed:
        raise ImportFileError(shown, no, f"{what} '{text}': needs ADDR:PORT")
    if port is not None and not 0 <= port <= 65535:
        raise ImportFileError(shown, no, f"{what} '{text}': port {port} is out of range 0..65535")
    return host, port


def import_file(path: str | Path, shown: str | None = None) -> Imported:
    shown = shown or str(path)
    listed: list[NotModelled] = []
    services: dict[tuple, dict] = {}
    pools: dict[tuple, dict] = {}
    forwarding: dict[tuple, set] = {}

    def note(no, text, reason):
        listed.append(NotModelled(shown, no, text, reason))

    for no, line in enumerate(read_text(Path(path), shown), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            words = shlex.split(line, comments=True)
        except ValueError as exc:
            raise ImportFileError(shown, no, f"cannot split the line: {exc}") from None
        text = " ".join(words)
        if words and words[0] == "ipvsadm":
            words = words[1:]
        if not words:
            continue
        cmd = words[0]
        if cmd not in ("-A", "--add-service", "-a", "--add-server"):
            raise ImportFileError(shown, no, f"'{cmd}': an ipvsadm -S line is -A (service) or -a (real server)")
        opts: dict[str, str | None] = {}
        k = 1
        while k < len(words):
            o = words[k]
            if o in _SERVICE:
                if k + 1 >= len(words):
                    raise ImportFileError(shown, no, f"'{o}' needs a service address")
                opts["service"] = (_SERVICE[o], words[k + 1])
                k += 2
            elif o in ("-p", "--persistent"):
                nxt = words[k + 1] if k + 1 < len(words) else None
                if nxt is not None and re.fullmatch(r"\d+", nxt):
                    opts["persistent"] = nxt
                    k += 2
                else:
                    opts["persistent"] = "300"  # ipvsadm(8): the default persistence timeout
                    k += 1
            elif o in FORWARDING:
                opts["forwarding"] = FORWARDING[o]
                k += 1
            elif o in _VALUE:
                if _VALUE[o] and k + 1 >= len(words):
                    raise ImportFileError(shown, no, f"'{o}' needs a value")
                opts[o.lstrip("-")[:1] if len(o) == 2 else o] = words[k + 1] if _VALUE[o] else ""
                k += 1 + _VALUE[o]
            else:
                raise ImportFileError(shown, no, f"unknown option '{o}' (ipvsadm(8))")
        if "service" not in opts:
            raise ImportFileError(shown, no, "no virtual service (-t, -u, -f or --sctp-service ADDR:PORT)")
        proto, addr = opts["service"]
        if proto in ("fwmark", "sctp"):
            if proto == "fwmark" and not re.fullmatch(r"\d+", addr):
                raise ImportFileError(shown, no, f"firewall mark '{addr}' is not a number")
            note(no, text, f"{'firewall-mark' if proto == 'fwmark' else 'SCTP'} services are not modelled")
            continue
        host, port = _endpoint(shown, no, addr, "virtual service", port_needed=True)
        key = (proto, host, port)
        if port == 0:  # every port of the address (persistent services, ipvsadm(8) -p)
            note(no, text, "a service on port 0 (all ports) is not modelled")
            continue
        name = f"{proto}:{host}:{port}"
        if cmd in ("-A", "--add-service"):
            if key in services:
                raise ImportFileError(shown, no, f"virtual service {proto} {addr} is already defined at line "
                                                 f"{services[key]['_line']}")
            sched_name = opts.get("s") or opts.get("--scheduler") or "wlc"  # ipvsadm(8): wlc by default
            if sched_name not in SCHEDULERS:
                raise ImportFileError(shown, no, f"unknown scheduler '{sched_name}' (IPVS: {', '.join(SCHEDULERS)})")
            sched = SCHEDULERS[sched_name]
            if sched is None:
                note(no, text, f"scheduler {sched_name}: dp_sched has no such scheduler (the pool gets none)")
            if "persistent" in opts:
                note(no, text, f"persistence -p {opts['persistent']} s: not modelled yet (session persistence)")
            for o, what in (("M", "persistence netmask -M"), ("b", "scheduler flags -b")):
                if o in opts or ("--netmask" if o == "M" else "--sched-flags") in opts:
                    note(no, text, f"{what} not modelled")
            services[key] = {"name": name, "mode": proto, "listen": [join_endpoint(host, port)], "pool": name,
                             "_line": no}
            pools[key] = {"name": name, "mode": proto, "scheduler": sched, "servers": []}
            forwarding[key] = set()
        else:
            if key not in services:
                raise ImportFileError(shown, no, f"real server for {proto} {addr} before its virtual service: "
                                                 "no -A line defines it above")
            real = opts.get("r") or opts.get("--real-server")
            if real is None:
                raise ImportFileError(shown, no, "a real server needs -r ADDR[:PORT]")
            rhost, rport = _endpoint(shown, no, real, "real server", port_needed=False)
            rport = port if rport in (None, 0) else rport
            weight_text = opts.get("w") or opts.get("--weight") or "1"
            if not re.fullmatch(r"\d+", weight_text) or int(weight_text) > 65535:
                raise ImportFileError(shown, no, f"weight '{weight_text}' must be an integer in 0..65535")
            sname = f"{rhost}:{rport}"
            servers = pools[key]["servers"]
            if any(s["name"] == sname for s in servers):
                raise ImportFileError(shown, no, f"real server {sname} is already in {proto} {addr}")
            fwd = opts.get("forwarding", "dr")  # ipvsadm(8): gatewaying (direct routing) by default
            forwarding[key].add(fwd)
            if fwd == "masq":
                note(no, text, "masquerading (-m): the twin has full NAT, which also rewrites the client's address")
            for o, what in (("x", "upper threshold -x"), ("y", "lower threshold -y"), ("--tun-type", "tunnel type")):
                if o in opts or {"x": "--u-threshold", "y": "--l-threshold"}.get(o) in opts:
                    note(no, text, f"{what} not modelled")
            servers.append({"name": sname.replace("[", "").replace("]", ""), "address": rhost, "port": rport,
                            "weight": int(weight_text)})
    for key, pool in pools.items():
        kinds = forwarding[key]
        if len(kinds) == 1 and next(iter(kinds)) in ("dr", "tunnel"):
            pool["forwarding"] = next(iter(kinds))
        elif len(kinds) > 1:
            note(services[key]["_line"], services[key]["name"],
                 f"real servers with different forwarding ({', '.join(sorted(kinds))}): the twin has one per pool")
    listed.sort(key=lambda n: n.line)
    svc_list = [{k: v for k, v in s.items() if k != "_line"} for s in services.values()]
    balancer = {"source": "ipvs", "services": svc_list, "pools": list(pools.values())}
    from routertwin.importers.haproxy import _ecmp_cases, _remap_cases, _timed_cases

    cases = _remap_cases(balancer) + _timed_cases(balancer) + _ecmp_cases(balancer) + _fill_cases(svc_list, shown)
    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", Path(path).stem).strip("-.") or "rules"
    scenario = {"scenario": f"ipvs-{stem}", "kind": "lb", "description": f"IPVS rules {Path(path).name}, imported",
                "balancer": balancer, "cases": cases}
    return Imported(scenario, listed, shown)


def convert(path: Path, args) -> "Imported":
    """The registry's entry (routertwin.importers): FILE -> the scenario."""
    from routertwin.importers._lbcommon import as_import

    return as_import(import_file(path, shown=str(path)), args, '.yaml')
