"""GPU capacity on the ``openshift`` target: GPU MachineSets the Cluster Autoscaler scales from zero.

``target.gpuPools`` is the OpenShift counterpart of the GKE GPU pools (:mod:`batchplane.targets.gke.config`).
Each pool becomes a ``machine.openshift.io/v1beta1`` MachineSet in ``openshift-machine-api`` and a
``MachineAutoscaler`` (``autoscaling.openshift.io/v1beta1``, min/max replicas), and
``target.clusterAutoscaler`` the cluster-wide ``ClusterAutoscaler`` ``default``
(``autoscaling.openshift.io/v1``) whose ``resourceLimits.gpus`` covers every pool. Shapes follow the
OpenShift docs ("Creating a compute machine set on AWS", "Applying autoscaling to a cluster",
"Labeling GPU machine sets for the cluster autoscaler") and the CRDs of
``openshift/cluster-autoscaler-operator`` (``install/01_clusterautoscaler.crd.yaml``).

A pool's MachineSet comes either from platform settings (``aws``: instance type, AMI, zone, subnet
and security-group filters, IAM instance profile, with the cluster's infrastructure ID) or from a
``template`` (a MachineSet YAML file, e.g. ``oc get machineset <name> -n openshift-machine-api -o
yaml``, or an inline ``providerSpec.value``), which is how Azure, GCP, vSphere and other platforms
are supported ("template only"). Rules live in :func:`batchplane.targets.openshift.machines.check_gpu_capacity`.

ProvisioningRequest support in OpenShift's Cluster Autoscaler (docs/openshift.md): the
``provisioningrequests.autoscaling.x-k8s.io`` CRD and the autoscaler's
``--enable-provisioning-requests`` flag ship from OpenShift 4.21 (:data:`PROVISIONING_MIN_OPENSHIFT`; designed in
openshift/enhancements ``enhancements/autoscaling/provisioning-request-enablement.md``), behind the
``ProvisioningRequestAvailable`` feature gate, which openshift/api enables in the
``DevPreviewNoUpgrade`` feature set only.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field

from batchplane.config.base import ConfigModel, DnsLabel, DnsSubdomain, LabelValue, QualifiedName
from batchplane.config.kueue import RetryStrategy, Taint

ATOMIC_SCALE_UP_CLASS = "best-effort-atomic-scale-up.autoscaling.x-k8s.io"
"""The upstream Cluster Autoscaler class that scales a node group up for the whole request or not at
all (kubernetes/autoscaler ``FAQ.md``, "supported from Cluster Autoscaler version 1.30.2")."""

CHECK_CAPACITY_CLASS = "check-capacity.autoscaling.x-k8s.io"
"""The upstream Cluster Autoscaler class that only checks that the request fits existing nodes."""

PROVISIONING_MIN_OPENSHIFT = "4.21"
"""The first OpenShift release whose Cluster Autoscaler Operator ships the ProvisioningRequest CRD and
starts the autoscaler with ``--enable-provisioning-requests``: openshift/cluster-autoscaler-operator branch
``release-4.21`` (at dec12ba632a4810b4ff43a9172f462a1dd291e44) is the first release branch with
``install/11_provisioningrequest.crd.yaml`` and the flag (``pkg/controller/clusterautoscaler/clusterautoscaler.go``
L26-L27, L87, L228), https://github.com/openshift/cluster-autoscaler-operator/tree/release-4.21; ``release-4.20``
has neither, and openshift/api registers the ``ProvisioningRequestAvailable`` gate from ``release-4.21`` on. (The
enhancement, provisioning-request-enablement.md, planned 4.19.0; the release branches are what shipped.)"""

PROVISIONING_FEATURE_GATE = "ProvisioningRequestAvailable"
"""The OpenShift feature gate of the ProvisioningRequest CRD (openshift/api ``features/features.go``;
the CRD in openshift/cluster-autoscaler-operator ``install/11_provisioningrequest.crd.yaml`` carries
``feature-gate.release.openshift.io/ProvisioningRequestAvailable``)."""

PROVISIONING_FEATURE_SETS: tuple[str, ...] = ("DevPreviewNoUpgrade", "CustomNoUpgrade")
"""Cluster feature sets that enable :data:`PROVISIONING_FEATURE_GATE`: openshift/api enables it in
``DevPreviewNoUpgrade`` only; ``CustomNoUpgrade`` can list it in ``customNoUpgrade.enabled``."""

PROVISIONING_FEATURE_SETS_READ_THROUGH = "5.2"
"""The last OpenShift release whose openshift/api branch was read for :data:`PROVISIONING_FEATURE_SETS`:
``features/features.go`` registers ``ProvisioningRequestAvailable`` enabled in ``DevPreviewNoUpgrade`` only on every
branch from ``release-4.21`` (1cb630ce, ``enableIn(configv1.DevPreviewNoUpgrade)``) through ``release-4.22``
(9fda5179), ``release-5.0`` (e543cc50), ``release-5.1`` and ``release-5.2`` (2a3d7391, as ``master``:
``enable(inDevPreviewNoUpgrade())``), https://github.com/openshift/api/tree/release-5.2. For a later release, or an
unknown one, another feature set is only a warning: the deploy-time ``feature-gate`` gate and ``preflight`` read
the cluster's own FeatureGate status, which is what decides."""

FeatureSet = Literal["Default", "TechPreviewNoUpgrade", "DevPreviewNoUpgrade", "CustomNoUpgrade"]
PoolProvisioning = Literal["atomic", "check-capacity", "none"]
MergePolicy = Literal["IdenticalPodTemplates", "IdenticalWorkloadSchedulingRequirements"]

_OPENSHIFT_VERSION_RE = re.compile(r"^(\d+)\.(\d+)(?:\.(\d+))?$")
_DURATION = r"^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$"


def _openshift_version(value: str) -> str:
    if parse_openshift_version(value) is None:
        raise ValueError(f'"{value}" is not an OpenShift 4 or later version (e.g. 4.21, 4.21.3 or 5.0)')
    return value


OpenShiftVersion = Annotated[str, AfterValidator(_openshift_version)]
"""An OpenShift version or minor, 4 or later: ``4.21``, ``4.21.2``, ``5.0`` (openshift/api has ``release-5.*``
branches beside ``release-4.*``)."""

Duration = Annotated[str, Field(pattern=_DURATION)]
"""A Go duration as the ClusterAutoscaler CRD takes it: ``10m``, ``30s``, ``1h30m``."""

NonNegative = Annotated[int, Field(ge=0, le=2**31 - 1, strict=True)]


def parse_openshift_version(text: str) -> tuple[int, int, int] | None:
    """``"4.21"`` → ``(4, 21, 0)``; ``"5.0.3"`` → ``(5, 0, 3)``; None when not ``<major>.<minor>[.<patch>]`` with a
    major of 4 or later (OpenShift 3 is another product)."""
    match = _OPENSHIFT_VERSION_RE.match(text)
    if match is None or int(match.group(1)) < 4:
        return None
    return int(match.group(1)), int(match.group(2)), int(match.group(3) or 0)


class Accelerator(ConfigModel):
    """The GPUs of each machine of a pool."""

    type: Annotated[
        str, Field(min_length=1, max_length=63, pattern=r"^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")
    ]
    """Required. GPU type label: the MachineSet's ``cluster-api/accelerator`` label value and the
    ClusterAutoscaler ``resourceLimits.gpus[].type``, e.g. ``nvidia-a10g``, ``nvidia-t4``."""
    count: Annotated[int, Field(ge=1, le=16, strict=True)]
    """Required. GPUs per machine."""


class RootVolume(ConfigModel):
    """The root EBS volume of each machine (``providerSpec.value.blockDevices[0].ebs``)."""

    size_gib: Annotated[int, Field(ge=16, le=16384, strict=True)] = Field(default=120, alias="sizeGiB")
    """Volume size, GiB (``volumeSize``). Defaults to 120, as OpenShift's installer-made MachineSets."""
    type: Literal["gp2", "gp3", "io1", "io2"] = "gp3"
    """EBS volume type (``volumeType``). Defaults to ``gp3``."""
    encrypted: bool = True
    """Encrypt the volume (``encrypted``). Defaults to true."""


class AwsMachine(ConfigModel):
    """An AWS GPU MachineSet (``AWSMachineProviderConfig``, apiVersion ``machine.openshift.io/v1beta1``).

    As OpenShift's docs do it ("Creating a compute machine set on AWS": "copy an existing compute machine set"), at
    deploy time the stack reads a worker MachineSet of the cluster in ``zone`` (namespace ``openshift-machine-api``)
    and copies its ``providerSpec`` — AMI, subnet, security groups, IAM instance profile, block devices, tags,
    credentials and user-data secrets, metadata options — changing only ``instanceType`` (and the placement); the
    MachineSet's name, labels, taints and replicas are the pool's. Each field set here wins over the copied one.
    Installer-derived names are never guessed: the Cluster API-based installer of OpenShift 4.19+ names subnets
    ``<infra>-subnet-private-<zone>`` (https://github.com/openshift/installer ``pkg/asset/manifests/aws/zones.go``
    ``setSubnetsManagedVPC``, commit 006d45739349) and security groups ``<infra>-node``/``<infra>-lb``, the older
    installer ``<infra>-private-<zone>`` and ``<infra>-worker-sg``. With
    ``ami``, ``subnet``, ``securityGroups`` and ``iamInstanceProfile`` all set nothing is copied."""

    instance_type: Annotated[str, Field(pattern=r"^[a-z][a-z0-9-]*\.[a-z0-9]+$")]
    """Required. EC2 instance type, e.g. ``g5.2xlarge``, ``p4d.24xlarge`` (``instanceType``). GPUs,
    vCPUs and memory of known types come from :data:`batchplane.targets.openshift.aws_instances.INSTANCE_SHAPES`."""
    region: Annotated[str, Field(pattern=r"^[a-z]{2}(-gov)?-[a-z]+-[0-9]$")]
    """Required. AWS region, e.g. ``us-east-1`` (``placement.region``)."""
    zone: Annotated[str, Field(pattern=r"^[a-z]{2}(-gov)?-[a-z]+-[0-9][a-z]$")]
    """Required. Availability zone of the region where the instance type is offered, e.g.
    ``us-east-1a`` (``placement.availabilityZone``); the worker MachineSet copied is one of this zone."""
    source_machine_set: DnsSubdomain | None = None
    """The worker MachineSet (in ``openshift-machine-api``) whose ``providerSpec`` is copied. Defaults to the first,
    by name, of the cluster's worker MachineSets in ``zone`` (``batchplane preflight`` names it)."""
    ami: Annotated[str, Field(pattern=r"^ami-[0-9a-f]{8,17}$")] | None = None
    """The RHCOS AMI ID (``ami.id``). Defaults to the copied MachineSet's."""
    subnet: Annotated[str, Field(min_length=1, max_length=255)] | None = None
    """``tag:Name`` of the subnet (``subnet.filters``). Defaults to the copied MachineSet's subnet."""
    security_groups: Annotated[
        list[Annotated[str, Field(min_length=1, max_length=255)]], Field(max_length=8)
    ] = []
    """``tag:Name`` of each security group (``securityGroups[].filters``). Defaults to the copied MachineSet's."""
    iam_instance_profile: Annotated[str, Field(min_length=1, max_length=128)] | None = None
    """IAM instance profile (``iamInstanceProfile.id``). Defaults to the copied MachineSet's."""
    root_volume: RootVolume | None = None
    """Root volume (``blockDevices[0].ebs``). Defaults to the copied MachineSet's block devices (without a copy:
    120 GiB encrypted gp3)."""
    tags: dict[
        Annotated[str, Field(min_length=1, max_length=128)], Annotated[str, Field(max_length=256)]
    ] = {}
    """Extra AWS tags (``tags``), added to the copied MachineSet's (a tag of the same name is replaced), besides
    ``kubernetes.io/cluster/<infrastructureId>: owned``. Defaults to none."""

    def copies_worker(self) -> bool:
        """Whether the provider spec is copied from a worker MachineSet at deploy time (not every field is given)."""
        return not (self.ami and self.subnet and self.security_groups and self.iam_instance_profile)


class MachineTemplate(ConfigModel):
    """A MachineSet given by the user: a file or an inline ``providerSpec.value``. Batchplane keeps the
    provider spec (and, from a file, the ``machine.openshift.io/cluster-api-cluster`` label) and sets
    name, replicas, labels and taints itself."""

    path: Annotated[str, Field(min_length=1)] | None = None
    """A MachineSet YAML file (``machine.openshift.io/v1beta1``), relative to the Pulumi project
    directory, e.g. the output of ``oc get machineset <name> -n openshift-machine-api -o yaml``."""
    provider_spec: dict[str, Any] | None = None
    """An inline ``spec.template.spec.providerSpec.value`` (``apiVersion``, ``kind`` and the platform's
    fields, e.g. ``AzureMachineProviderSpec`` or ``GCPMachineProviderSpec``)."""


class PoolProvisioningRequest(ConfigModel):
    """How Kueue asks the Cluster Autoscaler for this pool's machines: the generated
    ProvisioningRequestConfig (``kueue.x-k8s.io``)."""

    managed_resources: Annotated[list[QualifiedName], Field(max_length=100)] = ["nvidia.com/gpu"]
    """Only PodSets requesting one of these go into the ProvisioningRequest. Defaults to
    ``[nvidia.com/gpu]``: CPU-only PodSets (a RayJob head) do not scale the GPU pool."""
    parameters: Annotated[dict[str, Annotated[str, Field(max_length=255)]], Field(max_length=100)] = {}
    """ProvisioningRequest parameters, passed through. Defaults to none."""
    retry_strategy: RetryStrategy | None = None
    """Retries of failed ProvisioningRequests. Defaults to Kueue's (3 retries, 60 s base, 1800 s max),
    emitted explicitly."""
    pod_set_merge_policy: MergePolicy | None = None
    """Merge PodSets with identical pod templates or scheduling requirements. Defaults to none: the
    upstream autoscaler accepts several PodSets per request."""


class OpenShiftGpuPool(ConfigModel):
    """One autoscaled GPU MachineSet, its MachineAutoscaler and the Kueue ResourceFlavor derived from it."""

    name: Annotated[DnsLabel, Field(max_length=40)]
    """Required. Pool name (≤ 40 characters). Nodes carry ``batchplane.dev/gpu-pool: <name>``, which the
    derived flavor selects."""
    aws: AwsMachine | None = None
    """Derive the MachineSet from AWS settings. Give ``aws`` or ``template``."""
    template: MachineTemplate | None = None
    """Take the provider spec from a MachineSet file or inline (any platform). Give ``aws`` or ``template``."""
    accelerator: Accelerator | None = None
    """GPUs per machine. Defaults to the instance type's GPUs for known AWS instance types (where, if
    given, it must match); required otherwise."""
    vcpus: Annotated[int, Field(ge=1, le=4096, strict=True)] | None = None
    """vCPUs per machine, for template pools (capacity check, ClusterAutoscaler cores). Defaults to the
    instance type's for known AWS types, else unknown."""
    memory_gib: Annotated[int, Field(ge=1, le=65536, strict=True)] | None = Field(
        default=None, alias="memoryGiB"
    )
    """Memory per machine in GiB, for template pools. Defaults to the instance type's for known AWS
    types, else unknown."""
    min_replicas: Annotated[int, Field(ge=0, le=2**31 - 1, strict=True)] = 0
    """MachineAutoscaler ``minReplicas``. Defaults to 0; must be 0 for ``provisioning: atomic`` pools."""
    max_replicas: Annotated[int, Field(ge=1, le=2**31 - 1, strict=True)]
    """Required. MachineAutoscaler ``maxReplicas``: the most machines of this pool."""
    provisioning: PoolProvisioning = "atomic"
    """How Kueue gates admission on this pool's flavor: ``atomic`` (a ProvisioningRequest of class
    ``best-effort-atomic-scale-up.autoscaling.x-k8s.io``: the autoscaler adds every machine a gang needs
    or none), ``check-capacity`` (class ``check-capacity.autoscaling.x-k8s.io``: admit only when the
    gang fits existing machines; never scales up) or ``none`` (no admission check; pods scale the pool
    as they become pending). Defaults to ``atomic``."""
    provisioning_request: PoolProvisioningRequest | None = None
    """The generated ProvisioningRequestConfig's settings (not with ``provisioning: none``). Defaults to
    ``PoolProvisioningRequest()``."""
    labels: Annotated[dict[QualifiedName, LabelValue], Field(max_length=32)] = {}
    """Extra node labels (``spec.template.spec.metadata.labels``). Defaults to none."""
    taints: Annotated[list[Taint], Field(max_length=16)] = []
    """Extra node taints (``spec.template.spec.taints``). ``nvidia.com/gpu=true:NoSchedule`` is always
    added. The derived flavor tolerates all of them. Defaults to none."""
    flavor_name: DnsSubdomain | None = None
    """Name of the derived ResourceFlavor. Defaults to the pool name. A hand-written flavor with this
    name, or whose nodeLabels select this pool, is used instead (and checked)."""
    machine_set_name: DnsLabel | None = None
    """MachineSet (and MachineAutoscaler) name. Defaults to ``<infrastructureId>-<name>``."""

    def resolved_flavor_name(self) -> str:
        """The derived ResourceFlavor's name (``flavorName`` or the pool name)."""
        return self.flavor_name or self.name


class ResourceRange(ConfigModel):
    """A min/max pair of the ClusterAutoscaler ``resourceLimits`` (both required by the CRD)."""

    min: NonNegative = 0
    """Minimum. Defaults to 0."""
    max: NonNegative
    """Required. Maximum."""


class Baseline(ConfigModel):
    """The most the cluster's other machines (control plane, workers, MachineSets Batchplane does not
    manage, at their maxima) add up to. The ClusterAutoscaler limits count every node of the cluster, so
    derived limits are this baseline plus every GPU pool at its maximum."""

    nodes: NonNegative
    """Required. Nodes."""
    cores: NonNegative
    """Required. CPU cores."""
    memory_gib: NonNegative = Field(alias="memoryGiB")
    """Required. Memory, GiB."""


class ScaleDown(ConfigModel):
    """``spec.scaleDown`` of the ClusterAutoscaler."""

    enabled: bool = True
    """Scale down unneeded nodes (a pool scales back to zero only with this). Defaults to true."""
    delay_after_add: Duration | None = None
    """``delayAfterAdd``. Defaults to the autoscaler's (10m)."""
    delay_after_delete: Duration | None = None
    """``delayAfterDelete``. Defaults to the autoscaler's (the scan interval)."""
    delay_after_failure: Duration | None = None
    """``delayAfterFailure``. Defaults to the autoscaler's (3m)."""
    unneeded_time: Duration | None = None
    """``unneededTime``: how long a node must be unneeded before removal. Defaults to the autoscaler's (10m)."""


class ClusterAutoscalerSettings(ConfigModel):
    """The cluster-wide ``ClusterAutoscaler`` named ``default`` (``autoscaling.openshift.io/v1``; the
    Cluster Autoscaler Operator only acts on that name). Declared when the stack has GPU pools."""

    create: bool = True
    """Declare the ClusterAutoscaler. ``false`` when the cluster admin owns it: it must then list every
    pool's GPU type in ``resourceLimits.gpus`` (a warning says which). Defaults to true. An existing
    ``default`` is adopted and overwritten (the OpenShift provider upserts)."""
    baseline: Baseline | None = None
    """The cluster's other machines, to derive ``maxNodesTotal`` and the cores/memory limits (baseline +
    every GPU pool at its maximum). Defaults to none: those limits are only emitted when given below."""
    max_nodes_total: NonNegative | None = None
    """``resourceLimits.maxNodesTotal``. Defaults to derived from ``baseline`` (else unlimited); must
    cover every GPU pool at its maximum."""
    cores: ResourceRange | None = None
    """``resourceLimits.cores``. Defaults to derived from ``baseline``; ``max`` must cover every GPU
    pool's vCPUs at its maximum."""
    memory_gib: ResourceRange | None = Field(default=None, alias="memoryGiB")
    """``resourceLimits.memory`` in GiB. Defaults to derived from ``baseline``; ``max`` must cover every
    GPU pool's memory at its maximum."""
    pod_priority_threshold: Annotated[int, Field(ge=-(2**31), le=2**31 - 1, strict=True)] | None = None
    """``podPriorityThreshold``: pods below this priority never trigger scale-up. Defaults to the
    autoscaler's (-10)."""
    balance_similar_node_groups: bool | None = None
    """``balanceSimilarNodeGroups``. Defaults to the autoscaler's (false)."""
    max_node_provision_time: Duration | None = None
    """``maxNodeProvisionTime``: how long the autoscaler waits for a machine to become a node. Defaults
    to the autoscaler's (15m); GPU machines with driver installs may need more."""
    scale_down: ScaleDown = ScaleDown()
    """``scaleDown``. Defaults to enabled with the autoscaler's delays."""
