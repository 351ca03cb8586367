"""Manifests the CLI tests feed to `explain`, `requests` and `webhook review`."""

from __future__ import annotations


def job(cpu: str = "1", name: str = "sample-job", parallelism: int = 3) -> str:
    """A Job of ``parallelism`` pods of ``cpu`` CPUs and 200Mi in the kind template's team-a namespace, on its
    ``default`` LocalQueue (4 CPUs of nominal quota, no cohort)."""
    return f"""\
apiVersion: batch/v1
kind: Job
metadata:
  name: {name}
  namespace: team-a
  labels:
    kueue.x-k8s.io/queue-name: default
spec:
  parallelism: {parallelism}
  completions: {parallelism}
  template:
    spec:
      containers:
        - name: main
          image: registry.k8s.io/e2e-test-images/agnhost:2.53
          resources:
            requests: {{cpu: "{cpu}", memory: 200Mi}}
      restartPolicy: Never
"""
