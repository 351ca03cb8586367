"""The webhook's error family, rooted at :class:`WebhookError` (kopf's layout: ``WebhookError`` and its subclasses in
``kopf/_kits/webhooks.py``, https://github.com/nolar/kopf).

Only errors the webhook raises on purpose live here. A malformed AdmissionReview becomes HTTP 400
(:class:`MalformedReviewError`); a bad policy file or certificate stops ``batchplane webhook
serve`` before it listens (:class:`PolicyError`, :class:`CertificateError`). Decisions never
raise: a workload the webhook cannot judge is allowed with a warning.
"""

from __future__ import annotations

from batchplane.errors import BatchplaneError


class WebhookError(BatchplaneError):
    """Base class of every error the quota webhook raises on purpose."""


class MalformedReviewError(WebhookError):
    """Raised when a request body is not an ``admission.k8s.io/v1`` AdmissionReview.

    The server answers HTTP 400 with this message as the reason; the API server never sends such
    bodies, so this only happens to hand-made or fuzzed requests.
    """


class PolicyError(WebhookError):
    """Raised when a policy document cannot be read, parsed or compiled (e.g. a cohort cycle)."""


class CertificateError(WebhookError):
    """Raised when the serving certificate or key cannot be loaded at start-up."""
