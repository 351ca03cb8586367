"""An OpenShift binary build of the webhook image (``webhook.build.inCluster``): no Docker where ``pulumi up`` runs.

``BinaryBuild`` (``pulumi-python:dynamic:Resource``, input ``gate: binary-build``) does what ``oc start-build
<BuildConfig> --from-dir=<context> --wait`` does: it packs the files the Dockerfile copies (and the Dockerfile) into a
tar.gz archive, POSTs it to the BuildConfig's ``instantiatebinary`` subresource (``build.openshift.io/v1``, body
``application/octet-stream``; OpenShift "Builds using BuildConfig", "Binary (local) source"), then polls the Build it
started until ``status.phase`` is ``Complete`` and outputs the pushed digest (``status.output.to.imageDigest``). A
``Failed``/``Error``/``Cancelled`` Build fails ``pulumi up`` with the Build's ``status.message`` and log snippet. A
changed build context (:func:`context_digest`, an input) builds again. Through the stack's own connection (the
provider's kubeconfig and context).

Offline the mock engine answers a digest derived from the inputs (not a build).

Imports Pulumi at module import: only :mod:`batchplane.targets.openshift.deploy` imports it.
"""

from __future__ import annotations

import hashlib
import io
import tarfile
import time
from pathlib import Path
from typing import Any

import pulumi
import pulumi.dynamic

BUILD_API = "build.openshift.io/v1"
DOCKERFILE = "webhook/Dockerfile"
#: Build phases after which nothing changes (openshift/api ``build/v1/types.go`` ``BuildPhase``).
FINAL_PHASES = ("Complete", "Failed", "Error", "Cancelled")


def context_files(context: Path, dockerfile: str = DOCKERFILE) -> list[str]:
    """The files of ``context`` the build needs, relative and sorted: the Dockerfile and every source of its ``COPY``
    and ``ADD`` instructions that is not ``--from`` another stage (directories walked, ``__pycache__`` left out).

    Raises:
        FileNotFoundError: the Dockerfile or a copied source does not exist.
    """
    lines = (context / dockerfile).read_text(encoding="utf-8").splitlines()
    sources: list[str] = [dockerfile]
    for line in lines:
        words = line.split()  # COPY/ADD in shell form, one instruction per line (the webhook's Dockerfile)
        if not words or words[0].upper() not in ("COPY", "ADD"):
            continue
        args = [w for w in words[1:] if not w.startswith("--")]
        if any(w.startswith("--from") for w in words[1:]) or len(args) < 2:
            continue
        sources.extend(args[:-1])
    out: set[str] = set()
    for source in sources:
        path = context / source
        if path.is_dir():
            out.update(
                str(p.relative_to(context))
                for p in path.rglob("*")
                if p.is_file() and "__pycache__" not in p.parts
            )
        elif path.is_file():
            out.add(source)
        else:
            raise FileNotFoundError(f"{source} (copied by {dockerfile}) is not in {context}")
    return sorted(out)


def context_digest(context: Path, dockerfile: str = DOCKERFILE) -> str:
    """SHA-256 over the build context's files (names and contents): changes exactly when a rebuild is due."""
    digest = hashlib.sha256()
    for name in context_files(context, dockerfile):
        digest.update(name.encode() + b"\0" + (context / name).read_bytes() + b"\0")
    return digest.hexdigest()


def context_archive(context: Path, dockerfile: str = DOCKERFILE) -> bytes:
    """The build context as a gzipped tar (what ``oc start-build --from-dir`` uploads), with fixed times and owners."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name in context_files(context, dockerfile):
            data = (context / name).read_bytes()
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.mtime = len(data), 0o644, 0
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def run_binary_build(
    props: dict[str, Any],
    client: Any,
    *,
    clock: Any = time.monotonic,
    sleep: Any = time.sleep,
) -> dict[str, Any]:
    """Start the BuildConfig's binary build with the context and wait for it (see the module docstring).

    Args:
        props: ``namespace``, ``buildConfig``, ``context`` (a directory), ``timeoutSeconds``, ``intervalSeconds``.
        client: a :class:`~batchplane.operators.readiness.KubernetesClusterClient` (``instantiate_binary``, ``get``).
        clock: monotonic seconds (injectable).
        sleep: pauses for seconds (injectable).

    Returns:
        ``{"build": <Build name>, "digest": "sha256:…"}``.

    Raises:
        batchplane.operators.readiness.GateError: the Build failed, or did not finish within ``timeoutSeconds``.
    """
    from batchplane.operators.readiness import ClusterApiError, GateError

    namespace, config = str(props["namespace"]), str(props["buildConfig"])
    try:
        started = client.instantiate_binary(namespace, config, context_archive(Path(str(props["context"]))))
    except ClusterApiError as exc:
        raise GateError(f"cannot start a binary build of BuildConfig {namespace}/{config}: {exc}") from exc
    build = str((started.get("metadata") or {}).get("name") or "")
    deadline = clock() + float(props["timeoutSeconds"])
    while True:
        found = client.get(BUILD_API, "builds", namespace, build) or {}
        status = found.get("status") or {}
        phase = status.get("phase") or "New"
        if phase == "Complete":
            digest = ((status.get("output") or {}).get("to") or {}).get("imageDigest")
            if not digest:
                raise GateError(
                    f"Build {namespace}/{build} is Complete but reports no status.output.to.imageDigest"
                )
            return {"build": build, "digest": str(digest)}
        if phase in FINAL_PHASES:
            why = status.get("message") or status.get("reason") or ""
            snippet = status.get("logSnippet")
            raise GateError(
                f"Build {namespace}/{build} {phase}: {why}"
                + (f"\n{snippet}" if snippet else "")
                + f"\n(oc logs build/{build} -n {namespace})"
            )
        if clock() >= deadline:
            raise GateError(
                f"Build {namespace}/{build} still {phase} after {props['timeoutSeconds']}s (oc logs -f build/{build} "
                f"-n {namespace})"
            )
        sleep(float(props["intervalSeconds"]))


class BinaryBuildProvider(pulumi.dynamic.ResourceProvider):
    """Dynamic provider: create/update build; delete does nothing (the ImageStream keeps the image)."""

    def _run(self, props: dict[str, Any]) -> dict[str, Any]:
        from batchplane.operators.readiness import KubernetesClusterClient

        client = KubernetesClusterClient(props.get("kubeconfig") or None, props.get("clusterContext") or None)
        outs = {k: v for k, v in props.items() if k not in ("kubeconfig", "__provider")}
        outs.update(run_binary_build(props, client))
        return outs

    def create(self, props: dict[str, Any]) -> pulumi.dynamic.CreateResult:
        """Build; the id names the BuildConfig."""
        return pulumi.dynamic.CreateResult(
            id_=f"binary-build/{props['namespace']}/{props['buildConfig']}", outs=self._run(props)
        )

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> pulumi.dynamic.DiffResult:
        """Changed when the context digest, the BuildConfig or the namespace differ; never replaces."""
        keys = ("contextDigest", "buildConfig", "namespace")
        return pulumi.dynamic.DiffResult(
            changes=any(olds.get(k) != news.get(k) for k in keys), replaces=[], delete_before_replace=False
        )

    def update(self, _id: str, _olds: dict[str, Any], news: dict[str, Any]) -> pulumi.dynamic.UpdateResult:
        """Build again."""
        return pulumi.dynamic.UpdateResult(outs=self._run(news))

    def delete(self, _id: str, _props: dict[str, Any]) -> None:
        """Nothing to delete."""


class BinaryBuild(pulumi.dynamic.Resource):
    """The webhook image built in the cluster by a BuildConfig binary build.

    Args:
        name: the resource name.
        namespace: the project of the BuildConfig and the ImageStream.
        build_config: the BuildConfig's name.
        context: the build context directory (the project directory).
        cluster_context: the provider's kubeconfig context.
        kubeconfig: the provider's kubeconfig (content or path), stored as a secret; None for the default.
        timeout_seconds: how long to wait for the Build. Defaults to 1800.
        opts: resource options.

    Attributes:
        digest: the pushed image's digest (``sha256:…``).
        build: the Build's name.
    """

    digest: pulumi.Output[Any]
    build: pulumi.Output[Any]

    def __init__(
        self,
        name: str,
        *,
        namespace: str,
        build_config: str,
        context: str,
        cluster_context: pulumi.Input[str | None],
        kubeconfig: pulumi.Input[str | None] | None,
        timeout_seconds: int = 1800,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        props: dict[str, Any] = {
            "gate": "binary-build",
            "namespace": namespace,
            "buildConfig": build_config,
            "context": context,
            "contextDigest": context_digest(Path(context)),
            "timeoutSeconds": timeout_seconds,
            "intervalSeconds": 10,
            "clusterContext": cluster_context,
            "kubeconfig": None if kubeconfig is None else pulumi.Output.secret(kubeconfig),
            "digest": None,
            "build": None,
        }
        super().__init__(BinaryBuildProvider(), name, props, opts)
