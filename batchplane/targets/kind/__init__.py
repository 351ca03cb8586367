"""kind: a local cluster; the generic Helm installs (:mod:`batchplane.operators.helm_installs`) run on it."""
