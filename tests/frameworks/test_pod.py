"""Pod groups become one Workload with one PodSet per role, as Kueue v0.19.2 builds it
(pkg/controller/jobs/pod/pod_controller.go constructGroupPodSets / constructGroupPodSetsFast)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from batchplane.accounting import AccountingError, workload_requests
from batchplane.accounting.pod_groups import group_pods
from batchplane.frameworks.pod import role_hash
from tests.frameworks.pod_objects import group_pod


def _shape(pods: list[dict[str, object]]) -> list[tuple[str, int, dict[str, int]]]:
    (grouped,) = group_pods(pods)
    workload = workload_requests(grouped)
    return [(ps.name, ps.count, ps.stored) for ps in workload.pod_sets]


def test_three_equal_pods_of_a_group_are_one_pod_set_of_three() -> None:
    pods = [group_pod(f"p{i}", {"cpu": "4"}, image=f"img{i}") for i in range(3)]
    ((name, count, stored),) = _shape(pods)
    assert (name, count, stored) == (role_hash(pods[0]), 3, {"cpu": 4000})


def test_pods_of_two_roles_make_two_pod_sets_counted_per_role_and_sorted_by_role() -> None:
    pods = [group_pod("leader", {"cpu": "8"}, total=4)] + [
        group_pod(f"w{i}", {"cpu": "1"}, total=4) for i in range(3)
    ]
    shape = _shape(pods)
    assert sorted((count, stored["cpu"]) for _, count, stored in shape) == [(1, 8000), (3, 1000)]
    assert [name for name, _, _ in shape] == sorted(role_hash(p) for p in (pods[0], pods[1]))


def test_a_lone_group_pod_stands_for_total_count_pods_of_its_shape() -> None:
    workload = workload_requests(group_pod("p0", {"cpu": "4"}, total=3))
    assert [(ps.count, ps.stored) for ps in workload.pod_sets] == [(3, {"cpu": 4000})]
    assert workload.total["cpu"] == 12


def test_an_incomplete_group_of_one_role_is_judged_at_its_total_count() -> None:
    assert [c for _, c, _ in _shape([group_pod("p0", {"cpu": "1"}, total=5)] * 2)] == [5]


def test_fast_admission_takes_the_first_pods_shape_for_the_whole_group() -> None:
    fast = {"kueue.x-k8s.io/pod-group-fast-admission": "true"}
    pods = [group_pod("a", {"cpu": "2"}, total=4, annotations=fast), group_pod("b", {"cpu": "9"}, total=4)]
    assert [(c, s) for _, c, s in _shape(pods)] == [(4, {"cpu": 2000})]


def test_pods_beyond_the_total_count_are_not_counted() -> None:
    pods = [group_pod(f"p{i}", {"cpu": "1"}, total=2) for i in range(5)]
    assert [c for _, c, _ in _shape(pods)] == [2]


def test_the_role_hash_annotation_overrides_the_computed_role() -> None:
    pods = [
        group_pod("a", {"cpu": "1"}, annotations={"kueue.x-k8s.io/role-hash": "same"}),
        group_pod("b", {"cpu": "2"}, annotations={"kueue.x-k8s.io/role-hash": "same"}),
    ]
    assert [(n, c) for n, c, _ in _shape(pods)] == [("same", 3)]


@pytest.mark.parametrize(
    ("total", "reason"), [(None, "is required"), ("x", "must be an integer"), (0, "greater than zero")]
)
def test_a_missing_or_invalid_total_count_is_an_accounting_error_naming_the_annotation(
    total: object, reason: str
) -> None:
    with pytest.raises(AccountingError, match=f"pod-group-total-count: .*{reason}"):
        workload_requests(group_pod("p", {"cpu": "1"}, total=total))  # type: ignore[arg-type]


def test_a_pod_without_the_group_label_stays_its_own_workload_of_one_pod() -> None:
    workload = workload_requests(group_pod("solo", {"cpu": "4"}, group=None, total=None))
    assert [(ps.name, ps.count) for ps in workload.pod_sets] == [("main", 1)]


@settings(max_examples=40, deadline=None)
@given(
    cpu=st.integers(min_value=1, max_value=64),
    name=st.text("abcdefgh", min_size=1, max_size=8),
    image=st.text("abcdefgh", min_size=1, max_size=8),
    other=st.integers(min_value=1, max_value=64),
)
def test_the_role_ignores_names_and_images_and_follows_the_requests(
    cpu: int, name: str, image: str, other: int
) -> None:
    a = group_pod("a", {"cpu": str(cpu)})
    b = group_pod(name, {"cpu": str(cpu)}, image=image)
    c = group_pod("c", {"cpu": str(other)})
    assert role_hash(a) == role_hash(b)
    assert (role_hash(a) == role_hash(c)) == (cpu == other)
