"""Deploy-time lookups, and whether their answer is a fact about the world or a canned one.

A stack resolves some things when ``pulumi up`` runs instead of pinning them (the brief's lesson: "prefer resolving
at deploy time"): GKE's offered versions (``gcp.container.get_engine_versions``), the project
(``gcp.organizations.get_client_config``), and on OpenShift objects the cluster already has. Offline
(``batchplane preview``/``render``/``check``, tests) the offline engine answers those lookups from
:mod:`batchplane.offline.mocks`: one fixed answer for every project, region and cluster. Such an answer is not a
fact, so a deploy-time check that reads it must neither refuse the stack nor claim anything about the region; it
reports the check as *not checked* and names ``batchplane preflight``, which asks the real API with the user's
credentials.

The mechanism, for every platform:

* a lookup is named by its Pulumi invoke token (``gcp:container/getEngineVersions:getEngineVersions``) or, for a
  lookup that is not an invoke (a dynamic provider's read of a cluster object), by a name of its own
  (``openshift:MachineSet``);
* the offline engine runs the program inside :func:`canned_answers` with the names its mocks answer
  (:data:`batchplane.offline.mocks.CANNED_LOOKUPS`); a real ``pulumi up``/``preview`` never enters it;
* a deploy-time check asks :func:`is_canned` before judging an answer and, when it is canned, logs
  :func:`not_checked` (``pulumi.log.info``: ``batchplane preview`` and ``render`` print it on stderr) instead.

Pure module (no Pulumi import): the program's components import it, the offline engine sets it.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

__all__ = ["NOT_CHECKED_PREFIX", "Unchecked", "canned_answers", "is_canned", "not_checked"]

#: How every :func:`not_checked` note begins (the CLI picks them out of the program's messages).
NOT_CHECKED_PREFIX = "not checked offline: "

_LOCK = threading.Lock()
_CANNED: frozenset[str] = frozenset()


@contextmanager
def canned_answers(lookups: Iterable[str]) -> Iterator[None]:
    """Within the block, the named lookups are answered by mocks (:func:`is_canned` is true for them).

    A process-wide setting (the program's apply callbacks run on the SDK's own threads and loops, where a
    ``ContextVar`` would not follow); the offline engine runs one program at a time. Nested blocks restore the outer
    setting.

    Args:
        lookups: invoke tokens or lookup names whose answers are canned.
    """
    global _CANNED
    with _LOCK:
        before = _CANNED
        _CANNED = frozenset(lookups)
    try:
        yield
    finally:
        with _LOCK:
            _CANNED = before


def is_canned(lookup: str) -> bool:
    """True when ``lookup`` (an invoke token or lookup name) is answered by a mock in this process right now."""
    return lookup in _CANNED


@dataclass(frozen=True)
class Unchecked:
    """A deploy-time check not made because its lookup's answer was canned.

    Attributes:
        what: what was not checked, e.g. ``whether GKE offers minMasterVersion "1.33" (REGULAR) in us-central1``.
        path: the config key the check is about, e.g. ``batchplane:target.minMasterVersion``.
        lookup: the lookup whose answer was canned (invoke token or lookup name).
        preflight: the ``batchplane preflight`` check that asks it with the user's credentials (``version`` …).
    """

    what: str
    path: str
    lookup: str
    preflight: str


def not_checked(item: Unchecked) -> str:
    """The note a program logs for ``item``: ``not checked offline: …``, naming the key and ``batchplane preflight``
    (never a refusal, never a claim about the project or cluster)."""
    return (
        f"{NOT_CHECKED_PREFIX}{item.what} ({item.path}); the offline answer to {item.lookup} is canned, not a fact. "
        f"`pulumi up` checks it against the real answer; `batchplane preflight` asks now with your credentials "
        f"(check `{item.preflight}`)"
    )
