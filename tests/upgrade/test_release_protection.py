"""The Kueue Helm release is retained on delete: a ``pulumi destroy`` of the operators or a replacement drops it
from the state without a ``helm uninstall``, so the CRDs its chart ships as templates — and every Kueue object —
stay. Other operators' releases are deleted as before."""

from __future__ import annotations

import asyncio
from typing import Any

import pulumi
import pytest

from batchplane.config.operators import OperatorHost, OperatorsConfig
from batchplane.operators import helm_operator
from batchplane.operators.helm_installs import _helm
from batchplane.operators.installs import operator_installs
from batchplane.wellknown import KUEUE_CHART_CRDS


class _Mocks(pulumi.runtime.Mocks):
    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        return f"{args.name}-id", dict(args.inputs)

    def call(self, args: pulumi.runtime.MockCallArgs) -> tuple[dict[str, Any], list[tuple[str, str]] | None]:
        return {}, None


def _release_options(monkeypatch: pytest.MonkeyPatch) -> dict[str, pulumi.ResourceOptions]:
    asyncio.set_event_loop(asyncio.new_event_loop())  # pulumi's mocks need one; xdist workers may have none
    pulumi.runtime.set_mocks(_Mocks(), preview=True)
    seen: dict[str, pulumi.ResourceOptions] = {}

    class Release:
        def __init__(self, resource_name: str, **kwargs: Any) -> None:
            seen[str(kwargs["name"])] = kwargs["opts"]
            self.status = None

    monkeypatch.setattr(helm_operator.k8s.helm.v3, "Release", Release)
    installs = operator_installs(OperatorsConfig.model_validate({}), OperatorHost(kind="kind"), ["team-a"])
    for install in (installs.cert_manager, installs.kuberay, installs.kueue):
        assert install is not None
        _helm("batchplane-operators", install, pulumi.ResourceOptions())
    return seen


def test_the_kueue_release_is_retained_on_delete_and_names_the_crds_it_protects(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    options = _release_options(monkeypatch)
    assert options["kueue"].retain_on_delete is True
    installs = operator_installs(OperatorsConfig.model_validate({}), OperatorHost(kind="kind"), [])
    assert installs.kueue is not None and installs.kueue.template_crds == KUEUE_CHART_CRDS
    assert "workloads.kueue.x-k8s.io" in KUEUE_CHART_CRDS and len(KUEUE_CHART_CRDS) == 11


def test_charts_without_template_crds_are_uninstalled_as_before(monkeypatch: pytest.MonkeyPatch) -> None:
    options = _release_options(monkeypatch)
    others = {name: opts.retain_on_delete for name, opts in options.items() if name != "kueue"}
    assert others and not any(others.values())
