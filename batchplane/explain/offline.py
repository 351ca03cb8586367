"""``batchplane explain --stack ENV MANIFEST.yaml``: why each workload of a file would run, wait or never run.

Offline, against the stack's own policy document and the webhook's own decisions (:class:`~batchplane.webhook.
decisions.Decider`): a workload the webhook refuses *never runs* — the same function decides both, so ``explain`` and
the webhook cannot disagree. For the others, Kueue's flavor assigner is followed on an **empty cluster** (no other
workload, every cohort member idle; :func:`batchplane.webhook.assign.kueue_attempts`, Kueue v0.19.2):

* **admitted** — each PodSet gets a flavor within the ClusterQueue's own (nominal) quota;
* **borrows** — it fits only by borrowing from the cohort: it runs now on an empty cluster, and can be preempted when
  a lender whose ``reclaimWithinCohort`` allows it reclaims its quota (the lenders are named); on a busy cluster it
  waits (the webhook gives the same sentence as a warning, :meth:`~batchplane.webhook.decisions.Decider.borrowing`);
* **never runs** — the webhook's refusal, with its sentence.

Then the detail: the flavor each PodSet gets and Kueue's reason for each flavor it skipped, the quota used and
borrowed per flavor and resource, what the queue's preemption policy would let it preempt, the admission checks it
waits on (a GKE Dynamic Workload Scheduler ProvisioningRequest: nodes are obtained for it and removed after
``maxRunDurationSeconds``, at most seven days on flex-start — https://cloud.google.com/kubernetes-engine/docs/
concepts/dws), and the stack key and ``file:line`` that set each limit (:func:`batchplane.yamlfile.read_positions`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from batchplane.accounting import AccountingError, workload_requests
from batchplane.accounting.pod_groups import as_kueue_builds
from batchplane.accounting.training_runtimes import stack_builtin_runtimes
from batchplane.accounting.workload import is_known_non_workload, is_workload
from batchplane.components.quota_webhook.policy import render_policy
from batchplane.explain.sentences import Borrowing, borrowing_sentence, noun
from batchplane.frameworks import KUEUE_INTEGRATION_OF_KIND
from batchplane.stack import Stack
from batchplane.webhook.assign import _UNTRIED, Attempt, kueue_attempts, kueue_mismatch
from batchplane.webhook.capacity import check_workload_ever_fits
from batchplane.webhook.decisions import QUEUE_LABEL, Decider
from batchplane.webhook.flavors import Flavor, unconstrained_flavor
from batchplane.webhook.queues import Demand, Group, QueueModel, demands, show
from batchplane.yamlfile import Position, issue_position, read_positions

DWS_CLASS = "queued-provisioning.gke.io"
FLEX_START_MAX_SECONDS = 7 * 24 * 3600
"""GKE's cap and default for ``maxRunDurationSeconds`` ("up to seven days", GKE concepts/dws)."""
DWS_DOC = "https://cloud.google.com/kubernetes-engine/docs/concepts/dws"


@dataclass
class Limit:
    """A quota the workload uses: how much, of how much, and where the stack sets it."""

    flavor: str
    resource: str
    used: str
    nominal: str
    borrowed: str
    maximum: str
    key: str
    location: str


@dataclass
class PodSetPlacement:
    """The flavor a PodSet gets and why Kueue skipped the flavors before it."""

    name: str
    count: int
    flavors: list[str]
    skipped: list[str] = field(default_factory=list)


@dataclass
class Explanation:
    """One workload explained (``--json`` prints these as they are)."""

    kind: str
    name: str
    namespace: str
    verdict: str
    """``admitted``, ``borrows``, ``never-runs``, ``not-managed`` or ``not-checked``."""
    sentence: str
    local_queue: str | None = None
    cluster_queue: str | None = None
    reason: str = ""
    """The webhook's reason (``ok``, ``never-admissible`` …)."""
    pod_sets: list[PodSetPlacement] = field(default_factory=list)
    quota: list[Limit] = field(default_factory=list)
    preemption: str = ""
    admission_checks: list[str] = field(default_factory=list)
    details: str = ""
    keys: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    """Warnings the webhook gives beside its verdict that are not about size (an undeclared priority class)."""
    assumptions: str = (
        "assumes an empty cluster: offline, no other workload runs and every cohort member is idle"
    )

    def to_json(self) -> dict[str, Any]:
        """A plain dict (``--json``)."""
        return asdict(self)


def usage_of(
    workload_demands: Sequence[Demand], queue: QueueModel, attempt: Attempt
) -> dict[tuple[str, str], int]:
    """(flavor, resource) → what an admitting attempt puts on it (stored units)."""
    used: dict[tuple[str, str], int] = {}
    for p, d in enumerate(workload_demands):
        _add_usage(used, d, attempt.flavors[p], queue)
    return used


def _add_usage(
    used: dict[tuple[str, str], int], demand: Demand, row: Sequence[str], queue: QueueModel
) -> None:
    """Add what one PodSet puts on the flavors of its ``row`` (one flavor name or ``""`` per resource group)."""
    for g, group in enumerate(queue.groups):
        if not row[g]:
            continue
        for r in group.resources:
            if demand.requests.get(r):
                used[(row[g], r)] = used.get((row[g], r), 0) + demand.requests[r]


def classify(
    workload_demands: Sequence[Demand],
    queue: QueueModel,
    flavors: Mapping[str, Flavor],
    *,
    block_undeclared: bool = True,
) -> tuple[str, list[Attempt]]:
    """The verdict on an empty cluster, from the webhook's own capacity check and Kueue's attempts.

    Returns:
        (``never-runs`` | ``admitted`` | ``borrows`` | ``not-checked``, Kueue's attempts): never runs exactly
        when :func:`~batchplane.webhook.capacity.check_workload_ever_fits` denies (what the webhook refuses); admitted when the
        admitting attempt stays within the queue's nominal quota everywhere, borrows when it goes above it;
        not checked when the attempts are not modelled exactly (partial admission, long sequences).
    """
    shortfalls = check_workload_ever_fits(workload_demands, queue, flavors, block_undeclared=block_undeclared)
    if any(s.kind != "unmodelled" for s in shortfalls):
        return "never-runs", []
    attempts, _ = kueue_attempts(workload_demands, queue, flavors)
    last = attempts[-1]
    if last.failed >= 0:
        return "not-checked", attempts
    used = usage_of(workload_demands, queue, last)
    borrows = any(v > queue.capacity[fr].nominal for fr, v in used.items())
    return ("borrows" if borrows else "admitted"), attempts


class OfflineExplainer:
    """Explains workloads against one stack.

    Args:
        stack: the loaded stack.
        stack_file: its file (for ``file:line``); None = no positions.
    """

    def __init__(self, stack: Stack, stack_file: Path | None = None) -> None:
        self.stack = stack
        self.decider = Decider(render_policy(stack))
        self.file = stack_file
        self.positions: dict[str, Position] = read_positions(stack_file) if stack_file is not None else {}

    def location(self, key: str) -> str:
        """``stacks/Pulumi.x.yaml:42`` of a key path (or of its nearest ancestor the file spells out); ``""``."""
        line, _ = issue_position(self.positions, key)
        if line is None or self.file is None:
            return ""
        return f"{self.file}:{line}"

    def explain(self, obj: Mapping[str, Any], namespace: str | None = None) -> Explanation:
        """Explain one object (a job of a kind the webhook reviews).

        Args:
            obj: the manifest document.
            namespace: used when the object names none; defaults to ``default``.
        """
        meta = obj.get("metadata") if isinstance(obj.get("metadata"), Mapping) else {}
        assert isinstance(meta, Mapping)
        ns = str(meta.get("namespace") or namespace or "default")
        kind = str(obj.get("kind"))
        name = str(meta.get("name") or meta.get("generateName") or "<unnamed>")
        out = Explanation(kind, name, ns, "not-checked", "")
        policy = self.decider.policy
        decision = self.decider.validate(obj, ns, "CREATE")
        out.reason = decision.reason
        out.warnings = [w for w in decision.warnings if " is not declared by this stack" in w]
        labels = meta.get("labels") if isinstance(meta.get("labels"), Mapping) else {}
        assert isinstance(labels, Mapping)
        queue = labels.get(QUEUE_LABEL)
        tenant = policy.namespaces.get(ns)
        if not queue and tenant is not None:
            queue = "default" if "default" in tenant.local_queues else tenant.default_queue
        out.local_queue = str(queue) if queue else None
        if tenant is not None and queue in tenant.local_queues:
            out.cluster_queue = tenant.local_queues[str(queue)]
        if not decision.allowed:
            out.verdict = "never-runs"
            out.sentence = decision.lead or f"never runs: {decision.details.split(': ', 1)[-1]}"
            out.details = decision.details
            out.keys = (
                [k.strip() for k in decision.message.rsplit("(stack key: ", 1)[-1].split(";")[0].split(",")]
                if "(stack key: " in decision.message
                else []
            )
            out.keys = [f"{k} ({self.location(k)})" if self.location(k) else k for k in out.keys]
            return out
        if decision.reason == "not-a-tenant":
            out.verdict = "not-managed"
            out.sentence = (
                f"not managed by Kueue here: namespace {ns} has no LocalQueue in this stack, so the job runs outside "
                "quota (or stays suspended if Kueue manages every job)"
            )
            return out
        if out.cluster_queue is None:
            out.verdict = "not-managed"
            out.sentence = (
                f"not managed by Kueue: it has no {QUEUE_LABEL} label and namespace {ns} has no default LocalQueue, "
                "so it runs outside quota"
            )
            return out
        if decision.reason not in ("ok", "borrows"):
            out.sentence = f"not checked: {'; '.join(decision.warnings) or decision.reason}"
            return out
        self._placement(obj, out, kind)
        return out

    def _placement(self, obj: Mapping[str, Any], out: Explanation, kind: str) -> None:
        decider = self.decider
        cq = out.cluster_queue
        assert cq is not None
        queue = decider.queues[cq]
        try:
            workload = workload_requests(obj, pod_context=decider._pod_context)
        except AccountingError as exc:  # validate allowed it as not-accounted, so unreachable in practice
            out.sentence = f"not checked: {exc}"
            return
        wanted = demands(workload, queue)
        verdict, attempts = classify(wanted, queue, decider.flavors)
        if verdict not in ("admitted", "borrows"):  # allowed with a warning (unmodelled retries)
            out.sentence = "not checked: " + "; ".join(decider.validate(obj, out.namespace).warnings)
            return
        admitted = attempts[-1]
        previous = attempts[-2].state if len(attempts) > 1 else ()
        used: dict[tuple[str, str], int] = {}
        for p, d in enumerate(wanted):
            row = admitted.flavors[p]
            skipped = self._skipped(d, queue, row, previous[p] if p < len(previous) else None, used)
            out.pod_sets.append(PodSetPlacement(d.name, d.count, [f for f in row if f], skipped))
            _add_usage(used, d, row, queue)
        gpus = decider.policy.webhook.gpu_resources
        keys = decider.policy.cluster_queues[cq].quota_keys
        borrowing: list[tuple[str, str, int, int]] = []
        for (flavor, resource), value in sorted(used.items()):
            cap = queue.capacity[(flavor, resource)]
            borrowed = max(0, value - cap.nominal)
            key = keys.get(f"{flavor}/{resource}", "")
            out.quota.append(
                Limit(
                    flavor,
                    resource,
                    show(resource, value),
                    show(resource, cap.nominal),
                    show(resource, borrowed),
                    show(resource, cap.maximum),
                    key,
                    self.location(key) if key else "",
                )
            )
            if borrowed:
                borrowing.append((flavor, resource, value, cap.nominal))
        where = _flavors_text(out.pod_sets, kind)
        if borrowing:
            lent = decider.borrowing(workload, cq)
            flavor, resource, value, nominal = next((b for b in borrowing if b[1] in gpus), borrowing[0])
            cohort = queue.capacity[(flavor, resource)].cohort
            if lent is None:  # the same attempts decide both: unreachable, kept for a clear sentence
                lent = Borrowing(
                    flavor, resource, value, nominal, cohort or "", tuple(self._lenders(cq, cohort))
                )
            out.verdict = "borrows"
            out.sentence = f"{borrowing_sentence(lent, gpus)} (on an empty cluster it is admitted on {where})"
        else:
            out.verdict = "admitted"
            out.sentence = f"admitted on {where} within {cq}'s own quota"
        out.admission_checks = self._checks(cq, {f for ps in out.pod_sets for f in ps.flavors})
        if out.admission_checks:
            out.sentence += f", then waits for {', '.join(c.split(':', 1)[0] for c in out.admission_checks)}"
        out.preemption = self._preemption(cq, bool(borrowing))

    def _skipped(
        self,
        d: Demand,
        queue: QueueModel,
        row: Sequence[str],
        previous: Sequence[int] | None,
        used: Mapping[tuple[str, str], int],
    ) -> list[str]:
        """Kueue's reasons for the flavors tried before the one each resource group got."""
        reasons: list[str] = []
        for g, group in enumerate(queue.groups):
            if not row[g]:
                continue
            start = 0 if previous is None or previous[g] < 0 or previous[g] == _UNTRIED else previous[g] + 1
            for name in group.flavors[start : group.flavors.index(row[g])]:
                reasons.append(self._why_not(d, group, name, queue, used))
        return reasons

    def _why_not(
        self, d: Demand, group: Group, name: str, queue: QueueModel, used: Mapping[tuple[str, str], int]
    ) -> str:
        flavors = self.decider.flavors
        mismatch = kueue_mismatch(
            d.pod_spec, flavors.get(name) or unconstrained_flavor(name), group.match_keys
        )
        if mismatch is not None:
            return mismatch
        for r in group.resources:
            amount_ = d.requests.get(r, 0)
            before = used.get((name, r), 0)
            maximum = queue.capacity[(name, r)].maximum
            if amount_ and before + amount_ > maximum:
                return (
                    f"insufficient quota for {r} in flavor {name}, previously considered podsets requests "
                    f"({show(r, before)}) + current podset request ({show(r, amount_)}) > maximum capacity "
                    f"({show(r, maximum)})"
                )
        return f"flavor {name} fits only by borrowing; the queue's flavorFungibility tries the next flavor"

    def _lenders(self, cq: str, cohort: str | None) -> list[str]:
        if cohort is None:
            return []
        return sorted(
            name
            for name, policy in self.decider.policy.cluster_queues.items()
            if policy.cohort == cohort and name != cq
        )

    def _checks(self, cq: str, flavors: set[str]) -> list[str]:
        policy = self.decider.policy
        out: list[str] = []
        prcs = {p.obj.name: p.obj for p in self.stack.kueue.provisioning_request_configs}
        for use in policy.cluster_queues[cq].admission_checks:
            if use.on_flavors and not flavors & set(use.on_flavors):
                continue
            check = policy.admission_checks.get(use.name)
            prc = check.provisioning_request_config if check is not None else None
            if prc is not None and prc.provisioning_class_name == DWS_CLASS:
                params = prcs[prc.name].parameters if prc.name in prcs else {}
                seconds = int(params.get("maxRunDurationSeconds", FLEX_START_MAX_SECONDS))
                out.append(
                    f"a DWS ProvisioningRequest (AdmissionCheck {use.name}): GKE's Dynamic Workload Scheduler "
                    f"obtains the nodes for the whole workload at once or not at all, then removes them after "
                    f"{_duration(seconds)} (maxRunDurationSeconds; at most 7 days, {DWS_DOC})"
                )
            elif prc is not None:
                out.append(
                    f"a ProvisioningRequest of class {prc.provisioning_class_name} (AdmissionCheck {use.name})"
                )
            else:
                controller = check.controller_name if check is not None else "unknown controller"
                out.append(f"AdmissionCheck {use.name} ({controller})")
        return out

    def _preemption(self, cq: str, borrowing: bool) -> str:
        located = next((c for c in self.stack.kueue.cluster_queues if c.obj.name == cq), None)
        p = located.obj.preemption if located is not None else None
        within = (p.within_cluster_queue if p else None) or "Never"
        reclaim = (p.reclaim_within_cohort if p else None) or "Never"
        parts = [
            "nothing to preempt on an empty cluster",
            f"on a busy one, withinClusterQueue: {within}"
            + (
                f" lets it preempt {'lower-priority' if within == 'LowerPriority' else 'lower- or newer equal-priority'} "
                f"workloads of {cq}"
                if within != "Never"
                else " (it never preempts workloads of its own queue)"
            ),
            f"reclaimWithinCohort: {reclaim}"
            + (
                f" lets it take back {cq}'s nominal quota from {'any' if reclaim == 'Any' else 'lower-priority'} "
                "workloads that borrow it"
                if reclaim != "Never"
                else " (it never reclaims lent quota)"
            ),
        ]
        if borrowing:
            parts.append(
                "while it borrows, the lenders may reclaim their quota and preempt it, if their reclaimWithinCohort allows"
            )
        return "; ".join(parts)


def _duration(seconds: int) -> str:
    if seconds % 86400 == 0:
        days = seconds // 86400
        return f"{days} day{'s' if days != 1 else ''}"
    if seconds % 3600 == 0:
        return f"{seconds // 3600} h"
    return f"{seconds} s"


def _flavors_text(pod_sets: Sequence[PodSetPlacement], kind: str) -> str:
    by_flavor: dict[str, list[str]] = {}
    for ps in pod_sets:
        for f in ps.flavors:
            by_flavor.setdefault(f, []).append(noun(ps.name, ps.count, kind))
    if len(by_flavor) == 1:
        return next(iter(by_flavor))
    return ", ".join(f"{f} ({', '.join(dict.fromkeys(who))})" for f, who in by_flavor.items())


def explain_documents(
    explainer: OfflineExplainer, documents: Sequence[Any], namespace: str | None = None
) -> list[Explanation]:
    """Every workload document of a manifest, explained in file order. A document of a job kind Batchplane does not
    check — a kind whose Kueue integration the stack does not enable, or one it does not account — is named
    ``not-checked`` with why, never dropped; other documents (ConfigMaps, Services …) are skipped."""
    out: list[Explanation] = []
    builtin = stack_builtin_runtimes(explainer.stack)  # Trainer's built-in runtimes its chart installs
    # pod groups as one Workload; TrainJob runtimes of the file or the stack's chart
    for doc in as_kueue_builds(documents, namespace, builtin):
        if not isinstance(doc, Mapping) or doc.get("kind") == "Workload":
            continue
        if is_workload(doc):
            out.append(explainer.explain(doc, namespace))
            continue
        unchecked = _not_checked(explainer, doc, namespace)
        if unchecked is not None:
            out.append(unchecked)
    return out


def _not_checked(
    explainer: OfflineExplainer, doc: Mapping[str, Any], namespace: str | None
) -> Explanation | None:
    """The ``not-checked`` answer for a job kind ``explain`` cannot judge: a registered framework's kind the
    accounting does not read here, or any kind carrying the queue label; None for everything else."""
    kind = str(doc.get("kind"))
    meta = doc.get("metadata") if isinstance(doc.get("metadata"), Mapping) else {}
    assert isinstance(meta, Mapping)
    labels = meta.get("labels") if isinstance(meta.get("labels"), Mapping) else {}
    assert isinstance(labels, Mapping)
    framework = KUEUE_INTEGRATION_OF_KIND.get(kind)
    if framework is None and (QUEUE_LABEL not in labels or is_known_non_workload(doc)):
        return None
    enabled = explainer.decider.policy.kueue.frameworks
    if framework is None:
        why = f"Batchplane knows no Kueue integration for {doc.get('apiVersion')} {kind}, so its quota is not judged"
    elif enabled is not None and framework not in enabled:
        why = f"the {framework} integration is not enabled on this stack, so Kueue ignores its queue label"
    else:
        why = f"Batchplane does not account {doc.get('apiVersion')} {kind} (the {framework} integration)"
    name = str(meta.get("name") or meta.get("generateName") or "<unnamed>")
    ns = str(meta.get("namespace") or namespace or "default")
    return Explanation(kind, name, ns, "not-checked", f"not checked: {kind} — {why}")


def render_text(explanations: Sequence[Explanation]) -> str:
    """The human report: the sentence first, then the detail, per workload."""
    lines: list[str] = []
    for e in explanations:
        lines.append(f'{e.kind} "{e.namespace}/{e.name}": {e.sentence}')
        if e.local_queue and e.cluster_queue:
            lines.append(f"  queue: LocalQueue {e.local_queue} → ClusterQueue {e.cluster_queue}")
        elif e.local_queue:
            lines.append(f"  queue: LocalQueue {e.local_queue} (not a LocalQueue of namespace {e.namespace})")
        for ps in e.pod_sets:
            pods = f"{ps.count} pod{'' if ps.count == 1 else 's'}"
            lines.append(f"  PodSet {ps.name} ({pods}): {', '.join(ps.flavors) or 'no quota needed'}")
            for why in ps.skipped:
                lines.append(f"    skipped: {why}")
        for q in e.quota:
            at = f" — {q.key}" + (f" ({q.location})" if q.location else "") if q.key else ""
            lines.append(
                f"  quota {q.flavor} {q.resource}: uses {q.used} of {q.nominal} own"
                + (f", borrows {q.borrowed}" if q.borrowed != "0" else "")
                + f" (at most {q.maximum}){at}"
            )
        for check in e.admission_checks:
            lines.append(f"  waits on {check}")
        if e.preemption:
            lines.append(f"  preemption: {e.preemption}")
        if e.details:
            lines.append(f"  details: {e.details}")
        for key in e.keys:
            lines.append(f"  set by: {key}")
        for warning in e.warnings:
            lines.append(f"  warning: {warning}")
        lines.append(f"  ({e.assumptions})")
    return "\n".join(lines) + ("\n" if lines else "")
