"""``batchplane webhook review MANIFEST``: the AdmissionReview the API server would send the quota webhook, and,
with ``--url``, the webhook's answer to it — so nobody writes one by hand.

The review is ``admission.k8s.io/v1`` as the API server builds it for a validating webhook
(https://kubernetes.io/docs/reference/access-authn-authz/extensible-admission-controllers/#request, Kubernetes
v1.31): ``uid``, ``kind``/``requestKind`` (group, version, kind of the object), ``resource``/``requestResource``
(the framework's plural), ``name`` (empty for ``generateName``), ``namespace``, ``operation``, ``userInfo``
(a placeholder user), ``object`` (its ``metadata.namespace`` set as the API server sets it), ``oldObject`` (UPDATE),
``dryRun`` and ``options``. One review per document whose kind the webhook reviews (a Kueue job framework).

Exit codes: 0 printed (with ``--url``: every review allowed), 1 some review denied (``--url``, or ``--stack``'s
offline judgement without ``--url``), 2 usage, I/O, YAML, TLS or HTTP errors.
"""

from __future__ import annotations

import ipaddress
import json
import sys
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any
from urllib.parse import urlsplit

import typer

from batchplane.cli.common import (
    EXIT_FINDINGS,
    EXIT_OK,
    ConfigOption,
    StackOption,
    config_errors_exit,
    fail_usage,
    read_manifest,
    resolve_stack_file,
)

if TYPE_CHECKING:
    import ssl

    from batchplane.frameworks.framework import JobFramework

#: The placeholder requester of every printed review (the API server sends the authenticated user).
REVIEW_USER: dict[str, Any] = {"username": "batchplane-webhook-review", "groups": ["system:authenticated"]}
#: ``options`` per operation, as the API server sends them (``meta.k8s.io/v1`` CreateOptions / UpdateOptions).
_OPTIONS = {"CREATE": "CreateOptions", "UPDATE": "UpdateOptions"}


def admission_review(
    obj: dict[str, Any],
    framework: JobFramework,
    namespace: str,
    operation: str = "CREATE",
    old: dict[str, Any] | None = None,
    uid: str | None = None,
) -> dict[str, Any]:
    """The ``admission.k8s.io/v1`` AdmissionReview request the API server sends for ``operation`` of ``obj``.

    Args:
        obj: the object (its ``metadata.namespace`` is set to ``namespace``, as the API server does).
        framework: the object's Kueue job framework (kind, group, version, plural).
        namespace: the request's namespace.
        operation: ``CREATE`` or ``UPDATE``.
        old: the object before the change (``oldObject``; UPDATE only).
        uid: the request uid. Defaults to a random UUID.
    """
    sent = {**obj, "metadata": {**(obj.get("metadata") or {}), "namespace": namespace}}
    group, _, version = str(obj.get("apiVersion", "")).rpartition("/")
    kind = {"group": group, "version": version, "kind": framework.kind}
    resource = {"group": group, "version": version, "resource": framework.plural}
    request: dict[str, Any] = {
        "uid": uid or str(uuid.uuid4()),
        "kind": kind,
        "resource": resource,
        "requestKind": kind,
        "requestResource": resource,
        "name": str(sent["metadata"].get("name") or ""),
        "namespace": namespace,
        "operation": operation,
        "userInfo": REVIEW_USER,
        "object": sent,
        "dryRun": False,
        "options": {"apiVersion": "meta.k8s.io/v1", "kind": _OPTIONS[operation]},
    }
    if old is not None:
        request["oldObject"] = {**old, "metadata": {**(old.get("metadata") or {}), "namespace": namespace}}
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}


def _frameworks(documents: list[Any], source: str) -> list[tuple[dict[str, Any], JobFramework]]:
    """The documents the webhook reviews, each with its framework; others are named on stderr."""
    from batchplane.frameworks import BY_KIND

    reviewed: list[tuple[dict[str, Any], JobFramework]] = []
    for index, document in enumerate(documents, start=1):
        if document is None:
            continue
        kind = document.get("kind") if isinstance(document, dict) else None
        framework = BY_KIND.get(kind) if isinstance(kind, str) else None
        group = str(document.get("apiVersion", "")).rpartition("/")[0] if isinstance(document, dict) else ""
        if framework is None or framework.group != group:
            print(f"batchplane: {source}: document {index} ({kind or 'not an object'}) is not a kind the quota "
                  "webhook reviews: skipped", file=sys.stderr)  # fmt: skip
            continue
        assert isinstance(document, dict)
        reviewed.append((document, framework))
    return reviewed


def _ssl_context(url: str, ca_file: Path | None, insecure: bool) -> ssl.SSLContext:
    import ssl

    parts = urlsplit(url)
    if parts.scheme != "https" or not parts.hostname:
        fail_usage(f"--url {url}: give an https:// URL (the API server calls webhooks over TLS only)")
    if insecure:
        host = parts.hostname
        try:
            loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
        except ValueError:
            loopback = False
        if not loopback:
            fail_usage(f"--insecure is for a loopback test only, not {host}: give --ca-file")
        if ca_file is not None:
            fail_usage("give --ca-file or --insecure, not both")
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        return context
    try:
        return ssl.create_default_context(cafile=str(ca_file) if ca_file is not None else None)
    except (OSError, ssl.SSLError) as exc:
        fail_usage(f"--ca-file {ca_file}: {exc}")


def _post(url: str, review: dict[str, Any], context: ssl.SSLContext) -> dict[str, Any]:
    """POST ``review`` to ``url`` (``/validate`` when the URL has no path); the AdmissionReview response."""
    import urllib.error
    import urllib.request

    parts = urlsplit(url)
    target = url if parts.path not in ("", "/") else url.rstrip("/") + "/validate"
    request = urllib.request.Request(
        target, data=json.dumps(review).encode(), headers={"Content-Type": "application/json"}, method="POST"
    )
    try:
        with urllib.request.urlopen(request, context=context, timeout=30) as answer:
            body = answer.read()
    except urllib.error.HTTPError as exc:
        fail_usage(f"{target}: HTTP {exc.code}: {exc.read().decode(errors='replace').strip()}")
    except (urllib.error.URLError, OSError) as exc:
        fail_usage(f"{target}: {getattr(exc, 'reason', exc)}")
    try:
        response = json.loads(body)["response"]
    except (ValueError, KeyError, TypeError):
        fail_usage(f"{target}: the answer is not an AdmissionReview: {body[:200]!r}")
    if not isinstance(response, dict):
        fail_usage(f"{target}: the answer's response is not an object")
    return response


def _answer_lines(label: str, allowed: bool, reason: str, warnings: list[str]) -> list[str]:
    lines = [f"{label}: {'allowed' if allowed else 'denied'}"]
    if reason:
        lines.append(f"  reason: {reason}")
    lines += [f"  warning: {w}" for w in warnings]
    return lines


def review_command(
    manifest: Annotated[
        str, typer.Argument(metavar="MANIFEST", help="YAML manifest of jobs (- reads standard input).")
    ],
    stack: StackOption = None,
    config: ConfigOption = None,
    operation: Annotated[
        str, typer.Option("--operation", help="CREATE or UPDATE (UPDATE needs --old).", case_sensitive=False)
    ] = "CREATE",
    old: Annotated[
        Path | None, typer.Option("--old", help="UPDATE: the object before the change (oldObject).")
    ] = None,
    namespace: Annotated[
        str | None,
        typer.Option("--namespace", "-n", help="Namespace of documents that name none. Defaults to default."),
    ] = None,
    url: Annotated[
        str | None,
        typer.Option(
            "--url", help="Send each review to this webhook (https://HOST:PORT[/validate]), print its answer."
        ),
    ] = None,
    ca_file: Annotated[
        Path | None,
        typer.Option("--ca-file", help="With --url: the CA that signed the webhook's certificate."),
    ] = None,
    insecure: Annotated[
        bool,
        typer.Option("--insecure", help="With --url on a loopback address: do not verify the certificate."),
    ] = False,
) -> None:
    """Print the AdmissionReview the API server would send the quota webhook for MANIFEST; with --url, send it and
    print the answer; with --stack, the offline judgement of the same review."""
    operation = operation.upper()
    if operation not in _OPTIONS:
        fail_usage(f"--operation {operation}: give CREATE or UPDATE")
    if (operation == "UPDATE") != (old is not None):
        fail_usage(
            "--old OLD.yaml goes with --operation UPDATE (the API server sends oldObject on UPDATE only)"
        )
    if url is None and (ca_file is not None or insecure):
        fail_usage("--ca-file and --insecure go with --url")
    source = "<stdin>" if manifest == "-" else manifest
    documents = _frameworks(read_manifest(manifest), source)
    if not documents:
        fail_usage(f"{source} holds no job the quota webhook reviews (Job, RayJob, PyTorchJob, JobSet, …)")
    olds: list[Any] = []
    if old is not None:
        olds = [d for d in read_manifest(old) if d is not None]
        if len(olds) != 1 or len(documents) != 1:
            fail_usage("--old: give one document in MANIFEST and one in OLD.yaml")
    reviews = [
        admission_review(
            obj,
            framework,
            str((obj.get("metadata") or {}).get("namespace") or namespace or "default"),
            operation,
            olds[0] if olds else None,
        )
        for obj, framework in documents
    ]
    context = _ssl_context(url, ca_file, insecure) if url is not None else None
    offline = _offline(stack, config, reviews) if stack is not None or config is not None else None
    if url is None:
        sys.stdout.write(json.dumps(reviews[0] if len(reviews) == 1 else reviews, indent=2) + "\n")
        if offline is not None:
            for lines in offline:
                print("\n".join(_answer_lines(*lines)), file=sys.stderr)
        raise typer.Exit(EXIT_OK if offline is None or all(a for _, a, _, _ in offline) else EXIT_FINDINGS)
    assert context is not None
    denied = False
    out: list[str] = []
    for index, review in enumerate(reviews):
        response = _post(url, review, context)
        allowed = bool(response.get("allowed"))
        reason = str((response.get("status") or {}).get("message") or "")
        warnings = [str(w) for w in response.get("warnings") or []]
        denied |= not allowed
        request = review["request"]
        label = (
            f"{request['kind']['kind']} {request['namespace']}/{request['name'] or '(generateName)'} ({url})"
        )
        out += _answer_lines(label, allowed, reason, warnings)
        if offline is not None and (offline[index][1], offline[index][2]) != (allowed, reason):
            out += [
                "  differs from the offline judgement:",
                *(f"  {line}" for line in _answer_lines(*offline[index])),
            ]
    sys.stdout.write("\n".join(out) + "\n")
    raise typer.Exit(EXIT_FINDINGS if denied else EXIT_OK)


def _offline(
    stack: str | None, config: Path | None, reviews: list[dict[str, Any]]
) -> list[tuple[str, bool, str, list[str]]]:
    """(label, allowed, reason, warnings) of each review as the webhook's own decision code answers it for the
    stack's policy (``batchplane webhook policy``), in this process."""
    from batchplane.components.quota_webhook.policy import render_policy
    from batchplane.stack import load_stack_file
    from batchplane.webhook.decisions import Decider

    name, path = resolve_stack_file(stack, config)
    with config_errors_exit():
        decider = Decider(render_policy(load_stack_file(path, name)))
    answers = []
    for review in reviews:
        request = review["request"]
        decision = decider.validate(
            request["object"], request["namespace"], request["operation"], request.get("oldObject")
        )
        label = f"{request['kind']['kind']} {request['namespace']}/{request['name'] or '(generateName)'} (offline, stack {name})"
        answers.append((label, decision.allowed, decision.message, list(decision.warnings)))
    return answers
