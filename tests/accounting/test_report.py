"""The JSON report: pod set entries, minCount and quantity formatting."""

from __future__ import annotations

from batchplane.accounting import report_json, workload_requests
from tests.accounting.conftest import batch_job, container, pod_template


def test_report_formats_quantities_and_includes_min_count_when_set() -> None:
    job = batch_job(
        pod_template(container({"cpu": "1750m", "memory": "1536Mi", "nvidia.com/gpu": "1"})), parallelism=2
    )
    job["metadata"]["annotations"] = {"kueue.x-k8s.io/job-min-parallelism": "1"}
    assert report_json(workload_requests(job)) == {
        "podSets": [
            {
                "name": "main",
                "count": 2,
                "minCount": 1,
                "perPod": {"cpu": "1750m", "memory": "1536Mi", "nvidia.com/gpu": "1"},
                "requests": {"cpu": "3500m", "memory": "3Gi", "nvidia.com/gpu": "2"},
            }
        ],
        "total": {"cpu": "3500m", "memory": "3Gi", "nvidia.com/gpu": "2"},
    }
