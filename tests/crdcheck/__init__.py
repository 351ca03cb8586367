"""Tests of tests.support.crdcheck (CRD schema, defaults and CEL validation)."""
