"""OpenShift's SecurityContextConstraints admission for one SCC (``restricted-v2``), transcribed for tests.

Decides whether a pod (its ``spec`` and ``metadata.annotations``) in a namespace with the annotations OpenShift's
cluster-policy-controller allocates (``openshift.io/sa.scc.uid-range``, ``openshift.io/sa.scc.supplemental-groups``,
``openshift.io/sa.scc.mcs``) is admitted by an SCC object such as ``restricted-v2``
(``../shared/reference/openshift-scc/``). Transcribed from openshift/apiserver-library-go, branch ``release-4.19``
at commit ``dc9a973f14ce11c6c251846997de360bd66245b6`` (``pkg/securitycontextconstraints/``):

* ``sccmatching/matcher.go``: ``AssignSecurityContext`` L114 (create the pod's security context, validate it, then
  each container's: create, validate), ``CreateProviderFromConstraint`` L221 (the SCC's empty UID range, SELinux
  level, fsGroup and supplemental-group ranges filled from the namespace), ``getPreallocatedUIDRange`` L270,
  ``getSupplementalGroupsAnnotation`` L305 (falls back to the UID range), ``getPreallocatedFSGroup`` L323 (only the
  first block's start: ``Min == Max``), ``parseSupplementalGroupAnnotation`` L367; the block syntax ``start/size`` or
  ``start-end`` is library-go ``pkg/security/uid/uid.go`` ``ParseBlock`` L18 (vendored there).
* ``sccmatching/provider.go``: ``CreatePodSecurityContext`` L102, ``CreateContainerSecurityContext`` L151,
  ``ValidatePodSecurityContext`` L257, ``ValidateContainerSecurityContext`` L333, ``hasHostPort`` L393,
  ``allowsVolumeType`` L493.
* strategies: ``user/mustrunasrange.go`` (Generate L36 = range min, Validate L41: required and in range),
  ``group/mustrunas.go`` (GenerateSingle L39, Validate L48), ``group/runasany.go`` (no check),
  ``capabilities/mustrunas.go`` (Generate L39 adds the required drops, Validate L70), ``seccomp/strategy.go``
  (Generate L63, ValidatePod L83, ValidateContainer L103, validateProfile L117), ``selinux/mustrunas.go``
  (Generate L34, Validate L39), ``util/util.go`` ``GetVolumeFSType`` L58 (the volume source's field name).

Only the strategies ``restricted-v2`` uses are transcribed (runAsUser ``MustRunAsRange``, fsGroup ``MustRunAs``,
supplementalGroups ``RunAsAny``, seLinuxContext ``MustRunAs``); another SCC raises :class:`NotTranscribed`. Sysctls
and user namespaces (``hostUsers``) are not checked: ``restricted-v2`` allows only the safe sysctls and does not
set ``userNamespaceLevel``; pods here set neither. The seLinux level comparison is string equality (upstream
compares sensitivity and category sets; the pods here never set a level).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

SCC_DIR = Path(__file__).resolve().parents[2] / ".." / "shared" / "reference" / "openshift-scc"
UID_RANGE_ANNOTATION = "openshift.io/sa.scc.uid-range"
SUPPLEMENTAL_GROUPS_ANNOTATION = "openshift.io/sa.scc.supplemental-groups"
MCS_ANNOTATION = "openshift.io/sa.scc.mcs"
SECCOMP_POD_ANNOTATION = "seccomp.security.alpha.kubernetes.io/pod"
SECCOMP_CONTAINER_ANNOTATION_PREFIX = "container.seccomp.security.alpha.kubernetes.io/"

#: A namespace as OpenShift's cluster-policy-controller annotates it (values in the format it writes).
EXAMPLE_NAMESPACE_ANNOTATIONS = {
    UID_RANGE_ANNOTATION: "1000680000/10000",
    SUPPLEMENTAL_GROUPS_ANNOTATION: "1000680000/10000",
    MCS_ANNOTATION: "s0:c26,c15",
}

#: ``GetVolumeFSType``: the SCC's FSType of a volume is the name of its source field.
VOLUME_SOURCES = (
    "hostPath", "emptyDir", "gcePersistentDisk", "awsElasticBlockStore", "gitRepo", "secret", "nfs", "iscsi",
    "glusterfs", "persistentVolumeClaim", "rbd", "flexVolume", "cinder", "cephfs", "flocker", "downwardAPI", "fc",
    "azureFile", "configMap", "vsphereVolume", "quobyte", "azureDisk", "photonPersistentDisk", "projected",
    "portworxVolume", "scaleIO", "storageos", "csi", "ephemeral", "image",
)  # fmt: skip


class NotTranscribed(ValueError):
    """The SCC uses a strategy this module does not transcribe."""


def load_scc(name: str) -> dict[str, Any]:
    """The default SCC ``name`` (``restricted-v2``) from ``../shared/reference/openshift-scc/``."""
    path = SCC_DIR / f"0000_20_kube-apiserver-operator_00_scc-{name}.yaml"
    loaded: dict[str, Any] = yaml.safe_load(path.read_text(encoding="utf-8"))
    return loaded


def parse_block(text: str) -> tuple[int, int]:
    """library-go ``uid.ParseBlock``: ``start/size`` → ``(start, start + size - 1)``; ``start-end`` → as given."""
    if "/" in text:
        start, size = (int(part) for part in text.split("/", 1))
        return start, start + size - 1
    start, end = (int(part) for part in text.split("-", 1))
    return start, end


@dataclass(frozen=True)
class _Resolved:
    uid_min: int
    uid_max: int
    fs_group_ranges: list[tuple[int, int]]
    selinux_level: str


def _resolve(scc: dict[str, Any], annotations: dict[str, str]) -> _Resolved:
    """``CreateProviderFromConstraint``: the namespace's allocations for the SCC's empty ranges."""
    run_as = scc.get("runAsUser") or {}
    if run_as.get("type") != "MustRunAsRange":
        raise NotTranscribed(f"runAsUser {run_as.get('type')}")
    if run_as.get("uidRangeMin") is None and run_as.get("uidRangeMax") is None:
        uid_min, uid_max = parse_block(annotations[UID_RANGE_ANNOTATION])
    else:
        uid_min, uid_max = int(run_as["uidRangeMin"]), int(run_as["uidRangeMax"])
    fs_group = scc.get("fsGroup") or {}
    if fs_group.get("type") != "MustRunAs":
        raise NotTranscribed(f"fsGroup {fs_group.get('type')}")
    ranges = [(int(r["min"]), int(r["max"])) for r in fs_group.get("ranges") or []]
    if not ranges:
        groups = annotations.get(SUPPLEMENTAL_GROUPS_ANNOTATION) or annotations[UID_RANGE_ANNOTATION]
        first = parse_block(groups.split(",")[0])[0]
        ranges = [(first, first)]
    if (scc.get("supplementalGroups") or {}).get("type") != "RunAsAny":
        raise NotTranscribed(f"supplementalGroups {(scc.get('supplementalGroups') or {}).get('type')}")
    selinux = scc.get("seLinuxContext") or {}
    if selinux.get("type") != "MustRunAs":
        raise NotTranscribed(f"seLinuxContext {selinux.get('type')}")
    level = (selinux.get("seLinuxOptions") or {}).get("level") or annotations[MCS_ANNOTATION]
    return _Resolved(uid_min, uid_max, ranges, level)


def _seccomp_name(profile: dict[str, Any] | None) -> str:
    """``seccompAnnotationForField``."""
    if not profile:
        return ""
    kind = profile.get("type")
    if kind == "Unconfined":
        return "unconfined"
    if kind == "RuntimeDefault":
        return "runtime/default"
    if kind == "Localhost" and profile.get("localhostProfile"):
        return f"localhost/{profile['localhostProfile']}"
    return ""


def _seccomp_problem(allowed: list[str], profile: str, where: str) -> str | None:
    """``validateProfile`` (seccomp/strategy.go L117)."""
    allow_any = "*" in allowed
    listed = [p for p in allowed if p != "*"]
    runtime_default = any(p in ("docker/default", "runtime/default") for p in listed)
    if not allow_any and not listed and profile:
        return f"{where}: seccomp may not be set"
    if not listed and not profile:
        return None
    if allow_any:
        return None
    if profile in listed or (runtime_default and profile in ("docker/default", "runtime/default")):
        return None
    return f"{where}: {profile} is not an allowed seccomp profile. Valid values are {listed}"


def admit(
    pod_spec: dict[str, Any],
    scc: dict[str, Any],
    namespace_annotations: dict[str, str],
    pod_annotations: dict[str, str] | None = None,
) -> list[str]:
    """The SCC's admission of one pod: every error ``AssignSecurityContext`` returns (empty = admitted).

    Args:
        pod_spec: the pod's ``spec`` (a pod template's ``spec``); not modified.
        scc: the SecurityContextConstraints object (:func:`load_scc`).
        namespace_annotations: the pod's namespace's annotations (:data:`EXAMPLE_NAMESPACE_ANNOTATIONS`).
        pod_annotations: the pod's annotations. Defaults to none.

    Raises:
        NotTranscribed: the SCC uses a strategy not transcribed here.
        KeyError: the namespace lacks an annotation the SCC needs (upstream refuses the pod then, too).
    """
    spec = copy.deepcopy(pod_spec)
    annotations = dict(pod_annotations or {})
    ns = _resolve(scc, namespace_annotations)
    errors: list[str] = []
    allowed_seccomp = [str(p) for p in scc.get("seccompProfiles") or []]

    # CreatePodSecurityContext (provider.go L102): fill what the pod leaves unset.
    psc = spec.setdefault("securityContext", {}) or {}
    spec["securityContext"] = psc
    if psc.get("fsGroup") is None:
        psc["fsGroup"] = ns.fs_group_ranges[0][0]
    if psc.get("seLinuxOptions") is None:
        psc["seLinuxOptions"] = {"level": ns.selinux_level}
    pod_profile = annotations.get(SECCOMP_POD_ANNOTATION) or _seccomp_name(psc.get("seccompProfile"))
    if not pod_profile and allowed_seccomp:
        pod_profile = allowed_seccomp[0]
    if pod_profile:
        annotations[SECCOMP_POD_ANNOTATION] = pod_profile

    errors += _validate_pod(scc, ns, spec, annotations, allowed_seccomp)

    # Each container (VisitContainersWithPath: init, regular, ephemeral): create, then validate.
    for group in ("initContainers", "containers", "ephemeralContainers"):
        for i, container in enumerate(spec.get(group) or []):
            errors += _container(scc, ns, spec, annotations, container, f"spec.{group}[{i}]")
    return errors


def _validate_pod(
    scc: dict[str, Any],
    ns: _Resolved,
    spec: dict[str, Any],
    annotations: dict[str, str],
    allowed_seccomp: list[str],
) -> list[str]:
    """``ValidatePodSecurityContext`` (provider.go L257)."""
    errors: list[str] = []
    psc = spec["securityContext"]
    fs_group = int(psc["fsGroup"])
    if not any(lo <= fs_group <= hi for lo, hi in ns.fs_group_ranges):
        errors.append(
            f"spec.securityContext.fsGroup: Invalid value: {fs_group}: {fs_group} is not an allowed group"
        )
    if problem := _seccomp_problem(
        allowed_seccomp, annotations.get(SECCOMP_POD_ANNOTATION, ""), "pod seccomp"
    ):
        errors.append(problem)
    errors += _selinux_problems(
        psc.get("seLinuxOptions"), ns.selinux_level, "spec.securityContext.seLinuxOptions"
    )
    for key, allow in (
        ("hostNetwork", "allowHostNetwork"),
        ("hostPID", "allowHostPID"),
        ("hostIPC", "allowHostIPC"),
    ):
        if spec.get(key) and not scc.get(allow):
            errors.append(
                f"spec.securityContext.{key}: Invalid value: true: Host {key[4:]} is not allowed to be used"
            )
    volumes = [str(v) for v in scc.get("volumes") or []]
    if spec.get("volumes") and "*" not in volumes:
        for i, volume in enumerate(spec["volumes"]):
            fs_type = next((s for s in VOLUME_SOURCES if s in volume), None)
            if fs_type is None:
                errors.append(f"spec.volumes[{i}]: unknown volume type")
            elif fs_type not in volumes and not (
                "secret" in volumes and fs_type == "projected" and _only_token_sources(volume["projected"])
            ):
                errors.append(
                    f"spec.volumes[{i}]: Invalid value: {fs_type!r}: {fs_type} volumes are not allowed to be used"
                )

    return errors


def _only_token_sources(projected: dict[str, Any]) -> bool:
    """``IsOnlyServiceAccountTokenSources``: the bound token volume (token, kube-root-ca.crt, namespace)."""
    sources = projected.get("sources") or []
    for source in sources:
        if "serviceAccountToken" in source:
            continue
        if "configMap" in source and source["configMap"].get("name") == "kube-root-ca.crt":
            continue
        if "downwardAPI" in source:
            continue
        return False
    return bool(sources)


def _selinux_problems(options: dict[str, Any] | None, level: str, where: str) -> list[str]:
    """``selinux/mustrunas.go`` Validate L39 against ``{level: <namespace level>}``."""
    if options is None:
        return [f"{where}: Required value"]
    problems = []
    if (options.get("level") or "") != level:
        problems.append(f"{where}.level: Invalid value: {options.get('level')!r}: must be {level}")
    for key in ("role", "type", "user"):
        if options.get(key):
            problems.append(f"{where}.{key}: Invalid value: {options[key]!r}: must be ")
    return problems


def _container(
    scc: dict[str, Any],
    ns: _Resolved,
    spec: dict[str, Any],
    annotations: dict[str, str],
    container: dict[str, Any],
    where: str,
) -> list[str]:
    """``assignContainerSecurityContext`` (matcher.go L138): ``CreateContainerSecurityContext`` L151, then
    ``ValidateContainerSecurityContext`` L333; effective values are the container's, else the pod's."""
    pod = spec.get("securityContext") or {}
    sc, caps = _create_container(scc, ns, pod, dict(container.get("securityContext") or {}))

    def effective(key: str) -> Any:
        return sc[key] if sc.get(key) is not None else pod.get(key)

    errors: list[str] = []
    uid = int(effective("runAsUser"))
    if not ns.uid_min <= uid <= ns.uid_max:
        errors.append(
            f"{where}.runAsUser: Invalid value: {uid}: must be in the ranges: [{ns.uid_min}, {ns.uid_max}]"
        )
    errors += _selinux_problems(effective("seLinuxOptions"), ns.selinux_level, f"{where}.seLinuxOptions")
    profile = (
        _seccomp_name(sc.get("seccompProfile"))
        or annotations.get(SECCOMP_CONTAINER_ANNOTATION_PREFIX + str(container.get("name")))
        or _seccomp_name(pod.get("seccompProfile"))
        or annotations.get(SECCOMP_POD_ANNOTATION, "")
    )
    allowed_seccomp = [str(p) for p in scc.get("seccompProfiles") or []]
    if problem := _seccomp_problem(allowed_seccomp, profile, f"{where} seccomp"):
        errors.append(problem)
    if sc.get("privileged") and not scc.get("allowPrivilegedContainer"):
        errors.append(f"{where}.privileged: Invalid value: true: Privileged containers are not allowed")
    errors += _capability_problems(scc, caps, where)
    errors += _host_problems(scc, spec, where)
    if scc.get("readOnlyRootFilesystem") and sc.get("readOnlyRootFilesystem") is not True:
        errors.append(f"{where}.readOnlyRootFilesystem: ReadOnlyRootFilesystem must be set to true")
    if scc.get("allowPrivilegeEscalation") is False and sc.get("allowPrivilegeEscalation") is not False:
        errors.append(
            f"{where}.allowPrivilegeEscalation: Allowing privilege escalation for containers is not allowed"
        )
    return errors


def _create_container(
    scc: dict[str, Any], ns: _Resolved, pod: dict[str, Any], sc: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """``CreateContainerSecurityContext`` (provider.go L151): the container's context with the SCC's defaults, and
    its capabilities after ``capabilities.Generate`` (the SCC's required drops added)."""

    def effective(key: str) -> Any:
        return sc[key] if sc.get(key) is not None else pod.get(key)

    if effective("runAsUser") is None:
        sc["runAsUser"] = ns.uid_min
    if effective("seLinuxOptions") is None:
        sc["seLinuxOptions"] = {"level": ns.selinux_level}
    if effective("runAsNonRoot") is None and int(effective("runAsUser")) > 0:
        sc["runAsNonRoot"] = True
    required_drop = {str(c) for c in scc.get("requiredDropCapabilities") or []}
    default_add = {str(c) for c in scc.get("defaultAddCapabilities") or []}
    caps = sc.get("capabilities")
    add = set((caps or {}).get("add") or [])
    drop = set((caps or {}).get("drop") or [])
    combined_add = (default_add - drop) | add
    combined_drop = required_drop | drop
    if len(combined_add) != len(add) or len(combined_drop) != len(drop):
        caps = {"add": sorted(combined_add), "drop": sorted(combined_drop)}
    if scc.get("readOnlyRootFilesystem") and sc.get("readOnlyRootFilesystem") is None:
        sc["readOnlyRootFilesystem"] = True
    if (
        scc.get("defaultAllowPrivilegeEscalation") is not None
        and sc.get("allowPrivilegeEscalation") is None
        and not sc.get("privileged")
        and "CAP_SYS_ADMIN" not in combined_add
    ):
        sc["allowPrivilegeEscalation"] = scc["defaultAllowPrivilegeEscalation"]
    if scc.get("allowPrivilegeEscalation") is False and sc.get("allowPrivilegeEscalation") is None:
        sc["allowPrivilegeEscalation"] = False
    return sc, caps


def _capability_problems(scc: dict[str, Any], caps: dict[str, Any] | None, where: str) -> list[str]:
    """``capabilities/mustrunas.go`` Validate L70."""
    required_drop = [str(c) for c in scc.get("requiredDropCapabilities") or []]
    default_add = [str(c) for c in scc.get("defaultAddCapabilities") or []]
    if caps is None:
        if default_add or required_drop:
            return [f"{where}.capabilities: required capabilities are not set on the securityContext"]
        return []
    allowed = {str(c) for c in scc.get("allowedCapabilities") or []}
    if "*" in allowed:
        return []
    errors = [
        f"{where}.capabilities.add: Invalid value: {cap!r}: capability may not be added"
        for cap in caps.get("add") or []
        if cap not in default_add and cap not in allowed
    ]
    drops = set(caps.get("drop") or [])
    errors += [
        f"{where}.capabilities.drop: {cap} is required to be dropped but was not found"
        for cap in required_drop
        if cap not in drops
    ]
    return errors


def _host_problems(scc: dict[str, Any], spec: dict[str, Any], where: str) -> list[str]:
    """The host namespaces and host ports of ``ValidateContainerSecurityContext`` (provider.go L350-L367)."""
    errors = []
    for key, allow in (
        ("hostNetwork", "allowHostNetwork"),
        ("hostPID", "allowHostPID"),
        ("hostIPC", "allowHostIPC"),
    ):
        if spec.get(key) and not scc.get(allow):
            errors.append(f"{where}.{key}: Invalid value: true: Host {key[4:]} is not allowed to be used")
    if not scc.get("allowHostPorts"):
        for group in ("initContainers", "containers", "ephemeralContainers"):
            for other in spec.get(group) or []:
                for port in other.get("ports") or []:
                    if int(port.get("hostPort") or 0) > 0:
                        errors.append(
                            f"{where}.hostPort: Invalid value: {port['hostPort']}: Host ports are not allowed to be used"
                        )
    return errors
