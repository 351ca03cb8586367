"""Validate rendered Kubernetes custom resources against their real upstream CRDs, offline.

Defaults, openAPIV3Schema (via jsonschema Draft 2020-12), ``x-kubernetes-list-type`` and
``x-kubernetes-validations`` CEL rules are applied as apiextensions-apiserver applies them; see
:mod:`tests.support.crdcheck.catalog`. Typical use::

    catalog = CrdCatalog.load(shared / "crds")
    issues = catalog.validate(cluster_queue_dict)   # [] when the API server would accept it
"""

from tests.support.crdcheck.catalog import CrdCatalog, CrdVersion
from tests.support.crdcheck.issues import IssueKind, SchemaIssue

__all__ = ["CrdCatalog", "CrdVersion", "IssueKind", "SchemaIssue"]
