"""The kubeconfig rules Kueue v0.19.2 applies to a MultiKueue worker's kubeconfig (reason ``InsecureKubeConfig``),
transcribed from ``pkg/controller/admissionchecks/multikueue/multikueuecluster.go`` at
https://github.com/kubernetes-sigs/kueue/blob/v0.19.2/pkg/controller/admissionchecks/multikueue/multikueuecluster.go
so a kubeconfig Batchplane generates is refused before apply rather than leaving the MultiKueueCluster inactive:

* ``validateKubeconfig`` (L958-993): the YAML parses (L960-963); no user has ``tokenFile`` (L964-971); for every
  cluster: no ``insecure-skip-tls-verify`` (L975-977), no ``certificate-authority`` file path (L979-981), a
  ``server`` (L983-985);
* then ``validateRestConfig`` (L1001-1022) on the client config of the current context: no ``tokenFile``
  (``bearerTokenFile``, L1004-1007), the server's host an IP or a DNS-1123 subdomain (``isValidHostname``,
  L1024-1041; L1009-1011), no ``username``/``password`` (L1012-1014), no ``exec`` plugin (L1015-1017), no
  ``auth-provider`` (L1018-1020).

Kueue stops at the first problem; :func:`kubeconfig_problems` lists them all, in Kueue's order. The client-go step
between the two (``clientcmd.RESTConfigFromKubeConfig``) also needs a ``current-context`` naming a context whose
cluster exists; that is checked too.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

import yaml

__all__ = ["InsecureKubeConfigError", "check_kubeconfig", "is_valid_hostname", "kubeconfig_problems"]

_DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


class InsecureKubeConfigError(ValueError):
    """A worker kubeconfig Kueue v0.19.2 would refuse; ``problems`` lists each rule it breaks."""

    def __init__(self, worker: str, problems: list[str]) -> None:
        self.problems = problems
        super().__init__(
            f"the kubeconfig for MultiKueue worker {worker} would be refused by Kueue (InsecureKubeConfig): "
            + "; ".join(problems)
        )


def _split_host_port(netloc: str) -> str:
    """The host of ``host[:port]`` as Go's ``net.SplitHostPort`` takes it, or ``netloc`` when that fails."""
    if netloc.startswith("["):
        close = netloc.find("]")
        return netloc[1:close] if close != -1 and netloc[close + 1 : close + 2] == ":" else netloc
    host, sep, _ = netloc.partition(":")
    return host if sep and ":" not in netloc[len(host) + 1 :] else netloc


def is_valid_hostname(server: str) -> bool:
    """Kueue's ``isValidHostname`` on the lowercased server URL: the URL's host (port removed) is an IP address or
    a DNS-1123 subdomain (``multikueuecluster.go`` L1009, L1024-1041 at v0.19.2)."""
    try:
        netloc = urlsplit(server.lower()).netloc.rpartition("@")[2]
    except ValueError:
        return False
    host = _split_host_port(netloc)
    try:
        ipaddress.ip_address(host)
        return True
    except ValueError:
        return len(host) <= 253 and _DNS1123_SUBDOMAIN.match(host) is not None


def _named(entries: object, key: str) -> dict[str, Mapping[str, Any]]:
    out: dict[str, Mapping[str, Any]] = {}
    for entry in entries if isinstance(entries, list) else []:
        if isinstance(entry, Mapping) and isinstance(entry.get(key), Mapping):
            out[str(entry.get("name", ""))] = entry[key]
    return out


def _parse(kubeconfig: str | Mapping[str, Any]) -> Mapping[str, Any] | str:
    """The kubeconfig as a mapping, or the parse problem (``clientcmd.Load``, L960-963)."""
    if isinstance(kubeconfig, str):
        try:
            loaded = yaml.safe_load(kubeconfig)
        except yaml.YAMLError as exc:
            return f"failed to parse kubeconfig: {exc}"
    else:
        loaded = kubeconfig
    return loaded if isinstance(loaded, Mapping) else "failed to parse kubeconfig: not a mapping"


def _file_rules(users: dict[str, Mapping[str, Any]], clusters: dict[str, Mapping[str, Any]]) -> list[str]:
    """``validateKubeconfig``'s own rules (L964-986) over every user and cluster of the file."""
    problems = ["tokenFile is not allowed"] if any(u.get("tokenFile") for u in users.values()) else []
    for name, cluster in clusters.items():
        if cluster.get("insecure-skip-tls-verify"):
            problems.append(f"insecure TLS verification is not allowed for cluster {name}")
        if cluster.get("certificate-authority"):
            problems.append(
                "certificate-authority file paths are not allowed, use certificate-authority-data for cluster "
                + name
            )
        if not cluster.get("server"):
            problems.append(f"server URL is required for cluster {name}")
    return problems


def _rest_rules(user: Mapping[str, Any], cluster: Mapping[str, Any]) -> list[str]:
    """``validateRestConfig`` (L1001-1022) on the current context's user and cluster."""
    checks = (
        (bool(user.get("tokenFile")), "bearerTokenFile is not allowed"),
        (not is_valid_hostname(str(cluster.get("server", ""))), "untrusted server endpoint"),
        (bool(user.get("username") or user.get("password")), "basic auth is not allowed"),
        (bool(user.get("exec")), "exec plugins are not allowed"),
        (bool(user.get("auth-provider")), "auth providers are not allowed"),
    )
    return [message for broken, message in checks if broken]


def kubeconfig_problems(kubeconfig: str | Mapping[str, Any]) -> list[str]:
    """Every rule of Kueue v0.19.2's worker-kubeconfig validation ``kubeconfig`` (YAML text or parsed) breaks, in
    Kueue's order, with Kueue's own messages; empty when Kueue accepts it."""
    loaded = _parse(kubeconfig)
    if isinstance(loaded, str):
        return [loaded]
    users = _named(loaded.get("users"), "user")
    clusters = _named(loaded.get("clusters"), "cluster")
    problems = _file_rules(users, clusters)
    context = _named(loaded.get("contexts"), "context").get(str(loaded.get("current-context", "")))
    cluster = clusters.get(str(context.get("cluster", ""))) if context is not None else None
    if context is None or cluster is None:
        return [*problems, "current-context must name a context whose cluster is in the kubeconfig"]
    return problems + _rest_rules(users.get(str(context.get("user", ""))) or {}, cluster)


def check_kubeconfig(worker: str, kubeconfig: str | Mapping[str, Any]) -> None:
    """Raise when Kueue v0.19.2 would refuse ``kubeconfig`` for ``worker``.

    Raises:
        InsecureKubeConfigError: listing every rule broken (:func:`kubeconfig_problems`).
    """
    problems = kubeconfig_problems(kubeconfig)
    if problems:
        raise InsecureKubeConfigError(worker, problems)
