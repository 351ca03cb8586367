"""Does a registry serve the image? The OCI Distribution Specification's manifest check, anonymously.

``HEAD /v2/<name>/manifests/<reference>`` answers 200 when the registry has the manifest and 404 when it does not
(OCI Distribution Spec v1.1.0, "Checking if content exists in the registry",
github.com/opencontainers/distribution-spec/blob/v1.1.0/spec.md). Registries that want a token answer 401 with
``WWW-Authenticate: Bearer realm=…,service=…,scope=…``; an anonymous token from the realm is enough for public
images (Docker "Token Authentication Specification", distribution/distribution ``docs/spec/auth/token.md``). A
private image (401/403 even with an anonymous token) is a warning: preflight cannot tell whether the nodes will be
able to pull it.

Uses ``requests`` (a ``requests.Session``; tests mount a replaying adapter on it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import requests

#: Manifest media types a registry may answer with (an index for multi-architecture images).
MANIFEST_ACCEPT = ", ".join(
    [
        "application/vnd.oci.image.index.v1+json",
        "application/vnd.oci.image.manifest.v1+json",
        "application/vnd.docker.distribution.manifest.list.v2+json",
        "application/vnd.docker.distribution.manifest.v2+json",
    ]
)
DOCKER_HUB = "registry-1.docker.io"
_CHALLENGE_RE = re.compile(r'(\w+)="([^"]*)"')


@dataclass(frozen=True)
class ImageRef:
    """A parsed image reference.

    Attributes:
        registry: the registry host (``ghcr.io``; Docker Hub is ``registry-1.docker.io``).
        repository: the repository (``batchplane/quota-webhook``; ``library/`` added for Docker Hub's officials).
        reference: the tag or ``sha256:…`` digest.
    """

    registry: str
    repository: str
    reference: str


def parse_image(image: str) -> ImageRef:
    """Split ``host/repo:tag`` or ``host/repo@sha256:…`` the way Docker does (the first component is a host when it
    has a ``.`` or ``:`` or is ``localhost``; otherwise Docker Hub)."""
    name, _, digest = image.partition("@")
    reference = digest
    if not digest:
        slash = name.rfind("/")
        colon = name.rfind(":")
        if colon > slash:
            name, reference = name[:colon], name[colon + 1 :]
        else:
            reference = "latest"
    first, _, rest = name.partition("/")
    if rest and ("." in first or ":" in first or first == "localhost"):
        host, repository = first, rest
    else:
        host, repository = DOCKER_HUB, name
    if host in ("docker.io", "index.docker.io"):
        host = DOCKER_HUB
    if host == DOCKER_HUB and "/" not in repository:
        repository = f"library/{repository}"
    return ImageRef(host, repository, reference)


@dataclass(frozen=True)
class ImageAnswer:
    """What the registry said.

    Attributes:
        served: True (the manifest exists), False (404), or None (could not tell).
        detail: the status or error, for messages.
    """

    served: bool | None
    detail: str


def registry_serves(image: str, session: requests.Session, timeout: float = 10.0) -> ImageAnswer:
    """Ask the image's registry whether it has the manifest.

    Args:
        image: the image reference.
        session: the ``requests`` session to use.
        timeout: seconds per request.

    Returns:
        :class:`ImageAnswer`.
    """
    import requests

    ref = parse_image(image)
    url = f"https://{ref.registry}/v2/{ref.repository}/manifests/{ref.reference}"
    headers = {"Accept": MANIFEST_ACCEPT}
    try:
        answer = session.head(url, headers=headers, timeout=timeout)
        if answer.status_code == 401:
            token = _anonymous_token(answer.headers.get("WWW-Authenticate", ""), ref, session, timeout)
            if token is not None:
                headers["Authorization"] = f"Bearer {token}"
                answer = session.head(url, headers=headers, timeout=timeout)
    except requests.RequestException as exc:
        return ImageAnswer(None, f"{type(exc).__name__}: {exc}")
    if answer.status_code == 200:
        return ImageAnswer(True, "200")
    if answer.status_code == 404:
        return ImageAnswer(False, f"{ref.registry} answered 404 for {ref.repository}:{ref.reference}")
    return ImageAnswer(None, f"{ref.registry} answered {answer.status_code}")


def _anonymous_token(challenge: str, ref: ImageRef, session: requests.Session, timeout: float) -> str | None:
    if not challenge.lower().startswith("bearer "):
        return None
    params = dict(_CHALLENGE_RE.findall(challenge))
    realm = params.pop("realm", None)
    if realm is None:
        return None
    params.setdefault("scope", f"repository:{ref.repository}:pull")
    answer = session.get(realm, params=params, timeout=timeout)
    if answer.status_code != 200:
        return None
    body = answer.json()
    token = body.get("token") or body.get("access_token")
    return str(token) if token else None
