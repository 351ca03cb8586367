"""Replay recorded HTTP answers through ``requests``' own transport interface (a ``BaseAdapter``).

Google's client libraries send every REST call through ``google.auth.transport.requests.AuthorizedSession`` (a
``requests.Session``); mounting :class:`Replay` on it for ``https://`` answers each call from a recording instead of
the network. A recording is a JSON list of exchanges::

    {"method": "GET", "host": "compute.googleapis.com", "path": "/compute/v1/projects/p/regions/us-central1",
     "query": {"names": [...]},            # optional: these parameters must be present with these values
     "request_headers": {"Authorization": null},  # optional: these request headers (null: absent)
     "status": 200, "headers": {...},      # optional headers
     "body": {...}}                        # JSON body (omitted for HEAD)

The first matching exchange answers; a request nothing matches gets a 599 and is kept in :attr:`Replay.unmatched`,
so a test can assert that every call was recorded.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import requests
from requests.adapters import BaseAdapter
from requests.structures import CaseInsensitiveDict

RECORDINGS = Path(__file__).resolve().parent / "recordings"


def load(*names: str) -> list[dict[str, Any]]:
    """The exchanges of recording files under ``recordings/`` (earlier files take precedence)."""
    out: list[dict[str, Any]] = []
    for name in names:
        out.extend(json.loads((RECORDINGS / name).read_text(encoding="utf-8")))
    return out


class Replay(BaseAdapter):
    """A ``requests`` transport adapter answering from recorded exchanges."""

    def __init__(self, exchanges: list[dict[str, Any]]) -> None:
        super().__init__()
        self.exchanges = exchanges
        self.requests: list[str] = []
        self.unmatched: list[str] = []

    def match(self, request: requests.PreparedRequest) -> dict[str, Any] | None:
        """The first exchange recorded for ``request`` (``host: "*"`` matches any host), or None."""
        return self._match(request)

    def _match(self, request: requests.PreparedRequest) -> dict[str, Any] | None:
        url = urlsplit(request.url or "")
        query = parse_qs(url.query)
        for exchange in self.exchanges:
            host_ok = exchange["host"] in ("*", url.netloc)
            if exchange["method"] != request.method or not host_ok or exchange["path"] != url.path:
                continue
            wanted = exchange.get("query", {})
            if not all(query.get(k) == (v if isinstance(v, list) else [v]) for k, v in wanted.items()):
                continue
            headers = exchange.get("request_headers", {})
            if all(request.headers.get(k) == v for k, v in headers.items()):
                return exchange
        return None

    def send(self, request: requests.PreparedRequest, **kwargs: Any) -> requests.Response:
        self.requests.append(f"{request.method} {request.url}")
        exchange = self._match(request)
        response = requests.Response()
        response.request = request
        response.url = request.url or ""
        if exchange is None:
            self.unmatched.append(f"{request.method} {request.url}")
            response.status_code = 599
            response._content = b'{"error": {"code": 599, "message": "unrecorded request"}}'
            response.headers = CaseInsensitiveDict({"Content-Type": "application/json"})
            return response
        response.status_code = int(exchange["status"])
        headers = {"Content-Type": "application/json", **exchange.get("headers", {})}
        response.headers = CaseInsensitiveDict(headers)
        body = exchange.get("body")
        response._content = b"" if body is None or request.method == "HEAD" else json.dumps(body).encode()
        response.reason = "OK" if response.status_code < 400 else "Error"
        return response

    def close(self) -> None:
        """Nothing to release."""


class RecordedServer:
    """A local HTTP server on 127.0.0.1 answering from recorded exchanges (for clients that bring their own HTTP
    stack, like the kubernetes client's urllib3 pool): ``with RecordedServer(exchanges) as server: server.url``."""

    def __init__(self, exchanges: list[dict[str, Any]]) -> None:
        self.replay = Replay(exchanges)
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>``."""
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> RecordedServer:
        replay = self.replay

        class Handler(BaseHTTPRequestHandler):
            def _answer(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                request = requests.Request(
                    self.command,
                    f"http://{self.headers.get('Host')}{self.path}",
                    headers=dict(self.headers),
                    data=body,
                ).prepare()
                response = replay.send(request)
                self.send_response(response.status_code)
                for key, value in response.headers.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(response.content)))
                self.end_headers()
                self.wfile.write(response.content)

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _answer

            def log_message(self, format: str, *args: Any) -> None:
                """Quiet."""

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._server is not None and self._thread is not None
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)
