"""The ASGI app: AdmissionReview v1 parsing (400 with a reason), uid echo, base64 JSONPatch, dryRun,
internal-error failure mode (never a 5xx), probes and Prometheus metrics."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from batchplane.webhook.app import create_app
from batchplane.webhook.review import build_response
from tests.webhook.conftest import AppClient, job, one_queue, review


@pytest.fixture
def client() -> AppClient:
    return AppClient(create_app(one_queue({"cpu": 4}, default=True)))


MALFORMED = [
    (b"{", "body is not JSON: unexpected end of data: line 1 column 2 (char 1)"),
    (b"[]", "body is not a JSON object"),
    (b'{"apiVersion": "admission.k8s.io/v1beta1", "kind": "AdmissionReview"}',
     'expected apiVersion admission.k8s.io/v1 kind AdmissionReview, got "admission.k8s.io/v1beta1" "AdmissionReview"'),
    (b'{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview"}', "request is missing or not an object"),
    (b'{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {"uid": 5}}',
     "request.uid is missing or not a string"),
    (b'{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {"uid": "u", "operation": "PATCH"}}',
     'request.operation "PATCH" is not one of CREATE, UPDATE, DELETE, CONNECT'),
    (b'{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {"uid": "u", "operation": "CREATE"}}',
     "request.kind must be an object with string group, version and kind"),
    (json.dumps({**review(None), "request": {**review(None)["request"], "object": [1]}}).encode(), "request.object is not an object"),
    (json.dumps({**review(job(), operation="UPDATE"), "request": {**review(job(), operation="UPDATE")["request"], "oldObject": "x"}}).encode(),
     "request.oldObject is not an object"),
    (b"\xff\xfe\x00", "body is not JSON: str is not valid UTF-8: surrogates not allowed: line 1 column 1 (char 0)"),
    (b'{"n": ' + b"9" * 5000 + b"}", "body is not JSON: number is infinity when parsed as double: line 1 column 7 (char 6)"),
    (b'{"n": 18446744073709551616}', "expected apiVersion admission.k8s.io/v1 kind AdmissionReview, got null null"),
    (b'{"n": NaN}', "body is not JSON: unexpected character, expected a JSON value: line 1 column 7 (char 6)"),
    (b"[" * 2000 + b"]" * 2000, "body is not JSON: depth limit exceeded: line 1 column 1026 (char 1025)"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("body", "exp_reason"),
    MALFORMED,
    ids=[
        "truncated",
        "array",
        "v1beta1",
        "no-request",
        "uid-not-string",
        "bad-operation",
        "no-kind",
        "object-not-map",
        "old-object-not-map",
        "bad-bytes",
        "5000-digit-integer",
        "integer-over-64-bits",
        "nan",
        "nested-2000-deep",
    ],
)
@pytest.mark.parametrize("endpoint", ["/validate", "/mutate"])
def test_malformed_bodies_get_400_with_a_reason(
    client: AppClient, endpoint: str, body: bytes, exp_reason: str
) -> None:
    response = client.post(endpoint, content=body)
    assert (response.status_code, response.json()) == (400, {"reason": exp_reason})


def test_denial_echoes_uid_with_a_403_status(client: AppClient) -> None:
    body = review(job(requests={"cpu": "8"}), uid="3f6e")
    response = client.post("/validate", json=body)
    assert response.status_code == 200
    got = response.json()
    assert got["apiVersion"] == "admission.k8s.io/v1" and got["kind"] == "AdmissionReview"
    assert got["response"]["uid"] == "3f6e"
    assert got["response"]["allowed"] is False
    assert got["response"]["status"]["code"] == 403
    message = got["response"]["status"]["message"]
    assert message.startswith(
        "never runs: cq can get at most 4 CPUs on f (4 of its own, no cohort to borrow from)"
    )
    assert '. Job "team-a/train": can never be admitted by ClusterQueue "cq"' in message
    assert message.endswith(
        "(stack key: batchplane:kueue.clusterQueues[0].resourceGroups[0].flavors[0].resources[0]; "
        "see docs/submitting-jobs.md)"
    )


def test_mutation_is_a_base64_jsonpatch(client: AppClient) -> None:
    response = client.post("/mutate", json=review(job(queue=None), uid="u1")).json()["response"]
    assert response["patchType"] == "JSONPatch"
    assert json.loads(base64.b64decode(response["patch"])) == [
        {"op": "add", "path": "/metadata/labels", "value": {"kueue.x-k8s.io/queue-name": "lq"}}
    ]
    assert (response["uid"], response["allowed"]) == ("u1", True)


def test_dry_run_gets_the_same_answer_and_its_own_metric_label(client: AppClient) -> None:
    wet = client.post("/validate", json=review(job(requests={"cpu": "8"}), uid="a")).json()["response"]
    dry = client.post("/validate", json=review(job(requests={"cpu": "8"}), uid="a", dry_run=True)).json()[
        "response"
    ]
    assert wet == dry
    metrics = client.get("/metrics").text
    assert (
        'batchplane_webhook_reviews_total{decision="denied",dry_run="true",endpoint="validate",kind="Job",'
        'reason="never-admissible"} 1.0'
    ) in metrics


@pytest.mark.parametrize(("mode", "exp_allowed"), [("Allow", True), ("Deny", False)], ids=["allow", "deny"])
def test_internal_errors_follow_the_failure_mode_never_a_5xx(
    mode: str, exp_allowed: bool, monkeypatch: Any
) -> None:
    class Buggy:  # a decider with a bug (the compiled Decider's methods cannot be patched on an instance)
        def __init__(self, policy: Any) -> None:
            pass

        def validate(self, *args: Any, **kwargs: Any) -> Any:
            raise RuntimeError("bug")

    monkeypatch.setattr("batchplane.webhook.app.Decider", Buggy)
    app = create_app(one_queue({"cpu": 4}, webhook={"onInternalError": mode}))
    response = AppClient(app).post("/validate", json=review(job(), uid="e"))
    assert response.status_code == 200
    got = response.json()["response"]
    assert (got["allowed"], got["warnings"]) == (
        exp_allowed,
        ["batchplane quota webhook: internal error; quota not checked"],
    )


def test_probes_and_metrics_answer(client: AppClient) -> None:
    assert client.get("/healthz").text == "ok"
    assert client.get("/readyz").text == "ready"
    client.post("/validate", content=b"nope")
    assert 'batchplane_webhook_bad_requests_total{endpoint="validate"} 1.0' in client.get("/metrics").text


def test_readyz_fails_while_the_certificate_is_not_valid() -> None:
    c = AppClient(create_app(one_queue({"cpu": 1}), tls_ready=lambda: False))
    assert c.get("/readyz").status_code == 503


def test_noop_route_exists_only_when_enabled() -> None:
    assert AppClient(create_app(one_queue({"cpu": 1}))).post("/noop", json=review(job())).status_code == 404
    c = AppClient(create_app(one_queue({"cpu": 1}), enable_noop=True))
    assert c.post("/noop", json=review(job(), uid="n")).json()["response"] == {"uid": "n", "allowed": True}


def test_oversized_body_is_refused_with_413(client: AppClient) -> None:
    response = client.post("/validate", content=b" " * (6 * 1024 * 1024 + 1))
    assert response.status_code == 413


def test_response_without_patch_or_warnings_is_minimal() -> None:
    assert build_response("u", True) == {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "response": {"uid": "u", "allowed": True},
    }


async def _call(app: Any, messages: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
    """Drive the ASGI app with these receive messages; return what it sent and how many it received."""
    sent: list[dict[str, Any]] = []
    received = 0

    async def receive() -> dict[str, Any]:
        nonlocal received
        received += 1
        return messages[min(received - 1, len(messages) - 1)]

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST", "scheme": "https",
        "path": "/validate", "raw_path": b"/validate", "query_string": b"", "root_path": "",
        "headers": [(b"content-type", b"application/json"), (b"transfer-encoding", b"chunked")],
        "client": ("127.0.0.1", 1), "server": ("127.0.0.1", 8443),
    }  # fmt: skip
    await app(scope, receive, send)
    return sent, received


def test_a_chunked_100_mb_body_is_refused_after_6_mib_without_reading_the_rest() -> None:
    import asyncio

    from batchplane.webhook.app import MAX_BODY_BYTES

    chunk = b"x" * (1024 * 1024)
    messages = [{"type": "http.request", "body": chunk, "more_body": True}] * 100
    app = create_app(one_queue({"cpu": 4}))
    sent, received = asyncio.run(_call(app, messages))
    assert sent[0]["status"] == 413
    assert received == MAX_BODY_BYTES // len(chunk) + 1  # stopped at the first chunk past the limit
    assert json.loads(sent[1]["body"]) == {"reason": f"body larger than {MAX_BODY_BYTES} bytes"}


def test_a_client_that_disconnects_mid_body_is_counted_quietly(caplog: pytest.LogCaptureFixture) -> None:
    import asyncio

    messages = [
        {"type": "http.request", "body": b'{"apiVersion": ', "more_body": True},
        {"type": "http.disconnect"},
    ]
    app = create_app(one_queue({"cpu": 4}))
    asyncio.run(_call(app, messages))
    assert app.state.metrics.disconnects.labels("validate")._value.get() == 1
    assert [r for r in caplog.records if r.levelname in ("ERROR", "CRITICAL")] == []
