"""A whole stack: the ``batchplane:`` config map → one validated :class:`Stack`, every error at once.

Use :func:`load_stack` (a config map → :class:`Stack`), :func:`load_stack_config` (typed models → :class:`Stack`) or :func:`load_stack_file` (a ``Pulumi.<stack>.yaml``
file → :class:`Stack`). This layer joins the shared config (:mod:`batchplane.config`) and the platforms
(:mod:`batchplane.targets`): the target union, pools → flavors per target, the stack-wide rules.
"""

from batchplane.stack.files import load_stack_file, read_stack_file
from batchplane.stack.load import load_stack, load_stack_config, split_config
from batchplane.stack.model import CONFIG_NAMESPACE, Stack, StackConfig

__all__ = [
    "CONFIG_NAMESPACE",
    "Stack",
    "StackConfig",
    "load_stack",
    "load_stack_config",
    "load_stack_file",
    "read_stack_file",
    "split_config",
]
