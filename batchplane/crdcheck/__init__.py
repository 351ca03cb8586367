"""Validate rendered Kubernetes custom resources against their real upstream CRDs, offline.

Defaults, openAPIV3Schema (via jsonschema Draft 2020-12), ``x-kubernetes-list-type`` and
``x-kubernetes-validations`` CEL rules are applied as apiextensions-apiserver applies them; see
:mod:`batchplane.crdcheck.catalog`. Typical use::

    catalog = CrdCatalog.load(shared / "crds")
    issues = catalog.validate(cluster_queue_dict)   # [] when the API server would accept it
"""

from batchplane.crdcheck.catalog import CrdCatalog, CrdVersion
from batchplane.crdcheck.issues import IssueKind, SchemaIssue

__all__ = ["CrdCatalog", "CrdVersion", "IssueKind", "SchemaIssue"]
