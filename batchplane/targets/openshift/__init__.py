"""OpenShift (AI): OLM installs gated on CSVs, the DataScienceCluster, GPU MachineSets from zero.

* :mod:`~.config` — the ``kind: openshift`` target model and its rules;
* :mod:`~.gpu`, :mod:`~.aws_instances` — GPU pool models and instance-type facts (with sources);
* :mod:`~.machines` — GPU MachineSets, autoscalers and pools → flavors;
* :mod:`~.olm` — the OLM install plan;
* :mod:`~.operators` (:class:`OpenShiftOperators`) and :mod:`~.gpu_capacity` (:class:`OpenShiftGpuCapacity`) — the components.
"""
