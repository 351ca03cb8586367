"""Batchplane's CrossGuard policy rules, importable without starting a policy pack.

``registry.POLICIES`` lists every policy; ``policies/__main__.py`` hands them to ``PolicyPack``.
Rules live in one module per area: :mod:`.gke`, :mod:`.kueue`, :mod:`.installs`, :mod:`.webhook`.
"""
