"""Pure plans for the operators stage: what to install, from where, with which values; no Pulumi here.

:mod:`~batchplane.operators.installs` turns ``batchplane:operators`` into Helm and manifest installs
(and Kueue's Configuration document), :mod:`~batchplane.operators.olm` turns the ``openshift`` target
into OLM objects, a DataScienceCluster and the ``Kueue`` CR, and :mod:`~batchplane.operators.readiness`
holds the readiness-gate polling logic the Pulumi dynamic resource runs during ``pulumi up``.
"""

from batchplane.operators.installs import InstallPlan, install_plan
from batchplane.operators.olm import OpenShiftPlan, openshift_plan

__all__ = ["InstallPlan", "OpenShiftPlan", "install_plan", "openshift_plan"]
