"""Readiness-gate logic: poll the cluster until an install really serves, with a timeout and a clear error.

Used by the Pulumi dynamic resource in ``batchplane/operators/readiness_gate.py`` during ``pulumi up`` (never
during a preview). The gates:

* ``kueue-webhook`` — Kueue's webhook Service has ready endpoints **and** a server-side dry-run
  create of a ResourceFlavor succeeds (the API server calls Kueue's mutating and validating webhooks
  for it, so this fails with "failed calling webhook … no endpoints available" or an x509 error until
  the webhook serves with an injected CA; kueue #2791, cert-manager #2908). Mirrors Kueue's own e2e
  wait (``hack/testing/e2e-common.sh``: webhook endpoints) plus an end-to-end call.
* ``olm-csv`` — an OLM Subscription has an installed ClusterServiceVersion whose ``status.phase`` is
  ``Succeeded`` (its CRDs and webhooks exist), so the operator's CRs can be created. With
  ``installPlanApproval: Manual`` and a target CSV it approves the first install's InstallPlan, then each upgrade
  InstallPlan on the channel's path to the target, one step at a time, and refuses any other.
* ``service-account-token`` — a ``kubernetes.io/service-account-token`` Secret holds a token (its outputs).
* ``registry-route`` — OpenShift's internal image registry is exposed: Route ``default-route`` in
  ``openshift-image-registry`` has a ``spec.host``, which the gate outputs (where the webhook image is pushed).
* ``olm-namespace`` — a deploy-time lookup: the OperatorGroup and Subscription already in an operator's namespace
  (:mod:`batchplane.operators.olm_lookup`); outputs the names (and group spec) the stack declares, or fails before
  anything in the namespace changes.
* ``kueue-stored-versions`` — before Kueue's chart is installed or upgraded: no Kueue CRD's ``status.storedVersions``
  lists a version the pinned Kueue no longer serves (else the gate fails, naming the step, and the chart is left
  alone); the same refusal as ``batchplane upgrade plan``.
* ``kueue-storage-migration`` — not a wait but a deploy-time step after Kueue's webhook serves: every Kueue object
  still stored as ``v1beta1`` is rewritten and each CRD's ``storedVersions`` pruned to ``["v1beta2"]``
  (:mod:`batchplane.upgrade.migrate`); re-run when Kueue's version changes, a no-op once migrated.
* ``feature-gate`` — an OpenShift feature gate is enabled: ``featuregates.config.openshift.io/cluster`` lists it in
  ``status.featureGates[].enabled`` for every version there (:func:`read_feature_gate`), e.g.
  ``ProvisioningRequestAvailable`` before a ProvisioningRequest AdmissionCheck.

Everything is injectable (cluster client, clock, sleep) so the polling is unit-tested with fakes;
:class:`KubernetesClusterClient` is the real client (the ``kubernetes`` package, same kubeconfig and
context as the Pulumi Kubernetes provider).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import yaml

from batchplane.errors import BatchplaneError
from batchplane.operators.olm_lookup import OPERATOR_GROUP_API, SUBSCRIPTION_API, StackInstall, plan_namespace

PROBE_FLAVOR_NAME = "batchplane-readiness-probe"
"""Name of the ResourceFlavor the Kueue gate dry-run creates (nothing is stored)."""

#: Substrings of API errors that mean "the webhook is not serving yet": retry.
TRANSIENT_MARKERS = (
    "no endpoints available",
    "failed calling webhook",
    "connection refused",
    "x509",
    "context deadline exceeded",
    "the server could not find the requested resource",
    "service unavailable",
)


class GateError(BatchplaneError):
    """The gate cannot succeed: a permanent API error (e.g. forbidden) or a bad gate definition."""


class GateTimeoutError(GateError):
    """The gate did not become ready within its timeout; the message carries the last check's result."""


class ClusterApiError(Exception):
    """An error answer from the Kubernetes API (``status`` 0 when the server was not reached).

    Attributes:
        status: HTTP status code, or 0 for connection failures.
        message: the server's message (or the connection error).
    """

    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"{status}: {message}" if status else message)
        self.status = status
        self.message = message


class ClusterClient(Protocol):
    """The few cluster reads and writes the gates need (fakes implement this in tests)."""

    def ready_endpoints(self, namespace: str, service: str) -> int:
        """Number of ready endpoints behind ``namespace/service`` (EndpointSlices); raises ClusterApiError."""

    def dry_run_create(self, api_version: str, plural: str, body: Mapping[str, Any]) -> None:
        """Server-side dry-run create of a cluster-scoped object; raises ClusterApiError when refused."""

    def get(self, api_version: str, plural: str, namespace: str, name: str) -> dict[str, Any] | None:
        """A custom object (cluster-scoped when ``namespace`` is ``""``), or ``None`` when it does not exist; raises
        ClusterApiError."""

    def secret_data(self, namespace: str, name: str) -> dict[str, str] | None:
        """A Secret's ``data`` (base64 values), ``{}`` without data, ``None`` when it does not exist."""

    def approve_install_plan(self, namespace: str, name: str) -> None:
        """Set ``spec.approved: true`` on an OLM InstallPlan (a merge patch); raises ClusterApiError."""

    def list(
        self, api_version: str, plural: str, namespace: str, label_selector: str | None = None
    ) -> list[dict[str, Any]]:
        """The items of a namespaced custom-object list (optionally label-selected); raises ClusterApiError."""


@dataclass(frozen=True)
class ProbeResult:
    """One check's outcome: ``ready``, a human-readable ``detail`` (used in the timeout message) and, for lookups,
    what was found (``outputs``, the gate resource's outputs; empty by default)."""

    ready: bool
    detail: str
    outputs: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class GateOutcome:
    """A passed gate: how many checks it took, how long (seconds) it waited, and a lookup's ``outputs``."""

    attempts: int
    waited_seconds: float
    detail: str
    outputs: Mapping[str, Any] = field(default_factory=dict)


def poll_until_ready(
    probe: Callable[[], ProbeResult],
    *,
    what: str,
    timeout_seconds: float,
    interval_seconds: float,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> GateOutcome:
    """Call ``probe`` until it reports ready, at most until ``timeout_seconds`` have passed.

    Args:
        probe: one check; returns :class:`ProbeResult`, raises :class:`GateError` for permanent failures.
        what: what is awaited, for messages (``Kueue webhook kueue-system/kueue-webhook-service``).
        timeout_seconds: total budget, seconds; the last check happens no later than this.
        interval_seconds: pause between checks, seconds (shortened to fit the budget).
        clock: monotonic seconds (injectable).
        sleep: pauses for seconds (injectable).

    Returns:
        The outcome of the first ready check.

    Raises:
        GateTimeoutError: not ready in time; the message names ``what``, the timeout, the number of
            checks and the last detail.
        GateError: the probe found a permanent problem.
    """
    start = clock()
    attempts = 0
    while True:
        attempts += 1
        result = probe()
        elapsed = clock() - start
        if result.ready:
            return GateOutcome(attempts, elapsed, result.detail, result.outputs)
        remaining = timeout_seconds - elapsed
        if remaining <= 0:
            raise GateTimeoutError(
                f"{what} not ready after {timeout_seconds:g}s ({attempts} checks); last check: {result.detail}"
            )
        sleep(min(interval_seconds, remaining))


def is_transient(error: ClusterApiError) -> bool:
    """Whether an API error means "not serving yet" (retry) rather than a permanent refusal."""
    if error.status in (0, 404, 429, 500, 502, 503, 504):
        return True
    text = error.message.lower()
    return any(marker in text for marker in TRANSIENT_MARKERS)


def kueue_webhook_probe(
    client: ClusterClient, namespace: str, service: str | None, flavor_api_version: str
) -> Callable[[], ProbeResult]:
    """A probe that is ready when the webhook Service has ready endpoints and a dry-run ResourceFlavor
    create passes Kueue's webhooks (HTTP 409 AlreadyExists also counts: admission ran before storage).

    Args:
        client: the cluster client.
        namespace: Kueue's namespace.
        service: the webhook Service name, or ``None`` to check only the dry run (OpenShift, where the
            operator names the Service).
        flavor_api_version: apiVersion of the dry-run ResourceFlavor (``kueue.x-k8s.io/v1beta2``).
    """
    body = {
        "apiVersion": flavor_api_version,
        "kind": "ResourceFlavor",
        "metadata": {"name": PROBE_FLAVOR_NAME},
        "spec": {},
    }

    def probe() -> ProbeResult:
        if service is not None:
            try:
                ready = client.ready_endpoints(namespace, service)
            except ClusterApiError as exc:
                if not is_transient(exc):
                    raise GateError(f"cannot read the endpoints of {namespace}/{service}: {exc}") from exc
                return ProbeResult(False, f"endpoints of {namespace}/{service}: {exc}")
            if ready == 0:
                return ProbeResult(False, f"service {namespace}/{service} has no ready endpoints")
        try:
            client.dry_run_create(flavor_api_version, "resourceflavors", body)
        except ClusterApiError as exc:
            if exc.status == 409:
                return ProbeResult(True, "dry-run ResourceFlavor create reached storage (already exists)")
            if not is_transient(exc):
                raise GateError(f"dry-run create of a ResourceFlavor was refused: {exc}") from exc
            return ProbeResult(False, f"dry-run ResourceFlavor create failed: {exc}")
        return ProbeResult(True, "dry-run ResourceFlavor create passed Kueue's webhooks")

    return probe


OLM_API = "operators.coreos.com/v1alpha1"
PACKAGES_API = "packages.operators.coreos.com/v1"
"""OLM's package server: ``PackageManifest`` objects, one per package and catalog (labelled ``catalog=<source>``)."""


@dataclass(frozen=True)
class OlmCatalog:
    """Where a Subscription's package comes from (its ``spec``): what the CSV gate reads the channel's entries from.

    Attributes:
        package: ``spec.name``.
        channel: ``spec.channel``.
        source: ``spec.source`` (the CatalogSource).
        source_namespace: ``spec.sourceNamespace``.
    """

    package: str
    channel: str
    source: str
    source_namespace: str


_SEMVER_CORE = 3
SemverKey = tuple[tuple[int, ...], tuple[int, tuple[tuple[int, int, str], ...]]]


def parse_semver(text: str) -> SemverKey | None:
    """A semantic version (``1.4.1``, ``v1.4.1``, ``2.25.0-rc.1+build``) as a sortable key, per semver.org 2.0.0 §11:
    core numbers numerically; a pre-release sorts before its release, its dot-separated identifiers numerically when
    numeric, else lexically, numeric before alphanumeric, a longer list after its prefix; build metadata ignored.
    ``None`` when ``text`` is not a version."""
    body = text.removeprefix("v").split("+", 1)[0]
    core, _, pre = body.partition("-")
    numbers = core.split(".")
    if len(numbers) != _SEMVER_CORE or not all(n.isdigit() for n in numbers):
        return None
    ids = tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in pre.split(".")) if pre else ()
    return tuple(int(n) for n in numbers), ((0, ids) if pre else (1, ()))


_RANGE_OPS = (">=", "<=", "!=", "==", ">", "<", "=")


def skip_range_includes(skip_range: str, version: str) -> bool | None:
    """Whether ``version`` lies in an ``olm.skipRange`` (a blang/semver v4 range, as OLM parses it with
    ``semver.ParseRange``: operator-lifecycle-manager v0.46.0 ``pkg/controller/registry/resolver/cache/predicates.go``
    L192-L198 ``SkipRangeIncludesPredicate``): alternatives separated by ``||``, each a space-separated conjunction of
    comparisons ``>=``, ``>``, ``<=``, ``<``, ``=``/``==`` (or none), ``!=`` against a full version
    (blang/semver v4 ``range.go``). ``None`` when either does not parse (wildcards such as ``1.x`` are not read)."""
    have = parse_semver(version)
    if have is None:
        return None
    any_alternative = False
    for alternative in skip_range.split("||"):
        parts = alternative.split()
        if not parts:
            return None
        holds = True
        for part in parts:
            op = next((o for o in _RANGE_OPS if part.startswith(o)), "")
            bound = parse_semver(part[len(op) :])
            if bound is None:
                return None
            holds = holds and {
                ">=": have >= bound,
                ">": have > bound,
                "<=": have <= bound,
                "<": have < bound,
                "!=": have != bound,
            }.get(op, have == bound)
        any_alternative = any_alternative or holds
    return any_alternative


def channel_head(manifest: Mapping[str, Any] | None, channel: str) -> tuple[str, str, str | None] | None:
    """The channel head of a ``PackageManifest``: ``(currentCSV, its version, its olm.skipRange or None)`` from
    ``status.channels[].currentCSV`` and ``currentCSVDesc`` (``version``, ``annotations``; operator-lifecycle-manager
    v0.46.0 ``pkg/package-server/apis/operators/v1/packagemanifest_types.go`` L91, L113-L127), or ``None``."""
    for entry in ((manifest or {}).get("status") or {}).get("channels") or []:
        if entry.get("name") == channel and entry.get("currentCSV"):
            desc = entry.get("currentCSVDesc") or {}
            skip = (desc.get("annotations") or {}).get("olm.skipRange")
            return str(entry["currentCSV"]), str(desc.get("version") or ""), (str(skip) if skip else None)
    return None


def skip_range_overtakes(
    installed: str, target: str, versions: Mapping[str, str], head: tuple[str, str, str | None] | None
) -> str | None:
    """Why OLM will never propose ``target`` as the next upgrade from ``installed``, or ``None``.

    With an operator installed OLM's resolver keeps the channel's entries that replace it or whose ``olm.skipRange``
    includes its version (operator-lifecycle-manager v0.46.0 ``pkg/controller/registry/resolver/resolver.go`` L244)
    and prefers them in channel order, head first (``sortChannel``, L296-L306): when the head is not the target and
    its skipRange includes the installed version, every InstallPlan OLM makes proposes the head.
    """
    if head is None or head[0] == target or head[2] is None or installed not in versions:
        return None
    if not skip_range_includes(head[2], versions[installed]):
        return None
    return (
        f"the channel head {head[0]} ({head[1]}) carries olm.skipRange {head[2]!r}, which includes the installed "
        f"{installed} ({versions[installed]}): OLM prefers it over every other upgrade, so it never proposes "
        f"{target}"
    )


def channel_versions(manifest: Mapping[str, Any] | None, channel: str) -> dict[str, str] | None:
    """``{CSV name: version}`` of a channel from a ``PackageManifest`` (``status.channels[].entries[]``: ``name``,
    ``version``; operator-lifecycle-manager v0.46.0 ``pkg/package-server/apis/operators/v1/packagemanifest_types.go``
    ``ChannelEntry``), or ``None`` when the package server lists no entries for it (older servers: only the head)."""
    for entry in ((manifest or {}).get("status") or {}).get("channels") or []:
        if entry.get("name") == channel:
            entries = entry.get("entries")
            if not entries:
                return None
            return {str(e.get("name")): str(e.get("version") or "") for e in entries}
    return None


def plan_upgrade_edges(plan: Mapping[str, Any], csv: str) -> set[str] | None:
    """The CSVs ``csv`` upgrades from, as its InstallPlan carries them, or ``None`` when the plan does not say.

    Read from the step that creates the CSV (``status.plan[].resource``, kind ``ClusterServiceVersion``, name
    ``csv``): its ``manifest`` is either the CSV (``spec.replaces``, ``spec.skips``; ``None`` when it carries an
    ``olm.skipRange`` annotation, a version range rather than names) or, for bundles unpacked from an
    image, an ``UnpackedBundleReference`` with ``replaces`` (operator-lifecycle-manager v0.46.0
    ``pkg/controller/operators/catalog/operator.go``); else from ``status.bundleLookups[]`` (``identifier``,
    ``replaces``; operator-framework/api ``InstallPlan``)."""
    import json

    status = plan.get("status") or {}
    for step in status.get("plan") or []:
        resource = step.get("resource") or {}
        if resource.get("kind") != "ClusterServiceVersion" or resource.get("name") != csv:
            continue
        try:
            manifest = json.loads(resource.get("manifest") or "{}")
        except ValueError:
            return None
        if not isinstance(manifest, dict):
            return None
        if manifest.get("kind") == "ClusterServiceVersion":
            annotations = (manifest.get("metadata") or {}).get("annotations") or {}
            if annotations.get(
                "olm.skipRange"
            ):  # OLM also upgrades from any version in the range: not a list
                return None
            spec = manifest.get("spec") or {}
            edges = {str(n) for n in spec.get("skips") or []}
            if spec.get("replaces"):
                edges.add(str(spec["replaces"]))
            return edges
        if manifest.get("replaces"):
            return {str(manifest["replaces"])}
    for lookup in status.get("bundleLookups") or []:
        if lookup.get("identifier") == csv and lookup.get("replaces"):
            return {str(lookup["replaces"])}
    return None


def upgrade_step_problem(
    installed: str, candidate: str, target: str, versions: Mapping[str, str] | None, edges: set[str] | None
) -> str | None:
    """Why an InstallPlan that upgrades ``installed`` to ``candidate`` is not a step towards ``target``, or ``None``
    when it is.

    OLM proposes one upgrade at a time: with an operator installed it considers only the channel's entries that
    replace it or whose ``olm.skipRange`` includes its version, and ``startingCSV`` only while nothing is installed
    (operator-lifecycle-manager v0.46.0 ``pkg/controller/registry/resolver/resolver.go`` lines 242-247; olm-book
    "Subscriptions", "Manually Approving Upgrades via Subscriptions",
    https://operator-framework.github.io/olm-book/docs/subscriptions.html). A step is on the
    channel's path to ``target`` when ``candidate`` is the target, or when the channel's entries (``versions``:
    :func:`channel_versions`) list both and ``version(installed) < version(candidate) < version(target)``; and, when
    the InstallPlan says what ``candidate`` upgrades from (``edges``: :func:`plan_upgrade_edges`), ``installed`` is
    one of those.

    Args:
        installed: the Subscription's ``status.installedCSV``.
        candidate: the InstallPlan's only CSV.
        target: the CSV the gate brings the operator to.
        versions: ``{CSV: version}`` of the channel, or ``None`` when the package server does not list entries.
        edges: the CSVs ``candidate`` replaces or skips, or ``None`` when unknown.
    """
    if edges is not None and installed not in edges:
        return f"{candidate} does not replace or skip the installed {installed} (it upgrades from {', '.join(sorted(edges)) or 'nothing'})"
    if candidate == target:
        return None
    if versions is None:
        return (
            f"the package server lists no entries for the channel, so whether {candidate} lies between {installed} "
            f"and the target {target} is unknown"
        )
    missing = [c for c in (candidate, target) if c not in versions]
    if missing:
        return f"the channel has no {' or '.join(missing)}"
    keys = {c: parse_semver(versions[c]) for c in (candidate, target)}
    have = parse_semver(versions[installed]) if installed in versions else None
    if keys[candidate] is None or keys[target] is None:
        return f"the channel's versions of {candidate} and {target} are not semantic versions"
    if not keys[candidate] < keys[target]:  # type: ignore[operator]  # both checked above
        return f"{candidate} ({versions[candidate]}) is beyond the target {target} ({versions[target]})"
    if have is not None and not have < keys[candidate]:  # type: ignore[operator]
        return f"{candidate} ({versions[candidate]}) is not newer than the installed {installed} ({versions[installed]})"
    return None


def csv_probe(
    client: ClusterClient,
    namespace: str,
    subscription: str,
    approve_csv: str | None = None,
    catalog: OlmCatalog | None = None,
) -> Callable[[], ProbeResult]:
    """A probe that is ready when the Subscription's installed CSV has ``status.phase: Succeeded``.

    With ``approve_csv`` (``installPlanApproval: Manual`` and a target CSV) it is ready only when the installed CSV
    *is* ``approve_csv``. Until then it approves the pending InstallPlan the Subscription points at
    (``status.installPlanRef``; operator-framework/api v0.45.0 ``InstallPlanSpec``: ``approved``,
    ``clusterServiceVersionNames``) when that plan is one step towards the target, and nothing else:

    * first install (no installed CSV): the plan installs exactly the Subscription's ``startingCSV`` (else the
      target);
    * upgrade: the plan installs exactly one CSV that :func:`upgrade_step_problem` accepts — the channel's versions
      read from the ``PackageManifest`` of ``catalog`` at each step, the upgrade edges from the plan itself. Without
      ``catalog`` only the target's own InstallPlan is approved.

    A plan for anything else — a CSV beyond the target, off the channel, or dependencies — is never approved: the
    gate fails naming it (OLM keeps it pending; a person may approve it).

    Raises (from the probe):
        GateError: a permanent API error, or a pending InstallPlan that is not a step towards ``approve_csv``.
    """

    def probe() -> ProbeResult:
        try:
            sub = client.get(OLM_API, "subscriptions", namespace, subscription)
            if sub is None:
                return ProbeResult(False, f"Subscription {namespace}/{subscription} not found")
            status = sub.get("status") or {}
            csv = status.get("installedCSV")
            if approve_csv is not None and csv != approve_csv:
                starting = str((sub.get("spec") or {}).get("startingCSV") or approve_csv)
                return _approve_step(client, namespace, subscription, status, approve_csv, starting, catalog)
            if not csv:
                state = status.get("state") or "no state yet"
                hint = (
                    " (installPlanApproval is Manual: approve the InstallPlan)"
                    if state == "UpgradePending"
                    and (sub.get("spec") or {}).get("installPlanApproval") == "Manual"
                    else ""
                )
                return ProbeResult(
                    False,
                    f"Subscription {namespace}/{subscription} has no installed CSV (state: {state}){hint}",
                )
            obj = client.get(OLM_API, "clusterserviceversions", namespace, str(csv))
        except ClusterApiError as exc:
            if not is_transient(exc):
                raise GateError(f"cannot read Subscription {namespace}/{subscription}: {exc}") from exc
            return ProbeResult(False, f"reading Subscription {namespace}/{subscription}: {exc}")
        if obj is None:
            return ProbeResult(False, f"CSV {namespace}/{csv} not found yet")
        phase = (obj.get("status") or {}).get("phase") or "Pending"
        reason = (obj.get("status") or {}).get("message")
        if phase == "Succeeded":
            return ProbeResult(True, f"CSV {namespace}/{csv} Succeeded")
        return ProbeResult(False, f"CSV {namespace}/{csv} is {phase}" + (f": {reason}" if reason else ""))

    return probe


def _package_manifest(client: ClusterClient, catalog: OlmCatalog) -> dict[str, Any] | None:
    items = client.list(
        PACKAGES_API, "packagemanifests", catalog.source_namespace, f"catalog={catalog.source}"
    )
    return next((i for i in items if (i.get("metadata") or {}).get("name") == catalog.package), None)


def _approve_step(
    client: ClusterClient,
    namespace: str,
    subscription: str,
    status: Mapping[str, Any],
    target: str,
    starting: str,
    catalog: OlmCatalog | None,
) -> ProbeResult:
    """One step towards ``target``: find the Subscription's InstallPlan, approve it when it is a step towards the
    target (:func:`csv_probe`), refuse (GateError) when it is not. Raises ClusterApiError for the caller."""
    installed = status.get("installedCSV")
    ref = status.get("installPlanRef") or status.get("installplan") or {}
    plan_name = ref.get("name") if isinstance(ref, Mapping) else None
    where = f"Subscription {namespace}/{subscription}"
    if not plan_name:
        state = status.get("state") or "no state yet"
        return ProbeResult(
            False, f"{where} has no InstallPlan yet towards the target CSV {target} (state: {state})"
        )
    plan_ns = str(ref.get("namespace") or namespace)
    plan = client.get(OLM_API, "installplans", plan_ns, str(plan_name))
    if plan is None:
        return ProbeResult(False, f"InstallPlan {plan_ns}/{plan_name} of {where} not found yet")
    spec = plan.get("spec") or {}
    names = [str(n) for n in spec.get("clusterServiceVersionNames") or []]
    if spec.get("approved"):
        phase = (plan.get("status") or {}).get("phase") or "Installing"
        now = f"; {installed} is installed" if installed else ""
        return ProbeResult(
            False, f"InstallPlan {plan_ns}/{plan_name} ({', '.join(names)}) is {phase}{now}; target {target}"
        )
    fix = (
        "Set targetCsv to the CSV you want, or approve it yourself (oc patch installplan ... --type merge -p "
        '\'{"spec":{"approved":true}}\')'
    )
    if not installed:
        if names != [starting]:
            raise GateError(
                f"InstallPlan {plan_ns}/{plan_name} of {where} installs {', '.join(names) or 'no CSV'}, not the pinned "
                f"startingCSV {starting}: Batchplane approves only the first install of the pinned CSV. {fix}"
            )
    else:
        problem: str | None
        if len(names) != 1:
            problem = f"it installs {', '.join(names) or 'no CSV'}, not one CSV of the channel"
        else:
            versions = None
            if catalog is not None and names[0] != target:
                versions = channel_versions(_package_manifest(client, catalog), catalog.channel)
            problem = upgrade_step_problem(
                str(installed), names[0], target, versions, plan_upgrade_edges(plan, names[0])
            )
        if problem is not None:
            if catalog is not None and len(names) == 1:
                manifest = _package_manifest(client, catalog)
                versions = channel_versions(manifest, catalog.channel) or {}
                head = channel_head(manifest, catalog.channel)
                overtaken = skip_range_overtakes(str(installed), target, versions, head)
                if overtaken is not None and head is not None:
                    raise GateError(
                        f"InstallPlan {plan_ns}/{plan_name} of {where} installs {names[0]}, not a step towards the "
                        f"target CSV {target}: {overtaken}. Fix: set targetCsv to {head[0]} (the only upgrade OLM "
                        f"offers from {installed}), or keep {installed} by setting targetCsv to it"
                    )
            raise GateError(
                f"InstallPlan {plan_ns}/{plan_name} of {where} is not a step from the installed {installed} towards "
                f"the target CSV {target}: {problem}. Batchplane approves only the channel's path to the target. {fix}"
            )
    client.approve_install_plan(plan_ns, str(plan_name))
    return ProbeResult(
        False, f"approved InstallPlan {plan_ns}/{plan_name} ({names[0]}) towards the target CSV {target}"
    )


def token_probe(client: ClusterClient, namespace: str, secret: str) -> Callable[[], ProbeResult]:
    """A probe that is ready when the ``kubernetes.io/service-account-token`` Secret has been filled by the token
    controller (``data.token`` and ``data["ca.crt"]`` present)."""

    def probe() -> ProbeResult:
        try:
            data = client.secret_data(namespace, secret)
        except ClusterApiError as exc:
            if not is_transient(exc):
                raise GateError(f"cannot read Secret {namespace}/{secret}: {exc}") from exc
            return ProbeResult(False, f"reading Secret {namespace}/{secret}: {exc}")
        if data is None:
            return ProbeResult(False, f"Secret {namespace}/{secret} not found yet")
        missing = [key for key in ("token", "ca.crt") if not data.get(key)]
        if missing:
            return ProbeResult(False, f"Secret {namespace}/{secret} has no {' or '.join(missing)} yet")
        return ProbeResult(True, f"Secret {namespace}/{secret} holds a token")

    return probe


ROUTE_API = "route.openshift.io/v1"
#: The internal registry's default route, which the image registry operator creates in its namespace when
#: ``configs.imageregistry.operator.openshift.io/cluster`` sets ``spec.defaultRoute: true`` (OpenShift Container
#: Platform 4.18 "Registry", Exposing the registry:
#: https://docs.redhat.com/en/documentation/openshift_container_platform/4.18/html/registry/securing-exposing-registry).
REGISTRY_NAMESPACE = "openshift-image-registry"
REGISTRY_ROUTE = "default-route"
EXPOSE_REGISTRY = 'oc patch configs.imageregistry.operator.openshift.io/cluster --type merge -p \'{"spec":{"defaultRoute":true}}\''
"""The command that exposes the internal registry (a cluster-wide setting Batchplane never changes itself)."""


def route_host(route: Mapping[str, Any] | None) -> str | None:
    """A Route's ``spec.host``, or ``None`` when there is no route or it has no host yet."""
    host = ((route or {}).get("spec") or {}).get("host")
    return str(host) if host else None


def registry_route_probe(client: ClusterClient, namespace: str, route: str) -> Callable[[], ProbeResult]:
    """A probe that is ready when Route ``namespace/route`` (``route.openshift.io/v1``) has a ``spec.host``: the
    host ``pulumi up`` pushes the webhook image to. While the Route is missing the detail names the fix,
    :data:`EXPOSE_REGISTRY`, so the gate's timeout error tells the user what to run."""

    def probe() -> ProbeResult:
        try:
            found = client.get(ROUTE_API, "routes", namespace, route)
        except ClusterApiError as exc:
            if not is_transient(exc):
                raise GateError(f"cannot read Route {namespace}/{route}: {exc}") from exc
            return ProbeResult(False, f"reading Route {namespace}/{route}: {exc}")
        if found is None:
            return ProbeResult(
                False,
                f"Route {namespace}/{route} not found: the internal image registry is not exposed; expose it with "
                f"`{EXPOSE_REGISTRY}`, or set batchplane:webhook.build.registryHost to a route of your own",
            )
        host = route_host(found)
        if host is None:
            return ProbeResult(False, f"Route {namespace}/{route} has no spec.host yet")
        return ProbeResult(True, f"Route {namespace}/{route} serves {host}")

    return probe


def olm_namespace_probe(client: ClusterClient, install: StackInstall) -> Callable[[], ProbeResult]:
    """A lookup: list the namespace's OperatorGroups and Subscriptions and decide what the stack declares there
    (:func:`batchplane.operators.olm_lookup.plan_namespace`). Ready at once with outputs ``operatorGroup``,
    ``operatorGroupSpec``, ``subscription`` and ``checked: true``; a namespace that does not exist yet lists
    nothing.

    Raises (from the probe):
        GateError: the namespace has what the stack must not touch (every problem, one per line), or a permanent
            API error.
    """

    def probe() -> ProbeResult:
        ns = install.namespace
        try:
            groups = client.list(OPERATOR_GROUP_API, "operatorgroups", ns)
            subs = client.list(SUBSCRIPTION_API, "subscriptions", ns)
        except ClusterApiError as exc:
            if not is_transient(exc):
                raise GateError(f"cannot list OperatorGroups/Subscriptions in {ns}: {exc}") from exc
            return ProbeResult(False, f"listing OperatorGroups/Subscriptions in {ns}: {exc}")
        plan = plan_namespace(install, groups, subs)
        if plan.problems:
            raise GateError("\n".join(plan.problems))
        outputs = {
            "operatorGroup": plan.operator_group,
            "operatorGroupSpec": plan.operator_group_spec,
            "subscription": plan.subscription,
            "checked": True,
        }
        detail = (
            "; ".join(plan.notes) or f"namespace {ns} has no OperatorGroup or Subscription of the package"
        )
        return ProbeResult(True, detail, outputs)

    return probe


CONFIG_API = "config.openshift.io/v1"
#: The cluster's one ``FeatureGate`` (``featuregates.config.openshift.io``, cluster-scoped).
CLUSTER_FEATURE_GATE = "cluster"
NO_UPGRADE_FEATURE_SETS = ("TechPreviewNoUpgrade", "DevPreviewNoUpgrade", "CustomNoUpgrade")
"""Feature sets that "CANNOT BE UNDONE and PREVENTS UPGRADES" (openshift/api ``release-4.19``
``config/v1/types_feature.go`` L43-L54)."""


@dataclass(frozen=True)
class FeatureGateReading:
    """What ``featuregates.config.openshift.io/cluster`` says about one gate.

    Attributes:
        state: ``enabled`` (enabled for every version in ``status.featureGates``); ``rolling-out`` (``spec`` selects
            a feature set that enables it, ``status`` not yet); ``pending`` (no ``status.featureGates`` yet);
            ``disabled`` (disabled and the spec's feature set does not enable it); ``unknown`` (no version lists it:
            this OpenShift release has no such gate); ``missing`` (no FeatureGate ``cluster``: not OpenShift).
        feature_set: ``spec.featureSet`` (``Default`` when empty).
        detail: a sentence for messages.
    """

    state: str
    feature_set: str
    detail: str


def read_feature_gate(
    obj: Mapping[str, Any] | None, gate: str, enabling_sets: tuple[str, ...]
) -> FeatureGateReading:
    """Read one gate from the FeatureGate ``cluster``, as operators do: ``status.featureGates`` holds one entry per
    payload version in ClusterVersion's status, each with ``enabled[].name`` and ``disabled[].name`` (openshift/api
    ``release-4.19`` ``config/v1/types_feature.go`` L97-L133, ``FeatureGateStatus``/``FeatureGateDetails``).

    Args:
        obj: the FeatureGate object, or ``None`` when it does not exist.
        gate: the gate's name (``ProvisioningRequestAvailable``).
        enabling_sets: the feature sets under which what the gate guards works (``DevPreviewNoUpgrade``);
            ``CustomNoUpgrade``, when among them, counts when ``spec.customNoUpgrade.enabled`` lists the gate; when not
            among them a ``CustomNoUpgrade`` cluster reads ``disabled`` whatever its status says (the gated manifests
            carry ``release.openshift.io/feature-set`` for the listed sets only).
    """
    if obj is None:
        return FeatureGateReading("missing", "", "FeatureGate cluster not found (not an OpenShift cluster?)")
    spec = obj.get("spec") or {}
    feature_set = str(spec.get("featureSet") or "Default")
    custom = [str(n) for n in (spec.get("customNoUpgrade") or {}).get("enabled") or []]
    spec_enables = (feature_set in enabling_sets and feature_set != "CustomNoUpgrade") or (
        feature_set == "CustomNoUpgrade" and "CustomNoUpgrade" in enabling_sets and gate in custom
    )
    versions = (obj.get("status") or {}).get("featureGates") or []
    where = f"FeatureGate cluster (featureSet {feature_set})"
    if feature_set == "CustomNoUpgrade" and "CustomNoUpgrade" not in enabling_sets:
        # The gate may read enabled, but manifests annotated release.openshift.io/feature-set for another set (the
        # ProvisioningRequest CRD: DevPreviewNoUpgrade) are not applied by the cluster-version operator.
        return FeatureGateReading(
            "disabled",
            feature_set,
            f"{where} may list {gate}, but what it gates ships for {' or '.join(enabling_sets)} only (the "
            "cluster-version operator applies no manifest annotated for another feature set)",
        )
    if not versions:
        return FeatureGateReading("pending", feature_set, f"{where} has no status.featureGates yet")

    def listed(entry: Mapping[str, Any], key: str) -> bool:
        return any(item.get("name") == gate for item in entry.get(key) or [])

    names = ", ".join(str(v.get("version")) for v in versions)
    if all(listed(v, "enabled") for v in versions):
        return FeatureGateReading("enabled", feature_set, f"{where} enables {gate} for {names}")
    disabled = [str(v.get("version")) for v in versions if listed(v, "disabled")]
    if disabled and spec_enables:
        return FeatureGateReading(
            "rolling-out", feature_set, f"{where} selects {gate}, not yet enabled for {', '.join(disabled)}"
        )
    if disabled:
        return FeatureGateReading(
            "disabled", feature_set, f"{where} disables {gate} for {', '.join(disabled)}"
        )
    return FeatureGateReading(
        "unknown", feature_set, f"{where} lists no {gate} for {names}: this release has no such gate"
    )


def enable_feature_set_fix(enabling_sets: tuple[str, ...]) -> str:
    """The command that selects the first of ``enabling_sets``, with what it costs."""
    return (
        f"a cluster admin who accepts the cost runs `oc patch featuregate cluster --type merge -p "
        f'\'{{"spec":{{"featureSet":"{enabling_sets[0]}"}}}}\'`: it CANNOT BE UNDONE and PREVENTS UPGRADES'
    )


def feature_gate_probe(
    client: ClusterClient, gate: str, enabling_sets: tuple[str, ...]
) -> Callable[[], ProbeResult]:
    """A probe that is ready when :func:`read_feature_gate` says ``enabled``; waits while the feature set rolls out
    (``rolling-out``, ``pending``) and fails at once (:class:`GateError`, naming the fix) when the gate is disabled,
    unknown to the release, or there is no FeatureGate."""

    def probe() -> ProbeResult:
        try:
            obj = client.get(CONFIG_API, "featuregates", "", CLUSTER_FEATURE_GATE)
        except ClusterApiError as exc:
            if not is_transient(exc):
                raise GateError(f"cannot read FeatureGate {CLUSTER_FEATURE_GATE}: {exc}") from exc
            return ProbeResult(False, f"reading FeatureGate {CLUSTER_FEATURE_GATE}: {exc}")
        reading = read_feature_gate(obj, gate, enabling_sets)
        if reading.state == "enabled":
            return ProbeResult(True, reading.detail)
        if reading.state in ("rolling-out", "pending"):
            return ProbeResult(False, reading.detail)
        raise GateError(
            f"{reading.detail}: what needs it never becomes active; {enable_feature_set_fix(enabling_sets)}"
        )

    return probe


GATE_KINDS = (
    "kueue-webhook",
    "olm-csv",
    "service-account-token",
    "registry-route",
    "olm-namespace",
    "feature-gate",
    "kueue-storage-migration",
    "kueue-stored-versions",
)


def stored_versions_probe(client: ClusterClient, version: str) -> Callable[[], ProbeResult]:
    """Probe run before Kueue's chart is installed or upgraded to ``version``: reads each Kueue CRD's
    ``status.storedVersions`` (an absent CRD: a first install) and fails the gate — so nothing of the upgrade is
    applied — when one lists a version ``version`` no longer serves, naming the step to run first
    (:func:`batchplane.upgrade.steps.stored_version_refusals`, the planner's refusal). API errors are retried."""
    from batchplane.upgrade.steps import KUEUE_CRDS, parse_version, stored_version_refusals

    def probe() -> ProbeResult:
        stored: dict[str, tuple[str, ...]] = {}
        try:
            for name in KUEUE_CRDS:
                crd = client.get("apiextensions.k8s.io/v1", "customresourcedefinitions", "", name)
                if crd is not None:
                    stored[name] = tuple(
                        str(v) for v in (crd.get("status") or {}).get("storedVersions") or ()
                    )
        except ClusterApiError as exc:
            if is_transient(exc):
                return ProbeResult(False, f"reading the Kueue CRDs: {exc}")
            raise GateError(f"reading the Kueue CRDs: {exc}") from exc
        refusals = stored_version_refusals(stored, parse_version(version))
        if refusals:
            raise GateError("refused: " + " | ".join(refusals))
        return ProbeResult(True, f"{len(stored)} Kueue CRDs store only versions Kueue {version} serves")

    return probe


def storage_migration_probe(api_client: Any) -> Callable[[], ProbeResult]:
    """Probe that runs :func:`batchplane.upgrade.migrate.migrate_storage` (Kueue objects rewritten, then
    ``storedVersions`` pruned to ``["v1beta2"]``); an API error is retried (the run resumes from the objects'
    annotations), a CRD that does not store ``v1beta2`` fails the gate. Outputs ``rewritten`` (count) and ``pruned``
    (CRD names)."""
    from batchplane.upgrade.migrate import MigrationError, StorageVersionError, migrate_storage

    def probe() -> ProbeResult:
        try:
            report = migrate_storage(api_client)
        except StorageVersionError as exc:
            raise GateError(str(exc)) from exc
        except MigrationError as exc:
            return ProbeResult(False, str(exc))
        detail = (
            f"{len(report.rewritten)} objects rewritten, {len(report.skipped)} already migrated, "
            f"storedVersions pruned on {len(report.pruned)} CRDs"
        )
        return ProbeResult(True, detail, {"rewritten": len(report.rewritten), "pruned": report.pruned})

    return probe


def describe_gate(props: Mapping[str, Any]) -> str:
    """What a gate waits for, for messages."""
    if props.get("gate") == "olm-csv":
        return f"operator CSV of Subscription {props.get('namespace')}/{props.get('subscription')}"
    if props.get("gate") == "service-account-token":
        return f"service-account token in Secret {props.get('namespace')}/{props.get('secret')}"
    if props.get("gate") == "registry-route":
        return f"image registry Route {props.get('namespace')}/{props.get('route')}"
    if props.get("gate") == "olm-namespace":
        return f"OperatorGroups and Subscriptions in namespace {props.get('namespace')}"
    if props.get("gate") == "feature-gate":
        return f"OpenShift feature gate {props.get('featureGate')}"
    if props.get("gate") == "kueue-stored-versions":
        return f"Kueue CRDs' stored versions before the install of Kueue {props.get('version')}"
    if props.get("gate") == "kueue-storage-migration":
        return "Kueue objects' storage migration to v1beta2"
    service = props.get("service")
    where = f"{props.get('namespace')}/{service}" if service else str(props.get("namespace"))
    return f"Kueue webhook {where}"


def run_gate(
    props: Mapping[str, Any],
    client: ClusterClient,
    *,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> GateOutcome:
    """Run the gate the dynamic resource's inputs describe.

    Args:
        props: the resource inputs: ``gate`` (``kueue-webhook`` | ``olm-csv`` | ``service-account-token``),
            ``namespace``, ``service``, ``resourceFlavorApiVersion`` (kueue-webhook), ``subscription``
            ``approveCsv`` (olm-csv; the target CSV the gate approves InstallPlans towards, or absent) and
            ``package``, ``channel``, ``catalog``, ``catalogNamespace`` (olm-csv: where the channel's entries are read),
            ``secret`` (service-account-token), ``route`` (registry-route), ``package``, ``channel``,
            ``stackOperatorGroup``, ``stackOperatorGroupSpec``, ``stackSubscription``, ``adopt`` (olm-namespace),
            ``featureGate`` and ``enablingFeatureSets`` (feature-gate), ``timeoutSeconds``, ``intervalSeconds``.
        client: the cluster client.
        clock: monotonic seconds (injectable).
        sleep: pauses for seconds (injectable).

    Raises:
        GateError: unknown gate kind, or a permanent API error.
        GateTimeoutError: not ready within ``timeoutSeconds``.
    """
    gate = props.get("gate")
    namespace = str(props["namespace"])
    if gate == "kueue-webhook":
        service = props.get("service") or None
        probe = kueue_webhook_probe(
            client,
            namespace,
            None if service is None else str(service),
            str(props["resourceFlavorApiVersion"]),
        )
    elif gate == "olm-csv":
        approve = props.get("approveCsv") or None
        catalog = (
            OlmCatalog(
                str(props["package"]),
                str(props["channel"]),
                str(props["catalog"]),
                str(props["catalogNamespace"]),
            )
            if props.get("package")
            else None
        )
        probe = csv_probe(
            client, namespace, str(props["subscription"]), None if approve is None else str(approve), catalog
        )
    elif gate == "service-account-token":
        probe = token_probe(client, namespace, str(props["secret"]))
    elif gate == "registry-route":
        probe = registry_route_probe(client, namespace, str(props["route"]))
    elif gate == "olm-namespace":
        probe = olm_namespace_probe(
            client,
            StackInstall(
                namespace,
                str(props["package"]),
                str(props["channel"]),
                str(props["stackOperatorGroup"]),
                dict(props.get("stackOperatorGroupSpec") or {}),
                str(props["stackSubscription"]),
                bool(props.get("adopt")),
            ),
        )
    elif gate == "feature-gate":
        sets = tuple(str(s) for s in props.get("enablingFeatureSets") or ())
        probe = feature_gate_probe(client, str(props["featureGate"]), sets)
    elif gate == "kueue-stored-versions":
        probe = stored_versions_probe(client, str(props["version"]))
    elif gate == "kueue-storage-migration":
        probe = storage_migration_probe(getattr(client, "api_client", None))
    else:
        raise GateError(f"unknown gate {gate!r}; expected one of {', '.join(GATE_KINDS)}")
    return poll_until_ready(
        probe,
        what=describe_gate(props),
        timeout_seconds=float(props["timeoutSeconds"]),
        interval_seconds=float(props["intervalSeconds"]),
        clock=clock,
        sleep=sleep,
    )


# --- the real client -------------------------------------------------------------------------------


def _group_version(api_version: str) -> tuple[str, str]:
    group, _, version = api_version.rpartition("/")
    return group, version


class KubernetesClusterClient:
    """:class:`ClusterClient` over the ``kubernetes`` package.

    Args:
        kubeconfig: kubeconfig file content (YAML text) or a file path; ``None`` uses ``$KUBECONFIG``
            or ``~/.kube/config`` — the same resolution as the Pulumi Kubernetes provider.
        context: kubeconfig context; ``None`` uses the current context.
    """

    def __init__(self, kubeconfig: str | None, context: str | None) -> None:
        from kubernetes import client, config

        if kubeconfig and ("\n" in kubeconfig or kubeconfig.lstrip().startswith(("apiVersion", "{"))):
            api = config.new_client_from_config_dict(yaml.safe_load(kubeconfig), context=context)  # type: ignore[no-untyped-call]
        else:
            api = config.new_client_from_config(  # type: ignore[no-untyped-call]
                config_file=kubeconfig or None, context=context
            )
        self.api_client = api
        """The ``kubernetes.client.ApiClient`` (the storage migration talks through it)."""
        self._discovery = client.DiscoveryV1Api(api)
        self._custom = client.CustomObjectsApi(api)
        self._core = client.CoreV1Api(api)

    def _call(self, fn: Callable[[], Any]) -> Any:
        from kubernetes.client.exceptions import ApiException
        from urllib3.exceptions import HTTPError

        try:
            return fn()
        except ApiException as exc:
            raise ClusterApiError(int(exc.status or 0), str(exc.body or exc.reason)) from exc
        except (HTTPError, OSError) as exc:
            raise ClusterApiError(0, f"cannot reach the API server: {exc}") from exc

    def ready_endpoints(self, namespace: str, service: str) -> int:
        """Ready endpoints over every EndpointSlice labelled ``kubernetes.io/service-name=<service>``."""
        slices = self._call(
            lambda: self._discovery.list_namespaced_endpoint_slice(
                namespace, label_selector=f"kubernetes.io/service-name={service}"
            )
        )
        count = 0
        for item in slices.items or []:
            for endpoint in item.endpoints or []:
                conditions = endpoint.conditions
                if conditions is None or conditions.ready is not False:
                    count += 1
        return count

    def dry_run_create(self, api_version: str, plural: str, body: Mapping[str, Any]) -> None:
        """``POST`` with ``dryRun=All`` (admission webhooks run, nothing is stored)."""
        group, version = _group_version(api_version)
        self._call(
            lambda: self._custom.create_cluster_custom_object(
                group, version, plural, dict(body), dry_run="All"
            )
        )

    def get(self, api_version: str, plural: str, namespace: str, name: str) -> dict[str, Any] | None:
        """``GET`` a custom object (cluster-scoped when ``namespace`` is ``""``); ``None`` on 404 of the object."""
        group, version = _group_version(api_version)
        try:
            result = self._call(
                lambda: (
                    self._custom.get_namespaced_custom_object(group, version, namespace, plural, name)
                    if namespace
                    else self._custom.get_cluster_custom_object(group, version, plural, name)
                )
            )
        except ClusterApiError as exc:
            if exc.status == 404 and "not found" in exc.message.lower():
                return None
            raise
        return dict(result)

    def list(
        self, api_version: str, plural: str, namespace: str, label_selector: str | None = None
    ) -> list[dict[str, Any]]:
        """``GET`` a namespaced custom-object list (``labelSelector`` when given); its ``items``."""
        group, version = _group_version(api_version)
        result = self._call(
            lambda: self._custom.list_namespaced_custom_object(
                group, version, namespace, plural, label_selector=label_selector or ""
            )
        )
        return [dict(item) for item in (result or {}).get("items") or []]

    def instantiate_binary(self, namespace: str, build_config: str, archive: bytes) -> dict[str, Any]:
        """``POST`` ``archive`` (``application/octet-stream``) to ``build.openshift.io/v1`` BuildConfig
        ``namespace/build_config``'s ``instantiatebinary`` subresource, as ``oc start-build --from-dir`` does; the
        Build it started."""
        import json

        api = self._custom.api_client
        path = f"/apis/build.openshift.io/v1/namespaces/{namespace}/buildconfigs/{build_config}/instantiatebinary"
        method, url, headers, body, _ = api.param_serialize(
            "POST",
            path,
            header_params={"Content-Type": "application/octet-stream", "Accept": "application/json"},
            body=archive,
            auth_settings=["BearerToken"],
        )
        response = self._call(lambda: api.call_api(method, url, header_params=headers, body=body))
        text = response.read()
        if response.status >= 400:
            raise ClusterApiError(int(response.status), text.decode(errors="replace"))
        answer = json.loads(text or b"{}")
        return dict(answer) if isinstance(answer, dict) else {}

    def approve_install_plan(self, namespace: str, name: str) -> None:
        """``PATCH`` (JSON merge patch) ``{"spec": {"approved": true}}`` on ``operators.coreos.com/v1alpha1``
        InstallPlan ``namespace/name``."""
        group, version = _group_version(OLM_API)
        self._call(
            lambda: self._custom.patch_namespaced_custom_object(
                group, version, namespace, "installplans", name, {"spec": {"approved": True}}
            )
        )

    def secret_data(self, namespace: str, name: str) -> dict[str, str] | None:
        """A Secret's ``data`` (base64 values); ``None`` on 404."""
        try:
            secret = self._call(lambda: self._core.read_namespaced_secret(name, namespace))
        except ClusterApiError as exc:
            if exc.status == 404:
                return None
            raise
        return dict(secret.data or {})
