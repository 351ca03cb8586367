"""Operator upgrades: the step table (:mod:`.steps`), the cluster reader (:mod:`.cluster`) and the planner
(:mod:`.plan`) behind ``batchplane upgrade plan`` (docs/upgrading.md)."""
