"""Typed config primitives: the pydantic models and rules every stack shares (no platform, no loading).

Modules: :mod:`~batchplane.config.base` (the model base class and the Kubernetes name/quantity types),
:mod:`~batchplane.config.kueue` (``batchplane:kueue``), :mod:`~batchplane.config.teams`,
:mod:`~batchplane.config.operators`, :mod:`~batchplane.config.kueue_configuration`,
:mod:`~batchplane.config.webhook`, :mod:`~batchplane.config.rules` (the cross-object Kueue rules).
A platform's own models live in :mod:`batchplane.targets`; loading a whole stack in :mod:`batchplane.stack`.
"""
