"""The quota admission webhook: policy document, decisions, AdmissionReview, Starlette app, TLS server.

No Pulumi here (``batchplane/components/quota_webhook.py`` deploys it). Modules, one concern each:
:mod:`~batchplane.webhook.policy` (the decision data, rendered from a stack),
:mod:`~batchplane.webhook.queues` (Kueue's quota model), :mod:`~batchplane.webhook.flavors` (flavor eligibility),
:mod:`~batchplane.webhook.assign` (Kueue's flavor assigner), :mod:`~batchplane.webhook.capacity` (can a workload ever fit),
:mod:`~batchplane.webhook.decisions` (pure validate/mutate decisions),
:mod:`~batchplane.webhook.review` (typed AdmissionReview v1),
:mod:`~batchplane.webhook.app` (the ASGI app), :mod:`~batchplane.webhook.server` (uvicorn + TLS +
certificate reload), :mod:`~batchplane.webhook.metrics`, :mod:`~batchplane.webhook.errors`,
:mod:`~batchplane.webhook.command` (``batchplane webhook ...``). See docs/webhook.md.
"""
