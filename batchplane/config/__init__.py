"""Typed stack config: pydantic models of every ``batchplane:`` key, their validation and loading.

Use :func:`load_stack` (a config map → a validated :class:`Stack`) or :func:`load_stack_file`
(a ``Pulumi.<stack>.yaml`` file → :class:`Stack`).
"""

from batchplane.config.files import load_stack_file, read_stack_file
from batchplane.config.stack import CONFIG_NAMESPACE, Stack, StackConfig, load_stack, split_config

__all__ = [
    "CONFIG_NAMESPACE",
    "Stack",
    "StackConfig",
    "load_stack",
    "load_stack_file",
    "read_stack_file",
    "split_config",
]
