"""Typed config primitives: the pydantic models and rules every stack shares (no platform, no loading).

Modules: :mod:`~batchplane.config.base` (the model base class and the Kubernetes name/quantity types),
:mod:`~batchplane.config.kueue` (``batchplane:kueue``), :mod:`~batchplane.config.teams`,
:mod:`~batchplane.config.operators`, :mod:`~batchplane.config.kueue_configuration`,
:mod:`~batchplane.config.webhook`, :mod:`~batchplane.config.rules` (the cross-object Kueue rules).
A platform's own models live in :mod:`batchplane.targets`; loading a whole stack in :mod:`batchplane.stack`.
"""

__all__ = [
    "CONFIG_NAMESPACE",
    "Stack",
    "StackConfig",
    "load_stack",
    "load_stack_file",
    "read_stack_file",
    "split_config",
]

_MOVED_TO_STACK = frozenset(__all__)


def __getattr__(name: str) -> object:
    """Compatibility: the whole-stack API moved to :mod:`batchplane.stack`; ``from batchplane.config
    import load_stack`` keeps working, imported on first use so this package still imports nothing above it."""
    if name in _MOVED_TO_STACK:
        import batchplane.stack

        return getattr(batchplane.stack, name)
    raise AttributeError(f"module 'batchplane.config' has no attribute {name!r}")
