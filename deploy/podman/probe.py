#!/usr/bin/env python3
"""The kubelet's probes for the podman deployment, and a small gRPC health/reflection client.

    probe.py health ADDR [SERVICE]     gRPC health Check; exit 0 when SERVING
    probe.py reflection ADDR           the services gRPC reflection (v1) lists, one a line
    probe.py wait PLAN [--timeout S] [--pod NAME ...]
        every container's startup probe, then readiness and liveness, as kube.py took them out
        of the manifests; exit 0 once every container is ready and live
    probe.py watch PLAN --seconds S
        readiness and liveness at their periods for S seconds; exit 1 if any failed
    probe.py security PLAN
        every process of every container, read from the host's /proc: runs as the manifest's
        uid and gid, has no capability (drop ALL, nothing added), no_new_privs (no privilege
        escalation), a seccomp filter (RuntimeDefault), and a read-only root file system

gRPC probes go from the host to the pod's address on the script's network, as a kubelet's go
from the node; exec probes run in the container (`podman exec`). The two messages needed are
encoded by hand (Debian's python3-grpcio has no health or reflection stubs).
"""

import argparse
import json
import os
import subprocess
import sys
import time

import grpc

SERVING = 1


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def field_bytes(number, data):
    return varint(number << 3 | 2) + varint(len(data)) + data


def fields(data):
    """(number, value) of each field of a protobuf message: ints for varints, bytes otherwise."""
    i = 0
    while i < len(data):
        key, i = read_varint(data, i)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, i = read_varint(data, i)
        elif wire == 2:
            length, i = read_varint(data, i)
            value, i = data[i : i + length], i + length
        else:
            raise ValueError(f"unexpected wire type {wire}")
        yield number, value


def read_varint(data, i):
    shift = result = 0
    while True:
        b = data[i]
        i += 1
        result |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return result, i


def health(addr, service="", timeout=1.0):
    """The serving status (1 SERVING, 2 NOT_SERVING, 3 SERVICE_UNKNOWN), or raises."""
    with grpc.insecure_channel(addr) as channel:
        check = channel.unary_unary("/grpc.health.v1.Health/Check")
        reply = check(field_bytes(1, service.encode()) if service else b"", timeout=timeout)
    return dict(fields(reply)).get(1, 0)


def reflection(addr, timeout=5.0):
    with grpc.insecure_channel(addr) as channel:
        info = channel.stream_stream("/grpc.reflection.v1.ServerReflection/ServerReflectionInfo")
        # ServerReflectionRequest { list_services = 7: "" }
        replies = info(iter([field_bytes(7, b"")]), timeout=timeout)
        names = []
        for reply in replies:
            for number, value in fields(reply):
                if number == 6:  # list_services_response
                    for n, service in fields(value):
                        if n == 1:
                            names.append(dict(fields(service))[1].decode())
        return names


def podman(*args, timeout=None):
    return subprocess.run(["podman", *args], capture_output=True, text=True, timeout=timeout)


def pod_ip(pod):
    infra = podman("pod", "inspect", "--format", "{{.InfraContainerID}}", pod).stdout.strip()
    out = podman("inspect", "--format", "{{range .NetworkSettings.Networks}}{{.IPAddress}} {{end}}", infra)
    ips = out.stdout.split()
    if not ips:
        raise RuntimeError(f"pod {pod} has no address")
    return ips[0]


def run_probe(pod, container, probe):
    """True when the probe passes."""
    timeout = probe["timeoutSeconds"]
    try:
        if "grpc" in probe:
            addr = f"{pod_ip(pod)}:{probe['grpc']['port']}"
            return health(addr, probe["grpc"].get("service", ""), timeout) == SERVING
        if "exec" in probe:
            result = podman("exec", container["podman_name"], *probe["exec"]["command"], timeout=timeout + 5)
            return result.returncode == 0
    except (grpc.RpcError, RuntimeError, subprocess.TimeoutExpired):
        return False
    raise SystemExit(f"probe.py: unsupported probe {probe}")


class Probed:
    """One container's probes, stepped by the loop below as the kubelet steps them."""

    def __init__(self, pod, container, started):
        self.pod, self.container = pod, container
        self.probes = container["probes"]
        self.started = started
        self.phase = "startup" if "startup" in self.probes else "running"
        self.next = {k: started + p["initialDelaySeconds"] for k, p in self.probes.items()}
        self.failures = {k: 0 for k in self.probes}
        self.ready = "readiness" not in self.probes
        self.live_checked = "liveness" not in self.probes
        self.failed = None
        self.events = []

    def name(self):
        return self.container["podman_name"]

    def step(self, now):
        kinds = ["startup"] if self.phase == "startup" else ["readiness", "liveness"]
        for kind in kinds:
            probe = self.probes.get(kind)
            if probe is None or now < self.next[kind]:
                continue
            self.next[kind] = now + probe["periodSeconds"]
            ok = run_probe(self.pod, self.container, probe)
            if ok:
                self.failures[kind] = 0
                if kind == "startup":
                    self.phase = "running"
                    self.next = {k: now for k in self.next}
                    self.events.append(f"started after {now - self.started:.1f} s")
                elif kind == "readiness" and not self.ready:
                    self.ready = True
                    self.events.append(f"ready after {now - self.started:.1f} s")
                elif kind == "liveness":
                    self.live_checked = True
                continue
            self.failures[kind] += 1
            if kind == "readiness":
                if self.ready:
                    self.events.append(f"not ready at {now - self.started:.1f} s")
                self.ready = False
            elif self.failures[kind] >= probe["failureThreshold"]:
                # Where the kubelet would restart the container.
                self.failed = f"{kind} probe failed {self.failures[kind]} times"


def load(plan_path, pods):
    with open(plan_path) as f:
        plan = json.load(f)
    now = time.monotonic()
    return [
        Probed(p["name"], c, now)
        for p in plan["pods"]
        if not pods or p["name"] in pods
        for c in p["containers"]
    ]


def wait(args):
    probed = load(args.plan, args.pod)
    deadline = time.monotonic() + args.timeout
    while time.monotonic() < deadline:
        now = time.monotonic()
        for p in probed:
            if not (p.ready and p.live_checked):
                p.step(now)
            if p.failed:
                print(f"{p.name()}: {p.failed}", file=sys.stderr)
                return 1
        if all(p.ready and p.live_checked for p in probed):
            for p in probed:
                print(f"  {p.name()}: {', '.join(p.events) or 'ready'}; live", file=sys.stderr)
            return 0
        time.sleep(0.25)
    for p in probed:
        print(f"{p.name()}: phase {p.phase}, ready {p.ready}, failures {p.failures}", file=sys.stderr)
    return 1


def watch(args):
    probed = load(args.plan, args.pod)
    for p in probed:
        p.phase = "running"
        p.ready = True
    end = time.monotonic() + args.seconds
    while time.monotonic() < end:
        now = time.monotonic()
        for p in probed:
            p.step(now)
        time.sleep(0.25)
    bad = [p for p in probed if p.failed or not p.ready or any(p.events)]
    for p in bad:
        print(f"{p.name()}: {p.failed or ''} {'; '.join(p.events)}", file=sys.stderr)
    if not bad:
        print(f"  every readiness and liveness probe passed for {args.seconds} s", file=sys.stderr)
    return 1 if bad else 0


def container_processes(name):
    """Host pids of every process in the container (those sharing its init's pid namespace)."""
    init = podman("inspect", "--format", "{{.State.Pid}}", name).stdout.strip()
    if not init or init == "0":
        raise RuntimeError(f"{name} is not running")
    ns = os.readlink(f"/proc/{init}/ns/pid")
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.readlink(f"/proc/{entry}/ns/pid") == ns:
                    pids.append(int(entry))
            except OSError:
                pass
    return int(init), sorted(pids)


def status_fields(pid):
    with open(f"/proc/{pid}/status") as f:
        return dict(line.rstrip("\n").split(":\t", 1) for line in f if ":\t" in line)


def security(args):
    with open(args.plan) as f:
        plan = json.load(f)
    problems = []
    checked = 0
    for pod in plan["pods"]:
        for c in pod["containers"]:
            name, want = c["podman_name"], c["security"]
            init, pids = container_processes(name)
            for pid in pids:
                st = status_fields(pid)
                what = f"{name} pid {pid} ({st.get('Name')})"
                uids, gids = st["Uid"].split(), st["Gid"].split()
                if "runAsUser" in want and set(uids) != {str(want["runAsUser"])}:
                    problems.append(f"{what}: uids {uids}, expected {want['runAsUser']}")
                if "0" in uids:
                    problems.append(f"{what}: runs as root")
                if "runAsGroup" in want and set(gids) != {str(want["runAsGroup"])}:
                    problems.append(f"{what}: gids {gids}, expected {want['runAsGroup']}")
                for cap in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"):
                    if int(st[cap], 16) != 0:
                        problems.append(f"{what}: {cap} {st[cap]}")
                if want.get("allowPrivilegeEscalation") is False and st.get("NoNewPrivs") != "1":
                    problems.append(f"{what}: no_new_privs not set")
                if st.get("Seccomp") != "2":
                    problems.append(f"{what}: seccomp mode {st.get('Seccomp')}, expected 2 (filter)")
                checked += 1
            with open(f"/proc/{init}/mountinfo") as f:
                root = [line.split() for line in f if line.split()[4] == "/"]
            root_ro = bool(root) and root[-1][5].split(",")[0] == "ro"
            if want.get("readOnlyRootFilesystem") and not root_ro:
                problems.append(f"{name}: the root file system is mounted read-write")
            print(
                f"  {name}: {len(pids)} process(es) as uid {want.get('runAsUser')} gid {want.get('runAsGroup')}, "
                f"no capabilities, no_new_privs, seccomp filter, root {'read-only' if root_ro else 'read-write'}",
                file=sys.stderr,
            )
    for p in problems:
        print(f"security: {p}", file=sys.stderr)
    print(f"  {checked} processes checked, {len(problems)} problems", file=sys.stderr)
    return 1 if problems else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    h = sub.add_parser("health")
    h.add_argument("addr")
    h.add_argument("service", nargs="?", default="")
    r = sub.add_parser("reflection")
    r.add_argument("addr")
    w = sub.add_parser("wait")
    w.add_argument("plan")
    w.add_argument("--timeout", type=float, default=180)
    w.add_argument("--pod", action="append", default=[])
    s = sub.add_parser("watch")
    s.add_argument("plan")
    s.add_argument("--seconds", type=float, required=True)
    s.add_argument("--pod", action="append", default=[])
    c = sub.add_parser("security")
    c.add_argument("plan")
    args = parser.parse_args()
    if args.command == "security":
        return security(args)
    if args.command == "health":
        try:
            status = health(args.addr, args.service, 5.0)
        except grpc.RpcError as e:
            print(f"health {args.addr} {args.service!r}: {e.code().name} {e.details()}", file=sys.stderr)
            return 1
        print({1: "SERVING", 2: "NOT_SERVING", 3: "SERVICE_UNKNOWN"}.get(status, f"status {status}"))
        return 0 if status == SERVING else 1
    if args.command == "reflection":
        for name in reflection(args.addr):
            print(name)
        return 0
    return wait(args) if args.command == "wait" else watch(args)


if __name__ == "__main__":
    sys.exit(main())
