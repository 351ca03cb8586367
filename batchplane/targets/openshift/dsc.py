"""The whole DataScienceCluster: every component of the DSC CRD, per API version, with its settings.

Fields, enums and create-time CEL rules mirror the CRDs of opendatahub-io/opendatahub-operator v2.35.0
(``datasciencecluster.opendatahub.io/v1``, the newest 2.x line) and Red Hat OpenShift AI 3.5
(red-hat-data-services/RHOAI-Build-Config ``rhoai-3.5`` ``bundle/manifests``, ``datasciencecluster.opendatahub.io/v2``).
Transition rules (``oldSelf``: ``workbenchNamespace`` and ``registriesNamespace`` immutable, ``modelsAsService``
never re-enabled) cannot fail on a first create and are left to the API server. ``devFlags`` (manifest
overrides for operator development) are not offered.

Defaults are RHOAI's own sample DataScienceCluster of each release, plus what distributed workloads need:

* 2.x (v1): red-hat-data-services/rhods-operator ``config/samples/datasciencecluster_v1_datasciencecluster.yaml``
  (commit 32bc1683): codeflare, dashboard, datasciencepipelines, kserve (nim, serving ``knative-serving``),
  modelmeshserving, kueue, trainingoperator, ray, workbenches, modelregistry (``rhoai-model-registries``)
  Managed; feastoperator, llamastackoperator, trustyai Removed.
* 3.x (v2): opendatahub-io/opendatahub-operator v3.5.0 ``config/rhoai/samples/datasciencecluster_v2_datasciencecluster.yaml``:
  dashboard, aipipelines, kserve (nim), trainer, ray, workbenches, trustyai, modelregistry, feastoperator, ogx,
  mlflowoperator Managed; aigateway (batchGateway), kserve modelsAsService / wva, kueue, trainingoperator,
  llamastackoperator, sparkoperator, mcplifecycleoperator Removed.

``kueue`` is ``Unmanaged`` (the Red Hat build of Kueue provides Kueue) unless the stack sets it; ``Managed``
(Kueue embedded in RHOAI, in ``redhat-ods-applications``) exists on 2.x only — RHOAI 3.x refuses it at runtime.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field

from batchplane.config.base import ConfigModel, DnsSubdomain
from batchplane.errors import ConfigIssue
from batchplane.frameworks import JobOperator
from batchplane.yamlfile import deep_merge

#: The job operator each distributed-workloads DataScienceCluster component deploys (OpenShift AI's component
#: names, :meth:`~batchplane.targets.openshift.config.OpenShiftAI.component_states`). A Managed component implies
#: that operator's integrations (:data:`batchplane.frameworks.INTEGRATIONS_OF_OPERATOR`) in the ``Kueue`` CR
#: (:func:`~batchplane.targets.openshift.config.rhbok_frameworks`); the policy pack checks the same table.
DSC_COMPONENT_OPERATORS: dict[str, JobOperator] = {
    "ray": "kuberay",
    "codeflare": "appwrapper",
    "trainingoperator": "training-operator-v1",
    "trainer": "trainer-v2",
}

ManagementState = Literal["Managed", "Removed"]
"""``managementState`` of every component but kueue (CRD enum)."""
KueueManagementState = Literal["Managed", "Unmanaged", "Removed"]
"""``kueue.managementState`` (CRD enum; ``Managed`` is refused by RHOAI 3.x at runtime)."""
Release = Literal["2.x", "3.x"]
NamespaceName = Annotated[str, Field(max_length=63, pattern=r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?)?$")]
Quantity = Annotated[
    str | int,
    Field(
        pattern=r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$"
    ),
]


class Component(ConfigModel):
    """A component with only a ``managementState``."""

    management_state: ManagementState | None = None
    """``Managed`` or ``Removed``. Defaults to the release's sample."""


class SubComponent(ConfigModel):
    """A sub-feature with only a ``managementState`` (``nim``, ``wva``, ``batchGateway`` …)."""

    management_state: ManagementState | None = None
    """``Managed`` or ``Removed``. Defaults to the CRD's default."""


class Workbenches(Component):
    """Workbenches (Jupyter notebooks); users' notebooks live in their data science projects."""

    workbench_namespace: NamespaceName | None = None
    """``workbenchNamespace``: where the notebook controller runs (immutable once set). Defaults to the
    CRD's default (``rhods-notebooks`` in RHOAI)."""


class ModelRegistry(Component):
    """Model registry."""

    registries_namespace: NamespaceName | None = None
    """``registriesNamespace`` (immutable while Managed). Defaults to ``rhoai-model-registries``."""


class LmEval(ConfigModel):
    """TrustyAI LM-Eval permissions."""

    permit_code_execution: Literal["allow", "deny"] | None = None
    """``permitCodeExecution``. Defaults to ``deny``."""
    permit_online: Literal["allow", "deny"] | None = None
    """``permitOnline``. Defaults to ``deny``."""


class TrustyAiEval(ConfigModel):
    """TrustyAI evaluation settings."""

    lmeval: LmEval
    """Required. LM-Eval permissions."""


class TrustyAi(Component):
    """TrustyAI (model monitoring, LM-Eval)."""

    eval: TrustyAiEval | None = None
    """``eval.lmeval`` permissions. Defaults to the CRD's (deny, deny)."""
    mcp_guardrails_mode: bool | None = None
    """``mcpGuardrailsMode`` (v2 only). Defaults to false."""


class Pipelines(Component):
    """Data science pipelines (v1 ``datasciencepipelines``, v2 ``aipipelines``)."""

    argo_workflows_controllers: SubComponent | None = None
    """``argoWorkflowsControllers``: the Argo Workflows controllers pipelines run on. Defaults to Managed."""


class KueueComponent(ConfigModel):
    """The kueue component: which Kueue serves the distributed workloads."""

    management_state: KueueManagementState | None = None
    """``Unmanaged``: the Red Hat build of Kueue (installed by the stack); ``Managed``: Kueue embedded in
    RHOAI (2.x only; then the Red Hat build of Kueue is not installed); ``Removed``. Defaults to ``Unmanaged``."""
    default_cluster_queue_name: DnsSubdomain | None = None
    """``defaultClusterQueueName``. Defaults to ``default``."""
    default_local_queue_name: DnsSubdomain | None = None
    """``defaultLocalQueueName``. Defaults to ``default``."""
    auto_create_queues: bool | None = None
    """``autoCreateQueues`` (v2, OpenShift AI 3.5+): the operator creates default queues. Defaults to false, rendered
    explicitly where the release has the field; 3.0-3.4 have none and always create them (a warning)."""


class CertificateSpec(ConfigModel):
    """TLS certificate of the KServe serving ingress gateway."""

    type: Literal["SelfSigned", "Provided", "OpenshiftDefaultIngress"] | None = None
    """Defaults to ``OpenshiftDefaultIngress``."""
    secret_name: str | None = None
    """``secretName`` of a provided certificate. Defaults to none."""


class IngressGateway(ConfigModel):
    """KServe serving ingress gateway."""

    domain: str | None = None
    """Host name (e.g. ``*.example.com``). Defaults to the cluster's ingress domain."""
    certificate: CertificateSpec | None = None
    """TLS certificate. Defaults to the OpenShift default ingress certificate."""


class Serving(ConfigModel):
    """KServe's Knative serving stack (v1 only)."""

    management_state: KueueManagementState | None = None
    """``Managed``, ``Unmanaged`` or ``Removed``. Defaults to ``Managed``."""
    name: str | None = None
    """KnativeServing name. Defaults to ``knative-serving``."""
    ingress_gateway: IngressGateway | None = None
    """``ingressGateway``. Defaults to the CRD's."""


class Nim(SubComponent):
    """NVIDIA NIM model serving."""

    air_gapped: bool | None = None
    """``airGapped`` (v2 only). Defaults to false."""


class NodeLabelSelector(ConfigModel):
    """A label selector."""

    match_labels: dict[str, str] | None = None
    """``matchLabels``. Defaults to none."""
    match_expressions: list[dict[str, Any]] | None = None
    """``matchExpressions`` (``key``, ``operator``, ``values``). Defaults to none."""


class ResourceRequirements(ConfigModel):
    """Container resources."""

    limits: dict[str, Quantity] | None = None
    """Limits per resource. Defaults to the operator's manifests."""
    requests: dict[str, Quantity] | None = None
    """Requests per resource. Defaults to the operator's manifests."""


class OAuthProxy(ConfigModel):
    """KServe's OAuth proxy sidecar (``inferenceservice-config``)."""

    resources: ResourceRequirements | None = None
    """Its container resources. Defaults to the operator's manifests."""


class ModelCache(SubComponent):
    """KServe model cache (v2 only)."""

    cache_size: Quantity | None = None
    """``cacheSize`` of the cache volume (``100Gi``); required when Managed."""
    node_names: Annotated[list[str], Field(min_length=1)] | None = None
    """``nodeNames`` to cache on; exactly one of this and ``nodeSelector`` when Managed."""
    node_selector: NodeLabelSelector | None = None
    """``nodeSelector`` of the nodes to cache on; exactly one of this and ``nodeNames`` when Managed."""


class KServe(Component):
    """KServe model serving."""

    default_deployment_mode: Literal["Serverless", "RawDeployment"] | None = None
    """``defaultDeploymentMode`` (v1 only): the serving mode. Defaults to the operator's (``Serverless``)."""
    raw_deployment_service_config: Literal["Headless", "Headed"] | None = None
    """``rawDeploymentServiceConfig``. Defaults to ``Headless``."""
    nim: Nim | None = None
    """NVIDIA NIM. Defaults to Managed."""
    serving: Serving | None = None
    """Knative serving (v1 only). Defaults to the sample's (``knative-serving``, Managed)."""
    model_cache: ModelCache | None = None
    """``modelCache`` (v2 only). Defaults to Removed."""
    models_as_service: SubComponent | None = None
    """``modelsAsService`` (v2 only, deprecated for ``aigateway.modelsAsAService``). Defaults to Removed."""
    wva: SubComponent | None = None
    """``wva`` (v2 only). Defaults to Removed."""
    oauth_proxy: OAuthProxy | None = None
    """``oauthProxy`` sidecar resources (RHOAI 3.x only). Defaults to the operator's manifests."""
    enable_llm_inference_service_tls: bool | None = Field(default=None, alias="enableLLMInferenceServiceTLS")
    """``enableLLMInferenceServiceTLS`` (v2 only). Defaults to the operator's."""
    enable_llm_inference_service_console_dashboards: bool | None = Field(
        default=None, alias="enableLLMInferenceServiceConsoleDashboards"
    )
    """``enableLLMInferenceServiceConsoleDashboards`` (v2 only). Defaults to the operator's."""


class AiGateway(Component):
    """AI gateway (v2 only)."""

    batch_gateway: SubComponent | None = None
    """``batchGateway``. Defaults to Removed."""
    models_as_a_service: SubComponent | None = None
    """``modelsAsAService``. Defaults to Removed."""


class MlflowGateway(ConfigModel):
    """MLflow ingress gateway."""

    domain: Annotated[str, Field(max_length=253)]
    """Required. Fully qualified domain name."""


class MlflowOperator(Component):
    """MLflow operator (v2 only)."""

    gateway: MlflowGateway | None = None
    """``gateway``. Defaults to the one synced from GatewayConfig."""
    gateway_name: str | None = None
    """``gatewayName``. Defaults to the operator's."""
    section_title: str | None = None
    """``sectionTitle`` in the console. Defaults to the operator's."""


def _shorthand(value: object) -> object:
    """``true`` = ``{managementState: Managed}``, ``false`` = ``{managementState: Removed}``."""
    if isinstance(value, bool):
        return {"managementState": "Managed" if value else "Removed"}
    return value


class DataScienceClusterComponents(ConfigModel):
    """Every DataScienceCluster component. Each takes ``true`` (Managed), ``false`` (Removed) or an object
    with ``managementState`` and the component's settings; omitted = the release's default (module docs)."""

    dashboard: Annotated[Component, BeforeValidator(_shorthand)] | None = None
    """The OpenShift AI dashboard (v1, v2). Default: Managed."""
    workbenches: Annotated[Workbenches, BeforeValidator(_shorthand)] | None = None
    """Workbenches (v1, v2). Default: Managed."""
    datasciencepipelines: Annotated[Pipelines, BeforeValidator(_shorthand)] | None = None
    """Data science pipelines (v1 only; ``aipipelines`` in v2). Default: Managed."""
    aipipelines: Annotated[Pipelines, BeforeValidator(_shorthand)] | None = None
    """AI pipelines (v2 only). Default: Managed."""
    kserve: Annotated[KServe, BeforeValidator(_shorthand)] | None = None
    """KServe (v1, v2). Default: Managed."""
    modelmeshserving: Annotated[Component, BeforeValidator(_shorthand)] | None = None
    """ModelMesh serving (v1 only). Default: Managed."""
    modelregistry: Annotated[ModelRegistry, BeforeValidator(_shorthand)] | None = None
    """Model registry (v1, v2). Default: Managed."""
    trustyai: Annotated[TrustyAi, BeforeValidator(_shorthand)] | None = None
    """TrustyAI (v1, v2). Default: Removed on 2.x, Managed on 3.x."""
    feastoperator: Annotated[Component, BeforeValidator(_shorthand)] | None = None
    """Feast feature store (v1, v2). Default: Removed on 2.x, Managed on 3.x."""
    llamastackoperator: Annotated[Component, BeforeValidator(_shorthand)] | None = None
    """Llama Stack (v1, v2). Default: Removed."""
    codeflare: Annotated[Component, BeforeValidator(_shorthand)] | None = None
    """CodeFlare operator + AppWrapper (v1 only). Default: Managed."""
    ray: Annotated[Component, BeforeValidator(_shorthand)] | None = None
    """KubeRay (v1, v2). Default: Managed."""
    training_operator: Annotated[Component, BeforeValidator(_shorthand)] | None = None
    """``trainingoperator``: Kubeflow Training Operator v1 (v1, v2; obsolete in RHOAI 3.6). Default: Managed on
    2.x, Removed on 3.x."""
    trainer: Annotated[Component, BeforeValidator(_shorthand)] | None = None
    """Kubeflow Trainer v2 (v2 only). Default: Managed."""
    kueue: KueueComponent | None = None
    """The kueue component. Default: ``Unmanaged`` (the Red Hat build of Kueue)."""
    aigateway: Annotated[AiGateway, BeforeValidator(_shorthand)] | None = None
    """AI gateway (v2 only). Default: Removed."""
    mlflowoperator: Annotated[MlflowOperator, BeforeValidator(_shorthand)] | None = None
    """MLflow (v2 only). Default: Managed."""
    ogx: Annotated[Component, BeforeValidator(_shorthand)] | None = None
    """OGX (v2 only). Default: Managed."""
    sparkoperator: Annotated[Component, BeforeValidator(_shorthand)] | None = None
    """Spark operator (v2 only). Default: Removed."""
    mcplifecycleoperator: Annotated[Component, BeforeValidator(_shorthand)] | None = None
    """MCP lifecycle operator (v2 only). Default: Removed."""


#: DSC key → python field of :class:`DataScienceClusterComponents`.
FIELD_OF = {"trainingoperator": "training_operator"}
V1_ONLY = ("codeflare", "datasciencepipelines", "modelmeshserving")
V2_ONLY = (
    "aipipelines",
    "trainer",
    "aigateway",
    "mlflowoperator",
    "ogx",
    "sparkoperator",
    "mcplifecycleoperator",
)
#: Settings that exist in one API version only: (component, camelCase key) → version.
VERSION_ONLY_SETTINGS = {
    ("kserve", "defaultDeploymentMode"): "v1",
    ("kserve", "serving"): "v1",
    ("kserve", "modelCache"): "v2",
    ("kserve", "modelsAsService"): "v2",
    ("kserve", "wva"): "v2",
    ("kserve", "oauthProxy"): "v2",
    ("kserve", "nim.airGapped"): "v2",
    ("kserve", "enableLLMInferenceServiceTLS"): "v2",
    ("kserve", "enableLLMInferenceServiceConsoleDashboards"): "v2",
    ("kueue", "autoCreateQueues"): "v2",
    ("trustyai", "mcpGuardrailsMode"): "v2",
}

SAMPLE_V1: dict[str, Any] = {
    "codeflare": {"managementState": "Managed"},
    "dashboard": {"managementState": "Managed"},
    "datasciencepipelines": {"managementState": "Managed"},
    "kserve": {
        "managementState": "Managed",
        "nim": {"managementState": "Managed"},
        "serving": {
            "ingressGateway": {"certificate": {"type": "OpenshiftDefaultIngress"}},
            "name": "knative-serving",
            "managementState": "Managed",
        },
    },
    "modelmeshserving": {"managementState": "Managed"},
    "kueue": {"managementState": "Unmanaged"},
    "trainingoperator": {"managementState": "Managed"},
    "ray": {"managementState": "Managed"},
    "workbenches": {"managementState": "Managed"},
    "modelregistry": {"managementState": "Managed", "registriesNamespace": "rhoai-model-registries"},
    "feastoperator": {"managementState": "Removed"},
    "llamastackoperator": {"managementState": "Removed"},
    "trustyai": {"managementState": "Removed"},
}
"""RHOAI 2.x's sample DSC (module docs) with kueue ``Unmanaged`` (the Red Hat build of Kueue)."""

SAMPLE_V2: dict[str, Any] = {
    "aigateway": {"managementState": "Removed", "batchGateway": {"managementState": "Removed"}},
    "dashboard": {"managementState": "Managed"},
    "aipipelines": {"managementState": "Managed"},
    "kserve": {
        "managementState": "Managed",
        "nim": {"managementState": "Managed"},
        "modelsAsService": {"managementState": "Removed"},
        "wva": {"managementState": "Removed"},
    },
    "kueue": {"managementState": "Unmanaged"},
    "trainingoperator": {"managementState": "Removed"},
    "trainer": {"managementState": "Managed"},
    "ray": {"managementState": "Managed"},
    "workbenches": {"managementState": "Managed"},
    "trustyai": {"managementState": "Managed"},
    "modelregistry": {"managementState": "Managed", "registriesNamespace": "rhoai-model-registries"},
    "feastoperator": {"managementState": "Managed"},
    "llamastackoperator": {"managementState": "Removed"},
    "ogx": {"managementState": "Managed"},
    "mlflowoperator": {"managementState": "Managed"},
    "sparkoperator": {"managementState": "Removed"},
    "mcplifecycleoperator": {"managementState": "Removed"},
}
"""RHOAI 3.5's sample DSC (module docs) with kueue ``Unmanaged`` instead of ``Removed`` (the stack's Kueue)."""


@dataclass(frozen=True)
class V1Release:
    """What the DataScienceCluster v1 CRD of one OpenShift AI 2.x minor release accepts, where it is narrower than
    the v2.35 CRD the models mirror.

    Attributes:
        components: component → the settings it takes besides ``managementState`` (``devFlags`` is not offered).
        kueue_states: ``kueue.managementState`` values its CRD enum allows.
        embedded_kueue: the upstream Kueue minor its ``kueue: Managed`` runs.
        source: the upstream the facts come from (repository, branch, commit, path).
    """

    components: dict[str, tuple[str, ...]]
    kueue_states: tuple[str, ...]
    embedded_kueue: str
    source: str


#: OpenShift AI 2.x minor releases whose DataScienceCluster v1 CRD lacks components or settings of the newest 2.x.
#: 2.16 (the ``eus-2.16`` channel): no ``feastoperator``, ``llamastackoperator``, ``kserve.nim``,
#: ``kserve.rawDeploymentServiceConfig``, ``workbenches.workbenchNamespace``, ``trustyai.eval``,
#: ``datasciencepipelines.argoWorkflowsControllers``, ``kueue.defaultClusterQueueName``/``defaultLocalQueueName``; kueue
#: ``Managed``/``Removed`` only (no Red Hat build of Kueue); embedded Kueue from red-hat-data-services/kueue
#: ``rhoai-2.16`` (``get_all_manifests.sh``), image tag ``release-0.8`` (``prefetched-manifests/kueue/components/
#: manager/kustomization.yaml``).
V1_RELEASES: dict[str, V1Release] = {
    "2.16": V1Release(
        components={
            "codeflare": (),
            "dashboard": (),
            "datasciencepipelines": (),
            "kserve": ("defaultDeploymentMode", "serving"),
            "kueue": (),
            "modelmeshserving": (),
            "modelregistry": ("registriesNamespace",),
            "ray": (),
            "trainingoperator": (),
            "trustyai": (),
            "workbenches": (),
        },
        kueue_states=("Managed", "Removed"),
        embedded_kueue="0.8",
        source="red-hat-data-services/rhods-operator rhoai-2.16 (07ea18b1) "
        "bundle/manifests/datasciencecluster.opendatahub.io_datascienceclusters.yaml",
    ),
}


#: The first OpenShift AI release whose kueue component has ``autoCreateQueues`` (default false: the operator creates no
#: queues). 3.0-3.4 create ResourceFlavor ``default-flavor``, ClusterQueue ``default`` and LocalQueue ``default`` in
#: every managed namespace whenever kueue is Managed or Unmanaged (opendatahub-operator
#: ``internal/controller/components/kueue/kueue_controller_actions.go`` ``manageDefaultKueueResourcesAction``; the RHOAI
#: 3.5 CRD, ``../shared/crds/rhoai/3.5.0``, has the field, the v3.0.0 CRD does not).
AUTO_CREATE_QUEUES_SINCE = (3, 5)


def creates_default_queues(minor: str | None) -> bool:
    """Whether OpenShift AI ``minor`` (``3.4``) creates default queues unconditionally (3.0 up to, not including,
    :data:`AUTO_CREATE_QUEUES_SINCE`); ``False`` for an unknown release (a channel's head: 3.5 or later)."""
    if minor is None:
        return False
    major, _, rest = minor.partition(".")
    if not (major.isdigit() and rest.isdigit()):
        return False
    return (3, 0) <= (int(major), int(rest)) < AUTO_CREATE_QUEUES_SINCE


def _pin_auto_create_queues(rendered: dict[str, Any], minor: str | None) -> None:
    """``kueue.autoCreateQueues: false`` (Unmanaged) where the release has the field; no such key where it does not."""
    kueue = rendered.get("kueue")
    if kueue is None:
        return
    if creates_default_queues(minor):
        kueue.pop("autoCreateQueues", None)
    elif kueue.get("managementState") == "Unmanaged":
        kueue.setdefault("autoCreateQueues", False)


def _narrow(rendered: dict[str, Any], minor: str | None) -> dict[str, Any]:
    """``rendered`` without the components and settings the release's CRD lacks (:data:`V1_RELEASES`)."""
    schema = V1_RELEASES.get(minor or "")
    if schema is None:
        return rendered
    return {
        name: {k: v for k, v in value.items() if k in ("managementState", *schema.components[name])}
        for name, value in rendered.items()
        if name in schema.components
    }


def dsc_key(field_name: str) -> str:
    """The DataScienceCluster key of a :class:`DataScienceClusterComponents` field."""
    return {v: k for k, v in FIELD_OF.items()}.get(field_name, field_name)


def _set_value(value: Any) -> dict[str, Any] | None:
    if value is None:
        return None
    dumped: dict[str, Any] = value.model_dump(by_alias=True, exclude_none=True)
    return dumped


def render_components(
    components: DataScienceClusterComponents, release: Release, minor: str | None = None
) -> dict[str, Any]:
    """``spec.components`` of the DataScienceCluster: the release's sample overlaid with the stack's settings
    (objects merged key by key), sorted by component name; for a minor release in :data:`V1_RELEASES` (``2.16``) only
    the components and settings its CRD has; on 3.x ``kueue.autoCreateQueues: false`` unless set, and none on the
    releases without the field (:func:`creates_default_queues`)."""
    sample = SAMPLE_V1 if release == "2.x" else SAMPLE_V2
    rendered = {key: dict(value) for key, value in sample.items()}
    others = V2_ONLY if release == "2.x" else V1_ONLY
    for name in DataScienceClusterComponents.model_fields:
        value = _set_value(getattr(components, name))
        key = dsc_key(name)
        if value is not None and key not in others:
            rendered[key] = deep_merge(rendered.get(key, {}), value)
    if release == "3.x":
        _pin_auto_create_queues(rendered, minor)
    return dict(sorted(_narrow(rendered, minor).items()))


def managed(
    components: DataScienceClusterComponents, release: Release, minor: str | None = None
) -> dict[str, str]:
    """Component → ``managementState`` of the rendered DSC."""
    rendered = render_components(components, release, minor)
    return {k: str(v.get("managementState", "")) for k, v in rendered.items()}


#: The first OpenShift AI release whose trainer component needs the JobSet Operator: its precondition looks for a CSV
#: named ``jobset-operator.*`` (red-hat-data-services/rhods-operator ``rhoai-3.2``
#: ``internal/controller/components/trainer/trainer_controller_actions.go`` L30, ``trainer.go`` L27; absent on
#: ``rhoai-3.0``) and, from 3.5, a cluster-scoped ``JobSetOperator`` named ``cluster`` (``rhoai-3.5`` and
#: opendatahub-io/opendatahub-operator ``v3.5.0`` ``trainer_controller_actions.go`` L34-53, ``trainer_support.go``
#: L16, ``pkg/cluster/gvk/gvk.go`` L646-650: ``operator.openshift.io/v1``); without them Trainer, and so the
#: DataScienceCluster, is never Ready.
JOBSET_OPERATOR_SINCE = (3, 2)
#: The JobSet Operator's OLM package, namespace and channel, as opendatahub-operator installs it for its own e2e tests
#: (``v3.5.0`` ``tests/e2e/helper_test.go`` L65-67; namespaced OperatorGroup, ``tests/e2e/creation_test.go`` L118).
JOBSET_PACKAGE = "job-set"
JOBSET_NAMESPACE = "openshift-jobset-operator"
JOBSET_CHANNEL = "stable-v1.0"


def needs_jobset_operator(
    components: DataScienceClusterComponents, release: Release, minor: str | None
) -> bool:
    """Whether the DataScienceCluster's trainer needs the JobSet Operator: release ``3.x``, trainer Managed (its
    default) and OpenShift AI ``minor`` at least :data:`JOBSET_OPERATOR_SINCE`, or unknown (a channel's head)."""
    if release != "3.x" or managed(components, release, minor).get("trainer") != "Managed":
        return False
    major, _, rest = (minor or "").partition(".")
    if major.isdigit() and rest.isdigit():
        return (int(major), int(rest)) >= JOBSET_OPERATOR_SINCE
    return True


def jobset_operator_cr() -> dict[str, Any]:
    """The cluster-scoped ``operator.openshift.io/v1`` ``JobSetOperator`` ``cluster`` the trainer looks for (spec as
    opendatahub-operator ``v3.5.0`` ``tests/e2e/helper_test.go`` L474-487 creates it: ``logLevel``/``operatorLogLevel``
    ``Normal``)."""
    return {
        "apiVersion": "operator.openshift.io/v1",
        "kind": "JobSetOperator",
        "metadata": {"name": "cluster", "labels": {"app.kubernetes.io/managed-by": "batchplane"}},
        "spec": {"logLevel": "Normal", "operatorLogLevel": "Normal"},
    }


def check_jobset_operator(
    components: DataScienceClusterComponents, release: Release, minor: str | None, installs: bool, path: str
) -> list[ConfigIssue]:
    """Trainer Managed on OpenShift AI 3.2+ (:func:`needs_jobset_operator`) while the stack does not install the JobSet
    Operator (``installs`` false, ``openshiftAi.jobSetOperator: null``): an error at ``components.trainer`` with the
    fix."""
    if installs or not needs_jobset_operator(components, release, minor):
        return []
    return [
        ConfigIssue(
            f"{path}.trainer",
            'Trainer needs the JobSet Operator (OLM package job-set, JobSetOperator "cluster") from OpenShift AI 3.2 '
            "on, and openshiftAi.jobSetOperator is null, so the DataScienceCluster never becomes Ready: remove "
            "jobSetOperator: null (the stack installs it), or set trainer: false",
        )
    ]


def check_default_queues(
    components: DataScienceClusterComponents, minor: str | None, source_key: str, source: str, path: str
) -> list[ConfigIssue]:
    """OpenShift AI 3.0-3.4 (:func:`creates_default_queues`) with kueue Unmanaged: a warning at ``source_key`` (the
    channel or CSV that picks the release) that the operator creates queues around the stack's quotas, and an error for
    ``kueue.autoCreateQueues``, which those releases do not have."""
    if not creates_default_queues(minor):
        return []
    issues: list[ConfigIssue] = []
    kueue = components.kueue
    if kueue is not None and kueue.auto_create_queues is not None:
        issues.append(
            ConfigIssue(
                f"{path}.kueue.autoCreateQueues",
                f"OpenShift AI {minor} ({source}) has no kueue.autoCreateQueues (3.5 added it); it always creates "
                "default queues",
            )
        )
    state = kueue.management_state if kueue is not None and kueue.management_state else "Unmanaged"
    if state != "Removed":
        issues.append(
            ConfigIssue(
                source_key,
                f'OpenShift AI {minor} creates ResourceFlavor "default-flavor", a ClusterQueue "default" sized to the '
                'whole cluster and a LocalQueue "default" in every managed namespace, around this stack\'s quotas '
                "(it has no autoCreateQueues switch before 3.5): subscribe stable-3.x or a 3.5+ channel, and set "
                "webhook.refuseUndeclaredQueues: true so the webhook refuses jobs Kueue would default into them",
                "warning",
            )
        )
    return issues


def check_release_components(
    components: DataScienceClusterComponents, minor: str | None, source: str, path: str
) -> list[ConfigIssue]:
    """Components and settings the DSC CRD of OpenShift AI ``minor`` (:data:`V1_RELEASES`) lacks, and a kueue
    ``managementState`` outside its enum (the default ``Unmanaged`` included): errors naming the key, the release and
    ``source`` (the channel or CSV that selects it). Nothing for a release not in the table."""
    schema = V1_RELEASES.get(minor or "")
    if schema is None:
        return []
    issues: list[ConfigIssue] = []
    release = f"OpenShift AI {minor} ({source})"
    for name in DataScienceClusterComponents.model_fields:
        value = _set_value(getattr(components, name))
        key = dsc_key(name)
        if value is None or key in V2_ONLY:
            continue
        where = f"{path}.{DataScienceClusterComponents.model_fields[name].alias or name}"
        if key not in schema.components:
            if value != {"managementState": "Removed"}:
                issues.append(
                    ConfigIssue(where, f"the DataScienceCluster of {release} has no {key} component")
                )
            continue
        for setting in value:
            if setting not in ("managementState", *schema.components[key]):
                issues.append(
                    ConfigIssue(
                        f"{where}.{setting}",
                        f"{key}.{setting} does not exist in the DataScienceCluster of {release}",
                    )
                )
    kueue = components.kueue
    state = kueue.management_state if kueue is not None and kueue.management_state else "Unmanaged"
    if state not in schema.kueue_states:
        issues.append(
            ConfigIssue(
                f"{path}.kueue.managementState",
                f"the DataScienceCluster of {release} takes kueue managementState Managed or Removed only, not "
                f"{state} (the Red Hat build of Kueue needs a later OpenShift AI): set Managed for the embedded Kueue "
                f"{schema.embedded_kueue}, or subscribe a later channel",
            )
        )
    return issues


def _has(obj: dict[str, Any], dotted: str) -> bool:
    for part in dotted.split("."):
        if not isinstance(obj, dict) or part not in obj:
            return False
        obj = obj[part]
    return True


def check_components(
    components: DataScienceClusterComponents, release: Release, path: str
) -> list[ConfigIssue]:
    """Components and settings of the other API version, ``kueue: Managed`` on 3.x, and the CRDs' create-time
    CEL rules (``kserve.modelCache``: ``cacheSize`` and exactly one of ``nodeNames``/``nodeSelector`` when Managed)."""
    issues: list[ConfigIssue] = []
    version = "v1" if release == "2.x" else "v2"
    others = V2_ONLY if version == "v1" else V1_ONLY
    for name in DataScienceClusterComponents.model_fields:
        value = getattr(components, name)
        if value is None:
            continue
        key = dsc_key(name)
        where = f"{path}.{DataScienceClusterComponents.model_fields[name].alias or name}"
        if key in others:
            if _set_value(value) == {"managementState": "Removed"}:
                continue  # "off" where the component does not exist: nothing to render
            if key == "trainer":
                message = (
                    "Trainer v2 is a DataScienceCluster v2 component (OpenShift AI 3.x); set release: 3.x"
                )
            else:
                message = f"DataScienceCluster {version} (OpenShift AI {release}) has no {key} component"
                message += "; AppWrapper users stay on 2.x" if key == "codeflare" else ""
            issues.append(ConfigIssue(where, message))
            continue
        dumped = _set_value(value) or {}
        for (component, setting), only in VERSION_ONLY_SETTINGS.items():
            if component == key and _has(dumped, setting) and only != version:
                issues.append(
                    ConfigIssue(
                        f"{where}.{setting}", f"{key}.{setting} exists in DataScienceCluster {only} only"
                    )
                )
    kueue = components.kueue
    if kueue is not None and kueue.management_state == "Managed" and release == "3.x":
        issues.append(
            ConfigIssue(
                f"{path}.kueue.managementState",
                "OpenShift AI 3.x refuses an embedded Kueue (kueue: Managed); use Unmanaged with the Red Hat "
                "build of Kueue",
            )
        )
    kserve = components.kserve
    cache = kserve.model_cache if isinstance(kserve, KServe) else None
    if cache is not None:
        where = f"{path}.kserve.modelCache"
        selector = cache.node_selector
        has_selector = selector is not None and bool(selector.match_labels or selector.match_expressions)
        if cache.node_names is not None and cache.node_selector is not None:
            issues.append(ConfigIssue(where, "nodeNames and nodeSelector are mutually exclusive"))
        if cache.management_state == "Managed":
            if cache.cache_size is None:
                issues.append(
                    ConfigIssue(f"{where}.cacheSize", "cacheSize is required when managementState is Managed")
                )
            if not cache.node_names and not has_selector:
                issues.append(
                    ConfigIssue(
                        where,
                        "one non-empty nodeNames or nodeSelector is required when managementState is Managed",
                    )
                )
    return issues
