"""kind: a local cluster; the generic Helm installs (:mod:`batchplane.components.operators`) run on it."""
