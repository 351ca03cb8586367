"""The Kubernetes CEL extension functions registered for CRD rules (quantity, lists, regex libraries)."""

from __future__ import annotations

from typing import Any

import cel
import pytest

from tests.support.crdcheck.k8s_cel import KUBERNETES_FUNCTIONS, RULE_FUNCTIONS, is_known_function


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
    assert is_known_function("isURL")
    assert not is_known_function("url") and not is_known_function("fooBar")


def test_every_kubernetes_function_has_a_docstring_naming_its_kubernetes_source() -> None:
    for name, function in KUBERNETES_FUNCTIONS.items():
        assert "Kubernetes ``library/" in (function.__doc__ or ""), name


@pytest.mark.parametrize(
    ("expression", "value", "want"),
    [
        ("!format.qualifiedName().validate(self).hasValue()", "nvidia.com/gpu", True),
        ("!format.qualifiedName().validate(self).hasValue()", "cpu", True),
        ("!format.qualifiedName().validate(self).hasValue()", "-bad-", False),
        ("!format.qualifiedName().validate(self).hasValue()", "/gpu", False),
        ("!format.qualifiedName().validate(self).hasValue()", "Bad_Prefix/gpu", False),
        ("!format.dns1123Label().validate(self).hasValue()", "team-a", True),
        ("!format.dns1123Label().validate(self).hasValue()", "Team-A", False),
        ("!format.dns1123Label().validate(self).hasValue()", "a" * 64, False),
        ("!format.dns1123Subdomain().validate(self).hasValue()", "gpu.nvidia.com", True),
        ("!format.dns1123Subdomain().validate(self).hasValue()", "gpu..nvidia", False),
        ("!format.dns1035Label().validate(self).hasValue()", "1abc", False),
        ("!format.labelValue().validate(self).hasValue()", "", True),
        ("format.uuid().validate(self).value()", "nope", ["does not match the UUID format (e.g. "
         "'123e4567-e89b-12d3-a456-426614174000', regex used for validation is "
         "'[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}')"]),
        ("format.named('byte').value().validate(self).hasValue()", "aGk=", False),
        ("format.named('nope').hasValue()", "x", False),
    ],
    ids=[
        "qualified-name-with-prefix", "qualified-name-plain", "qualified-name-bad-edges", "qualified-name-empty-prefix",
        "qualified-name-bad-prefix", "label-ok", "label-uppercase", "label-too-long", "subdomain-ok",
        "subdomain-empty-label", "dns1035-digit-first", "label-value-empty", "uuid-message", "named-byte",
        "named-unknown",
    ],
)  # fmt: skip
def test_format_library_validates_like_kubernetes(expression: str, value: str, want: object) -> None:
    from tests.support.crdcheck.k8s_cel import FORMAT_LIBRARY

    assert evaluate(expression, self=value, format=FORMAT_LIBRARY) == want


def test_the_red_hat_kueue_crd_format_rules_are_evaluated_not_reported_unsupported(catalog: Any) -> None:
    kueue = {
        "apiVersion": "kueue.openshift.io/v1",
        "kind": "Kueue",
        "metadata": {"name": "cluster"},
        "spec": {
            "config": {
                "integrations": {"frameworks": ["BatchJob"]},
                "resources": {
                    "deviceClassMappings": [{"name": "Bad Name", "deviceClassNames": ["gpu.nvidia.com"]}]
                },
            }
        },
    }
    issues = catalog.validate(kueue)
    assert [(i.path, i.kind) for i in issues if i.kind.startswith("cel")] == [
        ("spec.config.resources.deviceClassMappings[0].name", "cel")
    ]


@pytest.mark.parametrize(
    ("value", "want"),
    [
        # The examples of Kubernetes' library/urls.go (isURL) and Go's ParseRequestURI cases.
        ("https://user:pass@example.com:80/path?query=val#fragment", True),
        ("/absolute-path", True),
        ("https://a:b:c/", False),  # "invalid port ":c" after host"
        ("../relative-path", False),  # "invalid URI for request"
        ("http://proxy.corp:3128", True),
        ("http://[::1]:8080/metrics", True),
        ("*", True),
        ("mailto:ops@example.com", True),  # opaque: a scheme and a rootless rest
        ("", False),  # "empty url"
        (":8080", False),  # "missing protocol scheme"
        ("http://exa mple.com/", False),  # a space in the host
        ("http://proxy:80a", False),  # non-numeric port
        ("http://[::1/", False),  # "missing ']' in host"
        ("http://h/%zz", False),  # a malformed escape in the path
        ("http://%41.example.com", False),  # hosts may %-escape only non-ASCII bytes
        ("http://us%2er@h", True),
        ("http://us^er@h", False),  # not RFC 3986 userinfo
        ("http://h/\n", False),  # a control byte
        ("proxy.corp:3128", True),  # Go reads "proxy.corp" as a scheme: an opaque URI
        ("proxy_corp:3128", False),  # "_" cannot be in a scheme: a relative path, refused for requests
    ],
)
def test_is_url_accepts_what_gos_parse_request_uri_accepts(value: str, want: bool) -> None:
    assert evaluate("isURL(self)", self=value) is want


def _pod_monitoring(proxy_url: str) -> dict[str, Any]:
    return {
        "apiVersion": "monitoring.googleapis.com/v1",
        "kind": "PodMonitoring",
        "metadata": {"name": "kueue", "namespace": "kueue-system"},
        "spec": {
            "selector": {"matchLabels": {"control-plane": "controller-manager"}},
            "endpoints": [{"port": "https", "interval": "30s", "proxyUrl": proxy_url}],
        },
    }


def test_managed_prometheus_proxy_url_rules_are_evaluated_not_reported_unsupported(catalog: Any) -> None:
    assert [
        i for i in catalog.validate(_pod_monitoring("http://proxy.corp:3128")) if i.kind.startswith("cel")
    ] == []
    for bad in ("http://proxy.corp:31x8", "http://user:secret@proxy.corp:3128"):
        issues = [
            (i.path, i.kind) for i in catalog.validate(_pod_monitoring(bad)) if i.kind.startswith("cel")
        ]
        assert issues == [("spec.endpoints[0].proxyUrl", "cel")], bad
