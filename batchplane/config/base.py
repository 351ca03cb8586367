"""Shared pydantic plumbing for the stack config: the strict base model and annotated scalar types.

Every config model forbids unknown keys (a typo is an error, not a silently ignored key), takes
camelCase keys exactly as Kueue and Kubernetes spell them, and is immutable once validated.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field
from pydantic.alias_generators import to_camel

from batchplane.config import names
from batchplane.quantity import parse_quantity, quantity_text


class ConfigModel(BaseModel):
    """Base of every stack-config model: ``extra="forbid"``, camelCase keys, frozen."""

    model_config = ConfigDict(
        extra="forbid",
        alias_generator=to_camel,
        populate_by_name=True,
        frozen=True,
        use_attribute_docstrings=True,
        validate_default=False,
    )


def _checker(problem: Any) -> Any:
    def check(value: str) -> str:
        why = problem(value)
        if why is not None:
            raise ValueError(why)
        return value

    return check


DnsSubdomain = Annotated[str, AfterValidator(_checker(names.dns_subdomain_problem))]
"""A DNS-1123 subdomain of at most 253 characters (Kueue object names and references)."""

DnsLabel = Annotated[str, AfterValidator(_checker(names.dns_label_problem))]
"""A DNS-1123 label of at most 63 characters (namespace names, PodSet names)."""

QualifiedName = Annotated[str, AfterValidator(_checker(names.qualified_name_problem))]
"""A label key / resource name: ``[prefix/]name`` (e.g. ``nvidia.com/gpu``)."""

LabelValue = Annotated[str, AfterValidator(_checker(names.label_value_problem))]
"""A label value: at most 63 characters, may be empty."""

Quantity = Annotated[str, BeforeValidator(quantity_text)]
"""A Kubernetes quantity, written as a YAML string or number (``9``, ``"36Gi"``, ``"500m"``).

Stored as its text; checked against the exact CRD quantity pattern (not the lenient parser).
"""


def _non_negative(text: str) -> str:
    if parse_quantity(text) < 0:
        raise ValueError(f'"{text}" must not be negative')
    return text


NonNegativeQuantity = Annotated[str, BeforeValidator(quantity_text), AfterValidator(_non_negative)]
"""A :data:`Quantity` that is zero or more (limits and sizes, where a negative amount means nothing)."""

#: apimachinery ``TotalAnnotationSizeLimitB``: keys and values of one object's annotations, in bytes.
ANNOTATIONS_MAX_BYTES = 256 * 1024


def _annotations_size(value: dict[str, str]) -> dict[str, str]:
    size = sum(len(k.encode()) + len(v.encode()) for k, v in value.items())
    if size > ANNOTATIONS_MAX_BYTES:
        raise ValueError(
            f"annotations total {size} bytes; Kubernetes allows at most {ANNOTATIONS_MAX_BYTES} (256 KiB) "
            "of keys and values per object"
        )
    return value


Annotations = Annotated[dict[QualifiedName, str], AfterValidator(_annotations_size)]
"""Object annotations: qualified-name keys, string values, at most 256 KiB of keys and values in all
(apimachinery ``ValidateAnnotations``)."""

Int32 = Annotated[int, Field(ge=-(2**31), le=2**31 - 1, strict=True)]
"""A 32-bit signed integer, as Kubernetes ``int32`` fields."""

NonNegativeInt32 = Annotated[int, Field(ge=0, le=2**31 - 1, strict=True)]
"""A 32-bit integer that is at least 0."""
