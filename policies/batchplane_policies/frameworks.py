"""Kueue job frameworks (Kueue v0.19.2) as the policy pack needs them.

Generated from the batchplane.frameworks registry by
``python -m batchplane.frameworks policies/batchplane_policies/frameworks.py``; do not edit (a test keeps it equal).
"""

KUEUE_INTEGRATIONS = (
    "batch/job",
    "kubeflow.org/mpijob",
    "ray.io/rayjob",
    "ray.io/rayservice",
    "ray.io/raycluster",
    "jobset.x-k8s.io/jobset",
    "kubeflow.org/paddlejob",
    "kubeflow.org/pytorchjob",
    "kubeflow.org/tfjob",
    "kubeflow.org/xgboostjob",
    "kubeflow.org/jaxjob",
    "trainer.kubeflow.org/trainjob",
    "workload.codeflare.dev/appwrapper",
    "sparkoperator.k8s.io/sparkapplication",
    "pod",
    "deployment",
    "statefulset",
    "leaderworkerset.x-k8s.io/leaderworkerset",
)
"""Every ``integrations.frameworks`` name Kueue accepts."""

KUEUE_CHART_DEFAULT_FRAMEWORKS = (
    "batch/job",
    "kubeflow.org/mpijob",
    "ray.io/rayjob",
    "ray.io/rayservice",
    "ray.io/raycluster",
    "jobset.x-k8s.io/jobset",
    "trainer.kubeflow.org/trainjob",
    "workload.codeflare.dev/appwrapper",
    "pod",
    "deployment",
    "statefulset",
    "leaderworkerset.x-k8s.io/leaderworkerset",
)
"""``integrations.frameworks`` of the Kueue chart's default Configuration (``charts/kueue/values.yaml``)."""

MULTIKUEUE_DISPATCHED = (
    "batch/job",
    "kubeflow.org/mpijob",
    "ray.io/rayjob",
    "ray.io/rayservice",
    "ray.io/raycluster",
    "jobset.x-k8s.io/jobset",
    "kubeflow.org/paddlejob",
    "kubeflow.org/pytorchjob",
    "kubeflow.org/tfjob",
    "kubeflow.org/xgboostjob",
    "kubeflow.org/jaxjob",
    "trainer.kubeflow.org/trainjob",
    "workload.codeflare.dev/appwrapper",
    "pod",
    "deployment",
    "statefulset",
    "leaderworkerset.x-k8s.io/leaderworkerset",
)
"""Integrations MultiKueue dispatches to workers; the others never leave the manager."""

RHBOK_NAME_OF_INTEGRATION = {
    "batch/job": "BatchJob",
    "kubeflow.org/mpijob": "MPIJob",
    "ray.io/rayjob": "RayJob",
    "ray.io/rayservice": "RayService",
    "ray.io/raycluster": "RayCluster",
    "jobset.x-k8s.io/jobset": "JobSet",
    "kubeflow.org/paddlejob": "PaddleJob",
    "kubeflow.org/pytorchjob": "PyTorchJob",
    "kubeflow.org/tfjob": "TFJob",
    "kubeflow.org/xgboostjob": "XGBoostJob",
    "kubeflow.org/jaxjob": "JaxJob",
    "trainer.kubeflow.org/trainjob": "TrainJob",
    "workload.codeflare.dev/appwrapper": "AppWrapper",
    "sparkoperator.k8s.io/sparkapplication": "SparkApplication",
    "pod": "Pod",
    "deployment": "Deployment",
    "statefulset": "StatefulSet",
    "leaderworkerset.x-k8s.io/leaderworkerset": "LeaderWorkerSet",
}
"""Kueue integration → its name in the Red Hat build of Kueue's ``Kueue`` CR."""
