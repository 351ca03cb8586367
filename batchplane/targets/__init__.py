"""One home per platform: each subpackage holds that platform's config models and rules, its facts tables
(with sources), the pure builders of its cloud resources and its Pulumi components.

* :mod:`batchplane.targets.gke` — a GKE Standard cluster with DWS GPU pools (private nodes, NAT, firewall,
  the webhook image build);
* :mod:`batchplane.targets.openshift` — an existing OpenShift (AI) cluster: OLM installs, GPU MachineSets;
* :mod:`batchplane.targets.kind` — a local kind cluster;
* :mod:`batchplane.targets.existing` — any cluster reached through a kubeconfig context.

Platforms never import each other (an import-linter contract in ``pyproject.toml``); the target union and
the per-target dispatch live one layer up, in :mod:`batchplane.stack`. Modules whose names end in a
component (``cluster``, ``operators``, ``gpu_capacity``, ``webhook_image``) import Pulumi; the rest do not.
"""
