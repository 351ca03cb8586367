"""GPU MachineSets copy a worker MachineSet of their zone (as OpenShift's docs do) instead of guessing installer names.

A cluster installed by the Cluster API-based installer (OpenShift 4.19+) names its private subnets
``<infra>-subnet-private-<zone>`` and its security groups ``<infra>-node``/``<infra>-lb``; the old defaults
``<infra>-private-<zone>``/``<infra>-worker-sg`` do not exist there. The deploy-time lookup reads the cluster's
MachineSets through the real kubernetes client (a loopback server answering from
``tests/preflight/recordings/openshift/worker-machinesets.json``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from batchplane.operators.readiness import GateError, KubernetesClusterClient
from batchplane.targets.openshift.config import OpenShiftTarget
from batchplane.targets.openshift.gpu import AwsMachine
from batchplane.targets.openshift.machine_lookup import lookup_outputs
from batchplane.targets.openshift.machines import (
    choose_worker_machine_set,
    copied_provider_spec,
    machine_set,
    machine_set_sources,
)
from tests.preflight.olm_helpers import kubeconfig
from tests.preflight.replay import RecordedServer, load

INFRA = "ocp-ai-7x2kq"


def target(**aws: Any) -> OpenShiftTarget:
    return OpenShiftTarget.model_validate(
        {
            "kind": "openshift",
            "context": "ocp",
            "infrastructureId": INFRA,
            "gpuPools": [
                {
                    "name": "a10g",
                    "aws": {"instanceType": "g5.2xlarge", "region": "us-east-1", "zone": "us-east-1a", **aws},
                    "maxReplicas": 4,
                }
            ],
        }
    )


def deployed_provider_spec(tgt: OpenShiftTarget, recording: str, tmp_path: Path) -> dict[str, Any]:
    """What ``pulumi up`` declares as the pool's providerSpec: the lookup through the kubernetes client, then the copy."""
    [source] = machine_set_sources(tgt)
    assert source is not None
    with RecordedServer(load(recording)) as server:
        client = KubernetesClusterClient(str(kubeconfig(tmp_path, server.url, "ocp")), "ocp")
        outs = lookup_outputs(
            {
                "pool": "a10g",
                "zone": source.zone,
                "infrastructureId": INFRA,
                "sourceMachineSet": source.explicit,
            },
            client,
        )
    assert outs["checked"] is True
    return copied_provider_spec(outs["providerSpec"], INFRA, source.aws)


def test_a_capi_installed_cluster_gets_its_own_subnet_and_security_groups(tmp_path: Path) -> None:
    spec = deployed_provider_spec(target(), "openshift/worker-machinesets.json", tmp_path)
    assert spec["subnet"] == {
        "filters": [{"name": "tag:Name", "values": [f"{INFRA}-subnet-private-us-east-1a"]}]
    }
    assert spec["securityGroups"] == [
        {"filters": [{"name": "tag:Name", "values": [f"{INFRA}-node"]}]},
        {"filters": [{"name": "tag:Name", "values": [f"{INFRA}-lb"]}]},
    ]
    assert (spec["ami"], spec["iamInstanceProfile"]) == (
        {"id": "ami-0c3b1a2f9e8d7c6b5"},
        {"id": f"{INFRA}-worker-profile"},
    )
    assert spec["instanceType"] == "g5.2xlarge"  # only the instance type (and placement) change
    assert spec["tags"] == [
        {"name": f"kubernetes.io/cluster/{INFRA}", "value": "owned"},
        {"name": "cost-center", "value": "ml-platform"},
    ]
    assert spec["blockDevices"][0]["ebs"]["kmsKey"] == {"arn": ""}  # everything else is the worker's


def test_explicit_settings_win_field_by_field(tmp_path: Path) -> None:
    spec = deployed_provider_spec(
        target(ami="ami-0123456789abcdef0", rootVolume={"sizeGiB": 500}, tags={"cost-center": "gpu"}),
        "openshift/worker-machinesets.json",
        tmp_path,
    )
    assert spec["ami"] == {"id": "ami-0123456789abcdef0"}
    assert spec["blockDevices"][0]["ebs"] == {
        "encrypted": True,
        "iops": 0,
        "kmsKey": {"arn": ""},
        "volumeSize": 500,
        "volumeType": "gp3",
    }
    assert {"name": "cost-center", "value": "gpu"} in spec["tags"]
    assert spec["subnet"]["filters"][0]["values"] == [f"{INFRA}-subnet-private-us-east-1a"]  # still copied


def test_a_zone_without_a_worker_machine_set_fails_the_lookup_naming_what_exists(tmp_path: Path) -> None:
    with pytest.raises(GateError, match="no worker MachineSet in zone us-east-1a") as caught:
        deployed_provider_spec(target(), "openshift/workers-elsewhere.json", tmp_path)
    assert f"{INFRA}-worker-us-east-1b" in str(caught.value) and "aws.sourceMachineSet" in str(caught.value)


def test_the_pools_own_machine_set_and_other_zones_are_never_copied() -> None:
    items = load("openshift/worker-machinesets.json")[0]["body"]["items"]
    choice = choose_worker_machine_set(list(reversed(items)), "us-east-1a", INFRA)
    assert choice.name == f"{INFRA}-worker-us-east-1a"
    assert choose_worker_machine_set(items, "us-east-1a", INFRA, f"{INFRA}-worker-us-east-1b").problem == (
        f"MachineSet {INFRA}-worker-us-east-1b is in zone us-east-1b, not us-east-1a"
    )


def test_without_a_lookup_nothing_guesses_the_old_installer_names() -> None:
    """What main did: rendered `<infra>-worker-sg` and `<infra>-private-<zone>`, names a 4.19+ cluster lacks."""
    ms = machine_set(target(), target().gpu_pools[0], Path.cwd())
    assert ms["spec"]["template"]["spec"]["providerSpec"]["value"] is None  # filled at deploy time
    explicit = target(
        ami="ami-0123456789abcdef0",
        subnet="net-a",
        securityGroups=["sg-a"],
        iamInstanceProfile="profile-a",
    )
    assert machine_set_sources(explicit) == [None]  # everything given: nothing to copy
    value = machine_set(explicit, explicit.gpu_pools[0], Path.cwd())["spec"]["template"]["spec"][
        "providerSpec"
    ]["value"]
    assert (value["subnet"]["filters"][0]["values"], value["securityGroups"]) == (
        ["net-a"],
        [{"filters": [{"name": "tag:Name", "values": ["sg-a"]}]}],
    )


def test_aws_settings_without_an_ami_are_valid() -> None:
    assert AwsMachine.model_validate(
        {"instanceType": "g5.2xlarge", "region": "us-east-1", "zone": "us-east-1a"}
    ).copies_worker()
