"""Tests of batchplane.crdcheck (CRD schema, defaults and CEL validation)."""
