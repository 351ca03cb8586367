"""Well-known Kubernetes and Kueue names: labels, annotations, controller names, built-in namespaces.

One home for each (house style: named constants in one module, like Kueue's ``defaults.go``). This
module imports nothing, so every layer can use it, and the policy pack imports it too (the pack runs with the
``batchplane`` core package installed: ``policies/requirements.txt`` installs ``-e ..``). A test holds each value here
to one definition (tests/project/test_facts_once.py).
"""

NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"
"""Label the API server sets on every namespace to its own name (Kubernetes ≥ 1.22)."""

QUEUE_NAME_LABEL = "kueue.x-k8s.io/queue-name"
"""Label that names a job's LocalQueue (Kueue ``pkg/controller/constants/constants.go``)."""

PRIORITY_CLASS_LABEL = "kueue.x-k8s.io/priority-class"
"""Label that names a job's WorkloadPriorityClass (Kueue ``constants.go``)."""

DEFAULT_QUEUE_ANNOTATION = "kueue.x-k8s.io/default-queue"
"""Marks a namespace's default LocalQueue (OpenShift AI / CodeFlare SDK convention; Kueue ignores it)."""

PROVISIONING_CONTROLLER = "kueue.x-k8s.io/provisioning-request"
"""controllerName of Kueue's built-in ProvisioningRequest admission check
(``apis/kueue/v1beta2/provisioningrequestconfig_types.go``)."""

MULTIKUEUE_CONTROLLER = "kueue.x-k8s.io/multikueue"
"""``controllerName`` of MultiKueue's AdmissionCheck (Kueue ``kueue.MultiKueueControllerName``)."""

GKE_NODEPOOL_LABEL = "cloud.google.com/gke-nodepool"
"""Label GKE puts on every node with its node pool's name."""

DEFAULT_GPU_RESOURCES: tuple[str, ...] = ("nvidia.com/gpu", "amd.com/gpu")
"""Extended resources counted as GPUs unless ``batchplane:webhook.gpuResources`` says otherwise: the NVIDIA and AMD
device plugins' names. The webhook's ``maxGpusPerWorkload``, the sentence generator and the policy pack's
``kueue-gpu-quota-within-pool-capacity`` (its ``gpuResources`` default) count these."""

BUILTIN_NAMESPACES = frozenset({"default", "kube-system", "kube-public", "kube-node-lease"})
"""Namespaces every cluster has; a stack never creates them."""

KUEUE_CHART_CRDS: tuple[str, ...] = (
    "admissionchecks.kueue.x-k8s.io",
    "clusterqueues.kueue.x-k8s.io",
    "cohorts.kueue.x-k8s.io",
    "localqueues.kueue.x-k8s.io",
    "multikueueclusters.kueue.x-k8s.io",
    "multikueueconfigs.kueue.x-k8s.io",
    "provisioningrequestconfigs.kueue.x-k8s.io",
    "resourceflavors.kueue.x-k8s.io",
    "topologies.kueue.x-k8s.io",
    "workloadpriorityclasses.kueue.x-k8s.io",
    "workloads.kueue.x-k8s.io",
)
"""The CRDs the Kueue chart ships under ``templates/crd/`` — not ``crds/`` — without ``helm.sh/resource-policy:
keep`` (their annotations are only cert-manager's ``inject-ca-from`` and controller-gen's version,
``charts/kueue/templates/crd/*.yaml`` L24-28 at https://github.com/kubernetes-sigs/kueue/tree/v0.19.2): a
``helm uninstall`` of the release deletes them, and with them every Kueue object."""
