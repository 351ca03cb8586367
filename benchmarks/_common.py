"""Shared plumbing of the webhook benchmarks: test certificates, the policy, sample reviews, a server process.

Everything runs on 127.0.0.1 only. The server is the real one (``python -m batchplane.webhook serve``)
in its own process, so its RSS can be read from ``/proc/<pid>/status``.
"""

from __future__ import annotations

import datetime
import ipaddress
import json
import os
import socket
import ssl
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

REPO = Path(__file__).resolve().parents[1]
SAMPLES = (REPO / ".." / "shared" / "samples").resolve()
PYTHON = sys.executable

#: The "real reviews" of docs/performance.md: (label, sample file, document index).
REAL_REVIEWS = (
    ("gpu-rayjob", "kuberay/ray-job.pytorch-image-classifier.yaml", 0),
    ("pytorchjob", "training-operator/pytorch_job_mnist_nccl.yaml", 0),
    ("job", "kueue/sample-job.yaml", 0),
)
#: Namespace and LocalQueue of the gke-dws stack the benchmark policy is rendered from.
NAMESPACE, QUEUE = "default", "user-queue"


def write_cert(directory: Path) -> tuple[Path, Path]:
    """A self-signed ECDSA P-256 certificate for 127.0.0.1; returns ``(tls.crt, tls.key)``."""
    directory.mkdir(parents=True, exist_ok=True)
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "bench")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
        .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
        .sign(key, hashes.SHA256())
    )  # fmt: skip
    (directory / "tls.crt").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    (directory / "tls.key").write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    return directory / "tls.crt", directory / "tls.key"


def write_policy(directory: Path) -> Path:
    """The gke-dws stack's policy document (``batchplane webhook policy --stack gke-dws``)."""
    path = directory / "policy.json"
    batchplane = Path(PYTHON).parent / "batchplane"
    subprocess.run(
        [str(batchplane), "webhook", "policy", "--stack", "gke-dws", "--output", str(path)],
        check=True,
        cwd=REPO,
    )
    return path


def sample_object(relative: str, index: int = 0) -> dict[str, Any]:
    """A shared sample labelled for the benchmark's LocalQueue."""
    docs = [d for d in yaml.safe_load_all((SAMPLES / relative).read_text()) if d is not None]
    obj: dict[str, Any] = docs[index]
    meta = obj.setdefault("metadata", {})
    meta["namespace"] = NAMESPACE
    meta["labels"] = {**(meta.get("labels") or {}), "kueue.x-k8s.io/queue-name": QUEUE}
    return obj


def review(obj: dict[str, Any] | None, namespace: str = NAMESPACE) -> dict[str, Any]:
    """An AdmissionReview v1 request for ``obj``."""
    api = (obj or {}).get("apiVersion", "batch/v1")
    group, _, version = str(api).rpartition("/")
    return {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": str(uuid.uuid4()),
            "kind": {"group": group, "version": version, "kind": (obj or {}).get("kind", "Job")},
            "resource": {"group": group, "version": version, "resource": "x"},
            "operation": "CREATE",
            "namespace": namespace,
            "userInfo": {"username": "bench"},
            "object": obj,
        },
    }


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    """``python -m batchplane.webhook serve`` as a child process on 127.0.0.1."""

    def __init__(self, workdir: Path, package: Path | None = None) -> None:
        """Start the server; ``package``: import batchplane from there (a ``webhook/compile.py --out`` directory)
        instead of this checkout."""
        self.cert, self.key = write_cert(workdir / "tls")
        self.policy = write_policy(workdir)
        self.port = free_port()
        self.log = open(workdir / "server.log", "wb")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(
            [PYTHON, "-m", "batchplane.webhook", "serve", "--policy", str(self.policy), "--cert-file", str(self.cert),
             "--key-file", str(self.key), "--host", "127.0.0.1", "--port", str(self.port), "--enable-noop"],
            stdout=self.log, stderr=subprocess.STDOUT, cwd=package or REPO,
            env={**os.environ, "PYTHONUNBUFFERED": "1", **({"PYTHONPATH": str(package)} if package else {})},
        )  # fmt: skip
        self._wait()

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    def _wait(self) -> None:
        context = ssl.create_default_context(cafile=str(self.cert))
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                with (
                    socket.create_connection(("127.0.0.1", self.port), timeout=1) as raw,
                    context.wrap_socket(raw, server_hostname="127.0.0.1"),
                ):
                    return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError("webhook server did not start")

    def rss_kib(self) -> int:
        """Resident set size of the server process (KiB)."""
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        raise RuntimeError("no VmRSS")

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=10)
        self.log.close()


def write_bodies(directory: Path) -> dict[str, Path]:
    """One JSON body file per real review, plus ``noop`` (the Job review, for the trivial handler)."""
    directory.mkdir(parents=True, exist_ok=True)
    out: dict[str, Path] = {}
    for label, relative, index in REAL_REVIEWS:
        path = directory / f"{label}.json"
        path.write_text(json.dumps(review(sample_object(relative, index))))
        out[label] = path
    return out
