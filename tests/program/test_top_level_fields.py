"""Objects whose schema has top-level fields besides ``spec`` reach the Kubernetes provider whole.

Regression class: ``CustomResource`` takes only ``spec``; a WorkloadPriorityClass (``value``, ``description``)
crashed the program and any such object elsewhere lost its fields silently.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from batchplane.offline import run_program
from batchplane.offline.render import render_resources
from batchplane.offline.stackfile import read_stack_file
from tests.conftest import REPO_ROOT, SHARED, template_path
from tests.support.crdcheck import CrdCatalog

WPC_TYPE = "kubernetes:kueue.x-k8s.io/v1beta2:WorkloadPriorityClass"


def kind_config_with(**kueue: Any) -> dict[str, Any]:
    config = copy.deepcopy(read_stack_file(template_path("kind")))
    config["batchplane:kueue"].update(kueue)
    return config


@pytest.mark.parametrize("preview", [True, False], ids=["preview", "up"])
def test_workload_priority_classes_are_declared_with_value_and_description(preview: bool) -> None:
    config = kind_config_with(
        workloadPriorityClasses=[
            {"name": "urgent", "value": 10000, "description": "on-call fixes"},
            {"name": "batch", "value": -5},
        ]
    )
    run = run_program(REPO_ROOT, "kind", config, preview=preview)
    declared = {r.name: r.inputs for r in run.resources if r.type == WPC_TYPE}
    assert {name: (inputs.get("value"), inputs.get("description")) for name, inputs in declared.items()} == {
        "kueue-workloadpriorityclass-urgent": (10000, "on-call fixes"),
        "kueue-workloadpriorityclass-batch": (-5, None),
    }
    assert all("spec" not in inputs for inputs in declared.values())


def test_rendered_workload_priority_classes_pass_the_crd_check() -> None:
    config = kind_config_with(workloadPriorityClasses=[{"name": "urgent", "value": 7, "description": "d"}])
    rendering = render_resources(run_program(REPO_ROOT, "kind", config, preview=False).resources)
    (wpc,) = [r.manifest for r in rendering.objects if r.manifest["kind"] == "WorkloadPriorityClass"]
    assert (wpc["value"], wpc["description"]) == (7, "d")
    assert CrdCatalog.load(SHARED / "crds" / "kueue").validate(wpc) == []
