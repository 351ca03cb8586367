"""Topology-aware scheduling on GKE pools: ``gpuPools[].topology`` → a Kueue Topology and the flavor's
``topologyName``, Kueue's Topology rules at the pool's key, and replacement of a TAS flavor on an immutable change.

Kueue rules (``kubernetes-sigs/kueue`` v0.19.2): ``apis/kueue/v1beta2/topology_types.go`` L113-117 (1–16 levels,
unique, ``kubernetes.io/hostname`` only last), ``apis/kueue/v1beta2/resourceflavor_types.go`` L48-51 (a flavor with
``topologyName`` needs nodeLabels; then nodeLabels, tolerations and topologyName are immutable).
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from batchplane.components.kueue_queues import TOPOLOGY_FLAVOR_IMMUTABLE, replacement_options
from batchplane.errors import ConfigValidationError
from batchplane.stack import load_stack
from tests.conftest import SHARED
from tests.gke.conftest import a3_ultra_with as a3_ultra
from tests.gke.conftest import gke_with
from tests.gke.test_pool_flavors import named, objects
from tests.support.crdcheck import CrdCatalog

P = "target__gpuPools__0__"
BLOCK = "cloud.google.com/gce-topology-block"
SUBBLOCK = "cloud.google.com/gce-topology-subblock"
HOST = "cloud.google.com/gce-topology-host"
HOSTNAME = "kubernetes.io/hostname"
NODEPOOL = "cloud.google.com/gke-nodepool"
CRDS = CrdCatalog.load(SHARED / "crds" / "kueue" / "v0.19.2")


def issues(config: dict[str, Any]) -> list[str]:
    with pytest.raises(ConfigValidationError) as caught:
        load_stack(config)
    return [str(i) for i in caught.value.issues if i.severity == "error"]


def test_an_a3_ultra_pool_with_topology_gets_xpks_gke_default_topology_and_the_flavor_names_it() -> None:
    objs = objects(a3_ultra(**{P + "topology": {}}))
    assert named(objs, "Topology", "gke-default")["spec"] == {
        "levels": [
            {"nodeLabel": BLOCK},
            {"nodeLabel": SUBBLOCK},
            {"nodeLabel": HOST},
            {"nodeLabel": HOSTNAME},
        ]
    }
    flavor = named(objs, "ResourceFlavor", "l4")
    assert flavor["spec"]["topologyName"] == "gke-default"
    assert flavor["spec"]["nodeLabels"] == {NODEPOOL: "l4"}


def test_an_a4x_pool_defaults_to_cluster_toolkits_five_levels_with_the_node_pool_between_subblock_and_host() -> (
    None
):
    from batchplane.targets.gke.config import default_topology

    topo = default_topology("a4x-highgpu-4g")
    assert topo is not None
    assert (topo.name, topo.levels) == ("a4x-default", (BLOCK, SUBBLOCK, NODEPOOL, HOST, HOSTNAME))


def test_a_pool_without_topology_renders_no_topology_and_no_topology_name() -> None:
    objs = objects(a3_ultra())
    assert [o for o in objs if o["kind"] == "Topology"] == []
    assert "topologyName" not in named(objs, "ResourceFlavor", "l4")["spec"]


def test_a_g2_pool_needs_its_levels_listed_because_gke_sets_no_topology_labels_there() -> None:
    found = issues(gke_with(**{P + "topology": {}}))
    assert len(found) == 1
    assert found[0].startswith(
        "batchplane:target.gpuPools[0].topology.levels: required for machine type g2-standard-4"
    )


def test_a_g2_pool_with_hostname_levels_renders_a_topology_named_after_its_flavor() -> None:
    objs = objects(gke_with(**{P + "topology": {"levels": [NODEPOOL, HOSTNAME]}}))
    assert named(objs, "Topology", "l4-topology")["spec"]["levels"] == [
        {"nodeLabel": NODEPOOL},
        {"nodeLabel": HOSTNAME},
    ]


def test_every_broken_level_is_reported_at_its_index_at_once() -> None:
    found = issues(a3_ultra(**{P + "topology": {"levels": [HOSTNAME, BLOCK, BLOCK, "example.com/rack"]}}))
    base = "batchplane:target.gpuPools[0].topology.levels"
    assert sorted(found) == sorted(
        [
            f"{base}[0]: kubernetes.io/hostname may be used only as the last level",
            f'{base}[2]: duplicate level "{BLOCK}": levels must be unique',
            f'{base}[3]: the nodes of pool "l4" (a3-ultragpu-8g) do not carry the label "example.com/rack", so Kueue '
            "would find no topology domain for them; add it to this pool's labels or drop the level",
        ]
    )


def test_a_level_the_pool_labels_its_nodes_with_is_accepted() -> None:
    config = a3_ultra(
        **{
            P + "topology": {"levels": ["example.com/rack", HOSTNAME]},
            P + "labels": {"example.com/rack": "r1"},
        }
    )
    assert named(objects(config), "Topology", "l4-topology")["spec"]["levels"][0] == {
        "nodeLabel": "example.com/rack"
    }


def test_two_pools_naming_one_topology_with_different_levels_are_refused_at_the_second() -> None:
    second = {
        "name": "h200b",
        "provisioning": "spot",
        "machineType": "a3-ultragpu-8g",
        "nodeLocations": ["us-central1-a"],
        "maxNodes": 1,
        "topology": {"name": "gke-default", "levels": [BLOCK, HOSTNAME]},
    }
    found = issues(a3_ultra(**{P + "topology": {}, "target__gpuPools__1": second}))
    assert any(
        i.startswith(
            'batchplane:target.gpuPools[1].topology.name: Topology "gke-default" is declared by gpuPools[0]'
        )
        for i in found
    )


def test_a_hand_written_topology_of_the_same_name_with_other_levels_is_refused() -> None:
    config = a3_ultra(
        **{
            P + "topology": {},
            "kueue__topologies": [{"name": "gke-default", "levels": [{"nodeLabel": HOSTNAME}]}],
        }
    )
    found = issues(config)
    assert any(
        i.startswith(
            "batchplane:kueue.topologies[0].levels: ['kubernetes.io/hostname'] differ from the levels"
        )
        for i in found
    )


def test_a_hand_written_flavor_of_a_topology_pool_must_name_its_topology() -> None:
    flavor = {
        "name": "l4",
        "nodeLabels": {NODEPOOL: "l4"},
        "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
    }
    found = issues(a3_ultra(**{P + "topology": {}, "kueue__resourceFlavors__1": flavor}))
    assert (
        'batchplane:kueue.resourceFlavors[1].topologyName: must be "gke-default": flavor "l4" is the flavor of GKE node pool "l4" (batchplane:target.gpuPools[0]), which declares that topology'
        in found
    )


def test_the_rendered_topology_and_flavor_pass_the_kueue_crds() -> None:
    objs = objects(a3_ultra(**{P + "topology": {}}))
    for obj in objs:
        assert CRDS.validate(obj) == [], obj["metadata"]["name"]


def test_a_topology_flavor_is_replaced_when_an_immutable_field_changes_and_other_objects_are_not() -> None:
    objs = objects(a3_ultra(**{P + "topology": {}}))
    assert replacement_options(named(objs, "ResourceFlavor", "l4")) == {
        "replace_on_changes": list(TOPOLOGY_FLAVOR_IMMUTABLE),
        "delete_before_replace": True,
    }
    assert TOPOLOGY_FLAVOR_IMMUTABLE == ("spec.nodeLabels", "spec.tolerations", "spec.topologyName")
    assert replacement_options(named(objs, "ResourceFlavor", "default-flavor")) == {}
    assert replacement_options(named(objs, "Topology", "gke-default")) == {}


LABELS = st.sampled_from([BLOCK, SUBBLOCK, HOST, HOSTNAME, NODEPOOL, "example.com/rack"])


@settings(max_examples=40, deadline=None)
@given(levels=st.lists(LABELS, min_size=1, max_size=7))
def test_every_accepted_topology_renders_crd_valid_objects_and_every_refused_one_names_a_level_key(
    levels: list[str],
) -> None:
    config = a3_ultra(**{P + "topology": {"levels": levels}})
    try:
        objs = objects(config)
    except ConfigValidationError as caught:
        errors = [i for i in caught.issues if i.severity == "error"]
        assert errors
        assert all(i.path.startswith("batchplane:target.gpuPools[0].topology.levels[") for i in errors), (
            errors
        )
        return
    topology = [o for o in objs if o["kind"] == "Topology"]
    assert [level["nodeLabel"] for level in topology[0]["spec"]["levels"]] == levels
    for obj in objs:
        assert CRDS.validate(obj) == [], obj
