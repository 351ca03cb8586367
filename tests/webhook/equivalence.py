"""Decision equivalence: many generated reviews across every template's policy, judged by the Decider, compared
with the decisions recorded before a change to the decision path (issue #14: the compiled path must decide exactly
as the old one did before the old one is removed).

Reviews are generated deterministically (``random.Random(seed)``, no hypothesis database): every workload sample of
../shared/samples (kuberay, training-operator, appwrapper, kueue), placed in each tenant namespace of the policy,
with a known, unknown or missing queue label, counts scaled ×1/×3/×40, requests scaled, and sometimes tolerations
of the GPU taints or a nodeSelector. ``golden/decisions.json.gz`` maps each review's key to its decision
``[allowed, reason, message, warnings]``. Regenerate (only from a tree whose decisions are the reference) with
``.venv/bin/python -m tests.webhook.equivalence``.
"""

from __future__ import annotations

import copy
import gzip
import json
import random
import sys
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import yaml

from batchplane.components.quota_webhook.policy import render_policy
from batchplane.offline import load_stack_file as read_config
from batchplane.stack import load_stack
from batchplane.webhook.decisions import QUEUE_LABEL, Decider
from tests.conftest import TEMPLATE_NAMES, template_path

REPO = Path(__file__).resolve().parents[2]
SAMPLES = (REPO / ".." / "shared" / "samples").resolve()
GOLDEN = Path(__file__).parent / "golden" / "decisions.json.gz"
TEMPLATES = tuple(TEMPLATE_NAMES)  # a new template needs the golden regenerated (a test says so)
PER_TEMPLATE = 240
SEED = 14
WORKLOAD_KINDS = {"Job", "RayJob", "RayCluster", "PyTorchJob", "JobSet", "AppWrapper", "TrainJob", "Pod"}


def samples() -> list[dict[str, Any]]:
    out = []
    for folder in ("kuberay", "training-operator", "appwrapper", "kueue"):
        for path in sorted((SAMPLES / folder).glob("*.yaml")):
            out += [
                d
                for d in yaml.safe_load_all(path.read_text())
                if isinstance(d, dict) and d.get("kind") in WORKLOAD_KINDS
            ]
    return out


def _walk(node: Any) -> Iterator[dict[str, Any]]:
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from _walk(value)
    elif isinstance(node, list):
        for value in node:
            yield from _walk(value)


def _scale_quantity(value: Any, factor: Decimal) -> Any:
    text = str(value)
    digits = "".join(ch for ch in text if ch.isdigit() or ch == ".")
    suffix = text[len(digits) :] if text.startswith(digits) else ""
    if not digits or digits.count(".") > 1:
        return value
    scaled = (Decimal(digits) * factor).normalize()
    return f"{scaled:f}{suffix}"


def mutate(obj: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """Counts ×1/×3/×40, requests ×0.5–×8, sometimes GPU tolerations or a nodeSelector on every pod spec."""
    obj = copy.deepcopy(obj)
    count_factor = rng.choice([1, 1, 3, 40])
    request_factor = Decimal(rng.choice(["0.5", "1", "1", "2", "8"]))
    tolerate = rng.random() < 0.4
    selector = rng.random() < 0.15
    for node in _walk(obj):
        for key in ("replicas", "parallelism", "completions", "minReplicas", "maxReplicas", "numNodes"):
            if isinstance(node.get(key), int) and not isinstance(node.get(key), bool):
                node[key] = max(0, node[key] * count_factor)
        if isinstance(node.get("requests"), dict):
            node["requests"] = {k: _scale_quantity(v, request_factor) for k, v in node["requests"].items()}
        if isinstance(node.get("limits"), dict):
            node["limits"] = {k: _scale_quantity(v, request_factor) for k, v in node["limits"].items()}
        if isinstance(node.get("containers"), list):
            if tolerate:
                node["tolerations"] = [
                    {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
                    {
                        "key": "cloud.google.com/gke-queued",
                        "operator": "Equal",
                        "value": "true",
                        "effect": "NoSchedule",
                    },
                ]
            if selector:
                node["nodeSelector"] = {
                    "cloud.google.com/gke-nodepool": rng.choice(["l4", "h100", "gpu-node-pool", "other"])
                }
    return obj


def reviews(policy: Any, rng: random.Random, count: int) -> Iterator[tuple[str, dict[str, Any], str]]:
    """``(key, object, namespace)`` for ``count`` generated reviews against one policy."""
    pool = samples()
    namespaces = sorted(policy.namespaces) or ["default"]
    for index in range(count):
        base = pool[rng.randrange(len(pool))]
        obj = mutate(base, rng)
        ns = rng.choice(namespaces)
        meta = obj.setdefault("metadata", {})
        meta["namespace"] = ns
        meta["name"] = f"r{index}"
        labels = meta.setdefault("labels", {})
        queues = sorted(policy.namespaces.get(ns).local_queues) if ns in policy.namespaces else []
        choice = rng.random()
        if choice < 0.75 and queues:
            labels[QUEUE_LABEL] = rng.choice(queues)
        elif choice < 0.9:
            labels[QUEUE_LABEL] = "no-such-queue"
        else:
            labels.pop(QUEUE_LABEL, None)
        yield f"{index}:{base.get('kind')}:{base.get('metadata', {}).get('name')}", obj, ns


def decisions() -> dict[str, list[Any]]:
    """Every template's generated reviews, decided by this tree's Decider."""
    out: dict[str, list[Any]] = {}
    for template in TEMPLATES:
        stack = load_stack(read_config(template_path(template)), template)
        policy = render_policy(stack)
        decider = Decider(policy)
        rng = random.Random(f"{SEED}:{template}")
        for key, obj, ns in reviews(policy, rng, PER_TEMPLATE):
            d = decider.validate(obj, ns, "CREATE")
            out[f"{template}/{key}"] = [d.allowed, d.reason, d.message, list(d.warnings)]
    return out


def verdict_changes(
    old: dict[str, list[Any]], new: dict[str, list[Any]], new_reasons: frozenset[str] = frozenset()
) -> tuple[list[str], int]:
    """Compare two decision sets: (keys whose allowed/reason changed other than an allowed review now denied for one
    of ``new_reasons``, the number of reviews whose message changed)."""
    bad = [
        key
        for key in sorted(set(old) | set(new))
        if key not in old
        or key not in new
        or (old[key][:2] != new[key][:2] and not (old[key][0] is True and new[key][1] in new_reasons))
    ]
    messages = sum(1 for key in old if key in new and old[key][2] != new[key][2])
    return bad, messages


def main() -> None:
    """Regenerate the golden. ``--new-reason R`` (repeatable): a review that was allowed may now be decided for R
    (a new check: denied, or allowed with a new reason such as ``borrows``); every other allowed/reason must stay
    as recorded, or nothing is written."""
    new_reasons = frozenset(a for i, a in enumerate(sys.argv) if i > 0 and sys.argv[i - 1] == "--new-reason")
    data = decisions()
    if GOLDEN.exists():
        old = json.loads(gzip.decompress(GOLDEN.read_bytes()))
        bad, messages = verdict_changes(old, data, new_reasons)
        newly = sum(1 for k in old if k in data and old[k][:2] != data[k][:2])
        print(
            f"{messages} messages changed; {newly} allowed reviews now decided for a new reason ({', '.join(sorted(new_reasons))})",
            file=sys.stderr,
        )
        if bad:
            print(f"refusing to write: {len(bad)} verdicts changed, e.g. {bad[:5]}", file=sys.stderr)
            raise SystemExit(1)
    GOLDEN.parent.mkdir(exist_ok=True)
    GOLDEN.write_bytes(gzip.compress(json.dumps(data, sort_keys=True, indent=0).encode(), mtime=0))
    reasons: dict[str, int] = {}
    for _allowed, reason, _, _ in data.values():
        reasons[reason] = reasons.get(reason, 0) + 1
    print(f"wrote {GOLDEN}: {len(data)} decisions {dict(sorted(reasons.items()))}", file=sys.stderr)


if __name__ == "__main__":
    main()
