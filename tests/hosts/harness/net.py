"""The harness's network: one namespace per host, joined by a bridge in a namespace of its
own, with addresses from 198.18.0.0/24 (inside 198.18.0.0/15, the range set aside for network
benchmarks) and no default route anywhere. Nothing is created in the harness's own namespace:
every veth is made inside the bridge's namespace with its peer moved straight into its host's.

Faults on the wire: a host vanishing (its bridge port set down: no RST, packets just stop),
and a partition between two sets of hosts (each side's neighbour entry for the other set
replaced by a permanent one with an address no interface has, so frames go nowhere, silently,
both ways, for open connections and new ones alike; this needs no firewall module)."""

import ipaddress
import os
import subprocess

PREFIX = "chh-"
BRIDGE_NS = PREFIX + "net"
BRIDGE = "br0"
RANGE = ipaddress.ip_network("198.18.0.0/15")
SUBNET = ipaddress.ip_network("198.18.0.0/24")
# A locally administered MAC that no interface of the harness has: frames to it are dropped.
NOWHERE_MAC = "02:00:5e:00:de:ad"

HOSTS = {
    "gateway": "198.18.0.10",
    "rules-a": "198.18.0.11",
    "rules-b": "198.18.0.12",
    "search-a": "198.18.0.13",
    "search-b": "198.18.0.14",
    "postgres": "198.18.0.15",
    "client": "198.18.0.20",
}


def ns(host):
    return PREFIX + host


def port_name(host):
    # The bridge's end of a host's veth (at most 15 characters).
    return PREFIX + "p-" + host


def sh(args, check=True, timeout=30, **kw):
    return subprocess.run(args, check=check, timeout=timeout, text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kw)


def address(host):
    """A host's address, refused unless it is one of ours and in the benchmark range."""
    addr = HOSTS[host]
    ip = ipaddress.ip_address(addr)
    if ip not in RANGE or ip not in SUBNET:
        raise ValueError(f"{addr} is outside {SUBNET}: refused")
    return addr


def check_target(addr):
    """Refuses any address that is not one of the harness's hosts."""
    if addr not in HOSTS.values():
        raise ValueError(f"{addr} is not one of the harness's hosts: refused")
    return addr


def ours():
    out = sh(["ip", "netns", "list"], check=False).stdout
    return [line.split()[0] for line in out.splitlines()
            if line.split() and line.split()[0].startswith(PREFIX)]


def cleanup():
    """Removes every namespace (and with it every veth and the bridge) of a harness run,
    this one's or a killed one's; kills what still runs in them first."""
    for name in ours():
        pids = sh(["ip", "netns", "pids", name], check=False).stdout.split()
        for pid in pids:
            sh(["kill", "-9", pid], check=False)
        sh(["ip", "netns", "del", name], check=False)
    # Nothing of ours should ever be in this namespace; remove it if it is.
    links = sh(["ip", "-o", "link", "show"], check=False).stdout
    for line in links.splitlines():
        parts = line.split(":")
        if len(parts) > 1:
            name = parts[1].strip().split("@")[0]
            if name.startswith(PREFIX):
                sh(["ip", "link", "del", name], check=False)


def remove_work_dirs():
    """The temporary directories of runs (PostgreSQL's data), this one's or a killed one's."""
    import glob
    import shutil
    import tempfile
    for path in glob.glob(os.path.join(tempfile.gettempdir(), PREFIX + "*")):
        shutil.rmtree(path, ignore_errors=True)


def leftovers():
    """What a run left behind (empty when clean)."""
    left = ours()
    links = sh(["ip", "-o", "link", "show"], check=False).stdout
    for line in links.splitlines():
        parts = line.split(":")
        if len(parts) > 1:
            name = parts[1].strip().split("@")[0]
            if name.startswith(PREFIX):
                left.append(name)
    return left


def setup():
    cleanup()
    sh(["ip", "netns", "add", BRIDGE_NS])
    sh(["ip", "-n", BRIDGE_NS, "link", "add", BRIDGE, "type", "bridge"])
    sh(["ip", "-n", BRIDGE_NS, "link", "set", BRIDGE, "up"])
    sh(["ip", "-n", BRIDGE_NS, "link", "set", "lo", "up"])
    for host in HOSTS:
        name = ns(host)
        sh(["ip", "netns", "add", name])
        sh(["ip", "-n", BRIDGE_NS, "link", "add", port_name(host), "type", "veth",
            "peer", "name", "eth0", "netns", name])
        sh(["ip", "-n", BRIDGE_NS, "link", "set", port_name(host), "master", BRIDGE])
        sh(["ip", "-n", BRIDGE_NS, "link", "set", port_name(host), "up"])
        sh(["ip", "-n", name, "link", "set", "lo", "up"])
        sh(["ip", "-n", name, "addr", "add", f"{address(host)}/{SUBNET.prefixlen}", "dev", "eth0"])
        sh(["ip", "-n", name, "link", "set", "eth0", "up"])
    verify()


def verify():
    """Every host namespace: only lo and eth0, only our address, no default route."""
    for host in HOSTS:
        name = ns(host)
        routes = sh(["ip", "-n", name, "route", "show"]).stdout
        if "default" in routes:
            raise RuntimeError(f"{name} has a default route: {routes}")
        addrs = sh(["ip", "-n", name, "-o", "-4", "addr", "show"]).stdout
        for line in addrs.splitlines():
            ip = ipaddress.ip_interface(line.split()[3]).ip
            if not (ip.is_loopback or ip in SUBNET):
                raise RuntimeError(f"{name} has address {ip} outside {SUBNET}")


def vanish(host):
    """The host's link goes down (its bridge port): no RST, its packets just stop."""
    sh(["ip", "-n", BRIDGE_NS, "link", "set", port_name(host), "down"])


def appear(host):
    sh(["ip", "-n", BRIDGE_NS, "link", "set", port_name(host), "up"])


def cut(side_a, side_b):
    """A partition between two sets of hosts: each side's neighbour entries for the other
    side point nowhere, so frames both ways are silently lost."""
    for a in side_a:
        for b in side_b:
            for (src, dst) in ((a, b), (b, a)):
                sh(["ip", "-n", ns(src), "neigh", "replace", address(dst), "lladdr",
                    NOWHERE_MAC, "nud", "permanent", "dev", "eth0"])


def heal(side_a, side_b):
    for a in side_a:
        for b in side_b:
            for (src, dst) in ((a, b), (b, a)):
                sh(["ip", "-n", ns(src), "neigh", "del", address(dst), "dev", "eth0"], check=False)


def exec_args(host, args):
    return ["ip", "netns", "exec", ns(host)] + list(args)
