"""``python -m batchplane.webhook serve ...``: the container entry point.

Runs the ``webhook`` command group without importing the rest of the ``batchplane`` CLI, so the
image needs only the webhook's runtime dependencies (webhook/Dockerfile).
"""

from batchplane.webhook.command import webhook_app

if __name__ == "__main__":
    webhook_app(prog_name="batchplane-webhook")
