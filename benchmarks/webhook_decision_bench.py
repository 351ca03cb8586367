"""Decision cost of the quota webhook per review kind, in µs, for this tree and (optionally) a baseline commit.

The same body runs for both: ``Decider(policy).validate(object, namespace, "CREATE")`` called in a loop on one
core, with the gke-dws template's policy and the sample objects of docs/performance.md (a GPU RayJob with 3
PodSets, a PyTorchJob, a batch Job, and a RayJob asking for more GPUs than any flavor offers: the denial
path), then, in trees that review UPDATE, ``validate(new, namespace, "UPDATE", old)`` for three edits of the GPU
RayJob: an annotation (no accounting), a ``suspend`` flip (both objects accounted, unchanged) and one more worker
per group (accounted, then judged as a CREATE). Each tree is measured in its own subprocess (its own imports), one after the other, in one run (``--rounds``
alternates them several times); the figure is the minimum over repeats of the mean per call, and the median is
printed beside it.

    .venv/bin/python benchmarks/webhook_decision_bench.py                    # this tree only
    .venv/bin/python benchmarks/webhook_decision_bench.py --baseline 7581f8a # also a commit, same run
    .venv/bin/python benchmarks/webhook_decision_bench.py --baseline 7581f8a --baseline 492c26c
    .venv/bin/python benchmarks/webhook_decision_bench.py --baseline 7581f8a --compiled   # + mypyc (the image)

``--baseline`` checks the commit out into a temporary ``git worktree`` (removed afterwards).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

# Runs inside the measured tree (PYTHONPATH = that tree): prints {label: [µs per call per repeat]}.
_MEASURE = r"""
import copy, json, sys, time
from pathlib import Path
import yaml
try:
    from batchplane.stack import load_stack_file
except ImportError:  # trees before the #15 layout
    from batchplane.config import load_stack_file
from batchplane.webhook.decisions import Decider
try:
    from batchplane.components.quota_webhook.policy import render_policy
except ImportError:  # trees before the webhook left the stack (#21 layout)
    from batchplane.webhook.policy import render_policy
samples = Path(sys.argv[1])
policy = render_policy(load_stack_file(Path(sys.argv[4])))
decider = Decider(policy)
def load(rel):
    return next(d for d in yaml.safe_load_all((samples / rel).read_text()) if d)
def labeled(obj):
    obj = copy.deepcopy(obj)
    obj.setdefault("metadata", {})["namespace"] = "default"
    obj["metadata"].setdefault("labels", {})["kueue.x-k8s.io/queue-name"] = "user-queue"
    return obj
rayjob = labeled(load("kuberay/ray-job.pytorch-image-classifier.yaml"))
greedy = copy.deepcopy(rayjob)
for group in greedy["spec"]["rayClusterSpec"].get("workerGroupSpecs", []):
    for c in group["template"]["spec"]["containers"]:
        c.setdefault("resources", {}).setdefault("requests", {})["nvidia.com/gpu"] = "64"
        c["resources"].setdefault("limits", {})["nvidia.com/gpu"] = "64"
cases = {
    "gpu-rayjob": rayjob,
    "pytorchjob": labeled(load("training-operator/pytorch_job_mnist_nccl.yaml")),
    "job": labeled(load("kueue/sample-job.yaml")),
    "denied-rayjob": greedy,
}
# UPDATE reviews (trees whose Decider.validate takes the old object): (old, new) pairs of the GPU RayJob
import inspect
updates = {}
if "old" in inspect.signature(Decider.validate).parameters:
    annotated = copy.deepcopy(rayjob)
    annotated["metadata"].setdefault("annotations", {})["owner"] = "alice"
    unsuspended = copy.deepcopy(rayjob)
    unsuspended["spec"]["suspend"] = not rayjob["spec"].get("suspend", False)
    grown = copy.deepcopy(rayjob)
    for group in grown["spec"]["rayClusterSpec"].get("workerGroupSpecs", []):
        group["replicas"] = group.get("replicas", 1) + 1
    updates = {
        "update-annotation": (rayjob, annotated),
        "update-suspend": (rayjob, unsuspended),
        "update-grown": (rayjob, grown),
    }
n, repeats = int(sys.argv[2]), int(sys.argv[3])
out = {}
import batchplane.webhook.decisions as _d
out["_module"] = _d.__file__
calls = {label: (obj, "CREATE", None) for label, obj in cases.items()}
calls.update({label: (new, "UPDATE", old) for label, (old, new) in updates.items()})
for label, (obj, operation, old) in calls.items():
    args = (obj, "default", operation) if old is None else (obj, "default", operation, old)
    decision = decider.validate(*args)
    runs = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(n):
            decider.validate(*args)
        runs.append((time.perf_counter() - start) / n * 1e6)
    out[label] = {"us": runs, "allowed": decision.allowed, "reason": decision.reason}
print(json.dumps(out))
"""


def measure(tree: Path, n: int, repeats: int, package: Path | None = None) -> dict[str, dict[str, object]]:
    """Run the loop with ``tree``'s gke-dws stack, importing batchplane from ``package`` (default: ``tree``)."""
    samples = (REPO / ".." / "shared" / "samples").resolve()
    # templates/ since issue #30; a tree from before keeps its templates in stacks/
    folder = "templates" if (tree / "templates" / "Pulumi.gke-dws.yaml").is_file() else "stacks"
    stack = tree / folder / "Pulumi.gke-dws.yaml"
    done = subprocess.run(
        [sys.executable, "-c", _MEASURE, str(samples), str(n), str(repeats), str(stack)],
        cwd=package or tree,  # `python -c` puts the working directory first on sys.path
        env={"PYTHONPATH": str(package or tree), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, dict[str, object]] = json.loads(done.stdout)
    return result


def _merge(
    results: dict[str, dict[str, dict[str, object]]], name: str, result: dict[str, dict[str, object]]
) -> None:
    """Add one round's repeats of tree ``name`` to ``results``."""
    if name not in results:
        results[name] = result
        return
    for label, value in result.items():
        if isinstance(value, dict):
            runs = results[name][label]["us"]
            assert isinstance(runs, list) and isinstance(value["us"], list)
            runs += value["us"]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--baseline", action="append", default=[], help="a commit to measure in the same run (repeatable)"
    )
    parser.add_argument(
        "--compiled",
        action="store_true",
        help="also each tree compiled with mypyc (by its own compile script, when it has one), same run",
    )
    parser.add_argument("-n", type=int, default=2000, help="calls per repeat (default 2000)")
    parser.add_argument("--repeats", type=int, default=5, help="repeats per tree and round (default 5)")
    parser.add_argument(
        "--rounds", type=int, default=1, help="rounds, each measuring every tree in turn (default 1)"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        trees: dict[str, Path] = {}
        for commit in args.baseline:
            base = Path(tmp) / f"baseline-{commit}"
            subprocess.run(
                ["git", "worktree", "add", "-q", "--detach", str(base), commit], cwd=REPO, check=True
            )
            trees[f"baseline {commit}"] = base
        trees["this tree"] = REPO
        try:
            to_run: dict[str, tuple[Path, Path | None]] = {name: (tree, None) for name, tree in trees.items()}
            if args.compiled:  # every tree that has webhook/compile.py, compiled by its own script
                for name, tree in trees.items():
                    out = Path(tmp) / f"compiled-{len(to_run)}"
                    if (tree / "batchplane" / "webhook" / "compile.py").exists():  # the #21 layout
                        command = [sys.executable, "-m", "batchplane.webhook.compile", "--out", str(out)]
                    elif (tree / "webhook" / "compile.py").exists():
                        command = [sys.executable, str(tree / "webhook" / "compile.py"), "--out", str(out)]
                    else:
                        continue
                    subprocess.run(command, cwd=tree, env={**os.environ, "PYTHONPATH": str(tree)}, check=True)
                    to_run[f"{name}, compiled"] = (tree, out)
            # Rounds alternate the trees, so a load spike on a shared machine hits each of them alike.
            results: dict[str, dict[str, dict[str, object]]] = {}
            for _ in range(args.rounds):
                for name, (tree, package) in to_run.items():
                    _merge(results, name, measure(tree, args.n, args.repeats, package=package))
        finally:
            for tree in trees.values():
                if tree != REPO:
                    subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=REPO, check=False)
    for name, result in results.items():  # which decisions module each tree ran (.py, or mypyc's extension)
        print(f"{name}: {result.pop('_module')}")
    labels = list(dict.fromkeys(label for result in results.values() for label in result))
    print(f"{'review':18} " + " ".join(f"{name:>34}" for name in results))
    for label in labels:
        cells = []
        for result in results.values():
            if label not in result:  # a tree without UPDATE reviews
                cells.append("—")
                continue
            runs = result[label]["us"]
            assert isinstance(runs, list)
            outcome = "allowed" if result[label]["allowed"] else f"denied:{result[label]['reason']}"
            cells.append(f"{min(runs):7.1f} µs (median {statistics.median(runs):6.1f}) {outcome:>8}")
        print(f"{label:18} " + " ".join(f"{c:>34}" for c in cells))


if __name__ == "__main__":
    main()
