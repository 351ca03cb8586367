"""One home per platform: each subpackage holds that platform's config models and rules, its facts tables
(with sources), the pure builders of its cloud resources and its Pulumi components.

* :mod:`batchplane.targets.gke` — a GKE Standard cluster with DWS GPU pools (private nodes, NAT, firewall,
  the webhook image build);
* :mod:`batchplane.targets.openshift` — an existing OpenShift (AI) cluster: OLM installs, GPU MachineSets;
* :mod:`batchplane.targets.kind` — a local kind cluster;
* :mod:`batchplane.targets.existing` — any cluster reached through a kubeconfig context.

Platforms never import each other (an import-linter contract in ``pyproject.toml``); the target union and
the kind → platform registry live one layer up, in :mod:`batchplane.stack`. Each platform implements the platform
interface once: :class:`~batchplane.targets.platform.Platform` (``<platform>/platform.py``, pure) and its Pulumi half
:class:`~batchplane.targets.deploy.PlatformDeploy` (``<platform>/deploy.py``). Modules named after a component or
deploy step (``cluster``, ``operators``, ``gpu_capacity``, ``deploy``) import Pulumi; the rest do not.
"""
