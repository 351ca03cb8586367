"""Run the real Pulumi program offline (Pulumi SDK mock engine) and render its Kubernetes objects.

No Pulumi CLI, plugins, network or cluster are involved; Pulumi itself is imported only when a
program runs. The API, for tests of the real program and for ``batchplane preview``/``render``::

    from batchplane.offline import read_stack_file, render_resources, run_program

    config = read_stack_file(Path("stacks/Pulumi.dev.yaml"))       # {"batchplane:kueue": {...}, ...}
    run = run_program(Path("."), "dev", config)                    # preview=True by default
    cq = run.get("kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue", "team-a")
    cq.inputs["spec"]["resourceGroups"], cq.dependencies, cq.provider_urn, cq.parent
    run.outputs, run.with_unknowns()
    rendering = render_resources(run_program(Path("."), "dev", config, preview=False).resources)
    rendering.to_yaml(), rendering.skipped                         # Helm charts etc. are skipped

Modules: :mod:`~batchplane.offline.engine` (running), :mod:`~batchplane.offline.model` (what is
recorded), :mod:`~batchplane.offline.stackfile` (stack files and CLI config encoding),
:mod:`~batchplane.offline.mocks` (ids, outputs and invoke results), :mod:`~batchplane.offline.render`.
"""

from __future__ import annotations

from batchplane.offline.engine import run_program
from batchplane.offline.model import UNKNOWN, ProgramRun, RecordedResource
from batchplane.offline.render import Rendering, render_resources
from batchplane.offline.stackfile import load_stack_file, read_stack_file

__all__ = [
    "UNKNOWN",
    "ProgramRun",
    "RecordedResource",
    "Rendering",
    "load_stack_file",
    "read_stack_file",
    "render_resources",
    "run_program",
]
