"""Kubeflow Trainer's built-in ClusterTrainingRuntimes, as Kueue accounts them, and the ones a stack installs.

The ``kubeflow-trainer`` chart installs its built-in runtimes (``torch-distributed``, ``deepspeed-distributed`` …)
only when its values enable them (``runtimes.defaultEnabled`` or ``runtimes.<runtime>.enabled``, all ``false`` by
default: https://github.com/kubeflow/trainer/blob/v2.3.0/charts/kubeflow-trainer/values.yaml and
``templates/runtimes/_runtimes.tpl``). :data:`BUILTIN_RUNTIMES` transcribes, per Trainer tag, what of each runtime in
https://github.com/kubeflow/trainer/tree/v2.3.0/manifests/base/runtimes (commit
658725bdae5c7e3a0854d93ac6ff492e109a22ab) decides a TrainJob's PodSets: the name, the ``mlPolicy``, and per
replicated job its name, its ``trainjob-ancestor-step`` label and its containers' resources. Images, commands,
volumes and security contexts are left out: Kueue's accounting does not read them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from batchplane.frameworks.trainjob import TRAINJOB_ANCESTOR_LABEL

#: The Trainer release the runtimes below were read from, and its commit.
SOURCE = "https://github.com/kubeflow/trainer/tree/v2.3.0/manifests/base/runtimes"
SOURCE_COMMIT = "658725bdae5c7e3a0854d93ac6ff492e109a22ab"


@dataclass(frozen=True)
class ReplicatedJob:
    """One ``spec.template.spec.replicatedJobs[]`` entry: its name, its ancestor step (``None``: no label), and its
    containers as ``(name, resources)`` pairs in the runtime's order."""

    name: str
    ancestor: str | None
    containers: tuple[tuple[str, Mapping[str, Any]], ...]


@dataclass(frozen=True)
class BuiltinRuntime:
    """One built-in ClusterTrainingRuntime: its name, ``framework`` label, ``spec.mlPolicy`` and replicated jobs."""

    name: str
    framework: str
    ml_policy: Mapping[str, Any]
    replicated_jobs: tuple[ReplicatedJob, ...]

    def to_object(self) -> dict[str, Any]:
        """The ClusterTrainingRuntime (``trainer.kubeflow.org/v1alpha1``) as far as it is transcribed."""
        jobs = []
        for job in self.replicated_jobs:
            template: dict[str, Any] = {
                "spec": {
                    "template": {
                        "spec": {
                            "containers": [
                                {"name": name, **({"resources": dict(res)} if res else {})}
                                for name, res in job.containers
                            ]
                        }
                    }
                }
            }
            if job.ancestor is not None:
                template["metadata"] = {"labels": {TRAINJOB_ANCESTOR_LABEL: job.ancestor}}
            jobs.append({"name": job.name, "template": template})
        return {
            "apiVersion": "trainer.kubeflow.org/v1alpha1",
            "kind": "ClusterTrainingRuntime",
            "metadata": {"name": self.name, "labels": {"trainer.kubeflow.org/framework": self.framework}},
            "spec": {"mlPolicy": dict(self.ml_policy), "template": {"spec": {"replicatedJobs": jobs}}},
        }


def _single_node(framework: str, policy: str) -> BuiltinRuntime:
    return BuiltinRuntime(
        f"{framework}-distributed",
        framework,
        {"numNodes": 1, policy: {}},
        (ReplicatedJob("node", "trainer", (("node", {}),)),),
    )


def _mpi(framework: str) -> BuiltinRuntime:
    # runLauncherAsNode: the launcher is one of the nodes (mpi_distributed manifests at v2.3.0).
    policy = {
        "numNodes": 1,
        "mpi": {
            "numProcPerNode": 1,
            "mpiImplementation": "OpenMPI",
            "sshAuthMountPath": "/home/mpiuser/.ssh",
            "runLauncherAsNode": True,
        },
    }
    return BuiltinRuntime(
        f"{framework}-distributed",
        framework,
        policy,
        (ReplicatedJob("node", None, (("node", {}),)), ReplicatedJob("launcher", "trainer", (("node", {}),))),
    )


def _torchtune(name: str) -> BuiltinRuntime:
    return BuiltinRuntime(
        name,
        "torchtune",
        {"numNodes": 1, "torch": {}},
        (
            ReplicatedJob("dataset-initializer", "dataset-initializer", (("dataset-initializer", {}),)),
            ReplicatedJob("model-initializer", "model-initializer", (("model-initializer", {}),)),
            ReplicatedJob("node", "trainer", (("node", {"limits": {"nvidia.com/gpu": 2}}),)),
        ),
    )


#: Trainer version → chart value path (``_runtimes.tpl``) → the runtime it installs.
BUILTIN_RUNTIMES: dict[str, dict[tuple[str, ...], BuiltinRuntime]] = {
    "2.3.0": {
        ("torchDistributed",): _single_node("torch", "torch"),
        ("deepspeedDistributed",): _mpi("deepspeed"),
        ("mlxDistributed",): _mpi("mlx"),
        ("jaxDistributed",): _single_node("jax", "jax"),
        ("xgboostDistributed",): _single_node("xgboost", "xgboost"),
        ("torchtuneDistributed", "llama3_2_1B"): _torchtune("torchtune-llama3.2-1b"),
        ("torchtuneDistributed", "llama3_2_3B"): _torchtune("torchtune-llama3.2-3b"),
        ("torchtuneDistributed", "qwen2_5_1_5B"): _torchtune("torchtune-qwen2.5-1.5b"),
    }
}


def bundled_runtimes(version: str) -> dict[str, dict[str, Any]]:
    """Every built-in runtime of Trainer ``version`` (``2.3.0``): runtime name → the ClusterTrainingRuntime.

    Raises:
        KeyError: no runtimes are transcribed for ``version``.
    """
    if version not in BUILTIN_RUNTIMES:
        raise KeyError(f"no Kubeflow Trainer runtimes transcribed for v{version}")
    return {runtime.name: runtime.to_object() for runtime in BUILTIN_RUNTIMES[version].values()}


def _enabled(values: Mapping[str, Any], path: tuple[str, ...]) -> bool:
    node: Any = values.get("runtimes")
    for key in path:
        node = node.get(key) if isinstance(node, Mapping) else None
    return isinstance(node, Mapping) and node.get("enabled") is True


def installed_builtin_runtimes(version: str | None, values: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The built-in ClusterTrainingRuntimes the ``kubeflow-trainer`` chart ``version`` installs with Helm ``values``
    (the stack's ``operators.training.values``): all with ``runtimes.defaultEnabled``, else each one whose
    ``runtimes.<name>.enabled`` is true; none when ``version`` is ``None`` (Trainer not installed) or untranscribed."""
    if version is None or version not in BUILTIN_RUNTIMES:
        return []
    runtimes = values.get("runtimes")
    every = isinstance(runtimes, Mapping) and runtimes.get("defaultEnabled") is True
    return [
        runtime.to_object()
        for path, runtime in BUILTIN_RUNTIMES[version].items()
        if every or _enabled(values, path)
    ]


def stack_builtin_runtimes(stack: Any) -> list[dict[str, Any]]:
    """:func:`installed_builtin_runtimes` of a loaded stack (:class:`batchplane.stack.model.Stack`): its
    ``operators.training`` when that installs Trainer v2, else none."""
    operators = stack.config.operators
    training = operators.training if operators is not None else None
    if training is None or training.kind != "trainer-v2":
        return []
    return installed_builtin_runtimes(training.resolved_version(), training.values)
