"""Operators (Helm installs and the Kueue readiness gate) — moved to :mod:`batchplane.operators.helm_installs` so
each platform's deploy half (:class:`batchplane.targets.deploy.PlatformDeploy`) can declare it; re-exported here."""

from batchplane.operators.helm_installs import TYPE_TOKEN, Operators, OperatorsArgs

__all__ = ["TYPE_TOKEN", "Operators", "OperatorsArgs"]
