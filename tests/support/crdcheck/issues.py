"""The issue record every CRD check returns.

A check never stops at the first problem: :meth:`tests.support.crdcheck.CrdCatalog.validate` returns a list of
:class:`SchemaIssue` (a field path, a message and a kind), like Kubernetes' ``field.ErrorList``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

#: What found the issue: ``schema`` (openAPIV3Schema: types, enums, patterns, bounds, required and
#: unknown fields), ``cel`` (an ``x-kubernetes-validations`` rule failed or raised), ``list``
#: (``x-kubernetes-list-type`` set/map uniqueness), ``metadata`` (``metadata.name``/``namespace``) and
#: ``cel-unsupported`` (the ``cel`` library could not compile or evaluate a rule, so it was *not* checked).
IssueKind = Literal["schema", "cel", "list", "metadata", "cel-unsupported"]


@dataclass(frozen=True, order=True)
class SchemaIssue:
    """One problem found in a rendered Kubernetes object.

    Attributes:
        path: the field path in the object, Kubernetes style, e.g.
            ``spec.resourceGroups[0].flavors[0].resources[1].nominalQuota``; map keys are bracketed
            (``spec.nodeLabels[zone]``); ``""`` means the object itself.
        message: what is wrong, e.g. ``Unsupported value: "Foo": supported values: "BestEffortFIFO",
            "StrictFIFO"`` or the ``message`` of the failed CEL rule.
        kind: one of :data:`IssueKind`.
    """

    path: str
    message: str
    kind: IssueKind

    def __str__(self) -> str:
        return f"{self.path or '<object>'}: {self.message} [{self.kind}]"
