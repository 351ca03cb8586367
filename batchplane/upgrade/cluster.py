"""What a cluster runs, read through the kubernetes client: the operators' versions, each Kueue CRD's served and
storage versions with ``status.storedVersions``, the Kueue Configuration in use and whether Topologies exist.

The names are the ones Batchplane's Helm release gives Kueue's objects (release ``kueue``, so chart fullname
``kueue``): Deployment ``kueue-controller-manager`` whose ``manager`` container image tag is the app version, and
ConfigMap ``kueue-manager-config`` key ``controller_manager_config.yaml`` (``charts/kueue/templates/manager/`` at
https://github.com/kubernetes-sigs/kueue/tree/v0.19.2). KubeRay: Deployment ``kuberay-operator``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import yaml

from batchplane.upgrade.steps import KUEUE_CRDS, Version, parse_version

KUEUE_DEPLOYMENT = "kueue-controller-manager"
KUEUE_CONFIG_MAP = "kueue-manager-config"
KUEUE_CONFIG_KEY = "controller_manager_config.yaml"
KUBERAY_DEPLOYMENT = "kuberay-operator"


class ClusterReadError(RuntimeError):
    """The cluster answered something other than the object or 404 (the message names the path and status)."""


@dataclass(frozen=True)
class CrdVersions:
    """One CRD's versions: ``served`` and ``storage`` from ``spec.versions``, ``stored`` = ``status.storedVersions``."""

    served: tuple[str, ...]
    storage: str | None
    stored: tuple[str, ...]


@dataclass(frozen=True)
class ClusterState:
    """What the planner needs from a cluster (``None`` = not installed / not found).

    Attributes:
        versions: operator (``kueue``, ``kuberay``) → running version.
        crds: Kueue CRD name → its versions; a CRD that is absent is left out.
        configuration: the Kueue Configuration document in use (parsed YAML), or None.
        topologies: the number of Topology objects (0 when the CRD is absent).
    """

    versions: dict[str, Version] = field(default_factory=dict)
    crds: dict[str, CrdVersions] = field(default_factory=dict)
    configuration: dict[str, Any] | None = None
    topologies: int = 0


def _get(api_client: Any, what: str, call: Callable[[], Any]) -> Any | None:
    """The answer of ``call`` (a kubernetes client read), ``None`` on 404.

    Raises:
        ClusterReadError: any other error answer or an unreachable server (the message names ``what``).
    """
    from kubernetes.client.exceptions import ApiException
    from urllib3.exceptions import HTTPError

    try:
        answer = call()
    except ApiException as exc:
        if exc.status == 404:
            return None
        raise ClusterReadError(f"{what}: {exc.status} {exc.reason}") from exc
    except (HTTPError, OSError) as exc:
        raise ClusterReadError(f"{what}: {exc}") from exc
    return api_client.sanitize_for_serialization(answer)


def image_version(deployment: dict[str, Any] | None, container: str | None = None) -> Version | None:
    """The version in the image tag of ``container`` (the first container when None) of a Deployment, or None when
    the tag is not a version (a digest or ``latest``)."""
    if not deployment:
        return None
    containers = deployment.get("spec", {}).get("template", {}).get("spec", {}).get("containers", [])
    chosen = [c for c in containers if container is None or c.get("name") == container][:1]
    if not chosen:
        return None
    image = str(chosen[0].get("image", "")).split("@", 1)[0]
    tag = image.rsplit(":", 1)[1] if ":" in image.rsplit("/", 1)[-1] else ""
    try:
        return parse_version(tag)
    except ValueError:
        return None


def crd_versions(crd: dict[str, Any]) -> CrdVersions:
    """A CRD object's :class:`CrdVersions`."""
    versions = crd.get("spec", {}).get("versions", [])
    served = tuple(str(v["name"]) for v in versions if v.get("served"))
    storage = next((str(v["name"]) for v in versions if v.get("storage")), None)
    stored = tuple(str(v) for v in crd.get("status", {}).get("storedVersions", []))
    return CrdVersions(served=served, storage=storage, stored=stored)


def read_cluster(api_client: Any, kueue_namespace: str, kuberay_namespace: str | None) -> ClusterState:
    """Read a cluster's :class:`ClusterState` (GETs only).

    Args:
        api_client: a ``kubernetes.client.ApiClient``.
        kueue_namespace: Kueue's namespace (``operators.kueue.namespace``).
        kuberay_namespace: KubeRay's namespace, or None when the stack installs no KubeRay.

    Raises:
        ClusterReadError: an answer other than the object or 404.
    """
    from kubernetes import client

    custom = client.CustomObjectsApi(api_client)

    def deployment(namespace: str, name: str) -> Any | None:
        return _get(
            api_client,
            f"Deployment {namespace}/{name}",
            lambda: custom.get_namespaced_custom_object("apps", "v1", namespace, "deployments", name),
        )

    versions: dict[str, Version] = {}
    kueue = image_version(deployment(kueue_namespace, KUEUE_DEPLOYMENT), "manager")
    if kueue is not None:
        versions["kueue"] = kueue
    if kuberay_namespace is not None:
        ray = image_version(deployment(kuberay_namespace, KUBERAY_DEPLOYMENT))
        if ray is not None:
            versions["kuberay"] = ray
    crds: dict[str, CrdVersions] = {}
    for name in KUEUE_CRDS:
        crd = _get(
            api_client,
            f"CustomResourceDefinition {name}",
            partial(
                custom.get_cluster_custom_object,
                "apiextensions.k8s.io",
                "v1",
                "customresourcedefinitions",
                name,
            ),
        )
        if crd is not None:
            crds[name] = crd_versions(crd)
    config_map = _get(
        api_client,
        f"ConfigMap {kueue_namespace}/{KUEUE_CONFIG_MAP}",
        lambda: client.CoreV1Api(api_client).read_namespaced_config_map(KUEUE_CONFIG_MAP, kueue_namespace),
    )
    configuration = None
    if config_map is not None:
        loaded = yaml.safe_load((config_map.get("data") or {}).get(KUEUE_CONFIG_KEY) or "null")
        configuration = loaded if isinstance(loaded, dict) else None
    topologies = 0
    topology_crd = crds.get("topologies.kueue.x-k8s.io")
    if topology_crd is not None and topology_crd.served:
        version = topology_crd.served[-1]
        listed = _get(
            api_client,
            "Topologies",
            lambda: custom.list_cluster_custom_object("kueue.x-k8s.io", version, "topologies"),
        )
        topologies = len((listed or {}).get("items", []))
    return ClusterState(versions=versions, crds=crds, configuration=configuration, topologies=topologies)
