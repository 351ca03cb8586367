"""Test support code: not part of the installed package (the CRD schema checker, tests.support.crdcheck)."""
