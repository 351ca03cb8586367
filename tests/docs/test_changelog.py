"""CHANGELOG.md: every config key down to the second level is listed, every rename of batchplane/config/renames.py
is listed under its release, and the current package version has a section."""

from __future__ import annotations

import re
import tomllib

import pytest

from batchplane.config import renames
from batchplane.config.suggest import keys_at
from batchplane.stack import StackConfig
from batchplane.stack.target import TARGET_KINDS
from tests.conftest import REPO_ROOT

CHANGELOG = (REPO_ROOT / "CHANGELOG.md").read_text(encoding="utf-8")


def sections() -> dict[str, str]:
    """The text of each ``## <version>`` section, by version."""
    parts = re.split(r"^## (\S+).*$", CHANGELOG, flags=re.MULTILINE)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def second_level_keys() -> list[tuple[str, str]]:
    """(section, key) of every key one level below a ``batchplane:`` section (a target's keys for every kind)."""
    out = []
    for section in keys_at(StackConfig, []):
        below = keys_at(StackConfig, [section])
        if section == "target":
            below = sorted({k for kind in TARGET_KINDS for k in keys_at(StackConfig, ["target", kind])})
        out += [(section, key) for key in below]
    return out


def test_the_current_version_has_a_section() -> None:
    version = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
    assert version in sections()


@pytest.mark.parametrize("section", keys_at(StackConfig, []))
def test_every_config_section_is_listed(section: str) -> None:
    assert f"`batchplane:{section}`" in CHANGELOG


def test_every_second_level_key_is_listed_on_its_sections_line() -> None:
    lines = {
        line.split("`")[1]: line for line in re.findall(r"^- `batchplane:.*(?:\n  .*)*", CHANGELOG, re.M)
    }
    missing = [
        f"{section}.{key}"
        for section, key in second_level_keys()
        if f"`{key}`" not in lines.get(f"batchplane:{section}", "")
    ]
    assert missing == []


def test_every_rename_is_listed_under_its_release() -> None:
    by_version = sections()
    for row in renames.RENAMES:
        assert row.release in by_version, row
        assert f"`{row.old}`" in by_version[row.release] and f"`{row.new}`" in by_version[row.release], row


def test_no_rename_is_claimed_while_the_table_is_empty() -> None:
    if not renames.RENAMES:
        assert "Renamed: none" in CHANGELOG
