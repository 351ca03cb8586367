"""The cluster version, resolved when ``pulumi up`` runs instead of pinned in a template.

GKE versions leave the release channels every few months, so a version written into a stack file rots: a template
carrying ``minMasterVersion: "1.33"`` stops creating clusters once the channel no longer offers 1.33. A stack
therefore leaves ``minMasterVersion`` unset by default, GKE creates the control plane at the channel's default
version, and at deploy time :class:`~batchplane.targets.gke.cluster.GkeCluster` reads the versions the location
offers (pulumi-gcp's ``gcp.container.get_engine_versions``, which calls the Kubernetes Engine API's
``projects.locations.getServerConfig``) and refuses, before anything is created, a channel whose default is below
what the pools need (queued provisioning, flex-start), or a configured floor the channel does not offer.

Pure functions: no Pulumi import. pulumi-gcp's data source:
https://www.pulumi.com/registry/packages/gcp/api-docs/container/getengineversions/ (pulumi-gcp v10.2.0).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from batchplane.targets.gke.config import GkeTarget, parse_gke_version, version_floor

__all__ = ["EngineVersions", "deploy_version_problems", "matching_versions", "newest_first"]


@dataclass(frozen=True)
class EngineVersions:
    """What ``get_engine_versions`` reports for a location (the fields the checks read).

    Attributes:
        default_cluster_version: the version a cluster without a channel gets.
        release_channel_default_version: channel (``REGULAR`` …) → the version a new cluster on it gets.
        release_channel_latest_version: channel → the newest version it offers.
        valid_master_versions: every control-plane version the location offers, newest first.
    """

    default_cluster_version: str = ""
    release_channel_default_version: Mapping[str, str] = field(default_factory=dict)
    release_channel_latest_version: Mapping[str, str] = field(default_factory=dict)
    valid_master_versions: Sequence[str] = ()

    @classmethod
    def from_result(cls, result: Any) -> EngineVersions:
        """From pulumi-gcp's ``GetEngineVersionsResult`` (or anything with the same attributes)."""
        return cls(
            default_cluster_version=getattr(result, "default_cluster_version", "") or "",
            release_channel_default_version=dict(
                getattr(result, "release_channel_default_version", None) or {}
            ),
            release_channel_latest_version=dict(
                getattr(result, "release_channel_latest_version", None) or {}
            ),
            valid_master_versions=tuple(getattr(result, "valid_master_versions", None) or ()),
        )


def matching_versions(valid: Iterable[str], wanted: str) -> list[str]:
    """The versions of ``valid`` that ``wanted`` selects, newest first: the one matcher of the deploy-time check
    (:func:`deploy_version_problems`) and ``batchplane preflight``.

    GKE's ``minMasterVersion`` accepts a full version or a prefix of one ("Versioning": ``1.X``, ``1.X.Y``,
    ``1.X.Y-gke.N``; cloud.google.com/kubernetes-engine/versioning#specifying_cluster_version), and a location offers
    full versions (``1.32.2-gke.1652000``). A prefix selects a version when every part it names is equal:
    ``1.32.2`` selects ``1.32.2-gke.1652000``, ``1.3`` never selects ``1.33.0-gke.1``.

    Args:
        valid: offered versions (``getServerConfig``'s ``validMasterVersions`` or a channel's ``validVersions``).
        wanted: the configured version or prefix.

    Returns:
        The selected versions, newest first (versions that do not parse are ignored).
    """
    want = parse_gke_version(wanted)
    if want is None:
        return []
    depth = wanted.count(".") + (1 if "-gke." in wanted else 0) + 1
    out: list[tuple[tuple[int, int, int, int], str]] = []
    for version in valid:
        have = parse_gke_version(version)
        if have is not None and have[:depth] == want[:depth]:
            out.append((have, version))
    return [v for _, v in sorted(out, reverse=True)]


def newest_first(valid: Iterable[str]) -> list[str]:
    """The GKE versions of ``valid``, newest first (text that is no GKE version is left out)."""
    parsed = [(v, parse_gke_version(v)) for v in valid]
    return [
        v for v, p in sorted(((v, p) for v, p in parsed if p is not None), key=lambda vp: vp[1], reverse=True)
    ]


def _below(have: str, need: str) -> bool:
    a, b = parse_gke_version(have), parse_gke_version(need)
    return a is not None and b is not None and a < b


def deploy_version_problems(
    target: GkeTarget, versions: EngineVersions, base: str = "batchplane:target"
) -> list[str]:
    """Why the cluster cannot be created at the versions its location offers now, each naming its config key.

    Args:
        target: the validated GKE target.
        versions: what the location offers (:meth:`EngineVersions.from_result`).
        base: the key path of the target.

    Returns:
        One message per problem (empty when the cluster can be created):

        * ``minMasterVersion`` unset and the channel's default version below the pools' floor
          (:func:`~batchplane.targets.gke.config.version_floor`);
        * ``minMasterVersion`` set but no offered control-plane version matches it, or it is newer than the channel's
          newest version (GKE refuses a version outside the channel).
    """
    channel = target.release_channel
    default = versions.release_channel_default_version.get(channel) or versions.default_cluster_version
    latest = versions.release_channel_latest_version.get(channel, "")
    floor = version_floor(target)
    configured = target.min_master_version
    out: list[str] = []
    if configured is None:
        if floor is not None and default and _below(default, floor[0]):
            out.append(
                f"{base}.releaseChannel: the {channel} channel's default version in {target.location()} is "
                f"{default}, below {floor[0]}, {floor[1]}; set minMasterVersion to a version of the channel at "
                f"least {floor[0]} (newest offered: {latest or 'unknown'}) or use the RAPID channel"
            )
        return out
    prefix_match = matching_versions(versions.valid_master_versions, configured)
    if versions.valid_master_versions and not prefix_match:
        offered = ", ".join(sorted({".".join(v.split(".")[:2]) for v in versions.valid_master_versions}))
        out.append(
            f'{base}.minMasterVersion: "{configured}" is not offered in {target.location()} any more (offered: '
            f"{offered}); remove minMasterVersion to follow the {channel} channel's default ({default}), or "
            "set a version it offers"
        )
    elif latest and _below(latest, configured):
        out.append(
            f'{base}.minMasterVersion: "{configured}" is newer than the {channel} channel\'s newest version '
            f"({latest}) in {target.location()}; GKE creates clusters on a channel only at its versions"
        )
    return out
