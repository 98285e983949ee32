"""kind: tcp_path -- one TCP transfer over a virtual L3 path, end hosts on
ns-3's TCP (the ZStack IxChariot replay of seed 004; the live lab's twin).

The path is a chain of boxes (VMs, host bridges, a physical switch, an EIP
namespace, a virtual router) joined by links (virtio/vhost, GbE with 802.1Q
tags). Every link direction and every box's CPU is a FIFO server with a
stated cost (scenarios/platforms/zstack-gbe.yaml); a box that holds an EIP
runs conntrack + DNAT on the C core (dp_flow, dp_nat), its counted work
priced per operation. IxChariot's Throughput.scr runs over it: records of
file_bytes, each timed to the receiver's confirmation (docs/zstack.md).

Modules: `schema` (keys), `profiles` (platform file), `native` (the
run_tcp_path config, the call), `analytic` (the ceiling in closed form),
`metrics`, `runner` (check and run).

Example (scenarios/zstack/zstack-flat-direct.yaml):

    scenario: zstack-flat-direct
    kind: tcp_path
    seed: 1
    platform: ../platforms/zstack-gbe.yaml
    transfer: {file_bytes: 999999999, records: 3, simulate: window, window_bytes: 40000000}
    path:
      - {node: vm-106-101, type: vm}
      - {node: host-a, type: host-bridge, link: virtio}
      - {node: l3-switch, type: l3-switch, link: gbe-vlan}
      - {node: host-b, type: host-bridge, link: gbe-vlan}
      - {node: vm-107-101, type: vm, link: virtio}
"""

from routertwin.runners.tcp_path.metrics import METRICS, UNITS
from routertwin.runners.tcp_path.runner import check, run, unread_assumption
from routertwin.runners.tcp_path.schema import Schema

__all__ = ["METRICS", "UNITS", "Schema", "check", "run", "unread_assumption"]
