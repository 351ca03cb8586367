"""Kubeflow Trainer's built-in ClusterTrainingRuntimes, bundled per Trainer version, and the ones a stack installs.

The ``kubeflow-trainer`` chart installs its built-in runtimes (``torch-distributed``, ``deepspeed-distributed`` …)
only when its values enable them (``runtimes.defaultEnabled`` or ``runtimes.<runtime>.enabled``, all ``false`` by
default: https://github.com/kubeflow/trainer/blob/v2.3.0/charts/kubeflow-trainer/values.yaml and
``templates/runtimes/_runtimes.tpl``). :func:`installed_builtin_runtimes` returns those the values enable, read from
``batchplane/data/trainer_runtimes/<tag>/`` (copied from ``manifests/base/runtimes`` at that tag; see its
``SOURCES.md``).
"""

from __future__ import annotations

from collections.abc import Mapping
from importlib import resources
from typing import Any

import yaml

#: Chart value path → the file of the runtime it installs (``_runtimes.tpl`` at v2.3.0).
CHART_RUNTIMES: dict[tuple[str, ...], str] = {
    ("torchDistributed",): "torch_distributed.yaml",
    ("deepspeedDistributed",): "deepspeed_distributed.yaml",
    ("mlxDistributed",): "mlx_distributed.yaml",
    ("jaxDistributed",): "jax_distributed.yaml",
    ("xgboostDistributed",): "xgboost_distributed.yaml",
    ("torchtuneDistributed", "llama3_2_1B"): "llama3_2_1B.yaml",
    ("torchtuneDistributed", "llama3_2_3B"): "llama3_2_3B.yaml",
    ("torchtuneDistributed", "qwen2_5_1_5B"): "qwen2_5_1.5B.yaml",
}


def bundled_runtimes(version: str) -> dict[str, dict[str, Any]]:
    """Every bundled built-in runtime of Trainer ``version`` (``2.3.0``): file name → the ClusterTrainingRuntime.

    Raises:
        FileNotFoundError: no runtimes are bundled for ``version``.
    """
    folder = resources.files("batchplane").joinpath("data", "trainer_runtimes", f"v{version}")
    if not folder.is_dir():
        raise FileNotFoundError(f"no Kubeflow Trainer runtimes bundled for v{version}")
    return {
        entry.name: yaml.safe_load(entry.read_text(encoding="utf-8"))
        for entry in sorted(folder.iterdir(), key=lambda e: e.name)
        if entry.name.endswith(".yaml")
    }


def _enabled(values: Mapping[str, Any], path: tuple[str, ...]) -> bool:
    node: Any = values.get("runtimes")
    for key in path:
        node = node.get(key) if isinstance(node, Mapping) else None
    return isinstance(node, Mapping) and node.get("enabled") is True


def installed_builtin_runtimes(version: str | None, values: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The built-in ClusterTrainingRuntimes the ``kubeflow-trainer`` chart ``version`` installs with Helm ``values``
    (the stack's ``operators.training.values``): all with ``runtimes.defaultEnabled``, else each one whose
    ``runtimes.<name>.enabled`` is true; none when ``version`` is ``None`` (Trainer not installed) or unbundled."""
    if version is None:
        return []
    try:
        bundled = bundled_runtimes(version)
    except FileNotFoundError:
        return []
    runtimes = values.get("runtimes")
    every = isinstance(runtimes, Mapping) and runtimes.get("defaultEnabled") is True
    return [bundled[name] for path, name in CHART_RUNTIMES.items() if every or _enabled(values, path)]


def stack_builtin_runtimes(stack: Any) -> list[dict[str, Any]]:
    """:func:`installed_builtin_runtimes` of a loaded stack (:class:`batchplane.stack.load.Stack`): its
    ``operators.training`` when that installs Trainer v2, else none."""
    operators = stack.config.operators
    training = operators.training if operators is not None else None
    if training is None or training.kind != "trainer-v2":
        return []
    return installed_builtin_runtimes(training.resolved_version(), training.values)
