"""GKE's preflight half (:class:`GkePreflight`, :class:`~batchplane.targets.preflight.PlatformPreflight`): ask Google
Cloud, with the user's Application Default Credentials, what will fail. The requirements come from
:mod:`batchplane.targets.gke.requirements`.

Google's maintained client libraries, over their REST transports (imported here only, when the check runs; install
``batchplane[preflight]``):

=========================  ==========================================================  ===============================
check                      call                                                        library
=========================  ==========================================================  ===============================
project                    ``projects.get``                                            google-cloud-resource-manager
deployer's permissions     ``projects.testIamPermissions``                             google-cloud-resource-manager
APIs enabled               ``services.batchGet``                                       google-cloud-service-usage
org policies               ``projects.policies.getEffectivePolicy``                    google-cloud-org-policy
quotas                     ``quotaInfos.list`` (service ``compute.googleapis.com``)    google-cloud-quotas
region, zones              ``regions.get``                                             google-cloud-compute
machine/accelerator types  ``machineTypes.get``, ``acceleratorTypes.get`` per zone     google-cloud-compute
network                    ``networks.get``                                            google-cloud-compute
channel and version        ``projects.locations.getServerConfig``                      google-cloud-container
image repository           ``projects.locations.repositories.get``                     google-cloud-artifact-registry
=========================  ==========================================================  ===============================

Anchor: cluster-toolkit's blueprint validators (``pkg/validators/validators.go``: ``test_project_exists``,
``test_apis_enabled``, ``test_region_exists``, ``test_zone_exists``, ``test_zone_in_region``,
``test_machine_type_in_zone``, ``test_quota_availability``). Like them, every check runs and a failed project check
stops the rest (``Execute``); unlike ``pkg/validators/quota.go``, whose requirements are written by hand in the
blueprint and which reads current usage from Cloud Monitoring, the quota needs here are computed from the pools and
usage comes from Compute Engine's region quota list. A call that fails (an API not yet enabled, a permission missing) turns its check
into a warning saying what was not checked, except where the answer is known without it (a disabled Compute Engine
API with ``compute.skipDefaultNetworkCreation`` enforced means no ``default`` network will appear).

Cloud Quotas shapes (``QuotaInfo``, cloud.google.com/docs/quotas/reference/rest/v1/projects.locations.services
.quotaInfos): a quota has an id (``NVIDIA-L4-GPUS-per-project-region``, ``GPUS-PER-GPU-FAMILY-per-project-region``,
``GPUS-ALL-REGIONS-per-project``, ``CPUS-per-project-region``, ``CPUS-PER-VM-FAMILY-per-project-region``,
``CPUS-ALL-REGIONS-per-project``) and ``dimensionsInfos``: values per dimension combination (``region``,
``gpu_family``, ``vm_family``), the empty combination being the default. The most specific entry that matches
applies. Every existing quota that covers a need applies (Compute Engine enforces all of them), so each is compared
with the need at maximum size: above the limit is a blocker. Compute Engine's ``Region.quotas`` (``metric``,
``limit``, ``usage``) gives what is in use for the per-region metrics (``CPUS``, ``NVIDIA_L4_GPUS`` …): a need within
the limit but above what is free is a warning.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from functools import partial
from typing import TYPE_CHECKING, Any

from batchplane.preflight.report import CredentialsMissing, Report
from batchplane.targets.gke.config import GkeTarget, parse_gke_version
from batchplane.targets.gke.image import OWNER_LABEL, owner_label, repository_id
from batchplane.targets.gke.network import webhook_ports
from batchplane.targets.gke.requirements import (
    ARTIFACT_REGISTRY_API,
    GKE_APIS,
    GKE_NODE_IMAGE_PROJECT,
    REGION_QUOTAS,
    ApiRequirement,
    ArtifactRepository,
    GkeCluster,
    OrgPolicyRequirement,
    QuotaNeed,
    gke_cluster,
    gke_permissions,
    gke_quotas,
    iam_roles,
    org_policy_needs,
    unsized_pools,
    zone_offerings,
)
from batchplane.targets.gke.versions import matching_versions, newest_first
from batchplane.targets.preflight import PlatformPreflight, StackFacts

if TYPE_CHECKING:
    from requests.adapters import BaseAdapter

    from batchplane.preflight.model import Environment, Requirements

CLOUD_PLATFORM = "https://www.googleapis.com/auth/cloud-platform"
COMPUTE_API = "compute.googleapis.com"
CONTAINER_API = "container.googleapis.com"


@dataclass
class GcpClients:
    """The client objects preflight calls, each on its REST transport.

    Attributes:
        projects: ``resourcemanager_v3.ProjectsClient``.
        services: ``service_usage_v1.ServiceUsageClient``.
        org_policy: ``orgpolicy_v2.OrgPolicyClient``.
        quotas: ``cloudquotas_v1.CloudQuotasClient``.
        container: ``container_v1.ClusterManagerClient``.
        regions: ``compute_v1.RegionsClient``.
        machine_types: ``compute_v1.MachineTypesClient``.
        accelerator_types: ``compute_v1.AcceleratorTypesClient``.
        networks: ``compute_v1.NetworksClient``.
        routers: ``compute_v1.RoutersClient``.
        artifact_registry: ``artifactregistry_v1.ArtifactRegistryClient``.
    """

    projects: Any
    services: Any
    org_policy: Any
    quotas: Any
    container: Any
    regions: Any
    machine_types: Any
    accelerator_types: Any
    networks: Any
    artifact_registry: Any
    routers: Any = None


def _import_libraries() -> dict[str, Any]:
    try:
        with warnings.catch_warnings():
            # google-api-core announces the end of Python versions' support on import; not the user's concern here.
            warnings.simplefilter("ignore", FutureWarning)
            from google.cloud import (
                artifactregistry_v1,
                cloudquotas_v1,
                compute_v1,
                container_v1,
                orgpolicy_v2,
                resourcemanager_v3,
                service_usage_v1,
            )
    except ImportError as exc:  # pragma: no cover - depends on the installed extras
        raise CredentialsMissing(
            f"the GCP checks need Google's client libraries ({exc.name}): pip install 'batchplane[preflight]'"
        ) from exc
    return {
        "artifactregistry_v1": artifactregistry_v1,
        "cloudquotas_v1": cloudquotas_v1,
        "compute_v1": compute_v1,
        "container_v1": container_v1,
        "orgpolicy_v2": orgpolicy_v2,
        "resourcemanager_v3": resourcemanager_v3,
        "service_usage_v1": service_usage_v1,
    }


def make_clients(credentials: Any, adapter: BaseAdapter | None = None) -> GcpClients:
    """Build every client on its REST transport with ``credentials``.

    Args:
        credentials: ``google.auth`` credentials (Application Default Credentials in production).
        adapter: a ``requests`` transport adapter mounted on every client's ``AuthorizedSession`` for
            ``https://`` (tests replay recorded responses through it). Defaults to none: the real network.

    Returns:
        :class:`GcpClients`.
    """
    lib = _import_libraries()
    compute = lib["compute_v1"]
    clients = GcpClients(
        projects=lib["resourcemanager_v3"].ProjectsClient(credentials=credentials, transport="rest"),
        services=lib["service_usage_v1"].ServiceUsageClient(credentials=credentials, transport="rest"),
        org_policy=lib["orgpolicy_v2"].OrgPolicyClient(credentials=credentials, transport="rest"),
        quotas=lib["cloudquotas_v1"].CloudQuotasClient(credentials=credentials, transport="rest"),
        container=lib["container_v1"].ClusterManagerClient(credentials=credentials, transport="rest"),
        regions=compute.RegionsClient(credentials=credentials, transport="rest"),
        machine_types=compute.MachineTypesClient(credentials=credentials, transport="rest"),
        accelerator_types=compute.AcceleratorTypesClient(credentials=credentials, transport="rest"),
        networks=compute.NetworksClient(credentials=credentials, transport="rest"),
        routers=compute.RoutersClient(credentials=credentials, transport="rest"),
        artifact_registry=lib["artifactregistry_v1"].ArtifactRegistryClient(
            credentials=credentials, transport="rest"
        ),
    )
    if adapter is not None:
        for client in vars(clients).values():
            client.transport._session.mount("https://", adapter)
    return clients


def default_credentials() -> tuple[Any, str | None]:
    """Application Default Credentials and their project (``google.auth.default``).

    Raises:
        CredentialsMissing: when none are configured (``gcloud auth application-default login``).
    """
    try:
        import google.auth
        from google.auth.exceptions import DefaultCredentialsError
    except ImportError as exc:  # pragma: no cover - depends on the installed extras
        raise CredentialsMissing(
            "the GCP checks need google-auth: pip install 'batchplane[preflight]'"
        ) from exc

    try:
        credentials, project = google.auth.default(scopes=[CLOUD_PLATFORM])
    except DefaultCredentialsError as exc:
        raise CredentialsMissing(
            f"no Application Default Credentials ({exc}); run: gcloud auth application-default login"
        ) from exc
    return credentials, project


def _api_error(exc: Exception) -> bool:
    """True for a failed call (an API error, the network); raises :class:`CredentialsMissing` when the credentials
    cannot be refreshed (expired or revoked ADC), which no other call would get past."""
    from google.api_core.exceptions import GoogleAPIError
    from google.auth.exceptions import RefreshError, TransportError
    from requests import RequestException

    if isinstance(exc, RefreshError):
        raise CredentialsMissing(
            f"the Application Default Credentials cannot be refreshed ({exc}); run: gcloud auth application-default "
            "login"
        ) from exc
    return isinstance(exc, GoogleAPIError | TransportError | RequestException)


def _not_found(exc: Exception) -> bool:
    from google.api_core.exceptions import NotFound

    return isinstance(exc, NotFound)


def _short(exc: Exception) -> str:
    message = getattr(exc, "message", None) or str(exc)
    return " ".join(str(message).split())[:300]


def check_gcp(req: Requirements, report: Report, clients: GcpClients, project: str) -> None:
    """Run every GKE check of ``req`` against ``project``; findings go to ``report``.

    Args:
        req: the stack's requirements (:func:`~batchplane.preflight.requirements.stack_requirements`).
        report: where findings go.
        clients: :func:`make_clients`.
        project: the project ID to check.
    """
    for path, other in req.other_projects:
        report.warning(
            "project",
            path,
            f"this cluster is in project {other}, not {project}: its APIs, quotas and offerings are not checked here",
            "check that project too (a stack file whose target.project is it)",
        )
    if not _project_exists(req, report, clients, project):
        return
    enabled = _apis(req, report, clients, project)
    _permissions(req, report, clients, project)
    policies = _org_policies(req, report, clients, project)
    usage: dict[tuple[str, str], float] = {}
    if enabled.get(COMPUTE_API, True):
        usage = _compute(req, report, clients, project, policies)
    else:
        _compute_disabled(req, report, policies)
    _quotas(req, report, clients, project, usage)
    if enabled.get(ARTIFACT_REGISTRY_API, True):
        _repositories(req, report, clients, project)
    if enabled.get(CONTAINER_API, True):
        for cluster in req.clusters:
            _version(cluster, report, clients, project)
    else:
        report.warning(
            "version",
            req.clusters[0].path,
            "release channel and version not checked: container.googleapis.com is not enabled",
            "enable it, then run batchplane preflight again",
        )


# --- project, APIs --------------------------------------------------------------------------------


def _project_exists(req: Requirements, report: Report, clients: GcpClients, project: str) -> bool:
    report.ran("project")
    try:
        found = clients.projects.get_project(name=f"projects/{project}")
    except Exception as exc:
        if not _api_error(exc):
            raise
        from google.api_core.exceptions import GoogleAPIError

        if isinstance(exc, GoogleAPIError):
            message = (
                f'project "{project}" does not exist or these credentials cannot read it ({_short(exc)})'
            )
        else:  # the network: nothing else can be asked either
            message = f'could not ask Resource Manager about project "{project}": {_short(exc)}'
        report.blocker(
            "project",
            req.project_path,
            message,
            f"check the project ID (gcloud projects describe {project}) and that the account has "
            "roles/browser or better on it",
        )
        return False
    state = getattr(found.state, "name", str(found.state))
    if state != "ACTIVE":
        report.blocker(
            "project",
            req.project_path,
            f'project "{project}" is {state}, not ACTIVE',
            f"gcloud projects undelete {project}" if state == "DELETE_REQUESTED" else "",
        )
        return False
    return True


def _apis(req: Requirements, report: Report, clients: GcpClients, project: str) -> dict[str, bool]:
    names = [f"projects/{project}/services/{api.service}" for api in req.apis]
    try:
        answer = clients.services.batch_get_services(
            request={"parent": f"projects/{project}", "names": names}
        )
    except Exception as exc:
        if not _api_error(exc):
            raise
        report.warning(
            "api",
            req.apis[0].path,
            f"could not read which APIs are enabled: {_short(exc)}",
            "grant roles/serviceusage.serviceUsageViewer, then run batchplane preflight again",
        )
        return {}
    report.ran("api")
    state = {
        s.name.rsplit("/", 1)[-1]: getattr(s.state, "name", str(s.state)) == "ENABLED"
        for s in answer.services
    }
    for api in req.apis:
        if not state.get(api.service, False):
            report.blocker(
                "api",
                api.path,
                f"{api.service} is not enabled in project {project}; the stack needs it for {api.why}",
                f"gcloud services enable {api.service} --project {project}",
            )
    return {api.service: state.get(api.service, False) for api in req.apis}


# --- the deployer's permissions -------------------------------------------------------------------

#: A permission that may be granted on the resource itself rather than the project (``actAs`` on the node account):
#: missing on the project it is a warning, not a blocker — unless the stack creates that account itself
#: (:attr:`PermissionNeed.created_here`), when no grant on it can exist before ``clusters.create`` needs it.
_GRANTABLE_BELOW_PROJECT = frozenset({"iam.serviceAccounts.actAs"})


def _permissions(req: Requirements, report: Report, clients: GcpClients, project: str) -> None:
    """``projects.testIamPermissions`` (Resource Manager v3) with every permission the declared resources need
    (:attr:`Requirements.permissions`): which of them the caller — who will run ``pulumi up`` — holds on the
    project. Each resource type missing some is a blocker at its config key, naming the permissions and the role
    that grants them."""
    if not req.permissions:
        return
    wanted = list(dict.fromkeys(p for need in req.permissions for p in need.permissions))
    try:
        answer = clients.projects.test_iam_permissions(
            request={"resource": f"projects/{project}", "permissions": wanted}
        )
    except Exception as exc:
        if not _api_error(exc):
            raise
        report.warning(
            "iam",
            req.permissions[0].path,
            f"the deployer's permissions not checked: {_short(exc)}",
            "enable cloudresourcemanager.googleapis.com on your quota project, then run batchplane preflight again",
        )
        return
    report.ran("iam")
    granted = set(answer.permissions)
    for need in req.permissions:
        missing = [p for p in need.permissions if p not in granted]
        if not missing:
            continue
        message = (
            f"you lack {', '.join(missing)} on project {project}, which {need.resource_type} needs "
            f"({need.path}); pulumi up fails when it gets there"
        )
        fix = (
            f"gcloud projects add-iam-policy-binding {project} --member=<you> --role={need.role} "
            "(or a custom role with these permissions)"
        )
        if set(missing) <= _GRANTABLE_BELOW_PROJECT and not need.created_here:
            report.warning("iam", need.path, message + " — unless granted on the service account itself", fix)
        elif set(missing) <= _GRANTABLE_BELOW_PROJECT:
            report.blocker(
                "iam",
                need.path,
                message
                + ": the stack creates that account in the same pulumi up, so no grant on it can exist "
                "when the cluster is created",
                fix,
            )
        else:
            report.blocker("iam", need.path, message, fix)


# --- the image repository ------------------------------------------------------------------------


def _repositories(req: Requirements, report: Report, clients: GcpClients, project: str) -> None:
    """Each Artifact Registry repository the stack creates must not exist yet, unless this stack created it (its
    ``batchplane-stack`` label): creating an existing one fails with 409 ``ALREADY_EXISTS``."""
    for repo in req.repositories:
        name = f"projects/{project}/locations/{repo.region}/repositories/{repo.repository_id}"
        try:
            found = clients.artifact_registry.get_repository(name=name)
        except Exception as exc:
            if not _api_error(exc):
                raise
            if _not_found(exc):
                report.ran("repository")
            else:
                report.warning(
                    "repository", repo.path, f"repository {repo.repository_id} not checked: {_short(exc)}"
                )
            continue
        report.ran("repository")
        owner = dict(found.labels).get(OWNER_LABEL)
        if owner == repo.owner:
            continue
        whose = f'stack "{owner}"' if owner else "no Batchplane stack"
        report.blocker(
            "repository",
            repo.path,
            f"Artifact Registry repository {repo.region}/{repo.repository_id} already exists in project {project} "
            f"and belongs to {whose} (label {OWNER_LABEL}), not to this one: creating it fails with 409 "
            "ALREADY_EXISTS",
            "set webhook.build.repository to another id, or, if this stack should own it, `pulumi import "
            "gcp:artifactregistry/repository:Repository <name>-repository " + name + "`",
        )


# --- org policies ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Effective:
    enforced: bool
    deny_all: bool
    allowed: tuple[str, ...]
    denied: tuple[str, ...]


def _effective(policy: Any) -> _Effective:
    """Condition-less rules of an effective policy (the API's ``PolicySpec.rules``)."""
    enforced = deny_all = allow_all = False
    allowed: list[str] = []
    denied: list[str] = []
    for rule in policy.spec.rules:
        if rule.condition and rule.condition.expression:
            continue
        enforced = enforced or bool(rule.enforce)
        deny_all = deny_all or bool(rule.deny_all)
        allow_all = allow_all or bool(rule.allow_all)
        allowed.extend(rule.values.allowed_values)
        denied.extend(rule.values.denied_values)
    if allow_all:
        allowed = []
    return _Effective(enforced, deny_all and not allow_all, tuple(allowed), tuple(denied))


def _org_policies(
    req: Requirements, report: Report, clients: GcpClients, project: str
) -> dict[str, _Effective]:
    out: dict[str, _Effective] = {}
    for need in req.org_policies:
        try:
            policy = clients.org_policy.get_effective_policy(
                name=f"projects/{project}/policies/{need.constraint}"
            )
        except Exception as exc:
            if not _api_error(exc):
                raise
            report.warning(
                "org-policy",
                need.path,
                f"org policy {need.constraint} not checked: {_short(exc)}",
                "enable orgpolicy.googleapis.com on your quota project and grant roles/orgpolicy.policyViewer",
            )
            continue
        report.ran("org-policy")
        effective = _effective(policy)
        out[need.constraint] = effective
        _judge_policy(need, effective, req, report)
    return out


def _judge_policy(need: OrgPolicyRequirement, eff: _Effective, req: Requirements, report: Report) -> None:
    c = need.constraint
    if c == "compute.vmExternalIpAccess" and (eff.deny_all or eff.allowed):
        how = "denies every VM an external IP" if eff.deny_all else "allows external IPs only for listed VMs"
        report.blocker("org-policy", need.path, f"org policy constraints/{c} {how}; {need.why}", need.fix)
    elif c in ("iam.disableServiceAccountCreation", "compute.requireShieldedVm") and eff.enforced:
        report.blocker(
            "org-policy", need.path, f"org policy constraints/{c} is enforced: {need.why}", need.fix
        )
    elif c == "compute.trustedImageProjects" and _untrusted(GKE_NODE_IMAGE_PROJECT, eff):
        report.blocker(
            "org-policy",
            need.path,
            f"org policy constraints/{c} does not allow {GKE_NODE_IMAGE_PROJECT}: {need.why}",
            need.fix,
        )
    elif c == "iam.automaticIamGrantsForDefaultServiceAccounts" and eff.enforced:
        report.warning(
            "org-policy", need.path, f"org policy constraints/{c} is enforced: {need.why}", need.fix
        )
    elif c == "gcp.resourceLocations":
        regions = sorted({cl.region for cl in req.clusters})
        for region in regions:
            if eff.deny_all or _location_listed(region, eff.denied):
                report.blocker(
                    "org-policy",
                    need.path,
                    f"org policy constraints/{c} denies {region}; {need.why}",
                    need.fix,
                )
            elif eff.allowed and not _location_listed(region, eff.allowed):
                allowed = ", ".join(eff.allowed)
                report.warning(
                    "org-policy",
                    need.path,
                    f"org policy constraints/{c} allows only {allowed}, which does not name {region} directly "
                    "(value groups are not expanded here)",
                    need.fix,
                )


def _untrusted(project: str, eff: _Effective) -> bool:
    """True when a list policy's condition-less rules refuse ``project`` (``projects/<id>``; values may carry the
    ``is:`` prefix of the list-constraint syntax)."""
    allowed = {v.removeprefix("is:") for v in eff.allowed}
    denied = {v.removeprefix("is:") for v in eff.denied}
    return eff.deny_all or project in denied or (bool(allowed) and project not in allowed)


def _location_listed(region: str, values: Iterable[str]) -> bool:
    names = {region, f"in:{region}-locations", f"zones/{region}", f"regions/{region}"}
    return any(v in names or v.startswith(f"{region}-") for v in values)


# --- quotas ---------------------------------------------------------------------------------------


def _quotas(
    req: Requirements, report: Report, clients: GcpClients, project: str, usage: dict[tuple[str, str], float]
) -> None:
    if not req.quotas:
        return
    parent = f"projects/{project}/locations/global/services/{COMPUTE_API}"
    try:
        infos = {info.quota_id: info for info in clients.quotas.list_quota_infos(parent=parent)}
    except Exception as exc:
        if not _api_error(exc):
            raise
        report.warning(
            "quota",
            req.quotas[0].paths[0],
            f"Compute Engine quotas not checked: {_short(exc)}",
            "enable cloudquotas.googleapis.com on your quota project and grant roles/cloudquotas.viewer",
        )
        return
    report.ran("quota")
    for path in req.unsized:
        report.warning(
            "quota",
            path,
            "Batchplane does not know this machine type's vCPUs: its nodes are left out of the CPU quotas checked",
            "check CPUS for the region by hand (gcloud compute machine-types describe …)",
        )
    needs = _spot_fallback(req.quotas, infos)
    dedicated_cpus = {
        (n.region, n.vm_family)
        for n in needs
        if n.kind == "cpus" and f"{n.vm_family}-CPUS-per-project-region" in infos
    }
    # vCPUs and local SSD of preemptible VMs move to the preemptible quota where the project has one in the region.
    general: dict[tuple[str, str], QuotaNeed] = {}
    preemptible: dict[tuple[str, str], QuotaNeed] = {}
    for need in needs:
        if need.kind not in ("cpus", "local-ssd-gb"):
            continue
        region = need.region or ""
        moved = need.kind == "cpus" and _granted(infos, PREEMPTIBLE_CPUS, {"region": region})
        moved = moved or (
            need.kind == "local-ssd-gb" and _granted(infos, PREEMPTIBLE_LOCAL_SSD, {"region": region})
        )
        rest = need
        if need.preemptible_part and moved:
            _merge(
                preemptible,
                (need.kind, region),
                QuotaNeed(
                    need.kind,
                    need.preemptible_part,
                    region,
                    preemptible=True,
                    paths=need.preemptible_paths,
                    at_deploy=need.preemptible_at_deploy,
                ),
            )
            rest = replace(
                need,
                amount=need.amount - need.preemptible_part,
                at_deploy=need.deploy_amount - need.preemptible_at_deploy,
                paths=tuple(p for p in need.paths if p not in need.preemptible_paths),
            )
        if rest.amount and (
            need.kind == "local-ssd-gb" or (need.region, need.vm_family) not in dedicated_cpus
        ):
            _merge(general, (need.kind, region), replace(rest, vm_family=None, preemptible_part=0))
    for need in needs:
        if need.kind == "local-ssd-gb":
            continue
        for quota_id, dims, explicit in _candidates(need, infos, dedicated_cpus):
            _compare(need, quota_id, dims, explicit, infos, report, project, usage)
    for (kind, region), need in [*general.items(), *preemptible.items()]:
        quota_id = _region_quota_id(kind, need.preemptible)
        _compare(need, quota_id, {"region": region}, (), infos, report, project, usage)


def _region_quota_id(kind: str, preemptible: bool) -> str:
    if kind == "cpus":
        return PREEMPTIBLE_CPUS if preemptible else "CPUS-per-project-region"
    return PREEMPTIBLE_LOCAL_SSD if preemptible else REGION_QUOTAS[kind][0]


def _merge(table: dict[tuple[str, str], QuotaNeed], key: tuple[str, str], need: QuotaNeed) -> None:
    """Add ``need`` into ``table[key]`` (amounts, deploy-time amounts and paths summed)."""
    have = table.get(key)
    if have is None:
        table[key] = need
        return
    table[key] = replace(
        have,
        amount=have.amount + need.amount,
        at_deploy=have.deploy_amount + need.deploy_amount,
        paths=(*have.paths, *(p for p in need.paths if p not in have.paths)),
    )


#: The per-region quota of preemptible vCPUs (Spot and preemptible VMs) once a project is granted one.
PREEMPTIBLE_CPUS = "PREEMPTIBLE-CPUS-per-project-region"
#: The per-region quota of local SSD on preemptible VMs once a project is granted one.
PREEMPTIBLE_LOCAL_SSD = "PREEMPTIBLE-LOCAL-SSD-GB-per-project-region"


def _granted(
    infos: dict[str, Any], quota_id: str, dims: dict[str, str], explicit: tuple[str, ...] = ()
) -> bool:
    """True when the project has ``quota_id`` for ``dims`` with a limit other than 0 (unlimited: -1, counts)."""
    info = infos.get(quota_id)
    limit = None if info is None else _value(info, dims, explicit=explicit)
    return limit is not None and limit != 0


def _spot_fallback(needs: list[QuotaNeed], infos: dict[str, Any]) -> list[QuotaNeed]:
    """``needs`` with each preemptible GPU need's spot pools moved to the standard quota of the family where the
    project has no preemptible quota of that family in the region (every quota that would hold them is 0): Spot VMs
    then consume the standard quotas (module :mod:`batchplane.targets.gke.requirements`, "Quota arithmetic").
    Flex-start and queued pools never move. A quota the project does not list at all is left to the comparison
    (which warns that it was not checked)."""
    out = list(needs)
    for i, need in enumerate(needs):
        if need.kind != "gpus" or not need.preemptible or not need.spot_gpus:
            continue
        candidates = [(q, d, e) for q, d, e in _candidates(need, infos, set()) if q in infos]
        if not candidates or any(_granted(infos, q, d, e) for q, d, e in candidates):
            continue
        rest = tuple(p for p in need.paths if p not in need.spot_paths)
        out[i] = replace(
            need,
            amount=need.amount - need.spot_gpus,
            at_deploy=need.deploy_amount - need.spot_at_deploy,
            paths=rest,
            spot_gpus=0,
            spot_paths=(),
            spot_at_deploy=0,
        )
        standard = next(
            (
                j
                for j, n in enumerate(out)
                if n.kind == "gpus"
                and not n.preemptible
                and (n.region, n.gpu_family) == (need.region, need.gpu_family)
            ),
            None,
        )
        if standard is None:
            out.append(
                QuotaNeed(
                    "gpus",
                    need.spot_gpus,
                    need.region,
                    need.gpu_family,
                    False,
                    paths=need.spot_paths,
                    at_deploy=need.spot_at_deploy,
                )
            )
        else:
            have = out[standard]
            out[standard] = replace(
                have,
                amount=have.amount + need.spot_gpus,
                at_deploy=have.deploy_amount + need.spot_at_deploy,
                paths=(*have.paths, *need.spot_paths),
            )
    return [n for n in out if n.amount > 0 or n.kind != "gpus"]


def _candidates(
    need: QuotaNeed, infos: dict[str, Any], dedicated_cpus: set[tuple[str | None, str | None]]
) -> list[tuple[str, dict[str, str], tuple[str, ...]]]:
    """``(quota id, dimensions, dimensions an entry must name)`` of every quota that applies to ``need``.

    A GPU family with its own quota (``NVIDIA-L4-GPUS-per-project-region``) is also held to the family-dimension quota
    only where that names the family; a family without one (``NVIDIA_H100``) is held to the family-dimension quota's
    default too. vCPUs: the family's own quota or family-dimension entry (the general ``CPUS`` is summed apart).
    """
    region = need.region or ""
    if need.kind == "gpus":
        family = need.gpu_family or ""
        pre = "PREEMPTIBLE-" if need.preemptible else ""
        dedicated = f"{pre}{family.replace('_', '-')}-GPUS-per-project-region"
        by_family = f"{pre}GPUS-PER-GPU-FAMILY-per-project-region"
        out: list[tuple[str, dict[str, str], tuple[str, ...]]] = []
        if dedicated in infos:
            out.append((dedicated, {"region": region}, ()))
        family_dims = {"region": region, "gpu_family": family}
        explicit = ("gpu_family",) if out else ()
        if by_family in infos and _value(infos[by_family], family_dims, explicit=explicit) is not None:
            out.append((by_family, family_dims, explicit))
        return out or [(dedicated, {"region": region}, ())]
    if need.kind == "gpus-all-regions":
        return [("GPUS-ALL-REGIONS-per-project", {}, ())]
    if need.kind == "cpus-all-regions":
        return [("CPUS-ALL-REGIONS-per-project", {}, ())]
    if need.kind in REGION_QUOTAS:
        return [(REGION_QUOTAS[need.kind][0], {"region": region}, ())]
    cpus: list[tuple[str, dict[str, str], tuple[str, ...]]] = []
    if (need.region, need.vm_family) in dedicated_cpus:
        cpus.append((f"{need.vm_family}-CPUS-per-project-region", {"region": region}, ()))
    vm_family = infos.get("CPUS-PER-VM-FAMILY-per-project-region")
    dims = {"region": region, "vm_family": need.vm_family or ""}
    if vm_family is not None and _value(vm_family, dims, explicit=("vm_family",)) is not None:
        cpus.append(("CPUS-PER-VM-FAMILY-per-project-region", dims, ("vm_family",)))
    return cpus


def _value(info: Any, dims: dict[str, str], explicit: tuple[str, ...] = ()) -> int | None:
    """The value of the most specific ``dimensionsInfos`` entry matching ``dims`` (None when none matches, or when
    a dimension in ``explicit`` is not named by the entry)."""
    best: tuple[int, int] | None = None
    for entry in info.dimensions_infos:
        have = dict(entry.dimensions)
        if any(dims.get(k) != v for k, v in have.items()):
            continue
        if any(k not in have for k in explicit):
            continue
        region = dims.get("region")
        locations = list(entry.applicable_locations)
        if region and "region" not in have and locations and region not in locations:
            continue
        score = len(have)
        if best is None or score > best[0]:
            best = (score, int(entry.details.value))
    return None if best is None else best[1]


def _compare(
    need: QuotaNeed,
    quota_id: str,
    dims: dict[str, str],
    explicit: tuple[str, ...],
    infos: dict[str, Any],
    report: Report,
    project: str,
    usage: dict[tuple[str, str], float],
) -> None:
    path = need.paths[0] if need.paths else "batchplane:target"
    what = _describe(need)
    info = infos.get(quota_id)
    limit = None if info is None else _value(info, dims, explicit=explicit)
    if limit is None:
        report.warning(
            "quota",
            path,
            f"no Compute Engine quota {quota_id} for {what} found in project {project}; not checked",
        )
        return
    if limit < 0:
        return
    if limit >= need.amount:
        used = _used(quota_id, need.region, usage)
        if used and limit - used < need.amount:
            report.warning(
                "quota",
                path,
                f"quota {quota_id} allows {limit} for {_describe(need)} and {used:g} are in use: {limit - used:g} "
                f"free, the pools need {need.amount} at maxNodes",
                f"free what else uses it, or request {need.amount + used:g}",
            )
        return
    pools = ", ".join(need.paths)
    dim_text = ",".join(f"{k}={v}" for k, v in dims.items())
    fix = (
        f"request {need.amount} (now {limit}) of {quota_id}{f' ({dim_text})' if dim_text else ''}: "
        f"gcloud beta quotas preferences create --service={COMPUTE_API} --quota-id={quota_id} "
        f"--preferred-value={need.amount}{f' --dimensions={dim_text}' if dim_text else ''} --project={project}"
        " (or IAM & Admin > Quotas in the console), or lower maxNodes"
    )
    message = (
        f"quota {quota_id} ({need.metric}) allows {limit} for {what}; the pools need {need.amount} at maxNodes "
        f"({pools})"
    )
    if limit >= need.deploy_amount:
        # pulumi up creates what fits; only a later scale-up (autoscaler, ProvisioningRequest) runs into the limit
        report.warning(
            "quota",
            path,
            f"{message}, {need.deploy_amount} of them when pulumi up creates the pools: scaling up past {limit} "
            "fails later",
            fix,
        )
        return
    report.blocker("quota", path, message, fix)


def _used(quota_id: str, region: str | None, usage: dict[tuple[str, str], float]) -> float:
    """What Compute Engine's region quota list says is in use for a per-region quota id with a metric of its own
    (``NVIDIA-L4-GPUS-per-project-region`` → ``NVIDIA_L4_GPUS``); 0 when it has none there (family-dimension quotas,
    project-wide quotas)."""
    suffix = "-per-project-region"
    if region is None or not quota_id.endswith(suffix) or "-PER-" in quota_id:
        return 0.0
    return usage.get((region, quota_id[: -len(suffix)].replace("-", "_")), 0.0)


def _describe(need: QuotaNeed) -> str:
    region_kinds = {
        "ssd-gb": "GB of SSD-backed boot disks",
        "disks-gb": "GB of standard boot disks",
        "local-ssd-gb": "GB of local SSD",
        "addresses": "external IP addresses of public nodes",
    }
    if need.kind in region_kinds:
        pre = "preemptible VMs' " if need.preemptible else ""
        return f"{pre}{region_kinds[need.kind]} in {need.region}"
    if need.kind == "gpus":
        kind = "preemptible " if need.preemptible else ""
        return f"{kind}{need.gpu_family} GPUs in {need.region}"
    if need.kind == "cpus":
        return f"{need.vm_family + ' ' if need.vm_family else ''}vCPUs in {need.region}"
    return "GPUs in all regions" if need.kind == "gpus-all-regions" else "vCPUs in all regions"


# --- compute: region, zones, offerings, network ---------------------------------------------------


def _compute(
    req: Requirements, report: Report, clients: GcpClients, project: str, policies: dict[str, _Effective]
) -> dict[tuple[str, str], float]:
    """Regions, zones, offerings and the network; returns what each region's quotas already use
    (``Region.quotas[]``: ``metric``, ``limit``, ``usage``), by ``(region, metric)``."""
    usage: dict[tuple[str, str], float] = {}
    zones_of: dict[str, set[str] | None] = {}
    for cluster in req.clusters:
        if cluster.region in zones_of:
            continue
        try:
            region = clients.regions.get(project=project, region=cluster.region)
        except Exception as exc:
            if not _api_error(exc):
                raise
            zones_of[cluster.region] = None
            if _not_found(exc):
                report.blocker(
                    "region",
                    f"{cluster.path}.region",
                    f'"{cluster.region}" is not a Compute Engine region of project {project}',
                    "gcloud compute regions list",
                )
            else:
                report.warning("region", f"{cluster.path}.region", f"region not checked: {_short(exc)}")
            continue
        report.ran("region")
        zones_of[cluster.region] = {z.rstrip("/").rsplit("/", 1)[-1] for z in region.zones}
        for quota in region.quotas:
            usage[(cluster.region, quota.metric)] = float(quota.usage)
    _offerings(req, report, clients, project, zones_of)
    seen: set[str] = set()
    for cluster in req.clusters:
        if cluster.network not in seen:
            seen.add(cluster.network)
            _network(cluster, report, clients, project, policies)
    return usage


def _offerings(
    req: Requirements,
    report: Report,
    clients: GcpClients,
    project: str,
    zones_of: dict[str, set[str] | None],
) -> None:
    machine_seen: dict[tuple[str, str], bool | None] = {}
    accel_seen: dict[tuple[str, str], Any] = {}
    for offer in req.offerings:
        region = offer.zone.rsplit("-", 1)[0]
        known = zones_of.get(region)
        if known is not None and offer.zone not in known:
            report.blocker(
                "zone-offering",
                offer.path,
                f'zone "{offer.zone}" does not exist in region {region} (zones: {", ".join(sorted(known))})',
                "list the region's zones: gcloud compute zones list --filter=region:" + region,
            )
            continue
        key = (offer.zone, offer.machine_type)
        if key not in machine_seen:
            machine_seen[key] = _exists(
                partial(
                    clients.machine_types.get,
                    project=project,
                    zone=offer.zone,
                    machine_type=offer.machine_type,
                ),
                report,
                offer.path,
            )
            if machine_seen[key] is False:
                report.blocker(
                    "zone-offering",
                    offer.path,
                    f"machine type {offer.machine_type} is not offered in zone {offer.zone}",
                    f'gcloud compute machine-types list --filter="name={offer.machine_type}" to find its zones, then '
                    "change nodeLocations",
                )
            else:
                report.ran("zone-offering")
        if offer.accelerator_type is None:
            continue
        akey = (offer.zone, offer.accelerator_type)
        if akey not in accel_seen:
            accel_seen[akey] = _fetch(
                partial(
                    clients.accelerator_types.get,
                    project=project,
                    zone=offer.zone,
                    accelerator_type=offer.accelerator_type,
                ),
                report,
                offer.path,
            )
            if accel_seen[akey] is False:
                report.blocker(
                    "zone-offering",
                    offer.path,
                    f"accelerator {offer.accelerator_type} is not offered in zone {offer.zone}",
                    f'gcloud compute accelerator-types list --filter="name={offer.accelerator_type}" to find its '
                    "zones, then change nodeLocations",
                )
                continue
        accel = accel_seen[akey]
        most = getattr(accel, "maximum_cards_per_instance", 0) if accel not in (None, False) else 0
        if most and offer.accelerator_count > most:
            report.blocker(
                "zone-offering",
                offer.path,
                f"{offer.accelerator_count} × {offer.accelerator_type} per node exceeds the {most} a VM can have in "
                f"{offer.zone}",
                "lower accelerator.count",
            )


def _fetch(call: Callable[[], Any], report: Report, path: str) -> Any:
    """The resource, False when it does not exist, None when the call failed otherwise (a warning)."""
    try:
        return call()
    except Exception as exc:
        if not _api_error(exc):
            raise
        if _not_found(exc):
            return False
        report.warning("zone-offering", path, f"not checked: {_short(exc)}")
        return None


def _exists(call: Callable[[], Any], report: Report, path: str) -> bool | None:
    found = _fetch(call, report, path)
    return found if found in (None, False) else True


def _network(
    cluster: GkeCluster, report: Report, clients: GcpClients, project: str, policies: dict[str, _Effective]
) -> None:
    try:
        clients.networks.get(project=project, network=cluster.network)
    except Exception as exc:
        if not _api_error(exc):
            raise
        if not _not_found(exc):
            report.warning("network", f"{cluster.path}.network", f"network not checked: {_short(exc)}")
            return
        report.blocker("network", f"{cluster.path}.network", *_missing_network(cluster, project, policies))
        return
    report.ran("network")
    _nat_collision(cluster, report, clients, project)


#: The stack's Cloud NAT covers ALL_SUBNETWORKS_ALL_IP_RANGES; with that value "there should not be any other
#: Router.Nat section in any Router for this network in this region" (Compute Engine v1
#: ``RouterNat.SourceSubnetworkIpRangesToNat``, google-cloud-compute reference), so creating it fails next to any
#: other NAT there.
_OUR_NAT_RANGES = "ALL_SUBNETWORKS_ALL_IP_RANGES"


def _nat_collision(cluster: GkeCluster, report: Report, clients: GcpClients, project: str) -> None:
    """Private nodes: every Cloud NAT already on the cluster's network in its region (``routers.list``), other than
    on the router the stack itself creates, is a blocker at ``privateNodes``: the stack's NAT covers
    ``ALL_SUBNETWORKS_ALL_IP_RANGES`` and cannot coexist with another NAT there."""
    if cluster.nat_router is None or clients.routers is None:
        return
    path = f"{cluster.path}.privateNodes"
    try:
        routers = list(clients.routers.list(project=project, region=cluster.region))
    except Exception as exc:
        if not _api_error(exc):
            raise
        report.warning("network", path, f"Cloud NATs in {cluster.region} not checked: {_short(exc)}")
        return
    for router in routers:
        if router.name == cluster.nat_router or _short_name_of(router.network) != cluster.network:
            continue
        for nat in router.nats:
            report.blocker(
                "network",
                path,
                f"network {cluster.network} already has Cloud NAT {nat.name} on router {router.name} in "
                f"{cluster.region} (ranges {nat.source_subnetwork_ip_ranges_to_nat}); the stack's NAT covers "
                f"{_OUR_NAT_RANGES}, which GCE allows only as the network's single NAT in the region: creating it "
                "fails",
                f"put the cluster on another network (target.network, target.subnetwork) or region, or remove NAT "
                f"{nat.name} (gcloud compute routers nats delete {nat.name} --router={router.name} "
                f"--region={cluster.region} --project={project}) if nothing else needs it",
            )
            return


def _short_name_of(url: str) -> str:
    return url.rstrip("/").rsplit("/", 1)[-1]


def _missing_network(cluster: GkeCluster, project: str, policies: dict[str, _Effective]) -> tuple[str, str]:
    if cluster.network != "default":
        return (
            f'network "{cluster.network}" does not exist in project {project}',
            f"create it (gcloud compute networks create {cluster.network} --subnet-mode=auto --project {project}) "
            "or fix target.network",
        )
    skip = policies.get("compute.skipDefaultNetworkCreation")
    why = (
        " (org policy constraints/compute.skipDefaultNetworkCreation is enforced, so none was created)"
        if skip is not None and skip.enforced
        else ""
    )
    return (
        f'project {project} has no "default" network{why}; the cluster uses it because target.network is not set',
        f"gcloud compute networks create default --subnet-mode=auto --project {project}, or create a VPC and set "
        "target.network and target.subnetwork",
    )


def _compute_disabled(req: Requirements, report: Report, policies: dict[str, _Effective]) -> None:
    report.warning(
        "zone-offering",
        req.clusters[0].path,
        "regions, zones, machine and accelerator types and the network not checked: compute.googleapis.com is not "
        "enabled",
        "enable it, then run batchplane preflight again",
    )
    skip = policies.get("compute.skipDefaultNetworkCreation")
    if skip is None or not skip.enforced:
        return
    for cluster in req.clusters:
        if cluster.network == "default":
            report.blocker(
                "network",
                f"{cluster.path}.network",
                'no "default" network will exist: org policy constraints/compute.skipDefaultNetworkCreation is '
                "enforced, so enabling compute.googleapis.com creates none, and the cluster uses `default` because "
                "target.network is not set",
                "create a VPC and set target.network and target.subnetwork, or after enabling the API: gcloud compute "
                f"networks create default --subnet-mode=auto --project {req.project or 'PROJECT'}",
            )
            return


# --- GKE versions ---------------------------------------------------------------------------------


def _version(cluster: GkeCluster, report: Report, clients: GcpClients, project: str) -> None:
    want = cluster.version
    path = want.path
    try:
        config = clients.container.get_server_config(name=f"projects/{project}/locations/{cluster.location}")
    except Exception as exc:
        if not _api_error(exc):
            raise
        report.warning("version", path, f"GKE versions not checked: {_short(exc)}")
        return
    report.ran("version")
    channel = next(
        (c for c in config.channels if getattr(c.channel, "name", str(c.channel)) == want.channel), None
    )
    if channel is None:
        report.blocker(
            "version",
            f"{path}.releaseChannel",
            f"GKE offers no {want.channel} channel in {cluster.location}",
            "use RAPID, REGULAR or STABLE",
        )
        return
    valid = list(channel.valid_versions)
    resolved = channel.default_version
    if want.version is not None:
        matches = matching_versions(valid, want.version)
        if not matches:
            newest = ", ".join(newest_first(valid)[:4])
            report.blocker(
                "version",
                f"{path}.minMasterVersion",
                f'"{want.version}" is not a valid version of the {want.channel} channel in {cluster.location} '
                f"(newest valid: {newest})",
                f"set minMasterVersion to one of them (gcloud container get-server-config --location "
                f"{cluster.location} --project {project})",
            )
            return
        resolved = matches[0]
    if want.floor is None:
        return
    have, need = parse_gke_version(resolved), parse_gke_version(want.floor)
    if have is not None and need is not None and have < need:
        key = "minMasterVersion" if want.version is not None else "releaseChannel"
        report.blocker(
            "version",
            f"{path}.{key}",
            f"the cluster would run {resolved} ({want.channel} channel in {cluster.location}), below {want.floor} "
            "that its GPU pools need",
            f"set minMasterVersion to {want.floor} or later, or use a faster channel",
        )


def add_gke_requirements(facts: StackFacts, targets: list[tuple[GkeTarget, str]], req: Requirements) -> None:
    """Add what the stack's GKE clusters need to ``req`` (in place).

    Args:
        facts: the stack's facts (``gcp:project``, ``webhook``).
        targets: ``(target, key path)`` of every GKE target, the stack's own first.
        req: the stack's requirements; GKE quotas are summed over every declared cluster in the checked project (per
            region for regional quotas, over the project for ``*_ALL_REGIONS``).
    """
    # Each cluster is in its target.project, else gcp:project; the run checks the first GKE cluster's project.
    default = facts.gcp_project
    effective = [(t, p, t.project or default) for t, p in targets]
    first_target, first_path, project = effective[0]
    req.project = project
    if first_target.project is not None:
        req.project_path = f"{first_path}.project"
    req.other_projects = [(f"{p}.project", other) for _, p, other in effective if other and other != project]
    targets = [(t, p) for t, p, other in effective if other == project or other is None]
    first = targets[0][1]
    for service, why in GKE_APIS.items():
        req.apis.append(ApiRequirement(service, why, first))
    build = facts.webhook.build
    if build is not None and build.registry == "artifact-registry":
        why = "the Docker repository the stack pushes the webhook image to"
        req.apis.append(ApiRequirement(ARTIFACT_REGISTRY_API, why, "batchplane:webhook.build.registry"))
    for target, path in targets:
        req.clusters.append(gke_cluster(target, path))
        req.offerings.extend(zone_offerings(target, path))
    req.quotas = gke_quotas(targets)
    req.unsized = unsized_pools(targets)
    req.org_policies = org_policy_needs(req.clusters)
    builds = build is not None and build.registry == "artifact-registry"
    req.permissions = gke_permissions(targets, stack_webhook_ports(facts), builds)
    if build is not None and builds:
        for target, _ in targets:
            req.repositories.append(
                ArtifactRepository(
                    target.cluster_region(),
                    repository_id(target, build),
                    owner_label(facts.name),
                    "batchplane:webhook.build.repository",
                )
            )
    req.roles = iam_roles(req.clusters, req.permissions, builds)


def stack_webhook_ports(facts: StackFacts) -> list[int]:
    """The ports the webhook firewall rule of private nodes opens (none: no rule), as the program computes them
    (``cluster_webhook_ports`` in ``targets/gke/deploy.py``)."""
    ops = facts.operators
    return webhook_ports(
        kueue=ops is not None and ops.kueue.enabled,
        quota_webhook_port=facts.webhook.port if facts.webhook_enabled else None,
        training=ops is not None and ops.training.kind != "none",
    )


class GkePreflight(PlatformPreflight):
    """GKE's preflight half: the clusters' Google Cloud needs (requirements), checked with Application Default
    Credentials (or ``env.gcp_credentials``) against one project before any cluster is reached."""

    def add_requirements(self, facts: StackFacts, targets: list[tuple[Any, str]], req: Requirements) -> None:
        add_gke_requirements(facts, targets, req)

    def check_access(self, req: Requirements, report: Report, env: Environment) -> bool:
        """Run :func:`check_gcp` on the stack's project (``target.project``, ``gcp:project``, ``env.gcp_project``,
        ADC's project, in that order).

        Raises:
            CredentialsMissing: no Application Default Credentials, or no project to check.
        """
        if not req.clusters:
            return True
        credentials, adc_project = (
            (env.gcp_credentials, None) if env.gcp_credentials else default_credentials()
        )
        project = req.project or env.gcp_project or adc_project
        if project is None:
            raise CredentialsMissing(
                "no GCP project: set target.project or gcp:project (pulumi config set gcp:project …), or give "
                "--project"
            )
        if req.project is None:
            req.project = project
        check_gcp(req, report, make_clients(credentials, env.adapter), project)
        return True
