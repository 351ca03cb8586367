"""Properties of the accounting arithmetic that hold for any input."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from batchplane.accounting import PodSetRequests, WorkloadRequests, workload_requests
from batchplane.accounting.model import to_stored
from tests.accounting.conftest import batch_job, container, pod_template

millicores = st.integers(min_value=0, max_value=64_000).map(lambda m: f"{m}m")
mebibytes = st.integers(min_value=0, max_value=1 << 20).map(lambda m: f"{m}Mi")
containers = st.lists(st.fixed_dictionaries({"cpu": millicores, "memory": mebibytes}), min_size=1, max_size=4)


def pod_set(name: str, count: int, per_pod: dict[str, Decimal]) -> PodSetRequests:
    stored = {resource: to_stored(resource, amount) for resource, amount in per_pod.items()}
    return PodSetRequests(name=name, count=count, min_count=None, stored=stored, template={})


@given(
    st.lists(
        st.tuples(
            st.integers(min_value=0, max_value=1000),
            st.dictionaries(
                st.sampled_from(["cpu", "memory", "nvidia.com/gpu"]),
                st.integers(min_value=0, max_value=10**9).map(Decimal),
            ),
        ),
        max_size=6,
    )
)
def test_workload_total_is_the_sum_of_pod_set_requests(sets: list[tuple[int, dict[str, Decimal]]]) -> None:
    pod_sets = tuple(pod_set(f"ps{i}", count, per_pod) for i, (count, per_pod) in enumerate(sets))
    workload = WorkloadRequests("Job", "j", None, None, None, pod_sets)
    expected: dict[str, Decimal] = {}
    for ps in pod_sets:
        for resource, amount in ps.per_pod.items():
            expected[resource] = expected.get(resource, Decimal(0)) + amount * ps.count
    assert workload.total == expected


@given(containers, st.integers(min_value=1, max_value=10_000))
def test_job_requests_scale_with_parallelism(requests: list[dict[str, Any]], parallelism: int) -> None:
    template = pod_template(*(container(r, name=f"c{i}") for i, r in enumerate(requests)))
    single = workload_requests(batch_job(template)).pod_sets[0]
    scaled = workload_requests(batch_job(template, parallelism=parallelism)).pod_sets[0]
    assert scaled.per_pod == single.per_pod
    assert scaled.requests == {r: amount * parallelism for r, amount in single.per_pod.items()}


@given(containers)
def test_containers_are_summed_and_init_containers_never_lower_requests(
    requests: list[dict[str, Any]],
) -> None:
    regular = pod_template(*(container(r, name=f"c{i}") for i, r in enumerate(requests)))
    with_init = dict(regular)
    with_init["spec"] = dict(regular["spec"], initContainers=[container(requests[0], name="init")])
    plain = workload_requests(batch_job(regular)).pod_sets[0].per_pod
    assert plain["cpu"] == sum((Decimal(r["cpu"][:-1]) / 1000 for r in requests), Decimal(0))
    init = workload_requests(batch_job(with_init)).pod_sets[0].per_pod
    assert all(init[r] >= plain[r] for r in plain)


def test_requests_saturate_at_kueue_int64_limit() -> None:
    huge = pod_set("p", 10, {"nvidia.com/gpu": Decimal(2**62)})
    assert huge.requests == {"nvidia.com/gpu": Decimal(2**63 - 1)}
