"""The workflow's PR-comment script against a recorded GitHub API: a server on 127.0.0.1 replays recorded responses
(shaped as the REST API reference's issue-comment examples) in order and records each request; never a live call.

Cassettes (``tests/diff/recorded/github_*.json``): the expected request (method, path with query) and the response
(status, headers, JSON body) of each call; ``{body}`` in a response stands for the body the script sent or composed,
``{api}`` for the replay server's base URL (in ``Link`` headers).
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from batchplane.diff.render import COMMENT_MARKER
from tests.conftest import REPO_ROOT, template_path

SCRIPT = REPO_ROOT / ".github" / "scripts" / "diff_comment.py"
RECORDED = Path(__file__).parent / "recorded"


@dataclass
class Replay:
    interactions: list[dict[str, Any]]
    body: str = ""
    api: str = ""
    seen: list[dict[str, Any]] = field(default_factory=list)


def _fill(value: Any, replay: Replay) -> Any:
    if isinstance(value, str):
        return value.replace("{body}", replay.body).replace("{api}", replay.api)
    if isinstance(value, list):
        return [_fill(v, replay) for v in value]
    if isinstance(value, dict):
        return {k: _fill(v, replay) for k, v in value.items()}
    return value


def _handler(replay: Replay) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def _serve(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            sent = json.loads(self.rfile.read(length)) if length else None
            index = len(replay.seen)
            replay.seen.append(
                {
                    "method": self.command,
                    "path": self.path,
                    "json": sent,
                    "headers": {k.lower(): v for k, v in self.headers.items()},
                }
            )
            if index >= len(replay.interactions):
                self.send_response(599)
                self.end_headers()
                return
            expected = replay.interactions[index]
            if (self.command, self.path) != (expected["request"]["method"], expected["request"]["path"]):
                self.send_response(598)
                self.end_headers()
                return
            response = _fill(expected["response"], replay)
            payload = json.dumps(response["body"]).encode()
            self.send_response(response["status"])
            for key, value in response["headers"].items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        do_GET = do_POST = do_PATCH = _serve

        def log_message(self, format: str, *args: Any) -> None:
            return

    return Handler


@pytest.fixture
def serve() -> Iterator[Any]:
    servers: list[ThreadingHTTPServer] = []

    def start(cassette: str, body: str = "") -> Replay:
        replay = Replay(json.loads((RECORDED / f"github_{cassette}.json").read_text()), body=body)
        server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(replay))
        replay.api = f"http://127.0.0.1:{server.server_address[1]}"
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return replay

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def _run(
    replay: Replay, *files: Path, token: str = "ghs_test", key: str | None = None
) -> subprocess.CompletedProcess[str]:
    env = {"GITHUB_TOKEN": token, "PATH": "/usr/bin:/bin"}
    return subprocess.run(
        [
            sys.executable,
            str(SCRIPT),
            "--repo",
            "octo-org/platform",
            "--pr",
            "42",
            "--api-url",
            replay.api,
            *(["--key", key] if key is not None else []),
            *map(str, files),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )


def _composed(*files: Path) -> str:
    sys.path.insert(0, str(SCRIPT.parent))
    try:
        import diff_comment

        return str(diff_comment.compose(list(files)))
    finally:
        sys.path.remove(str(SCRIPT.parent))


@pytest.fixture
def bodies(tmp_path: Path) -> list[Path]:
    a = tmp_path / "gke-prod-dws.md"
    a.write_text(
        f"{COMMENT_MARKER}\n### batchplane diff: `stacks/Pulumi.gke-prod-dws.yaml`\n\n| a | b |\n|---|---|\n"
    )
    b = tmp_path / "kind.md"
    b.write_text(f"{COMMENT_MARKER}\n### batchplane diff: `stacks/Pulumi.kind.yaml`\n\nNo change.\n")
    return [a, b]


def test_without_a_comment_of_ours_it_creates_one_with_one_marker_and_every_stack(
    serve: Any, bodies: list[Path]
) -> None:
    replay = serve("no_comment_yet")
    result = _run(replay, *bodies)
    assert result.returncode == 0, result.stderr
    assert "comment created on octo-org/platform#42" in result.stdout
    get, post = replay.seen
    assert get["headers"]["authorization"] == "Bearer ghs_test"
    assert get["headers"]["x-github-api-version"] == "2022-11-28"
    assert post["method"] == "POST" and post["path"] == "/repos/octo-org/platform/issues/42/comments"
    body = post["json"]["body"]
    assert body.startswith(COMMENT_MARKER) and body.count(COMMENT_MARKER) == 1
    assert "Pulumi.gke-prod-dws.yaml" in body and "Pulumi.kind.yaml" in body


def test_it_follows_pagination_and_updates_the_bots_comment_not_a_persons(
    serve: Any, bodies: list[Path]
) -> None:
    replay = serve("comment_on_page_two")
    result = _run(replay, *bodies)
    assert result.returncode == 0, result.stderr
    assert [(r["method"], r["path"]) for r in replay.seen] == [
        ("GET", "/repos/octo-org/platform/issues/42/comments?per_page=100"),
        ("GET", "/repositories/9000/issues/42/comments?per_page=100&page=2"),
        ("PATCH", "/repos/octo-org/platform/issues/comments/1500"),
    ]
    assert replay.seen[-1]["json"] == {"body": _composed(*bodies)}
    assert "comment updated" in result.stdout


def test_an_up_to_date_comment_is_left_alone(serve: Any, bodies: list[Path]) -> None:
    replay = serve("up_to_date", body=_composed(*bodies))
    result = _run(replay, *bodies)
    assert result.returncode == 0, result.stderr
    assert [r["method"] for r in replay.seen] == ["GET"]
    assert "comment unchanged" in result.stdout


def test_a_read_only_token_on_a_fork_is_a_warning_not_a_failure(serve: Any, bodies: list[Path]) -> None:
    replay = serve("fork_read_only_token")
    result = _run(replay, *bodies)
    assert result.returncode == 0
    assert result.stdout.startswith("::warning title=batchplane diff::")
    assert "Resource not accessible by integration" in result.stdout


def test_a_server_error_fails_the_step(serve: Any, bodies: list[Path]) -> None:
    replay = serve("server_error")
    result = _run(replay, *bodies)
    assert result.returncode == 1
    assert "HTTP 502" in result.stderr


def test_no_token_is_a_usage_error(serve: Any, bodies: list[Path]) -> None:
    replay = serve("no_comment_yet")
    assert _run(replay, *bodies, token="").returncode == 2
    assert replay.seen == []


def test_the_real_markdown_of_a_diff_posts_as_the_comment(serve: Any, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from batchplane.cli import app
    from tests.diff.helpers import prod_dws_with_team_a_h100

    head = prod_dws_with_team_a_h100(tmp_path, nominal=16)
    out = CliRunner().invoke(
        app,
        [
            "diff",
            "--base-config",
            str(template_path("gke-prod-dws")),
            "--config",
            str(head),
            "--markdown",
            "--no-objects",
        ],
    )
    assert out.exit_code == 0, out.output
    md = tmp_path / "gke-prod-dws.md"
    md.write_text(out.stdout)
    replay = serve("no_comment_yet")
    assert _run(replay, md).returncode == 0
    body = replay.seen[-1]["json"]["body"]
    assert (
        "| ClusterQueue team-a | h100 | nvidia.com/gpu | nominalQuota | 8 GPUs | 16 GPUs | +8 GPUs |" in body
    )
    assert "list price, maximum, not a bill" in body


def test_with_a_key_each_stack_keeps_its_own_comment_and_only_that_one_is_updated(
    serve: Any, bodies: list[Path]
) -> None:
    replay = serve("one_comment_per_stack")
    result = _run(replay, bodies[1], key="kind")
    assert result.returncode == 0, result.stderr
    assert [(r["method"], r["path"]) for r in replay.seen] == [
        ("GET", "/repos/octo-org/platform/issues/42/comments?per_page=100"),
        (
            "PATCH",
            "/repos/octo-org/platform/issues/comments/2002",
        ),  # kind's; not gke-prod-dws's, not the old one
    ]
    body = replay.seen[-1]["json"]["body"]
    assert body.splitlines()[:3] == ["<!-- batchplane-diff: kind -->", "", "## batchplane diff: `kind`"]
    assert "Pulumi.kind.yaml" in body and "gke-prod-dws" not in body
    assert "batchplane diff comment of kind updated on octo-org/platform#42" in result.stdout
