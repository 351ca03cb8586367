"""A slow, literal transcription of Kueue v0.19.2's flavor assigner and its retry sequence in an empty cohort.

The reference the quota model (``batchplane.webhook.queues``, ``.flavors``, ``.assign``, ``.capacity``) is held to. It shares no code with it: its own cohort
pools, its own borrowing height, its own taint and node-selector matching, and Kueue's data shapes
(``LastTriedFlavorIdx`` as one ``{resource: index}`` map per PodSet, statuses as reason lists). Each function names
the upstream function and lines it transcribes, at
https://github.com/kubernetes-sigs/kueue/blob/v0.19.2/ (``FA`` = pkg/scheduler/flavorassigner/flavorassigner.go).

Scenarios are the dicts of ``tests/webhook/test_quota.py``: ``cqs`` / ``cohorts`` (quotas per flavor and resource
with nominal, borrowing and lending amounts), ``taints`` (flavor → tainted, key ``t-<flavor>``), ``labels`` (flavor
→ node labels), ``pod_sets`` (name, count, per-pod requests, tolerated flavors, nodeSelector, and required node
affinity as a list of terms, each a list of ``{key, operator, values}``, or None), ``when_can_borrow`` and
``affinity_keys``. Requests are whole units of each resource; zero requests are absent, as the accounting produces
them.

``affinity_keys`` picks the Kueue whose node-affinity matching is transcribed: ``Flavor`` is v0.19.2 (each flavor on
the keys of its own node labels, FA line 1227); ``ResourceGroup`` is v0.18.1, the last v0.18 release before the fix
(https://github.com/kubernetes-sigs/kueue/blob/v0.18.1/ ``FA`` lines 812-998: ``findFlavorForPodSets`` builds one
``flavorSelector(&ps.Template.Spec, resourceGroup.LabelKeys)`` per PodSet, line 834, and ``checkFlavorForPodSets``
matches it against each flavor's node labels, lines 953-998; ``rg.LabelKeys`` is the union of the keys of the
group's flavors, ``updateLabelKeys`` in pkg/cache/scheduler/clusterqueue.go lines 379-408). The rest of the assigner
is the same in both as far as these scenarios reach.
"""

from __future__ import annotations

from typing import Any

NO_FIT, NO_PREEMPTION_CANDIDATES, PREEMPT, RECLAIM, FIT = range(5)  # FA lines 524-532
MAX_INT = 2**63 - 1
#: How many requeues the reference follows (a cycle of pending states is caught before that).
MAX_ATTEMPTS = 1000


# --- the cohort tree (pkg/cache/scheduler/resource_node.go) ----------------------------------------------------


class Tree:
    """Nodes ``cq:<name>`` / ``co:<name>`` with parents, quotas and children."""

    def __init__(self, s: dict[str, Any]) -> None:
        self.nodes: dict[str, dict[str, Any]] = {
            f"cq:{n}": {"parent": c.get("cohort"), "quotas": c["quotas"]} for n, c in s["cqs"].items()
        }
        for n, c in s["cohorts"].items():
            self.nodes[f"co:{n}"] = {"parent": c.get("parent"), "quotas": c.get("quotas", {})}
        for node in list(self.nodes.values()):
            if node["parent"] and f"co:{node['parent']}" not in self.nodes:
                self.nodes[f"co:{node['parent']}"] = {"parent": None, "quotas": {}}

    def parent(self, key: str) -> str | None:
        p = self.nodes[key]["parent"]
        return f"co:{p}" if p else None

    def children(self, key: str) -> list[str]:
        return [k for k in self.nodes if self.parent(k) == key]

    def quota(self, key: str, fr: tuple[str, str]) -> dict[str, Any]:
        quota: dict[str, Any] = self.nodes[key]["quotas"].get(fr[0], {}).get(fr[1], {"nominal": 0})
        return quota

    def subtree(self, key: str, fr: tuple[str, str]) -> int:
        """``SubtreeQuota``: own nominal plus what each child puts in (all of it, or its lending limit)."""
        return int(self.quota(key, fr)["nominal"]) + sum(self.lent(k, fr) for k in self.children(key))

    def lent(self, key: str, fr: tuple[str, str]) -> int:
        lending = self.quota(key, fr).get("lending")
        total = self.subtree(key, fr)
        return total if lending is None else min(lending, total)

    def local(self, key: str, fr: tuple[str, str]) -> int:
        """``localQuota`` (resource_node.go lines 67-72): subtree − lendingLimit, 0 without a limit."""
        lending = self.quota(key, fr).get("lending")
        return 0 if lending is None else max(0, self.subtree(key, fr) - lending)

    def potential_available(self, key: str, fr: tuple[str, str]) -> int:
        """``potentialAvailable`` (resource_node.go lines 129-140)."""
        parent = self.parent(key)
        if parent is None:
            return self.subtree(key, fr)
        avail = self.local(key, fr) + self.potential_available(parent, fr)
        borrowing = self.quota(key, fr).get("borrowing")
        if borrowing is not None:
            avail = min(self.subtree(key, fr) + borrowing, avail)
        return avail

    def available(self, key: str, fr: tuple[str, str]) -> int:
        """``available`` (resource_node.go lines 106-122) with no usage anywhere."""
        parent = self.parent(key)
        if parent is None:
            return self.subtree(key, fr) - 0
        parent_available = self.available(parent, fr)
        borrowing = self.quota(key, fr).get("borrowing")
        if borrowing is not None:
            lq = self.local(key, fr)
            stored_in_parent = self.subtree(key, fr) - lq
            used_in_parent = max(0, 0 - lq)
            parent_available = min(stored_in_parent - used_in_parent + borrowing, parent_available)
        return max(0, self.local(key, fr) - 0) + parent_available

    def node_height(self, key: str) -> int:
        """``getNodeHeight`` (pkg/scheduler/preemption/classical/hierarchical_preemption.go lines 209-215)."""
        kids = self.children(key)
        height = min(len(kids), 1)
        for kid in kids:
            if kid.startswith("co:"):
                height = max(height, self.node_height(kid) + 1)
        return height

    def height_of_lowest_subtree_that_fits(self, cq: str, fr: tuple[str, str], val: int) -> tuple[int, bool]:
        """``FindHeightOfLowestSubtreeThatFits`` (hierarchical_preemption.go lines 221-234), no usage."""
        parent = self.parent(cq)
        borrowing_with = self.quota(cq, fr)["nominal"] < 0 + val  # clusterqueue_snapshot.go lines 163-165
        if not borrowing_with or parent is None:
            return 0, parent is not None
        remaining = val - max(0, self.local(cq, fr) - 0)
        node: str | None = parent
        root = parent
        while node is not None:
            if not self.subtree(node, fr) < 0 + remaining:  # cohort_snapshot.go lines 90-92
                return self.node_height(node), self.parent(node) is not None
            remaining -= max(0, self.local(node, fr) - 0)
            root = node
            node = self.parent(node)
        return self.node_height(root), False


# --- flavor checks (FA checkFlavorForPodSets, lines 1208-1257) ---------------------------------------------------


def untolerated_taint(s: dict[str, Any], ps: dict[str, Any], flavor: str) -> str | None:
    """``FindMatchingUntoleratedTaint`` over the flavor's NoSchedule taint, the pod tolerating it by key."""
    if s["taints"].get(flavor) and flavor not in ps["tolerates"]:
        return f"t-{flavor}:NoSchedule"
    return None


def allowed_keys(s: dict[str, Any], flavor: str, group_flavors: list[str]) -> set[str]:
    """The keys ``flavorSelector`` keeps: the flavor's own (``sets.KeySet(flavor.Spec.NodeLabels)``, FA line 1227
    @v0.19.2), or the resource group's ``LabelKeys`` (@v0.18.1: the union over the group's flavors of their node
    label keys, clusterqueue.go lines 388-401; an empty union is nil, which has no key, lines 403-405)."""
    labels = s.get("labels", {})
    if s.get("affinity_keys", "Flavor") == "Flavor":
        return set(labels.get(flavor, {}))
    keys: set[str] = set()
    for name in group_flavors:
        keys.update(labels.get(name, {}))
    return keys


def flavor_selector(
    ps: dict[str, Any], allowed: set[str]
) -> tuple[dict[str, str], list[list[dict[str, Any]]] | None]:
    """``flavorSelector`` (FA lines 1019-1063 @v0.18.1, 1278-1322 @v0.19.2): the nodeSelector and each term's match
    expressions restricted to ``allowed``; a term left empty drops the whole required affinity (None: no terms)."""
    node_selector = {k: v for k, v in ps.get("selector", {}).items() if k in allowed}
    terms_copy: list[list[dict[str, Any]]] | None = []
    for term in ps.get("affinity") or []:
        exp_copy = [e for e in term if e["key"] in allowed]
        if not exp_copy:
            terms_copy = None
            break
        assert terms_copy is not None
        terms_copy.append(exp_copy)
    return node_selector, terms_copy or None


def requirement_matches(e: dict[str, Any], labels: dict[str, str]) -> bool:
    """``labels.Requirement.Matches`` (k8s.io/apimachinery pkg/labels/selector.go) of a node selector requirement
    (``nodeSelectorRequirementsAsSelector``, k8s.io/component-helpers scheduling/corev1/nodeaffinity)."""
    key, op, values = e["key"], e["operator"], e.get("values", [])
    if op == "In":
        return key in labels and labels[key] in values
    if op == "NotIn":
        return key not in labels or labels[key] not in values
    if op == "Exists":
        return key in labels
    if op == "DoesNotExist":
        return key not in labels
    if op in ("Gt", "Lt"):
        if key not in labels:
            return False
        try:
            ls_value = int(labels[key])
        except ValueError:
            return False
        r_value = int(values[0])
        return ls_value > r_value if op == "Gt" else ls_value < r_value
    raise AssertionError(f"not generated: {op}")


def selector_matches(s: dict[str, Any], ps: dict[str, Any], flavor: str, group_flavors: list[str]) -> bool:
    """``RequiredNodeAffinity.Match`` of the flavor selector against a node with the flavor's labels
    (``checkFlavorForPodSets``, FA line 1247 @v0.19.2, line 988 @v0.18.1): every kept nodeSelector pair, and some
    kept term whose requirements all match."""
    labels = s.get("labels", {}).get(flavor, {})
    node_selector, terms = flavor_selector(ps, allowed_keys(s, flavor, group_flavors))
    if any(labels.get(k) != v for k, v in node_selector.items()):
        return False
    return terms is None or any(all(requirement_matches(e, labels) for e in term) for term in terms)


def check_flavor_for_pod_sets(
    s: dict[str, Any], ps: dict[str, Any], flavor: str, group_flavors: list[str]
) -> list[str]:
    taint = untolerated_taint(s, ps, flavor)
    if taint is not None:
        return [f"untolerated taint {taint} in flavor {flavor}"]  # FA line 1243 (@v0.18.1: 984)
    if not selector_matches(s, ps, flavor, group_flavors):
        return [f"flavor {flavor} doesn't match node affinity"]  # FA line 1252 (@v0.18.1: 993)
    return []


# --- modes (FA lines 506-575, 1259-1276) -------------------------------------------------------------------------


def is_preferred(a: tuple[int, int], b: tuple[int, int], preference: str | None) -> bool:
    """``isPreferred`` (FA lines 535-575); a mode is ``(preemptionMode, borrowingLevel)``."""
    if a[0] == NO_FIT:
        return False
    if b[0] == NO_FIT:
        return True
    a_none, b_none = a[0] == NO_PREEMPTION_CANDIDATES, b[0] == NO_PREEMPTION_CANDIDATES
    if a_none != b_none:
        return not a_none

    def borrowing_over_preemption() -> bool:
        if a[0] != b[0]:
            return a[0] > b[0]
        return a[1] < b[1]

    def preemption_over_borrowing() -> bool:
        if a[1] != b[1]:
            return a[1] < b[1]
        return a[0] > b[0]

    if preference == "PreemptionOverBorrowing":
        return preemption_over_borrowing()
    return borrowing_over_preemption()


def should_try_next_flavor(mode: tuple[int, int], when_can_borrow: str, when_can_preempt: str) -> bool:
    """``shouldTryNextFlavor`` (FA lines 1259-1276)."""
    if mode[0] in (NO_FIT, NO_PREEMPTION_CANDIDATES):
        return True
    if mode[0] in (PREEMPT, RECLAIM) and when_can_preempt == "TryNextFlavor":
        return True
    return mode[1] != 0 and when_can_borrow == "TryNextFlavor"


# --- the assigner -------------------------------------------------------------------------------------------------


class Assigner:
    """``FlavorAssigner`` for ClusterQueue ``a`` of a scenario, in an empty cohort."""

    def __init__(self, s: dict[str, Any]) -> None:
        self.s = s
        self.tree = Tree(s)
        self.groups: list[
            tuple[list[str], list[str]]
        ] = []  # (coveredResources, flavors), as the policy orders them
        for flavor, resources in s["cqs"]["a"]["quotas"].items():
            for covered, flavors in self.groups:
                if covered == list(resources):
                    flavors.append(flavor)
                    break
            else:
                self.groups.append((list(resources), [flavor]))

    def rg_by_resource(self, resource: str) -> tuple[list[str], list[str]] | None:
        return next((g for g in self.groups if resource in g[0]), None)

    def fits_resource_quota(
        self, fr: tuple[str, str], assumed: int, request: int
    ) -> tuple[int, int, list[str]]:
        """``fitsResourceQuota`` (FA lines 1330-1380) in an empty cohort; returns (mode, borrow, reasons)."""
        available = max(0, self.tree.available("cq:a", fr))
        max_capacity = self.tree.potential_available("cq:a", fr)
        val = assumed + request
        if val > max_capacity:
            return (
                NO_FIT,
                0,
                [
                    f"insufficient quota for {fr[1]} in flavor {fr[0]}, previously considered podsets requests "
                    f"({assumed}) + current podset request ({request}) > maximum capacity ({max_capacity})"
                ],
            )
        borrow, _ = self.tree.height_of_lowest_subtree_that_fits("cq:a", fr, val)
        if val <= available:
            return FIT, borrow, []
        raise AssertionError("an empty cohort has all of its potential available quota available")

    def find_flavor_for_pod_sets(
        self,
        ps_index: int,
        requests: dict[str, int],
        res_name: str,
        usage: dict[tuple[str, str], int],
        last: Any,
    ) -> tuple[dict[str, dict[str, Any]] | None, list[str]]:
        """``findFlavorForPodSets`` (FA lines 1061-1206), FlavorFungibility enabled (Beta, on by default)."""
        ps = self.s["pod_sets"][ps_index]
        group = self.rg_by_resource(res_name)
        assert group is not None
        covered, flavors = group
        requests = {r: v for r, v in requests.items() if r in covered}  # filterRequestedResources
        status: list[str] = []
        best: dict[str, dict[str, Any]] | None = None
        best_mode = (NO_FIT, MAX_INT)
        attempted = -1
        idx = next_flavor_to_try(last, ps_index, res_name)
        while idx < len(flavors):
            attempted = idx
            name = flavors[idx]
            reasons = check_flavor_for_pod_sets(self.s, ps, name, flavors)
            if reasons:
                status += reasons
                idx += 1
                continue
            assignments: dict[str, dict[str, Any]] = {}
            mode = (FIT, 0)
            for r, val in requests.items():
                fr = (name, r)
                preemption_mode, borrow, reasons = self.fits_resource_quota(fr, usage.get(fr, 0), val)
                status += reasons
                if is_preferred(mode, (preemption_mode, borrow), None):
                    mode = (preemption_mode, borrow)
                if mode[0] == NO_FIT:
                    continue
                assignments[r] = {"name": name, "borrow": borrow}
            if not should_try_next_flavor(mode, self.s["when_can_borrow"], "TryNextFlavor"):
                best, best_mode = assignments, mode
                break
            if is_preferred(mode, best_mode, None):
                best, best_mode = assignments, mode
            idx += 1
        for assignment in (best or {}).values():
            assignment["tried"] = -1 if attempted == len(flavors) - 1 else attempted
        if best_mode[0] == FIT:
            return best, []
        return best, status

    def assign_flavors(self, last: Any) -> dict[str, Any]:
        """``assignFlavors`` (FA lines 707-858): PodSets in order, each resource once per group."""
        usage: dict[tuple[str, str], int] = {}
        last_tried: list[dict[str, int]] = []
        assigned: list[dict[str, str]] = []
        for i, ps in enumerate(self.s["pod_sets"]):
            requests = {r: v * ps["count"] for r, v in ps["per_pod"].items() if v}
            group_flavors: dict[str, dict[str, Any]] = {}
            failed: list[str] | None = None
            for res_name in requests:
                if self.rg_by_resource(res_name) is None:  # BlockUndeclared (FA lines 805-813, 1069-1072)
                    failed = [f"resource {res_name} unavailable in ClusterQueue"]
                    break
                if res_name in group_flavors:
                    continue
                flavors, status = self.find_flavor_for_pod_sets(i, requests, res_name, usage, last)
                if not flavors:
                    failed = status
                    break
                group_flavors.update(flavors)
            if failed is not None:
                last_tried.append({})  # Assignment.append with no flavors (FA lines 1013-1037)
                return {"admitted": False, "pod_set": ps["name"], "reasons": failed, "last_tried": last_tried}
            for r, f in group_flavors.items():  # Assignment.append
                usage[(f["name"], r)] = usage.get((f["name"], r), 0) + requests[r]
            last_tried.append({r: f["tried"] for r, f in group_flavors.items()})
            assigned.append({r: f["name"] for r, f in group_flavors.items()})
        return {"admitted": True, "last_tried": last_tried, "flavors": assigned}


def next_flavor_to_try(last: Any, ps: int, res: str) -> int:
    """``NextFlavorToTryForPodSetResource`` (pkg/workload/workload.go lines 226-238)."""
    if last is None or ps >= len(last):
        return 0
    idx = last[ps].get(res)
    if idx is None:
        return 0
    return int(idx) + 1


def pending_flavors(last: list[dict[str, int]]) -> bool:
    """``PendingFlavors`` (pkg/workload/workload.go lines 209-224)."""
    return any(idx != -1 for m in last for idx in m.values())


def admitted_in_empty_cohort(s: dict[str, Any]) -> tuple[bool, list[dict[str, Any]]]:
    """The scheduler's attempts: the first from scratch, each next one resuming from the last
    ``LastTriedFlavorIdx`` while ``PendingFlavors`` requeues it at once (pkg/cache/queue/cluster_queue.go lines
    678-685; pkg/scheduler/scheduler.go ``recordAssignment`` lines 280-285, ``lastAssignmentOutdated`` lines
    824-840: an assignment from the preceding cycle stays current). Stops at admission, at a state with nothing
    pending (it then waits; a later requeue starts from the first flavor, the same sequence), or at a repeat."""
    assigner = Assigner(s)
    last: list[dict[str, int]] | None = None
    seen: list[list[dict[str, int]]] = []
    attempts: list[dict[str, Any]] = []
    for _ in range(MAX_ATTEMPTS):
        result = assigner.assign_flavors(last)
        attempts.append(result)
        if result["admitted"]:
            return True, attempts
        if not pending_flavors(result["last_tried"]) or result["last_tried"] in seen:
            return False, attempts
        seen.append(result["last_tried"])
        last = result["last_tried"]
    raise AssertionError("the reference did not settle")
