"""Helpers for the webhook tests: policies, job objects, AdmissionReviews, test certificates, a live server."""

from __future__ import annotations

import asyncio
import datetime
import ipaddress
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from batchplane.components.quota_webhook.policy import render_policy
from batchplane.stack import load_stack, load_stack_file
from batchplane.webhook.policy import PolicyDocument
from batchplane.webhook.server import build_server, run_server

REPO_ROOT = Path(__file__).resolve().parents[2]
SAMPLES = REPO_ROOT / ".." / "shared" / "samples"
TEMPLATES = REPO_ROOT / "templates"
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"


def sample(relative: str, index: int = 0) -> dict[str, Any]:
    """Document ``index`` of ``shared/samples/<relative>``."""
    docs = [d for d in yaml.safe_load_all((SAMPLES / relative).read_text(encoding="utf-8")) if d is not None]
    doc = docs[index]
    assert isinstance(doc, dict)
    return doc


def labeled(obj: dict[str, Any], queue: str | None, namespace: str | None = None) -> dict[str, Any]:
    """``obj`` with the queue label set to ``queue`` (removed when None) and an optional namespace."""
    meta = obj.setdefault("metadata", {})
    labels = dict(meta.get("labels") or {})
    labels.pop(QUEUE_LABEL, None)
    if queue is not None:
        labels[QUEUE_LABEL] = queue
    meta["labels"] = labels
    if namespace is not None:
        meta["namespace"] = namespace
    return obj


def stack_policy(name: str) -> PolicyDocument:
    """The policy document of the template ``templates/Pulumi.<name>.yaml``."""
    return render_policy(load_stack_file(TEMPLATES / f"Pulumi.{name}.yaml"))


def policy_from(kueue: dict[str, Any], **extra: Any) -> PolicyDocument:
    """The policy document of a kind stack with this ``batchplane:kueue`` section (plus other keys)."""
    raw: dict[str, Any] = {"batchplane:target": {"kind": "kind"}, "batchplane:kueue": kueue}
    raw.update({f"batchplane:{k}": v for k, v in extra.items()})
    return render_policy(load_stack(raw, "test"))


def one_queue(
    resources: dict[str, Any],
    *,
    namespace: str = "team-a",
    queue: str = "lq",
    default: bool = False,
    flavor: dict[str, Any] | None = None,
    cq_extra: dict[str, Any] | None = None,
    kueue_extra: dict[str, Any] | None = None,
    **extra: Any,
) -> PolicyDocument:
    """A policy with one flavor ``f``, one ClusterQueue ``cq`` covering ``resources`` (name → nominal) and
    one LocalQueue ``queue`` in ``namespace``."""
    kueue: dict[str, Any] = {
        "resourceFlavors": [{"name": "f", **(flavor or {})}],
        "clusterQueues": [
            {
                "name": "cq",
                "namespaceSelector": {},
                "resourceGroups": [
                    {
                        "coveredResources": list(resources),
                        "flavors": [
                            {
                                "name": "f",
                                "resources": [{"name": r, "nominalQuota": q} for r, q in resources.items()],
                            }
                        ],
                    }
                ],
                **(cq_extra or {}),
            }
        ],
        "localQueues": [{"name": queue, "namespace": namespace, "clusterQueue": "cq", "default": default}],
    }
    kueue.update(kueue_extra or {})
    return policy_from(kueue, **extra)


def job(
    name: str = "train",
    *,
    namespace: str = "team-a",
    queue: str | None = "lq",
    parallelism: int = 1,
    requests: dict[str, Any] | None = None,
    pod_spec: dict[str, Any] | None = None,
    labels: dict[str, str] | None = None,
) -> dict[str, Any]:
    """A batch/v1 Job with one container requesting ``requests``."""
    all_labels = dict(labels or {})
    if queue is not None:
        all_labels[QUEUE_LABEL] = queue
    spec = {
        "containers": [
            {"name": "main", "image": "busybox", "resources": {"requests": requests or {"cpu": "1"}}}
        ],
        "restartPolicy": "Never",
        **(pod_spec or {}),
    }
    meta: dict[str, Any] = {"name": name, "namespace": namespace}
    if all_labels:
        meta["labels"] = all_labels
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": meta,
        "spec": {"parallelism": parallelism, "completions": parallelism, "template": {"spec": spec}},
    }


def review(
    obj: dict[str, Any] | None,
    *,
    namespace: str | None = "team-a",
    operation: str = "CREATE",
    dry_run: bool = False,
    uid: str | None = None,
    old: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """An ``admission.k8s.io/v1`` AdmissionReview for ``obj`` as the API server sends it (with ``old`` as
    ``oldObject``, as on UPDATE)."""
    api_version = (obj or {}).get("apiVersion", "batch/v1")
    group, _, version = api_version.rpartition("/")
    request: dict[str, Any] = {
        "uid": uid or str(uuid.uuid4()),
        "kind": {"group": group, "version": version, "kind": (obj or {}).get("kind", "Job")},
        "resource": {"group": group, "version": version, "resource": "jobs"},
        "operation": operation,
        "userInfo": {"username": "alice"},
        "object": obj,
        "dryRun": dry_run,
    }
    if namespace is not None:
        request["namespace"] = namespace
    if old is not None:
        request["oldObject"] = old
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}


# --- certificates ---------------------------------------------------------------------------------


def write_cert(directory: Path, common_name: str) -> tuple[Path, Path]:
    """A self-signed ECDSA certificate for 127.0.0.1/localhost: returns ``(tls.crt, tls.key)`` paths."""
    directory.mkdir(parents=True, exist_ok=True)
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = directory / "tls.crt", directory / "tls.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    return cert_path, key_path


def der_of(cert_path: Path) -> bytes:
    """The DER bytes of a PEM certificate file."""
    return x509.load_pem_x509_certificate(cert_path.read_bytes()).public_bytes(serialization.Encoding.DER)


@contextmanager
def running_server(
    policy: PolicyDocument, cert: Path, key: Path, *, reload_interval: float = 0.05, enable_noop: bool = False
) -> Iterator[int]:
    """Run the real TLS server on 127.0.0.1 (a random free port) in a thread; yields the port."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server, reloader = build_server(
        policy,
        cert,
        key,
        host="127.0.0.1",
        port=port,
        reload_interval=reload_interval,
        enable_noop=enable_noop,
    )
    thread = threading.Thread(target=lambda: run_server(server, reloader, [sock]), daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert thread.is_alive(), "server thread died"
        assert time.monotonic() < deadline, "server did not start"
        time.sleep(0.01)
    try:
        yield port
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


class AppClient:
    """A synchronous client for an ASGI app (httpx's ASGITransport; no network, no server)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    def request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        async def call() -> httpx.Response:
            async with httpx.AsyncClient(
                transport=httpx.ASGITransport(app=self.app), base_url="http://webhook"
            ) as c:
                return await c.request(method, path, **kwargs)

        return asyncio.run(call())

    def get(self, path: str) -> httpx.Response:
        return self.request("GET", path)

    def post(self, path: str, **kwargs: Any) -> httpx.Response:
        return self.request("POST", path, **kwargs)
