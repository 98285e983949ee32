"""Runs a recording script inside a network namespace of its own, for the
recorders that measure a real HAProxy (haproxy_record.py,
haproxy_health_record.py).

The namespace's loopback holds a whole 198.18.0.0/16 prefix (RFC 2544's
benchmarking range): on a loopback device the kernel routes an address's
prefix as local, so every 198.18.x.y can be a server or client address
without adding each one, and no packet can leave the namespace. The script
is run again inside it with `inside_flag`, bounded by `timeout_s`, and the
namespace is deleted whatever happens (error, timeout, Ctrl-C), with any
process left in it (haproxy) ended first. Creating and deleting the
namespace is routertwin.lab.netns's, the same code `routertwin lab haproxy`
uses, loaded by its path (it needs neither the package nor its compiled core).
"""
import importlib.util, os, subprocess, sys

_LAB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bindings", "python", "routertwin", "lab")


def lab_module(name):
    """routertwin/lab/NAME.py, loaded by its path: the lab's standard-library
    modules (netns, haproxy_inside) without the package or its compiled core."""
    spec = importlib.util.spec_from_file_location("routertwin_lab_" + name, os.path.join(_LAB, name + ".py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


netns = lab_module("netns")


def main(script, prefix, loopback_prefix, inside_flag, timeout_s, record):
    """The recorder's entry point: `record()` when already inside the
    namespace, else create it (root needed) and rerun `script` there.
    Exits with the recording's status, 130 on Ctrl-C."""
    if inside_flag in sys.argv[1:]:
        sys.exit(record())
    if os.geteuid() != 0:
        sys.exit("%s: needs root to create its network namespace (ip netns add)" % os.path.basename(script))
    ns = "%s-%d" % (prefix, os.getpid())
    try:
        try:
            netns.make_loopback_namespace(ns, loopback_prefix)
            sys.exit(subprocess.run(["ip", "netns", "exec", ns, sys.executable, os.path.abspath(script), inside_flag],
                                    timeout=timeout_s).returncode)
        finally:
            netns.delete_namespaces([ns])
    except KeyboardInterrupt:
        sys.exit(130)
