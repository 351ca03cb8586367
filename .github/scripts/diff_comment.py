#!/usr/bin/env python3
"""Keep a ``batchplane diff`` comment on a pull request up to date (the ``policy`` workflow's ``diff`` job).

    diff_comment.py --repo OWNER/NAME --pr NUMBER [--key STACK] FILE.md [FILE.md ...]

Joins the Markdown files (each ``batchplane diff --markdown`` output, or an error section) into one comment that
starts with the marker ``<!-- batchplane-diff -->`` — or, with ``--key STACK`` (the workflow passes each matrix
entry's key: the environment's name, ``templates/<name>`` for a template), ``<!-- batchplane-diff: STACK -->``, so
each stack keeps one comment of its own — then through the GitHub REST API (version 2022-11-28):

1. lists the PR's issue comments (``GET /repos/{owner}/{repo}/issues/{number}/comments``, 100 a page, following the
   ``Link: <…>; rel="next"`` header);
2. if a comment by a bot starts with the marker: leaves it alone when its body is already this one, else updates it
   (``PATCH /repos/{owner}/{repo}/issues/comments/{id}``);
3. else creates it (``POST /repos/{owner}/{repo}/issues/{number}/comments``).

The token comes from ``GITHUB_TOKEN`` (the job's ``github.token`` with ``pull-requests: write``), the API base URL
from ``--api-url`` or ``GITHUB_API_URL`` (Actions sets it; default ``https://api.github.com``). A pull request from a
fork gets a read-only token: the write answers 403, which is reported as a warning (exit 0) — the diff is still in
the job log. Exit codes: 0 done (or skipped for a fork), 1 an API or I/O error, 2 usage.

Standard library only, so the job needs nothing installed to post.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

MARKER = "<!-- batchplane-diff -->"
MAX_BODY = 65_000
"""GitHub refuses comment bodies over 65,536 characters; longer diffs are cut with a note."""
MAX_PAGES = 50
API_VERSION = "2022-11-28"
_NEXT = re.compile(r'<([^>]+)>;\s*rel="next"')


class ApiError(Exception):
    def __init__(self, status: int, method: str, url: str, message: str) -> None:
        super().__init__(f"{method} {url}: HTTP {status}: {message}")
        self.status = status


def request(
    method: str, url: str, token: str, body: dict[str, Any] | None = None
) -> tuple[Any, dict[str, str]]:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method)
    req.add_header("Accept", "application/vnd.github+json")
    req.add_header("X-GitHub-Api-Version", API_VERSION)
    req.add_header("User-Agent", "batchplane-diff-comment")
    req.add_header("Authorization", f"Bearer {token}")
    if data is not None:
        req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            payload = resp.read()
            return (json.loads(payload) if payload else None), dict(resp.headers.items())
    except urllib.error.HTTPError as exc:
        detail = exc.read().decode(errors="replace")
        with contextlib.suppress(ValueError, AttributeError):
            detail = json.loads(detail).get("message", detail)
        raise ApiError(exc.code, method, url, str(detail)) from None


def list_comments(api: str, repo: str, pr: int, token: str) -> list[dict[str, Any]]:
    url: str | None = f"{api}/repos/{repo}/issues/{pr}/comments?per_page=100"
    out: list[dict[str, Any]] = []
    pages = 0
    while url is not None and pages < MAX_PAGES:
        page, headers = request("GET", url, token)
        out += list(page or [])
        pages += 1
        link = next((v for k, v in headers.items() if k.lower() == "link"), "")
        found = _NEXT.search(link)
        url = found.group(1) if found else None
    return out


def marker(key: str | None = None) -> str:
    """The first line of the comment: :data:`MARKER`, or ``<!-- batchplane-diff: KEY -->`` for one stack's."""
    return MARKER if key is None else f"<!-- batchplane-diff: {key} -->"


def ours(comment: dict[str, Any], key: str | None = None) -> bool:
    user = comment.get("user") or {}
    first = str(comment.get("body", "")).split("\n", 1)[0]
    return first == marker(key) and user.get("type") == "Bot"


def compose(files: list[Path], key: str | None = None) -> str:
    parts = []
    for path in files:
        text = path.read_text(encoding="utf-8").strip()
        if text.startswith(MARKER):
            text = text[len(MARKER) :].strip()
        if text:
            parts.append(text)
    title = "## batchplane diff" if key is None else f"## batchplane diff: `{key}`"
    body = "\n\n".join([marker(key), title, *(parts or ["No stack file changed."])]) + "\n"
    if len(body) > MAX_BODY:
        body = (
            body[: MAX_BODY - 200]
            + "\n\n…cut: the full diff is in the job log (GitHub's comment size limit).\n"
        )
    return body


def upsert(api: str, repo: str, pr: int, token: str, body: str, key: str | None = None) -> str:
    """Create or update the one comment (of ``key``); returns ``created``, ``updated`` or ``unchanged``."""
    existing = next((c for c in list_comments(api, repo, pr, token) if ours(c, key)), None)
    if existing is None:
        request("POST", f"{api}/repos/{repo}/issues/{pr}/comments", token, {"body": body})
        return "created"
    if existing.get("body") == body:
        return "unchanged"
    request("PATCH", f"{api}/repos/{repo}/issues/comments/{existing['id']}", token, {"body": body})
    return "updated"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", required=True, help="OWNER/NAME")
    parser.add_argument("--pr", required=True, type=int, help="pull request number")
    parser.add_argument("--api-url", default=os.environ.get("GITHUB_API_URL", "https://api.github.com"))
    parser.add_argument("--key", help="one comment per key (the stack's matrix key) instead of one per PR")
    parser.add_argument("files", nargs="*", type=Path)
    args = parser.parse_args(argv)
    token = os.environ.get("GITHUB_TOKEN", "")
    if not token:
        print("diff_comment.py: GITHUB_TOKEN is not set", file=sys.stderr)
        return 2
    if not re.fullmatch(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+", args.repo):
        print(f"diff_comment.py: --repo {args.repo!r} is not OWNER/NAME", file=sys.stderr)
        return 2
    try:
        body = compose(args.files, args.key)
        result = upsert(args.api_url.rstrip("/"), args.repo, args.pr, token, body, args.key)
    except ApiError as exc:
        if exc.status == 403:
            print(
                f"::warning title=batchplane diff::cannot comment on this pull request (read-only token, e.g. a fork): {exc}"
            )
            return 0
        print(f"diff_comment.py: {exc}", file=sys.stderr)
        return 1
    except (OSError, urllib.error.URLError) as exc:
        print(f"diff_comment.py: {exc}", file=sys.stderr)
        return 1
    which = "" if args.key is None else f" of {args.key}"
    print(f"batchplane diff comment{which} {result} on {args.repo}#{args.pr}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
