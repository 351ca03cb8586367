"""Tests of batchplane.policyrun, the offline CrossGuard policy engine."""
