"""Kubernetes name, label and key syntax, as the API server and Kueue's webhooks check them.

Patterns mirror ``k8s.io/apimachinery/pkg/util/validation`` (IsDNS1123Subdomain, IsDNS1123Label,
IsQualifiedName, IsValidLabelValue) and the Kueue v0.19.2 CRD patterns.
"""

from __future__ import annotations

import re

DNS1123_SUBDOMAIN_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
DNS1123_LABEL_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_QUALIFIED_NAME_PART_RE = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
LABEL_VALUE_RE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")


def dns_subdomain_problem(value: str, max_length: int = 253) -> str | None:
    """Why ``value`` is not a DNS-1123 subdomain of at most ``max_length`` characters, or None."""
    if not value:
        return "must not be empty"
    if len(value) > max_length:
        return f'"{value}" is longer than {max_length} characters'
    if not DNS1123_SUBDOMAIN_RE.match(value):
        return (
            f'"{value}" is not a valid name: lower-case letters, digits, "-" and ".", '
            "starting and ending with a letter or digit (DNS-1123 subdomain)"
        )
    return None


def dns_label_problem(value: str) -> str | None:
    """Why ``value`` is not a DNS-1123 label (≤ 63, no dots), or None. Namespaces use this."""
    if not value:
        return "must not be empty"
    if len(value) > 63:
        return f'"{value}" is longer than 63 characters'
    if not DNS1123_LABEL_RE.match(value):
        return (
            f'"{value}" is not a valid DNS-1123 label: lower-case letters, digits and "-", '
            "starting and ending with a letter or digit"
        )
    return None


def qualified_name_problem(value: str, max_length: int = 316) -> str | None:
    """Why ``value`` is not a qualified name (``[prefix/]name``, label-key syntax), or None.

    The prefix is a DNS subdomain of at most 253 characters; the name is at most 63 characters.
    ``max_length`` caps the whole string (316 for Kueue's TAS level nodeLabel, 317 for
    ProvisioningRequestConfig nodeSelector keys).
    """
    if not value:
        return "must not be empty"
    if len(value) > max_length:
        return f'"{value}" is longer than {max_length} characters'
    prefix, _, name = value.rpartition("/")
    if "/" in value and (not prefix or dns_subdomain_problem(prefix) is not None):
        return f'"{value}" has an invalid prefix "{prefix}": it must be a DNS-1123 subdomain'
    if len(name) > 63 or not _QUALIFIED_NAME_PART_RE.match(name):
        return (
            f'"{value}" is not a qualified name: "[prefix/]name" where name is at most 63 letters, digits, '
            '"-", "_" or ".", starting and ending with a letter or digit'
        )
    return None


def label_value_problem(value: str) -> str | None:
    """Why ``value`` is not a valid label value (≤ 63, may be empty), or None."""
    if len(value) > 63:
        return f'"{value}" is longer than 63 characters (label values are at most 63)'
    if not LABEL_VALUE_RE.match(value):
        return (
            f'"{value}" is not a valid label value: letters, digits, "-", "_" or ".", '
            "starting and ending with a letter or digit"
        )
    return None
