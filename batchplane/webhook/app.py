"""The webhook's ASGI application (Starlette): ``/validate``, ``/mutate``, probes and ``/metrics``.

Contract (docs/webhook.md):

* ``POST /validate`` and ``POST /mutate`` take an ``admission.k8s.io/v1`` AdmissionReview and answer
  one with the request's ``uid``. A body that is not one gets **HTTP 400** with ``{"reason": ...}``;
  a body larger than :data:`MAX_BODY_BYTES` gets 413. A well-formed review **never** gets a 5xx:
  if deciding fails (a bug), the answer follows the policy's ``onInternalError`` — ``Allow`` (the
  default: admitted with a warning; Kueue still enforces quota) or ``Deny``.
* ``dryRun`` reviews get exactly the same answer; the webhook has no side effects at all
  (``sideEffects: None``), and metrics count dry runs under their own label.
* ``GET /healthz`` — the process serves; ``GET /readyz`` — the policy is loaded and the serving
  certificate is valid (503 otherwise); ``GET /metrics`` — Prometheus text format.
* ``POST /noop`` (only with ``enable_noop``): parses the review and allows it — the trivial handler
  the benchmark compares against.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable

import orjson
from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from batchplane.webhook.decisions import FRAMEWORK_OF_KIND, Decider, Decision
from batchplane.webhook.errors import MalformedReviewError
from batchplane.webhook.metrics import CONTENT_TYPE, WebhookMetrics
from batchplane.webhook.policy import PolicyDocument
from batchplane.webhook.review import AdmissionRequest, build_response, parse_review

log = logging.getLogger("batchplane.webhook")

#: Largest request body accepted (bytes). The API server caps request bodies at 3 MiB; an
#: AdmissionReview carries the object (and oldObject on UPDATE), so allow twice that.
MAX_BODY_BYTES = 6 * 1024 * 1024
JSON = "application/json"


def create_app(
    policy: PolicyDocument,
    *,
    metrics: WebhookMetrics | None = None,
    tls_ready: Callable[[], bool] | None = None,
    enable_noop: bool = False,
) -> Starlette:
    """Build the ASGI app for one policy document.

    Args:
        policy: the decision data (compiled once here).
        metrics: where to count; defaults to a fresh :class:`WebhookMetrics`.
        tls_ready: reports whether the serving certificate is loaded and current; ``/readyz`` fails
            while it returns False. Defaults to always ready (plain-HTTP tests).
        enable_noop: also serve ``POST /noop``, the benchmark's trivial handler. Defaults to off.

    Returns:
        The Starlette app; ``app.state.metrics`` and ``app.state.decider`` are exposed for tests.

    Raises:
        PolicyError: the policy does not compile.
    """
    handlers = _Handlers(
        Decider(policy), metrics or WebhookMetrics(), tls_ready, policy.webhook.on_internal_error == "Deny"
    )
    routes = [
        Route("/validate", handlers.review_endpoint("validate", handlers.validate), methods=["POST"]),
        Route("/mutate", handlers.review_endpoint("mutate", handlers.mutate), methods=["POST"]),
        Route("/healthz", handlers.healthz, methods=["GET"]),
        Route("/readyz", handlers.readyz, methods=["GET"]),
        Route("/metrics", handlers.metrics_endpoint, methods=["GET"]),
    ]
    if enable_noop:
        routes.append(Route("/noop", handlers.noop, methods=["POST"]))
    app = Starlette(routes=routes)
    app.state.metrics = handlers.metrics
    app.state.decider = handlers.decider
    return app


class _Handlers:
    """The endpoints of one app, sharing its decider and metrics."""

    def __init__(
        self,
        decider: Decider,
        metrics: WebhookMetrics,
        tls_ready: Callable[[], bool] | None,
        deny_on_error: bool,
    ) -> None:
        self.decider = decider
        self.metrics = metrics
        self.tls_ready = tls_ready
        self.deny_on_error = deny_on_error

    async def read(self, request: Request, endpoint: str) -> AdmissionRequest | Response:
        """The parsed review, or the 400/413 response for a body that is not one.

        The body is read chunk by chunk and refused with 413 as soon as it passes :data:`MAX_BODY_BYTES`,
        whatever ``Content-Length`` says (a chunked 100 MB body is never held in memory). A client that
        disconnects mid-body is counted (``batchplane_webhook_client_disconnects``) and gets no answer.
        """
        length = request.headers.get("content-length")
        if length is not None and length.isdigit() and int(length) > MAX_BODY_BYTES:
            self.metrics.bad_requests.labels(endpoint).inc()
            return _error(413, f"body larger than {MAX_BODY_BYTES} bytes")
        chunks: list[bytes] = []
        size = 0
        try:
            async for chunk in request.stream():
                size += len(chunk)
                if size > MAX_BODY_BYTES:
                    self.metrics.bad_requests.labels(endpoint).inc()
                    return _error(413, f"body larger than {MAX_BODY_BYTES} bytes")
                chunks.append(chunk)
        except ClientDisconnect:
            self.metrics.disconnects.labels(endpoint).inc()
            return Response(status_code=400)  # never sent: the client is gone
        try:
            return parse_review(b"".join(chunks))
        except MalformedReviewError as exc:
            self.metrics.bad_requests.labels(endpoint).inc()
            return _error(400, str(exc))

    def validate(self, req: AdmissionRequest) -> Decision:
        """``/validate``: objects-less operations (DELETE) are allowed unchecked; UPDATE compares ``oldObject``."""
        if req.object is None:
            return Decision(True, "operation-not-checked")
        return self.decider.validate(req.object, req.namespace, req.operation, req.old_object)

    def mutate(self, req: AdmissionRequest) -> Decision:
        """``/mutate``."""
        if req.object is None:
            return Decision(True, "operation-not-checked")
        return self.decider.mutate(req.object, req.namespace, req.operation)

    def decide(
        self, endpoint: str, decide: Callable[[AdmissionRequest], Decision], req: AdmissionRequest
    ) -> Decision:
        """Run ``decide``; a bug becomes the configured internal-error answer, never an exception."""
        try:
            return decide(req)
        except Exception:  # a bug must not turn into a 5xx for the API server
            log.exception("internal error deciding %s review %s", endpoint, req.uid)
            return Decision(
                allowed=not self.deny_on_error,
                reason="internal-error",
                message="batchplane quota webhook: internal error (denied by onInternalError: Deny)",
                warnings=("batchplane quota webhook: internal error; quota not checked",),
            )

    def review_endpoint(
        self, endpoint: str, decide: Callable[[AdmissionRequest], Decision]
    ) -> Callable[[Request], Awaitable[Response]]:
        """The Starlette endpoint answering AdmissionReviews with ``decide``."""

        async def review(request: Request) -> Response:
            started = time.perf_counter()
            parsed = await self.read(request, endpoint)
            if isinstance(parsed, Response):
                return parsed
            decision = self.decide(endpoint, decide, parsed)
            body = build_response(
                parsed.uid,
                decision.allowed,
                message=decision.message,
                warnings=decision.warnings,
                patch=decision.patch,
            )
            kind = parsed.kind["kind"] if parsed.kind["kind"] in FRAMEWORK_OF_KIND else "other"
            outcome = "patched" if decision.patch else ("allowed" if decision.allowed else "denied")
            dry_run = "true" if parsed.dry_run else "false"
            if not decision.allowed:
                log.info(
                    "denied %s%s: %s", parsed.uid, " (dry run)" if parsed.dry_run else "", decision.message
                )
            response = Response(orjson.dumps(body), media_type=JSON)
            self.metrics.count_review(
                endpoint, kind, outcome, decision.reason, dry_run, time.perf_counter() - started
            )
            return response

        return review

    async def noop(self, request: Request) -> Response:
        """``/noop``: parse and allow (the benchmark baseline)."""
        parsed = await self.read(request, "noop")
        if isinstance(parsed, Response):
            return parsed
        return Response(orjson.dumps(build_response(parsed.uid, True)), media_type=JSON)

    async def healthz(self, request: Request) -> Response:
        """``/healthz``: the process serves."""
        return PlainTextResponse("ok")

    async def readyz(self, request: Request) -> Response:
        """``/readyz``: 503 while the serving certificate is not valid."""
        if self.tls_ready is not None and not self.tls_ready():
            return PlainTextResponse("serving certificate not loaded or expired", status_code=503)
        return PlainTextResponse("ready")

    async def metrics_endpoint(self, request: Request) -> Response:
        """``/metrics``: Prometheus text format."""
        return Response(self.metrics.render(), media_type=CONTENT_TYPE)


def _error(status: int, reason: str) -> Response:
    return Response(orjson.dumps({"reason": reason}), status_code=status, media_type=JSON)
