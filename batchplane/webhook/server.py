"""Run the webhook app over TLS with uvicorn, reloading the serving certificate when its files change.

cert-manager renews the Certificate into its Secret; the kubelet then swaps the mounted files
(an atomic ``..data`` symlink switch). :class:`CertificateReloader` polls the two files' contents
and calls ``load_cert_chain`` on the *same* :class:`ssl.SSLContext` uvicorn listens with, so every
TLS handshake after the reload presents the new certificate — no restart, no dropped connections
(established keep-alive connections keep the session they negotiated). A half-written pair (key
and certificate not matching yet) is logged, counted and retried on the next change; the old
certificate keeps serving meanwhile.

The context is handed to uvicorn through ``uvicorn.Config(ssl_context_factory=...)``; TLS 1.2 is
the minimum, as for the API server's webhook client.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import hashlib
import logging
import socket
import ssl
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path

import uvicorn
from cryptography import x509
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from batchplane.webhook.app import create_app
from batchplane.webhook.errors import CertificateError
from batchplane.webhook.metrics import WebhookMetrics
from batchplane.webhook.policy import PolicyDocument

log = logging.getLogger("batchplane.webhook")

DEFAULT_HOST = "127.0.0.1"
"""Loopback: the Deployment passes ``--host 0.0.0.0`` explicitly."""
DEFAULT_PORT = 8443
DEFAULT_RELOAD_INTERVAL = 2.0
"""Seconds between checks of the certificate files. Defaults to 2 s."""


def make_ssl_context(cert_file: Path, key_file: Path) -> ssl.SSLContext:
    """A server-side TLS context (TLS ≥ 1.2) with the given PEM certificate chain and key.

    Raises:
        CertificateError: a file is missing or unreadable, or key and certificate do not match.
    """
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.set_alpn_protocols(["http/1.1"])
    try:
        context.load_cert_chain(str(cert_file), str(key_file))
    except (OSError, ssl.SSLError) as exc:
        raise CertificateError(f"cannot load certificate {cert_file} / key {key_file}: {exc}") from None
    return context


class CertificateReloader:
    """Reloads a certificate/key pair into a live :class:`ssl.SSLContext` when the files change.

    Args:
        context: the context the server listens with (already loaded with the current pair).
        cert_file: PEM certificate chain (``tls.crt``).
        key_file: PEM private key (``tls.key``).
        metrics: counts reloads by result. Defaults to none.
        interval: seconds between checks. Defaults to :data:`DEFAULT_RELOAD_INTERVAL`.
    """

    def __init__(
        self,
        context: ssl.SSLContext,
        cert_file: Path,
        key_file: Path,
        *,
        metrics: WebhookMetrics | None = None,
        interval: float = DEFAULT_RELOAD_INTERVAL,
    ) -> None:
        self.context = context
        self.cert_file = cert_file
        self.key_file = key_file
        self.metrics = metrics
        self.interval = interval
        self._seen = self._fingerprint()
        self.not_after = _not_after(cert_file)

    def _fingerprint(self) -> bytes | None:
        digest = hashlib.sha256()
        try:
            digest.update(self.cert_file.read_bytes())
            digest.update(b"\0")
            digest.update(self.key_file.read_bytes())
        except OSError:
            return None
        return digest.digest()

    def check(self) -> bool:
        """Reload when the files' contents changed since the last attempt.

        Returns:
            True when a new pair was loaded; False when nothing changed or loading failed (the old
            certificate keeps serving and the same contents are not retried).
        """
        current = self._fingerprint()
        if current is None or current == self._seen:
            return False
        self._seen = current
        try:
            self.context.load_cert_chain(str(self.cert_file), str(self.key_file))
        except (OSError, ssl.SSLError) as exc:
            log.warning("serving certificate not reloaded (keeping the previous one): %s", exc)
            if self.metrics is not None:
                self.metrics.certificate_reloads.labels("error").inc()
            return False
        self.not_after = _not_after(self.cert_file)
        log.info("serving certificate reloaded from %s", self.cert_file)
        if self.metrics is not None:
            self.metrics.certificate_reloads.labels("ok").inc()
        return True

    def valid(self) -> bool:
        """True while the loaded certificate has not expired (``/readyz``)."""
        return self.not_after is None or self.not_after > datetime.now(UTC)

    async def run(self) -> None:
        """Check every ``interval`` seconds until cancelled."""
        while True:
            await asyncio.sleep(self.interval)
            self.check()


def _not_after(cert_file: Path) -> datetime | None:
    try:
        return x509.load_pem_x509_certificate(cert_file.read_bytes()).not_valid_after_utc
    except (OSError, ValueError):
        return None


#: Seconds an idle keep-alive connection stays open. Longer than client-go's idle connection timeout
#: (``IdleConnTimeout: 90 * time.Second`` in k8s.io/apimachinery ``util/net.SetTransportDefaults``), so the
#: API server, not this server, closes idle connections and never sends a review on a connection that this
#: side is closing.
KEEP_ALIVE_SECONDS = 100


class _HttpToolsProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol that lets a closed connection go at once.

    uvicorn (0.54) cancels the keep-alive timer in ``connection_lost`` only when the connection ended cleanly
    (``exc is None``). A TLS client that closes without ``close_notify``, or a reset connection, leaves the
    timer armed — and its bound method keeps the protocol, transport, TLS buffers and request cycle alive for
    the whole keep-alive period (:data:`KEEP_ALIVE_SECONDS`): the server's RSS grew ~37 KiB per closed
    connection (the same upstream behaviour is described in https://github.com/Soju06/codex-lb/issues/2041).
    """

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)
        timer = self.timeout_keep_alive_task
        if timer is not None:
            timer.cancel()
            self.timeout_keep_alive_task = None


def build_server(
    policy: PolicyDocument,
    cert_file: Path,
    key_file: Path,
    *,
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    reload_interval: float = DEFAULT_RELOAD_INTERVAL,
    enable_noop: bool = False,
    access_log: bool = False,
) -> tuple[uvicorn.Server, CertificateReloader]:
    """Build (not start) the uvicorn server and its certificate reloader.

    Args:
        policy: the decision data.
        cert_file: PEM certificate chain.
        key_file: PEM private key.
        host: listen address. Defaults to loopback (:data:`DEFAULT_HOST`).
        port: listen port. Defaults to 8443.
        reload_interval: seconds between certificate checks. Defaults to 2.
        enable_noop: also serve the benchmark's ``/noop``. Defaults to off.
        access_log: log every request. Defaults to off (metrics count them).

    Returns:
        ``(server, reloader)``; run with :func:`serve`.

    Raises:
        CertificateError: the pair cannot be loaded.
        PolicyError: the policy does not compile.
    """
    context = make_ssl_context(cert_file, key_file)
    metrics = WebhookMetrics()
    reloader = CertificateReloader(context, cert_file, key_file, metrics=metrics, interval=reload_interval)
    app = create_app(policy, metrics=metrics, tls_ready=reloader.valid, enable_noop=enable_noop)

    def factory(config: uvicorn.Config, default: Callable[[], ssl.SSLContext]) -> ssl.SSLContext:
        return context

    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        ssl_context_factory=factory,
        access_log=access_log,
        log_level="info",
        lifespan="off",
        timeout_keep_alive=KEEP_ALIVE_SECONDS,
        http=_HttpToolsProtocol,
        server_header=False,
        proxy_headers=False,
    )
    return uvicorn.Server(config), reloader


async def serve(
    server: uvicorn.Server, reloader: CertificateReloader, sockets: Sequence[socket.socket] | None = None
) -> None:
    """Run ``server`` (on ``sockets`` when given, e.g. a pre-bound random port) with the reloader.

    Records the running event loop's implementation in ``batchplane_webhook_event_loop_info``.
    """
    loop = asyncio.get_running_loop()
    if reloader.metrics is not None:
        reloader.metrics.event_loop.labels(f"{type(loop).__module__}.{type(loop).__qualname__}").set(1)
    task = asyncio.create_task(reloader.run())
    try:
        await server.serve(sockets=list(sockets) if sockets is not None else None)
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


def loop_factory() -> Callable[[], asyncio.AbstractEventLoop]:
    """uvloop's event loop where it is installed (Linux, macOS), else asyncio's default."""
    try:
        import uvloop
    except ImportError:  # pragma: no cover - uvloop is a dependency except on Windows
        return asyncio.new_event_loop
    return uvloop.new_event_loop


def run_server(
    server: uvicorn.Server, reloader: CertificateReloader, sockets: Sequence[socket.socket] | None = None
) -> None:
    """Run :func:`serve` to completion on uvloop (``asyncio.run`` would use asyncio's own loop: uvicorn
    picks uvloop only in ``uvicorn.run``, which this server cannot use because it brings its own
    ``SSLContext``). Freezes the heap first (``gc.freeze()``): the policy and imports are long-lived, so
    the collector never scans them again and full collections stay short."""
    gc.collect()
    gc.freeze()
    with asyncio.Runner(loop_factory=loop_factory()) as runner:
        runner.run(serve(server, reloader, sockets))
