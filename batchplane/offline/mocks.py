"""Deterministic stand-ins for what providers return: resource ids and outputs, invoke results.

Plain functions (no Pulumi import) used by the offline engine's ``pulumi.runtime.Mocks``. Every
resource gets the id ``f"{name}-id"`` (providers too, so provider references are known) and its
inputs back as state; known types add the outputs a real provider computes, in camelCase wire
names (``masterAuth.clusterCaCertificate``), with fixed values from documentation address ranges
(``203.0.113.0/24``, RFC 5737). Invokes return ``{}`` unless listed in :func:`mock_call`.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Callable, Mapping
from typing import Any

import yaml

from batchplane.stack.files import SECRET_PLACEHOLDER

#: The endpoint every mocked GKE cluster reports (TEST-NET-3, RFC 5737).
CLUSTER_ENDPOINT = "203.0.113.10"
#: The base64 CA certificate every mocked GKE cluster reports (not a real certificate).
CLUSTER_CA = base64.b64encode(
    b"-----BEGIN CERTIFICATE-----\nbatchplane-offline-mock\n-----END CERTIFICATE-----\n"
).decode()
#: The GKE version the mocked ``getEngineVersions`` reports for every channel.
GKE_VERSION = "1.35.2-gke.1485000"
#: The GCP project reported when config has no ``gcp:project``.
DEFAULT_GCP_PROJECT = "offline-project"
_MOCK_PEM = "-----BEGIN {}-----\nbatchplane-offline-mock\n-----END {}-----\n"


def mock_id(name: str) -> str:
    """The physical id of a resource named ``name``: ``f"{name}-id"``."""
    return f"{name}-id"


def _gke_cluster(name: str, inputs: Mapping[str, Any], config: Mapping[str, str]) -> dict[str, Any]:
    cluster = str(inputs.get("name", name))
    return {
        "name": cluster,
        "endpoint": CLUSTER_ENDPOINT,
        "masterAuth": {**dict(inputs.get("masterAuth") or {}), "clusterCaCertificate": CLUSTER_CA},
        "masterVersion": GKE_VERSION,
        "selfLink": f"https://container.googleapis.com/v1/projects/{_project(inputs, config)}/locations/"
        f"{inputs.get('location', 'us-central1')}/clusters/{cluster}",
    }


def _gke_node_pool(name: str, inputs: Mapping[str, Any], config: Mapping[str, str]) -> dict[str, Any]:
    return {
        "name": str(inputs.get("name", name)),
        "instanceGroupUrls": [],
        "managedInstanceGroupUrls": [],
        "version": GKE_VERSION,
    }


def _service_account(name: str, inputs: Mapping[str, Any], config: Mapping[str, str]) -> dict[str, Any]:
    account = str(inputs.get("accountId", name))
    email = f"{account}@{_project(inputs, config)}.iam.gserviceaccount.com"
    return {
        "email": email,
        "name": f"projects/{_project(inputs, config)}/serviceAccounts/{email}",
        "uniqueId": "100000000000000000001",
        "member": f"serviceAccount:{email}",
    }


def _helm_release(name: str, inputs: Mapping[str, Any], config: Mapping[str, str]) -> dict[str, Any]:
    release = str(inputs.get("name", name))
    return {
        "name": release,
        "status": {
            "name": release,
            "namespace": inputs.get("namespace", "default"),
            "chart": inputs.get("chart", ""),
            "version": inputs.get("version", ""),
            "status": "deployed",
            "revision": 1,
        },
    }


def _docker_image(name: str, inputs: Mapping[str, Any], config: Mapping[str, str]) -> dict[str, Any]:
    """A built image: a digest derived from its name and tags (not a real build), ``ref`` the first tag pinned
    by it when pushed, ``contextHash`` likewise."""
    tags = [str(tag) for tag in inputs.get("tags") or []]
    digest = "sha256:" + hashlib.sha256(f"{name}:{tags}".encode()).hexdigest()
    first = tags[0] if tags else ""
    repository = (
        first[: first.rfind(":")] if first.rfind(":") > first.rfind("/") else first
    )  # the tag dropped
    ref = f"{repository}@{digest}" if repository else ""
    return {"digest": digest, "ref": ref, "contextHash": hashlib.sha256(name.encode()).hexdigest()}


def _random_text(name: str, inputs: Mapping[str, Any], config: Mapping[str, str]) -> dict[str, Any]:
    return {"result": "x" * int(inputs.get("length", 16))}


def _tls_key(name: str, inputs: Mapping[str, Any], config: Mapping[str, str]) -> dict[str, Any]:
    return {
        "privateKeyPem": _MOCK_PEM.format("PRIVATE KEY", "PRIVATE KEY"),
        "publicKeyPem": _MOCK_PEM.format("PUBLIC KEY", "PUBLIC KEY"),
    }


def _tls_cert(name: str, inputs: Mapping[str, Any], config: Mapping[str, str]) -> dict[str, Any]:
    return {"certPem": _MOCK_PEM.format("CERTIFICATE", "CERTIFICATE")}


def _project(inputs: Mapping[str, Any], config: Mapping[str, str]) -> str:
    return str(inputs.get("project") or config.get("gcp:project") or DEFAULT_GCP_PROJECT)


_Outputs = Callable[[str, Mapping[str, Any], Mapping[str, str]], dict[str, Any]]


#: The host a registry-route gate outputs offline (a real deployment reads Route ``default-route``'s ``spec.host``,
#: ``default-route-openshift-image-registry.<apps domain>``, from the cluster).
OFFLINE_REGISTRY_ROUTE_HOST = "default-route-openshift-image-registry.apps.offline.example"


#: The key of the placeholder a machineset-source lookup outputs offline (equal to
#: ``batchplane.targets.openshift.gpu_capacity.NOT_CHECKED_OFFLINE``, which detects it) as the copied ``providerSpec``: what a real
#: deployment copies from a worker MachineSet of the cluster is not known here (``batchplane preflight`` names it).
NOT_CHECKED_OFFLINE = "batchplane.dev/not-checked-offline"


def _dynamic(name: str, inputs: Mapping[str, Any], config: Mapping[str, str]) -> dict[str, Any]:
    """A readiness gate's outputs: a service-account-token gate yields placeholders for the token and CA, a
    registry-route gate :data:`OFFLINE_REGISTRY_ROUTE_HOST` (a real deployment reads them from the cluster), a
    feature-gate gate ``checked: false`` (nothing read). Lookups report ``checked: false``: an olm-namespace lookup answers with the stack's own OperatorGroup and Subscription (as
    planned, not as found), a machineset-source lookup with a providerSpec holding only :data:`NOT_CHECKED_OFFLINE`."""
    if inputs.get("gate") == "registry-route":
        return {"host": OFFLINE_REGISTRY_ROUTE_HOST}
    if inputs.get("gate") == "feature-gate":  # the cluster's FeatureGate was not read
        return {"checked": False}
    if inputs.get("gate") == "olm-namespace":
        return {
            "operatorGroup": inputs.get("stackOperatorGroup"),
            "operatorGroupSpec": inputs.get("stackOperatorGroupSpec") or {},
            "subscription": inputs.get("stackSubscription"),
            "checked": False,
        }
    if (
        inputs.get("gate") == "binary-build"
    ):  # an in-cluster image build: a digest of its inputs, not of a build
        seed = f"{name}:{inputs.get('contextDigest')}".encode()
        return {
            "build": f"{inputs.get('buildConfig')}-1",
            "digest": "sha256:" + hashlib.sha256(seed).hexdigest(),
        }
    if inputs.get("gate") == "machineset-source":
        where = inputs.get("machineSet") or f"a worker MachineSet in {inputs.get('zone')}"
        return {
            "machineSet": "",
            "providerSpec": {
                NOT_CHECKED_OFFLINE: f"copied at deploy time from {where}; run batchplane preflight to see which"
            },
            "checked": False,
        }
    if inputs.get("gate") != "service-account-token":
        return {}
    ca = base64.b64encode(b"-----BEGIN CERTIFICATE-----\noffline\n-----END CERTIFICATE-----\n").decode()
    return {"token": SECRET_PLACEHOLDER, "caData": ca}


_OUTPUTS: dict[str, _Outputs] = {
    "pulumi-python:dynamic:Resource": _dynamic,
    "docker-build:index:Image": _docker_image,
    "gcp:container/cluster:Cluster": _gke_cluster,
    "gcp:container/nodePool:NodePool": _gke_node_pool,
    "gcp:serviceaccount/account:Account": _service_account,
    "kubernetes:helm.sh/v3:Release": _helm_release,
    "random:index/randomPassword:RandomPassword": _random_text,
    "random:index/randomString:RandomString": _random_text,
    "tls:index/privateKey:PrivateKey": _tls_key,
    "tls:index/selfSignedCert:SelfSignedCert": _tls_cert,
    "tls:index/locallySignedCert:LocallySignedCert": _tls_cert,
}


def mock_state(
    type_: str, name: str, inputs: Mapping[str, Any], config: Mapping[str, str], *, custom: bool
) -> tuple[str, dict[str, Any]]:
    """The ``(id, state)`` a provider would return for a new resource.

    Args:
        type_: the type token.
        name: the logical name.
        inputs: the resource's inputs (camelCase).
        config: the run's encoded config (``gcp:project`` is used when inputs lack ``project``).
        custom: ``False`` for components, which get id ``""`` and their inputs as state.

    Returns:
        ``(id, state)``: state is the inputs plus the type's computed outputs; Kubernetes objects
        without ``metadata.name`` get the logical name (the real provider appends a random suffix).
    """
    state: dict[str, Any] = dict(inputs)
    if not custom:
        return "", state
    extra = _OUTPUTS.get(type_)
    if extra is not None:
        state.update(extra(name, inputs, config))
    if type_.startswith("kubernetes:") and "kind" in inputs:
        metadata = dict(inputs.get("metadata") or {})
        metadata.setdefault("name", name)
        state["metadata"] = metadata
    return mock_id(name), state


def _yaml_decode(args: Mapping[str, Any], config: Mapping[str, str]) -> dict[str, Any]:
    docs = yaml.safe_load_all(str(args.get("text", "")))
    return {"result": [d for d in docs if d is not None]}


def _engine_versions(args: Mapping[str, Any], config: Mapping[str, str]) -> dict[str, Any]:
    channels = {c: GKE_VERSION for c in ("RAPID", "REGULAR", "STABLE", "EXTENDED")}
    return {
        "defaultClusterVersion": GKE_VERSION,
        "latestMasterVersion": GKE_VERSION,
        "latestNodeVersion": GKE_VERSION,
        "validMasterVersions": [GKE_VERSION],
        "validNodeVersions": [GKE_VERSION],
        "releaseChannelDefaultVersion": channels,
        "releaseChannelLatestVersion": channels,
        "location": args.get("location", ""),
        "project": _project(args, config),
    }


def _client_config(args: Mapping[str, Any], config: Mapping[str, str]) -> dict[str, Any]:
    return {
        "project": _project(args, config),
        "region": config.get("gcp:region", "us-central1"),
        "zone": config.get("gcp:zone", ""),
        "accessToken": "offline-access-token",
        "id": "offline",
    }


def _gcp_project(args: Mapping[str, Any], config: Mapping[str, str]) -> dict[str, Any]:
    project = str(args.get("projectId") or _project(args, config))
    return {"projectId": project, "number": "123456789012", "name": project}


_Call = Callable[[Mapping[str, Any], Mapping[str, str]], dict[str, Any]]

_CALLS: dict[str, _Call] = {
    "kubernetes:yaml:decode": _yaml_decode,
    "kubernetes:helm:template": lambda args, config: {"result": []},
    "kubernetes:kustomize:directory": lambda args, config: {"result": []},
    "gcp:container/getEngineVersions:getEngineVersions": _engine_versions,
    "gcp:organizations/getClientConfig:getClientConfig": _client_config,
    "gcp:organizations/getProject:getProject": _gcp_project,
}


#: The lookups whose offline answer is canned (one answer for every project, region and cluster): a deploy-time check
#: reading one reports "not checked offline" instead of judging it (:mod:`batchplane.lookups`). ``kubernetes:yaml:decode``
#: is not here: it really parses its text.
CANNED_LOOKUPS: frozenset[str] = frozenset(
    {
        "gcp:container/getEngineVersions:getEngineVersions",
        "gcp:organizations/getClientConfig:getClientConfig",
        "gcp:organizations/getProject:getProject",
    }
)


def mock_call(token: str, args: Mapping[str, Any], config: Mapping[str, str]) -> dict[str, Any]:
    """The result of an invoke (``pulumi.runtime.invoke``/``get_*`` functions).

    ``kubernetes:yaml:decode`` really parses its ``text`` (so yaml v1 ``ConfigGroup`` children
    appear); the Helm/kustomize v1 invokes return no objects; GKE/GCP lookups return fixed data;
    anything else returns ``{}``.
    """
    call = _CALLS.get(token)
    return {} if call is None else call(args, config)
