"""The quota admission webhook as deployed: the policy document rendered from a stack, the Kubernetes objects, the
Pulumi component.

- :mod:`~batchplane.components.quota_webhook.policy`: :func:`render_policy`, a validated stack → the policy document
  the webhook process loads (no Pulumi);
- :mod:`~batchplane.components.quota_webhook.manifests`: the webhook's Kubernetes objects as dicts, whether a stack
  deploys it, the ConfigMap size check (no Pulumi);
- :mod:`~batchplane.components.quota_webhook.component`: :class:`QuotaWebhook` (``batchplane:admission:QuotaWebhook``),
  which registers those objects (imports Pulumi).

The webhook process itself (``batchplane/webhook/``) imports none of these. Importing this package imports nothing.
"""
