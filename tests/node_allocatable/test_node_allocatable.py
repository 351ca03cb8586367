"""Node allocatable from capacity: GKE's reservation tiers and OpenShift's default system-reserved."""

from __future__ import annotations

from decimal import Decimal

from hypothesis import given
from hypothesis import strategies as st

from batchplane.node_allocatable import (
    gke_allocatable,
    gke_reserved_cpu,
    gke_reserved_memory,
    openshift_allocatable,
)
from batchplane.targets.gke.machines import MACHINE_SHAPES

GIB = Decimal(2**30)
MIB = Decimal(2**20)

cores = st.integers(min_value=1, max_value=448).map(Decimal)
memory = st.integers(min_value=1, max_value=12 * 1024).map(lambda mib: Decimal(mib) * MIB)


def test_g2_standard_4_offers_3920m_cpu_and_16gi_less_2_6gi_and_the_eviction_threshold() -> None:
    got = gke_allocatable({"cpu": Decimal(4), "memory": 16 * GIB, "nvidia.com/gpu": Decimal(1)})
    assert got == {
        "cpu": Decimal("3.920"),
        "memory": Decimal(14283282841),  # 16 GiB − 2.6 GiB − 100 MiB = 14283282841.6 bytes, floored
        "nvidia.com/gpu": Decimal(1),
    }


def test_gke_memory_tiers_match_the_documented_worked_figures() -> None:
    # 25% of 4 + 20% of 4 + 10% of 8 + 6% of 112 = 9.32 GiB at 128 GiB; + 2% of the rest above it
    # (150 GiB: 9.76 GiB, 9.8577 GiB with the 100 MiB eviction threshold).
    assert gke_reserved_memory(128 * GIB) == Decimal("9.32") * GIB
    assert gke_reserved_memory(150 * GIB) == Decimal("9.76") * GIB
    assert gke_reserved_memory(256 * GIB) == Decimal("11.88") * GIB
    assert gke_reserved_memory(512 * MIB) == 255 * MIB
    assert gke_reserved_memory(4 * GIB) == GIB


def test_gke_cpu_tiers_match_the_documented_worked_figures() -> None:
    assert gke_reserved_cpu(Decimal(1)) == Decimal("0.06")
    assert gke_reserved_cpu(Decimal(2)) == Decimal("0.07")
    assert gke_reserved_cpu(Decimal(4)) == Decimal("0.08")
    assert gke_reserved_cpu(Decimal(208)) == Decimal("0.08") + 204 * Decimal("0.0025")


@given(cores, cores, memory, memory)
def test_gke_allocatable_is_monotone_in_machine_size_and_never_above_capacity(
    c1: Decimal, c2: Decimal, m1: Decimal, m2: Decimal
) -> None:
    small = {"cpu": min(c1, c2), "memory": min(m1, m2)}
    large = {"cpu": max(c1, c2), "memory": max(m1, m2)}
    a_small, a_large = gke_allocatable(small), gke_allocatable(large)
    for r in ("cpu", "memory"):
        assert 0 <= a_small[r] <= a_large[r]
        assert a_large[r] <= large[r]


def test_every_known_gke_machine_offers_less_than_its_capacity() -> None:
    for name, shape in MACHINE_SHAPES.items():
        cap = {"cpu": Decimal(shape.vcpus), "memory": shape.memory_gib * GIB}
        got = gke_allocatable(cap)
        assert got["cpu"] < cap["cpu"] and got["memory"] < cap["memory"], name


@given(cores, memory)
def test_openshift_allocatable_is_capacity_less_500m_cpu_and_1gi_plus_100mi(c: Decimal, m: Decimal) -> None:
    got = openshift_allocatable({"cpu": c, "memory": m, "nvidia.com/gpu": Decimal(8)})
    assert got["cpu"] == max(Decimal(0), c - Decimal("0.5"))
    assert got["memory"] == max(Decimal(0), m - GIB - 100 * MIB)
    assert got["nvidia.com/gpu"] == 8
