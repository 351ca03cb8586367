"""Small workloads of every framework the stacks enable, for the explain tests."""

from __future__ import annotations

import copy
from typing import Any

DEFAULT_FRAMEWORKS = (
    "batch/job",
    "ray.io/rayjob",
    "ray.io/raycluster",
    "kubeflow.org/pytorchjob",
    "workload.codeflare.dev/appwrapper",
)
"""What a stack that does not install Kueue (OpenShift AI) is tested with: Red Hat's default integrations."""


def pod(requests: dict[str, str], name: str = "main") -> dict[str, Any]:
    limits = {k: v for k, v in requests.items() if k.endswith("/gpu")}
    resources: dict[str, Any] = {"requests": dict(requests)}
    if limits:
        resources["limits"] = limits
    return {
        "spec": {
            "restartPolicy": "Never",
            "containers": [{"name": name, "image": "busybox:1.36", "resources": resources}],
        }
    }


def _meta(kind: str, namespace: str, queue: str) -> dict[str, Any]:
    return {
        "name": f"{kind.lower()}-x",
        "namespace": namespace,
        "labels": {"kueue.x-k8s.io/queue-name": queue},
    }


def workload(framework: str, namespace: str, queue: str, requests: dict[str, str]) -> dict[str, Any]:
    """One workload of ``framework`` whose every pod requests ``requests`` (one pod per PodSet)."""
    template = pod(requests)
    # fmt: off
    if framework == "batch/job":
        return {"apiVersion": "batch/v1", "kind": "Job", "metadata": _meta("Job", namespace, queue),
                "spec": {"parallelism": 1, "completions": 1, "template": template}}
    if framework in ("ray.io/rayjob", "ray.io/raycluster", "ray.io/rayservice"):
        cluster = {
            "headGroupSpec": {"rayStartParams": {}, "template": copy.deepcopy(template)},
            "workerGroupSpecs": [{"groupName": "workers", "replicas": 1, "minReplicas": 1, "maxReplicas": 1,
                                  "rayStartParams": {}, "template": copy.deepcopy(template)}],
        }
        for part in (cluster["headGroupSpec"], cluster["workerGroupSpecs"][0]):
            part["template"]["spec"].pop("restartPolicy")
        if framework == "ray.io/rayjob":
            return {"apiVersion": "ray.io/v1", "kind": "RayJob", "metadata": _meta("RayJob", namespace, queue),
                    "spec": {"entrypoint": "python x.py", "shutdownAfterJobFinishes": True,
                             "submissionMode": "HTTPMode", "rayClusterSpec": cluster}}
        if framework == "ray.io/raycluster":
            return {"apiVersion": "ray.io/v1", "kind": "RayCluster",
                    "metadata": _meta("RayCluster", namespace, queue), "spec": cluster}
        return {"apiVersion": "ray.io/v1", "kind": "RayService", "metadata": _meta("RayService", namespace, queue),
                "spec": {"rayClusterConfig": cluster}}
    if framework == "jobset.x-k8s.io/jobset":
        return {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
                "metadata": _meta("JobSet", namespace, queue),
                "spec": {"replicatedJobs": [{"name": "workers", "replicas": 1, "template": {
                    "spec": {"parallelism": 1, "completions": 1, "template": template}}}]}}
    if framework == "kubeflow.org/pytorchjob":
        return {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob",
                "metadata": _meta("PyTorchJob", namespace, queue),
                "spec": {"pytorchReplicaSpecs": {"Master": {"replicas": 1, "template": template}}}}
    if framework == "workload.codeflare.dev/appwrapper":
        return {"apiVersion": "workload.codeflare.dev/v1beta2", "kind": "AppWrapper",
                "metadata": _meta("AppWrapper", namespace, queue),
                "spec": {"components": [{"template": {"apiVersion": "batch/v1", "kind": "Job",
                                                       "metadata": {"name": "inner"},
                                                       "spec": {"template": template}}}]}}
    if framework == "trainer.kubeflow.org/trainjob":
        return {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
                "metadata": _meta("TrainJob", namespace, queue),
                "spec": {"runtimeRef": {"name": "torch-distributed"},
                         "trainer": {"numNodes": 1, "resourcesPerNode": {"requests": dict(requests)}}}}
    # fmt: on
    raise ValueError(framework)
