"""Stack files, Pulumi.yaml and config encoded as the Pulumi CLI passes it to the program."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from batchplane.errors import ConfigLoadError
from batchplane.offline.stackfile import (
    encode_config,
    encode_value,
    normalise_key,
    read_project,
    read_stack_file,
)
from batchplane.stack.files import SECRET_PLACEHOLDER


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_stack_file_config_map_keeps_yaml_types_and_secure_values(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "Pulumi.dev.yaml",
        "encryptionsalt: abc\nconfig:\n  batchplane:kueue:\n    version: v1beta2\n    queues: [1, 2]\n"
        "  batchplane:gpus: 8\n  batchplane:token:\n    secure: v1:xyz\n",
    )
    assert read_stack_file(path) == {
        "batchplane:kueue": {"version": "v1beta2", "queues": [1, 2]},
        "batchplane:gpus": 8,
        "batchplane:token": {"secure": "v1:xyz"},
    }


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("config:\n  a:b: yes\n", "yes"),
        ("config:\n  a:b: on\n", "on"),
        ("config:\n  a:b: 2026-01-01\n", "2026-01-01"),
        ("config:\n  a:b: true\n", True),
        ("config:\n  a:b: False\n", False),
        ("config:\n  a:b: 0.5\n", 0.5),
    ],
    ids=["yes-is-a-string", "on-is-a-string", "date-is-a-string", "true", "False", "float"],
)
def test_stack_file_scalars_are_read_as_yaml_1_2(tmp_path: Path, text: str, want: Any) -> None:
    assert read_stack_file(write(tmp_path, "Pulumi.s.yaml", text)) == {"a:b": want}


@pytest.mark.parametrize(
    "text", ["", "encryptionsalt: abc\n", "config:\n"], ids=["empty-file", "no-config-key", "null-config"]
)
def test_stack_file_without_config_gives_an_empty_map(tmp_path: Path, text: str) -> None:
    assert read_stack_file(write(tmp_path, "Pulumi.s.yaml", text)) == {}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("config:\n  a: [\n", "{path} is not valid YAML (line 3, column 1): expected the node content, "
         "but found '<stream end>'"),
        ("- 1\n- 2\n", "{path}: expected a mapping with a 'config' key, got list"),
        ("config: [1]\n", "{path}: 'config' must be a mapping of 'namespace:key' to values"),
    ],
    ids=["not-yaml", "not-a-mapping", "config-not-a-mapping"],
)  # fmt: skip
def test_bad_stack_files_raise_config_load_error(tmp_path: Path, text: str, message: str) -> None:
    path = write(tmp_path, "Pulumi.s.yaml", text)
    with pytest.raises(ConfigLoadError) as caught:
        read_stack_file(path)
    assert str(caught.value) == message.format(path=path)


def test_missing_stack_file_raises_config_load_error(tmp_path: Path) -> None:
    path = tmp_path / "Pulumi.nope.yaml"
    with pytest.raises(ConfigLoadError) as caught:
        read_stack_file(path)
    assert str(caught.value) == f"cannot read {path}: No such file or directory"


@pytest.mark.parametrize(
    ("value", "want"),
    [
        ("text", "text"),
        ("", ""),
        (3, "3"),
        (1.5, "1.5"),
        (True, "true"),
        (None, "null"),
        ({"b": 1, "a": [1, "x", None]}, '{"a":[1,"x",null],"b":1}'),
        (["ü"], '["ü"]'),
    ],
    ids=["string", "empty-string", "int", "float", "bool", "null", "object-sorted-compact", "unicode-list"],
)
def test_values_are_encoded_as_the_cli_encodes_them(value: Any, want: str) -> None:
    assert encode_value(value) == want


@pytest.mark.parametrize(
    ("key", "want"),
    [
        ("gpus", "proj:gpus"),
        ("batchplane:kueue", "batchplane:kueue"),
        ("batchplane:config:kueue", "batchplane:kueue"),
    ],
    ids=["bare-key-gets-project-namespace", "namespaced-key-unchanged", "legacy-config-segment-dropped"],
)
def test_config_keys_are_normalised(key: str, want: str) -> None:
    assert normalise_key("proj", key) == want


def test_secure_values_become_placeholders_with_their_keys_secret() -> None:
    encoded, secret_keys = encode_config(
        "proj",
        {
            "token": {"secure": "v1:a"},
            "batchplane:auth": {"user": "u", "passwords": [{"secure": "v1:b"}]},
            "batchplane:plain": {"secure": "v1:c", "other": 1},
        },
    )
    assert encoded == {
        "proj:token": SECRET_PLACEHOLDER,
        "batchplane:auth": '{"passwords":["secret-placeholder"],"user":"u"}',
        "batchplane:plain": '{"other":1,"secure":"v1:c"}',
    }
    assert secret_keys == ["batchplane:auth", "proj:token"]


def test_project_file_gives_name_program_and_config_defaults(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    write(
        tmp_path,
        "Pulumi.yaml",
        "name: demo\nruntime: python\nmain: src\nconfig:\n"
        "  region: {type: string, default: eu}\n"
        "  size: {type: integer}\n"
        "  batchplane:tier: gold\n"
        "  mode: {value: fast}\n",
    )
    project = read_project(tmp_path)
    assert (project.directory, project.name, project.program) == (
        tmp_path.resolve(),
        "demo",
        tmp_path / "src",
    )
    assert project.config_defaults == {"demo:region": "eu", "batchplane:tier": "gold", "demo:mode": "fast"}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("runtime: python\n", "{path}: expected a mapping with a non-empty string 'name'"),
        ("name: demo\nmain: missing\n", "{path}: main program {dir}/missing does not exist"),
        ("name: demo\nconfig: [1]\n", "{path}: 'config' must be a mapping"),
    ],
    ids=["no-name", "missing-main", "config-not-a-mapping"],
)
def test_bad_project_files_raise_config_load_error(tmp_path: Path, text: str, message: str) -> None:
    path = write(tmp_path, "Pulumi.yaml", text)
    with pytest.raises(ConfigLoadError) as caught:
        read_project(tmp_path)
    assert str(caught.value) == message.format(path=path.resolve(), dir=tmp_path.resolve())
