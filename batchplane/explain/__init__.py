"""Why a workload runs, waits or never runs, in words the person who submitted it reads (issue #31).

* :mod:`batchplane.explain.sentences` — the one sentence generator: the webhook's denial messages, ``batchplane
  diff``'s decision rows and ``batchplane explain`` all lead with its sentences. Part of the webhook process (it
  imports only the webhook's quota model, accounting and quantities).
* :mod:`batchplane.explain.offline` — ``batchplane explain --stack ENV MANIFEST.yaml``: each workload of a file
  judged against a stack, with the stack key and ``file:line`` of every limit.

Importing this package imports nothing else.
"""
