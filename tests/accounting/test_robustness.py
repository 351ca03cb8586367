"""Any mutation of a real workload either accounts or raises AccountingError — never another exception.

The webhook feeds untrusted AdmissionReview objects to the accounting; a crash there would be an
internal error on the admission path. Hypothesis replaces random subtrees of the shared samples
with values of the wrong type.
"""

from __future__ import annotations

import contextlib
import copy
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from batchplane.accounting import AccountingError, is_workload, workload_requests
from tests.conftest import SHARED


def _samples() -> list[dict[str, Any]]:
    docs: list[dict[str, Any]] = []
    for folder in ("kuberay", "training-operator", "appwrapper"):
        for path in sorted((SHARED / "samples" / folder).glob("*.yaml")):
            docs += [
                d
                for d in yaml.safe_load_all(Path(path).read_text())
                if isinstance(d, dict) and is_workload(d)
            ]
    return docs


SAMPLES = _samples()
JUNK = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.text(max_size=8),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=4), st.integers(), max_size=2),
)


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(node, dict):
        for key, value in node.items():
            out += _paths(value, (*prefix, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            out += _paths(value, (*prefix, i))
    return out


@st.composite
def mutated_workloads(draw: st.DrawFn) -> dict[str, Any]:
    obj = copy.deepcopy(draw(st.sampled_from(SAMPLES)))
    for _ in range(draw(st.integers(1, 3))):
        paths = [p for p in _paths(obj) if p]
        path = draw(st.sampled_from(paths))
        parent = obj
        for part in path[:-1]:
            parent = parent[part]
        parent[path[-1]] = draw(JUNK)
    return obj


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated_workloads())
def test_mutated_samples_account_or_raise_accounting_error_and_stay_as_they_were(obj: dict[str, Any]) -> None:
    before = copy.deepcopy(obj)
    with contextlib.suppress(AccountingError):
        workload_requests(obj)
    assert obj == before  # templates are shared with the object, so the accounting must only read them


def test_there_are_workload_samples_to_mutate() -> None:
    assert len(SAMPLES) >= 40
