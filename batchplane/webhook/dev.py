"""``serve --dev``: try the webhook on a workstation — a throwaway CA and serving certificate, a sample review.

:func:`prepare` writes, into a new temporary directory, a self-signed CA (``ca.crt``), a serving certificate for
``localhost`` / ``127.0.0.1`` signed by it (``tls.crt``, ``tls.key``; ECDSA P-256, valid one day, made with the
``cryptography`` package the server already uses) and ``review.json``: an ``admission.k8s.io/v1`` AdmissionReview of
a one-pod Job in the policy's first tenant namespace, labelled with its first LocalQueue. :func:`curl_line` is the
command that sends it. Nothing here is meant for a cluster: the Deployment gets its certificate from cert-manager.
"""

from __future__ import annotations

import datetime
import ipaddress
import json
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from batchplane.frameworks import batch_job
from batchplane.webhook.policy import PolicyDocument
from batchplane.wellknown import QUEUE_NAME_LABEL


@dataclass(frozen=True)
class DevFiles:
    """What :func:`prepare` wrote.

    Attributes:
        directory: the temporary directory (left behind for the user's curl; remove it when done).
        ca: the CA certificate to trust (``curl --cacert``).
        cert: the serving certificate.
        key: its private key.
        review: the sample AdmissionReview.
    """

    directory: Path
    ca: Path
    cert: Path
    key: Path
    review: Path


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _pem_key(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def sample_review(policy: PolicyDocument, cpu: str = "1") -> dict[str, Any]:
    """An AdmissionReview (``CREATE`` of a ``batch/v1`` Job, one pod requesting ``cpu``) in the policy's first tenant
    namespace, labelled with its first LocalQueue (``default`` / no label when the policy has none)."""
    namespace, tenant = next(iter(sorted(policy.namespaces.items())), ("default", None))
    labels = {}
    if tenant is not None and tenant.local_queues:
        labels[QUEUE_NAME_LABEL] = tenant.default_queue or sorted(tenant.local_queues)[0]
    framework = batch_job.FRAMEWORK
    job = {
        "apiVersion": framework.api_version,
        "kind": framework.kind,
        "metadata": {"name": "sample", "namespace": namespace, "labels": labels},
        "spec": {
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [
                        {"name": "main", "image": "busybox:1.36", "resources": {"requests": {"cpu": cpu}}}
                    ],
                }
            }
        },
    }
    return {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": "00000000-0000-0000-0000-000000000001",
            "kind": {"group": framework.group, "version": framework.version, "kind": framework.kind},
            "resource": {
                "group": framework.group,
                "version": framework.version,
                "resource": framework.plural,
            },
            "namespace": namespace,
            "operation": "CREATE",
            "userInfo": {"username": "dev"},
            "object": job,
            "dryRun": False,
        },
    }


def prepare(policy: PolicyDocument, directory: Path | None = None) -> DevFiles:
    """Write the CA, the serving pair and the sample review (see the module docstring).

    Args:
        policy: the policy the server will serve (for the sample's namespace and queue).
        directory: where to write; defaults to a new ``batchplane-webhook-dev-*`` temporary directory.
    """
    where = directory or Path(tempfile.mkdtemp(prefix="batchplane-webhook-dev-"))
    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = _name("batchplane webhook dev CA")
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True
        )
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(_name("localhost"))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
        .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    files = DevFiles(where, where / "ca.crt", where / "tls.crt", where / "tls.key", where / "review.json")
    files.ca.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    files.cert.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    files.key.write_bytes(_pem_key(key))
    files.key.chmod(0o600)
    files.review.write_text(json.dumps(sample_review(policy), indent=2) + "\n", encoding="utf-8")
    return files


def url(host: str, port: int) -> str:
    """``https://127.0.0.1:8443`` (IPv6 hosts bracketed)."""
    shown = f"[{host}]" if ":" in host else host
    return f"https://{shown}:{port}"


def curl_line(files: DevFiles, host: str, port: int) -> str:
    """The command that posts the sample review to ``/validate``."""
    return (
        f"curl --cacert {files.ca} -H 'Content-Type: application/json' --data @{files.review} "
        f"{url(host, port)}/validate"
    )
