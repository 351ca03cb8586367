"""End to end: the real uvicorn server over TLS on 127.0.0.1 (a random free port), AdmissionReviews over a
keep-alive connection, and the serving certificate reloaded when its files change (cert-manager rotation)."""

from __future__ import annotations

import base64
import gc
import json
import shutil
import socket
import ssl
import struct
import time
from pathlib import Path

import httpx
import pytest

from batchplane.webhook.errors import CertificateError
from batchplane.webhook.server import CertificateReloader, make_ssl_context
from tests.webhook.conftest import der_of, job, one_queue, review, running_server, write_cert

pytestmark = pytest.mark.slow


def _peer_certificate(port: int) -> bytes:
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    with socket.create_connection(("127.0.0.1", port), timeout=5) as raw, context.wrap_socket(raw) as tls:
        der = tls.getpeercert(binary_form=True)
    assert der is not None
    return der


def test_server_answers_reviews_over_tls_keep_alive(tmp_path: Path) -> None:
    cert, key = write_cert(tmp_path / "a", "webhook-a")
    policy = one_queue({"cpu": 4}, default=True)
    with (
        running_server(policy, cert, key) as port,
        httpx.Client(
            base_url=f"https://127.0.0.1:{port}", verify=ssl.create_default_context(cafile=str(cert))
        ) as client,
    ):
        denied = client.post("/validate", json=review(job(requests={"cpu": "5"}), uid="d1")).json()[
            "response"
        ]
        allowed = client.post("/validate", json=review(job(), uid="a1")).json()["response"]
        patched = client.post("/mutate", json=review(job(queue=None), uid="m1")).json()["response"]
        bad = client.post("/validate", content=b"{}")
        health = (client.get("/healthz").text, client.get("/readyz").text)
    assert (denied["uid"], denied["allowed"]) == ("d1", False)
    assert denied["status"]["message"] == (
        "never runs: cq can get at most 4 CPUs on f (4 of its own, no cohort to borrow from); this Job asks for "
        "5 CPUs — give each pod at most 4 CPUs. "
        'Job "team-a/train": can never be admitted by ClusterQueue "cq" (LocalQueue "lq"): PodSet "main" needs cpu 5, '
        'but flavor "f" offers at most cpu 4 (nominal quota, no cohort) (stack key: '
        "batchplane:kueue.clusterQueues[0].resourceGroups[0].flavors[0].resources[0]; see docs/submitting-jobs.md)"
    )
    assert allowed == {"uid": "a1", "allowed": True}
    assert json.loads(base64.b64decode(patched["patch"])) == [
        {"op": "add", "path": "/metadata/labels", "value": {"kueue.x-k8s.io/queue-name": "lq"}}
    ]
    assert (bad.status_code, bad.json()) == (
        400,
        {"reason": "expected apiVersion admission.k8s.io/v1 kind AdmissionReview, got null null"},
    )
    assert health == ("ok", "ready")


def test_new_tls_connections_see_the_rotated_certificate_without_a_restart(tmp_path: Path) -> None:
    live = tmp_path / "live"
    cert, key = write_cert(live, "webhook-a")
    cert_b, key_b = write_cert(tmp_path / "b", "webhook-b")
    first = der_of(cert)
    with running_server(one_queue({"cpu": 1}), cert, key, reload_interval=0.05) as port:
        assert _peer_certificate(port) == first
        shutil.copyfile(key_b, key)
        shutil.copyfile(cert_b, cert)
        deadline = time.monotonic() + 5
        while _peer_certificate(port) == first:
            assert time.monotonic() < deadline, "certificate was not reloaded"
            time.sleep(0.05)
        assert _peer_certificate(port) == der_of(cert_b)


def test_a_mismatched_pair_keeps_the_old_certificate(tmp_path: Path) -> None:
    cert, key = write_cert(tmp_path / "a", "a")
    _, other_key = write_cert(tmp_path / "b", "b")
    context = make_ssl_context(cert, key)
    reloader = CertificateReloader(context, cert, key)
    shutil.copyfile(other_key, key)
    assert reloader.check() is False  # key does not match the certificate: not loaded, logged
    assert reloader.check() is False  # same contents are not retried
    assert reloader.valid()


def test_missing_certificate_fails_at_start(tmp_path: Path) -> None:
    with pytest.raises(CertificateError, match="cannot load certificate"):
        make_ssl_context(tmp_path / "tls.crt", tmp_path / "tls.key")


def test_the_server_runs_on_uvloop_with_a_keep_alive_longer_than_the_api_servers(tmp_path: Path) -> None:
    from batchplane.webhook.server import KEEP_ALIVE_SECONDS

    cert, key = write_cert(tmp_path / "a", "webhook-a")
    with (
        running_server(one_queue({"cpu": 4}), cert, key) as port,
        httpx.Client(
            base_url=f"https://127.0.0.1:{port}", verify=ssl.create_default_context(cafile=str(cert))
        ) as c,
    ):
        metrics = c.get("/metrics").text
    assert 'batchplane_webhook_event_loop_info{loop="uvloop.Loop"} 1.0' in metrics
    assert KEEP_ALIVE_SECONDS > 90  # client-go closes idle connections after 90 s


def _live_protocols() -> int:
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

    return sum(1 for o in gc.get_objects() if isinstance(o, HttpToolsProtocol))


@pytest.mark.parametrize("close_notify", [True, False], ids=["tls-close-notify", "abrupt-close"])
def test_closed_connections_are_released_before_the_keep_alive_timer_fires(
    tmp_path: Path, close_notify: bool
) -> None:
    """Issue #14: uvicorn kept a connection closed without close_notify (or reset) alive for the whole keep-alive
    period (100 s) through its armed timer — its protocol, transport and TLS buffers — so RSS climbed with churn."""
    cert, key = write_cert(tmp_path / "a", "webhook-a")
    context = ssl.create_default_context(cafile=str(cert))
    request = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
    with running_server(one_queue({"cpu": 4}), cert, key) as port:
        for _ in range(20):
            raw = socket.create_connection(("127.0.0.1", port), timeout=5)
            tls = context.wrap_socket(raw, server_hostname="127.0.0.1")
            tls.sendall(request)
            answer = b""
            while not answer.endswith(b"\r\n\r\nok"):  # the whole answer: the keep-alive timer is armed
                answer += tls.recv(4096)
            assert answer.startswith(b"HTTP/1.1 200")
            if close_notify:
                tls.unwrap().close()
            else:  # reset, no TLS close_notify: the server sees the connection end with an error
                tls.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                tls.close()
        deadline = time.monotonic() + 5
        while _live_protocols() and time.monotonic() < deadline:
            gc.collect()
            time.sleep(0.05)
        assert _live_protocols() == 0


def test_an_update_review_with_its_old_object_round_trips_over_tls(tmp_path: Path) -> None:
    cert, key = write_cert(tmp_path / "a", "webhook-a")
    old = job(parallelism=2)
    old["spec"]["suspend"] = True
    grown = job(parallelism=5)
    grown["spec"]["suspend"] = True
    relabeled = {**old, "metadata": {**old["metadata"], "annotations": {"owner": "alice"}}}
    with (
        running_server(one_queue({"cpu": 4}), cert, key) as port,
        httpx.Client(
            base_url=f"https://127.0.0.1:{port}", verify=ssl.create_default_context(cafile=str(cert))
        ) as client,
    ):
        created = client.post("/validate", json=review(grown, uid="c1")).json()["response"]
        updated = client.post("/validate", json=review(grown, operation="UPDATE", old=old, uid="u1")).json()[
            "response"
        ]
        unchanged = client.post(
            "/validate", json=review(relabeled, operation="UPDATE", old=old, uid="u2")
        ).json()["response"]
        metrics = client.get("/metrics").text
    assert (updated["uid"], updated["allowed"]) == ("u1", False)
    assert updated["status"] == created["status"]
    assert updated["status"]["message"].startswith("never runs: cq can get at most 4 CPUs on f")
    assert unchanged == {"uid": "u2", "allowed": True}
    assert 'reason="unchanged-on-update"' in metrics
