"""Pure plans for the operators stage: what to install, from where, with which values; no Pulumi here.

:mod:`~batchplane.operators.installs` turns ``batchplane:operators`` into Helm and manifest installs
(and Kueue's Configuration document) (the OpenShift OLM plan lives with its
platform, :mod:`batchplane.targets.openshift.olm`), and :mod:`~batchplane.operators.readiness`
holds the readiness-gate polling logic the Pulumi dynamic resource runs during ``pulumi up``.
"""

from batchplane.operators.installs import OperatorInstalls, operator_installs

__all__ = ["OperatorInstalls", "operator_installs"]
