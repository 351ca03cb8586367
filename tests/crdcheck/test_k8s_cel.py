"""The Kubernetes CEL extension functions registered for CRD rules (quantity, lists, regex libraries)."""

from __future__ import annotations

from typing import Any

import cel
import pytest

from batchplane.crdcheck.k8s_cel import KUBERNETES_FUNCTIONS, RULE_FUNCTIONS, is_known_function


def evaluate(expression: str, **variables: Any) -> Any:
    return cel.evaluate(expression, cel.Context(variables=variables, functions=RULE_FUNCTIONS))


@pytest.mark.parametrize(
    ("expression", "want"),
    [
        ("isQuantity('500m') && isQuantity('36Gi') && isQuantity('1e3')", True),
        ("isQuantity('1 Gi') || isQuantity('1K') || isQuantity('')", False),
        ("quantity('1') == quantity('1000m')", True),
        ("quantity('1Gi').isGreaterThan(quantity('1000Mi'))", True),
        ("quantity('1G').isLessThan(quantity('1Gi'))", True),
        ("quantity('2').compareTo(quantity('2000m'))", 0),
        ("quantity('-5').sign()", -1),
        ("quantity('1.5').isInteger()", False),
        ("quantity('2k').asInteger()", 2000),
        ("quantity('250m').asApproximateFloat()", 0.25),
        ("quantity('1').add(quantity('500m')) == quantity('1500m')", True),
        ("quantity('1').sub(1) == quantity('0')", True),
        ("[1, 2, 2, 3].isSorted()", True),
        ("['b', 'a'].isSorted()", False),
        ("[1, 2, 3, 2].indexOf(2)", 1),
        ("[1, 2, 3, 2].lastIndexOf(2)", 3),
        ("[1, 2].indexOf(9)", -1),
        ("'abcabc'.indexOf('c')", 2),
        ("'abcabc'.lastIndexOf('c')", 5),
        ("'gpu-a100-80gb'.find('[0-9]+')", "100"),
        ("'cpu'.find('[0-9]+')", ""),
        ("'a1b22c333'.findAll('[0-9]+')", ["1", "22", "333"]),
        ("'a1b22c333'.findAll('[0-9]+', 2)", ["1", "22"]),
        ("[1, 5, 3].max() == 5 && [1, 5, 3].min() == 1 && [1, 5, 3].sum() == 9", True),
    ],
    ids=lambda value: str(value)[:60] if isinstance(value, str) else None,
)
def test_kubernetes_extension_function_matches_its_upstream_semantics(expression: str, want: Any) -> None:
    assert evaluate(expression) == want


@pytest.mark.parametrize(
    ("expression", "want_error"),
    [
        ("quantity('1.5').asInteger()", "cannot convert value to integer"),
        ("quantity('lots')", "quantities must match the regular expression: 'lots' is invalid"),
    ],
    ids=["as-integer-of-fraction", "malformed-quantity"],
)
def test_kubernetes_extension_function_errors_like_upstream(expression: str, want_error: str) -> None:
    with pytest.raises(RuntimeError, match=want_error):
        evaluate(expression)


def test_every_registered_function_is_known_and_unknown_names_are_not() -> None:
    assert all(is_known_function(name) for name in KUBERNETES_FUNCTIONS)
    assert is_known_function("_==_") and is_known_function("size") and is_known_function("matches")
    assert not is_known_function("url") and not is_known_function("fooBar")


def test_every_kubernetes_function_has_a_docstring_naming_its_kubernetes_source() -> None:
    for name, function in KUBERNETES_FUNCTIONS.items():
        assert "Kubernetes ``library/" in (function.__doc__ or ""), name
