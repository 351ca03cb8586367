"""The readiness gate's dynamic provider, in the installed ``batchplane`` package.

Pulumi pickles a dynamic provider *by reference* to its class (dill keeps importable classes as a module
path) and the dynamic-provider host unpickles it in its own process. A provider defined in the project's
top-level ``components/`` package could only be unpickled from the repository root; defined here it loads
wherever ``batchplane`` is installed: another working directory, the Automation API, CI.

Imports Pulumi at module import: only the ``ReadinessGate`` component imports this module.
"""

from __future__ import annotations

import base64
from typing import Any

import pulumi.dynamic

#: Inputs that do not trigger an update when they change (credentials, not what is awaited).
NOT_COMPARED = frozenset({"kubeconfig", "__provider"})
#: Outputs of the ``olm-namespace`` lookup: found in the cluster, never compared.
LOOKUP_OUTPUTS = frozenset({"operatorGroup", "operatorGroupSpec", "subscription", "checked"})


def token_outputs(data: dict[str, str]) -> dict[str, str]:
    """The outputs of a ``service-account-token`` gate from the Secret's ``data``: ``token`` (plain text, as a
    kubeconfig wants it) and ``caData`` (the cluster CA, base64 as in ``certificate-authority-data``)."""
    return {"token": base64.b64decode(data.get("token", "")).decode(), "caData": data.get("ca.crt", "")}


class ReadinessGateProvider(pulumi.dynamic.ResourceProvider):
    """Dynamic provider: create/update poll until ready (or raise with the timeout message)."""

    def _run(self, props: dict[str, Any]) -> dict[str, Any]:
        from batchplane.operators.readiness import ROUTE_API, KubernetesClusterClient, route_host, run_gate

        client = KubernetesClusterClient(props.get("kubeconfig") or None, props.get("context") or None)
        outcome = run_gate(props, client)
        outs = {k: v for k, v in props.items() if k not in NOT_COMPARED}
        if props.get("gate") == "service-account-token":
            outs.update(
                token_outputs(client.secret_data(str(props["namespace"]), str(props["secret"])) or {})
            )
        if props.get("gate") == "registry-route":
            outs["host"] = route_host(
                client.get(ROUTE_API, "routes", str(props["namespace"]), str(props["route"]))
            )
        outs.update(outcome.outputs)
        if props.get("gate") == "feature-gate":
            outs["checked"] = True  # the cluster's FeatureGate was read (offline the mock answers false)
        outs.update(
            {
                "attempts": outcome.attempts,
                "waitedSeconds": round(outcome.waited_seconds, 1),
                "detail": outcome.detail,
            }
        )
        return outs

    def create(self, props: dict[str, Any]) -> pulumi.dynamic.CreateResult:
        """Poll until ready; the id names what was awaited."""
        outs = self._run(props)
        ident = (
            f"{props['gate']}/{props['namespace']}/"
            f"{props.get('service') or props.get('subscription') or props.get('secret') or props.get('route') or props.get('package') or ''}"
            f"{props.get('featureGate') or ''}"
        )
        return pulumi.dynamic.CreateResult(id_=ident, outs=outs)

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> pulumi.dynamic.DiffResult:
        """Changed when any awaited property (not the credentials) differs; never replaces."""
        keys = (
            (set(olds) | set(news))
            - NOT_COMPARED
            - {"attempts", "waitedSeconds", "detail", "token", "caData", "host"}
            - LOOKUP_OUTPUTS
        )
        changed = sorted(k for k in keys if k in news and olds.get(k) != news.get(k))
        return pulumi.dynamic.DiffResult(changes=bool(changed), replaces=[], delete_before_replace=False)

    def update(self, _id: str, _olds: dict[str, Any], news: dict[str, Any]) -> pulumi.dynamic.UpdateResult:
        """Poll again (e.g. after a version upgrade of the awaited install)."""
        return pulumi.dynamic.UpdateResult(outs=self._run(news))

    def delete(self, _id: str, _props: dict[str, Any]) -> None:
        """Nothing to delete."""
