"""GKE: a Standard cluster with a system pool and DWS (queued-provisioning / flex-start) GPU pools.

* :mod:`~.config` — the ``kind: gke`` target model and its rules;
* :mod:`~.machines` — machine types and GPU attach facts (with sources);
* :mod:`~.pools` — GPU pools → ResourceFlavors and ProvisioningRequest admission checks;
* :mod:`~.resources`, :mod:`~.network`, :mod:`~.image` — pure pulumi-gcp / docker-build keyword arguments;
* :mod:`~.platform` (:class:`GkePlatform`) and :mod:`~.deploy` (:class:`GkeDeploy`, :class:`ArtifactRegistry`) — the
  platform interface;
* :mod:`~.cluster` (:class:`GkeCluster`) — the component.
"""
