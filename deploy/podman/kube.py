#!/usr/bin/env python3
"""Rendered kustomize output -> Pods that `podman kube play` runs, and a plan for the scripts.

The manifests stay the single source: this takes `kubectl kustomize` output as it is and
changes only what podman's kube support (podman 4.3, Debian bookworm) does differently from a
cluster, each for the reason given (deploy/README.md, "Podman", has the list):

- Deployments and StatefulSets become their Pods, one per replica (`NAME-0`, `NAME-1`, ...),
  with the template's labels, annotations and spec: podman runs Pods, not controllers (its
  Deployment support plays one replica).
- A StatefulSet's volumeClaimTemplates become named volumes `TEMPLATE-NAME-ORDINAL` (what a
  cluster calls the claims); every claim is created by the scripts before the Pods start, so
  that a second play reuses it instead of failing on "volume already exists".
- Services become DNS names: every Pod joins the script's network with one alias per Service
  whose selector matches its labels, so aardvark-dns answers a Service name with the addresses
  of all its Pods (like a headless Service; there is no virtual IP). The Service of --publish
  is published on the host through its target port on the first matching Pod.
- With --dns, the network's own name server (aardvark-dns) is every pod's only one, as the
  cluster DNS is on a cluster: podman would list the host's name servers after it, and a
  lookup that aardvark-dns cannot answer (a pod being restarted) then goes out to them.
- Probes are taken out of the Pods into the plan: podman ignores gRPC probes and readiness
  probes, and runs exec liveness probes only through systemd timers; deploy/podman/probe.py
  runs them all from the host as the kubelet does.
- An emptyDir is named after its Pod (`POD-VOLUME`): podman 4.3 makes a named volume of it,
  which Pods with the same volume name (`tmp`) would otherwise share.
- A mountPath under /var/run/ is written /run/ (the same directory: /var/run links to /run in
  the images): podman 4.3 follows that absolute link on the host when it fills the volume, and
  gave PostgreSQL's socket directory the host's /run/postgresql owner and mode.
- Container ports without a hostPort are dropped (after the Services' target ports were
  looked up by their names): podman 4.3 publishes each of them on the host's 0.0.0.0 under
  its own number. Inside the network every pod's ports are reachable as on a cluster.
- Secret volumes become read-only host directories with the Secret's items, owned and moded
  as the kubelet leaves them (group fsGroup, mode | 0440): podman 4.3's secret volumes write
  the items still base64-encoded and crash on an unset `optional`.
- Images are mapped to local names (--image), pulled never (`imagePullPolicy: Never`): a
  missing image is an error rather than a registry lookup.
- Namespaces, ServiceAccounts, NetworkPolicies, PodDisruptionBudgets and HorizontalPodAutoscalers
  have no podman counterpart and are left out (listed on stderr).

    kube.py --out DIR --secrets DIR [--image FROM=TO ...] [--publish SERVICE=IP:PORT] RENDERED.yaml

Writes DIR/NN-POD.yaml (the Pod and the ConfigMaps it reads) and DIR/plan.json.
"""

import argparse
import base64
import copy
import json
import os
import sys

import yaml

IGNORED = {
    "Namespace",
    "ServiceAccount",
    "NetworkPolicy",
    "PodDisruptionBudget",
    "HorizontalPodAutoscaler",
}
PROBE_DEFAULTS = {
    "initialDelaySeconds": 0,
    "periodSeconds": 10,
    "timeoutSeconds": 1,
    "successThreshold": 1,
    "failureThreshold": 3,
}


def selects(selector, labels):
    return bool(selector) and all(labels.get(k) == v for k, v in selector.items())


def secret_items(secret, source):
    data = {k: base64.b64decode(v) for k, v in (secret.get("data") or {}).items()}
    data.update({k: v.encode() for k, v in (secret.get("stringData") or {}).items()})
    items = source.get("items")
    if not items:
        return [(k, k, None) for k in data], data
    return [(i["key"], i["path"], i.get("mode")) for i in items], data


def write_secret_dir(path, secret, source, fs_group):
    """The Secret's items as files under path, as the kubelet writes a secret volume."""
    os.makedirs(path, exist_ok=True)
    items, data = secret_items(secret, source)
    default_mode = source.get("defaultMode", 0o644)
    for key, rel, mode in items:
        if key not in data:
            sys.exit(f"kube.py: Secret {secret['metadata']['name']} has no key {key}")
        file = os.path.join(path, rel)
        with open(file, "wb") as f:
            f.write(data[key])
        mode = default_mode if mode is None else mode
        if fs_group is not None:
            mode |= 0o440
            os.chown(file, 0, fs_group)
        os.chmod(file, mode)
    os.chmod(path, 0o755)
    if fs_group is not None:
        os.chown(path, 0, fs_group)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--secrets", required=True, help="an absolute directory for the secret volumes")
    parser.add_argument("--image", action="append", default=[], metavar="FROM=TO")
    parser.add_argument("--publish", action="append", default=[], metavar="SERVICE=IP:PORT")
    parser.add_argument("--dns", metavar="IP", help="the only name server of every pod (the network's aardvark-dns)")
    parser.add_argument("rendered")
    args = parser.parse_args()
    images = dict(i.split("=", 1) for i in args.image)
    publish = {}
    for p in args.publish:
        service, hostport = p.split("=", 1)
        ip, port = hostport.rsplit(":", 1)
        publish[service] = (ip, int(port))

    with open(args.rendered) as f:
        docs = [d for d in yaml.safe_load_all(f) if d]
    by_kind = {}
    for d in docs:
        by_kind.setdefault(d["kind"], {})[d["metadata"]["name"]] = d
    ignored = sorted(f"{d['kind']}/{d['metadata']['name']}" for d in docs if d["kind"] in IGNORED)
    services = list(by_kind.get("Service", {}).values())
    configmaps = by_kind.get("ConfigMap", {})
    secrets = by_kind.get("Secret", {})
    unknown = {d["kind"] for d in docs} - IGNORED - {
        "Service",
        "ConfigMap",
        "Secret",
        "PersistentVolumeClaim",
        "Deployment",
        "StatefulSet",
    }
    if unknown:
        sys.exit(f"kube.py: no podman translation for {', '.join(sorted(unknown))}")

    os.makedirs(args.out, exist_ok=True)
    plan = {"pods": [], "volumes": [], "ignored": ignored, "published": {}}
    workloads = [d for d in docs if d["kind"] in ("Deployment", "StatefulSet")]
    index = 0
    for w in workloads:
        name = w["metadata"]["name"]
        template = w["spec"]["template"]
        replicas = w["spec"].get("replicas", 1)
        claims = w["spec"].get("volumeClaimTemplates", []) if w["kind"] == "StatefulSet" else []
        for ordinal in range(replicas):
            pod_name = f"{name}-{ordinal}"
            spec = copy.deepcopy(template["spec"])
            labels = dict(template["metadata"].get("labels", {}))
            fs_group = spec.get("securityContext", {}).get("fsGroup")
            for claim in claims:
                volume = f"{claim['metadata']['name']}-{pod_name}"
                spec.setdefault("volumes", []).append(
                    {"name": claim["metadata"]["name"], "persistentVolumeClaim": {"claimName": volume}}
                )
            renamed = {}
            for v in spec.get("volumes", []):
                if "emptyDir" in v:
                    renamed[v["name"]] = v["name"] = f"{pod_name}-{v['name']}"
                elif "persistentVolumeClaim" in v:
                    plan["volumes"].append(v["persistentVolumeClaim"]["claimName"])
                elif "secret" in v:
                    secret = secrets.get(v["secret"]["secretName"])
                    if secret is None:
                        sys.exit(f"kube.py: {pod_name}: Secret {v['secret']['secretName']} is not in the manifests")
                    path = os.path.join(args.secrets, pod_name, v["name"])
                    write_secret_dir(path, secret, v["secret"], fs_group)
                    v.pop("secret")
                    v["hostPath"] = {"path": path, "type": "Directory"}
            used_configmaps = []
            containers = []
            for c in spec["containers"]:
                for m in c.get("volumeMounts", []):
                    m["name"] = renamed.get(m["name"], m["name"])
                    if m["mountPath"].startswith("/var/run/"):
                        m["mountPath"] = m["mountPath"][len("/var") :]
                if c["image"] in images:
                    c["image"] = images[c["image"]]
                c["imagePullPolicy"] = "Never"
                probes = {}
                for kind in ("startupProbe", "readinessProbe", "livenessProbe"):
                    if kind in c:
                        probes[kind[: -len("Probe")]] = {**PROBE_DEFAULTS, **c.pop(kind)}
                for ref in c.get("envFrom", []):
                    cm = ref.get("configMapRef", {}).get("name")
                    if cm and cm not in used_configmaps:
                        if cm not in configmaps:
                            sys.exit(f"kube.py: {pod_name}: ConfigMap {cm} is not in the manifests")
                        used_configmaps.append(cm)
                ports = {p.get("name"): p for p in c.get("ports", [])}
                # What the security check holds the running processes to.
                security = {
                    k: v
                    for k, v in {**spec.get("securityContext", {}), **c.get("securityContext", {})}.items()
                    if k in ("runAsUser", "runAsGroup", "readOnlyRootFilesystem", "allowPrivilegeEscalation", "capabilities")
                }
                containers.append(
                    {
                        "name": c["name"],
                        "podman_name": f"{pod_name}-{c['name']}",
                        "ports": {n: p["containerPort"] for n, p in ports.items() if n},
                        "probes": probes,
                        "security": security,
                    }
                )
            aliases = []
            for s in services:
                if not selects(s["spec"].get("selector"), labels):
                    continue
                aliases.append(s["metadata"]["name"])
                if s["metadata"]["name"] in publish and ordinal == 0:
                    ip, host_port = publish.pop(s["metadata"]["name"])
                    target = s["spec"]["ports"][0]["targetPort"]
                    for c in spec["containers"]:
                        for p in c.get("ports", []):
                            if target in (p.get("name"), p["containerPort"]):
                                p["hostIP"], p["hostPort"] = ip, host_port
                                plan["published"][s["metadata"]["name"]] = f"{ip}:{host_port}"
            if args.dns:
                spec["dnsPolicy"] = "None"
                spec["dnsConfig"] = {"nameservers": [args.dns], "searches": ["dns.podman"]}
            for c in spec["containers"]:
                c["ports"] = [p for p in c.get("ports", []) if "hostPort" in p]
                if not c["ports"]:
                    del c["ports"]
            pod = {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {
                    "name": pod_name,
                    "labels": labels,
                    "annotations": template["metadata"].get("annotations", {}),
                },
                "spec": spec,
            }
            file = os.path.join(args.out, f"{index:02d}-{pod_name}.yaml")
            index += 1
            out_docs = [
                {k: v for k, v in configmaps[cm].items() if k != "metadata"}
                | {"metadata": {"name": cm, "labels": configmaps[cm]["metadata"].get("labels", {})}}
                for cm in used_configmaps
            ] + [pod]
            with open(file, "w") as f:
                yaml.safe_dump_all(out_docs, f, sort_keys=False)
            plan["pods"].append(
                {
                    "name": pod_name,
                    "file": file,
                    "aliases": aliases,
                    "grace_seconds": spec.get("terminationGracePeriodSeconds", 30),
                    "containers": containers,
                }
            )
    if publish:
        sys.exit(f"kube.py: nothing to publish for {', '.join(publish)}")
    with open(os.path.join(args.out, "plan.json"), "w") as f:
        json.dump(plan, f, indent=2)
    print(f"kube.py: {len(plan['pods'])} pods, volumes {plan['volumes']}; left out: {', '.join(ignored)}", file=sys.stderr)


if __name__ == "__main__":
    main()
