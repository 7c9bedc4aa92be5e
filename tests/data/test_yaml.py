"""load_yaml parses once, with libyaml's C loader where PyYAML has it and the pure-Python loader otherwise: both give
the same data, and the same refusals naming the file and line (duplicate keys, aliases, nesting, syntax)."""
from __future__ import annotations

import datetime

import pytest
import yaml

from capmodel.data import structured
from capmodel.data.structured import load_yaml
from capmodel.errors import InputError

LOADERS = [yaml.SafeLoader] + ([yaml.CSafeLoader] if getattr(yaml, "CSafeLoader", None) else [])


@pytest.fixture(params=LOADERS, ids=lambda c: c.__name__)
def loader(request, monkeypatch):
    monkeypatch.setattr(structured, "_loader_class", lambda: request.param)
    return request.param


def test_libyaml_is_used_when_present():
    assert structured._loader_class() is getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@pytest.mark.parametrize("text, value", [
    ("a: 1e3\nb: 0x1f\nc: yes\nd: ~\ne: .inf\nf: '7'\ng: 2026-01-02\n",
     {"a": "1e3", "b": 31, "c": True, "d": None, "e": float("inf"), "f": "7", "g": datetime.date(2026, 1, 2)}),
    ("- &a {x: 1}\n- <<: *a\n  y: 2\n- *a\n", [{"x": 1}, {"x": 1, "y": 2}, {"x": 1}]),
    ("x: !!str 3\ny: !!binary aGk=\n", {"x": "3", "y": b"hi"}),
    ("x: " + "[" * 63 + "]" * 63 + "\n", {"x": yaml.safe_load("[" * 63 + "]" * 63)}),     # 64 levels: the limit
    ("", None),
    ("# a comment only\n", None),
])
def test_both_loaders_read_the_same_data(loader, text, value):
    assert load_yaml(text, "w.yaml") == value == yaml.safe_load(text)


@pytest.mark.parametrize("text, message", [
    ("a: 1\nb: 2\na: 3\n", "w.yaml: key 'a' appears twice in one mapping (lines 1 and 3)"),
    ("x:\n  1: a\n  '1': b\n", "w.yaml: keys '1' collide (a number and a string, the same name once read) in one "
                               "mapping (lines 2 and 3)"),
    ("x: " + "[" * 64 + "]" * 64 + "\n", "w.yaml: nested more than 64 levels deep (line 1)"),
    ("a:\n" + "".join("  " * i + "- \n" for i in range(1, 3000)), "w.yaml: nested more than 64 levels deep (line 65)"),
    ("a: &a [*a]\n", "w.yaml: a YAML alias refers to itself"),
    ("a: *nowhere\n", "w.yaml: not valid YAML at line 1, column 4 (found undefined alias 'nowhere')"),
    ("a: &x 1\nb: &x 2\n", "w.yaml: not valid YAML at line 2, column 4 (second occurrence)"),
    ("--- 1\n--- 2\n", "w.yaml: not valid YAML at line 2, column 1 (but found another document)"),
    ("name: [unclosed\n", "w.yaml: not valid YAML at line 2, column 1 ("),
    ("a:\n\t- b\n", "w.yaml: not valid YAML at line 2, column 1 (found character "),
    ("a: \x01\n", "w.yaml: not valid YAML (unacceptable character #x0001: "),
    ("a: !!python/name:os.system x\n", "w.yaml: not valid YAML (could not determine a constructor"),
    ("a: !!timestamp 2001-13-45\n", "w.yaml: a value cannot be read (month must be in 1..12)"),
])
def test_both_loaders_refuse_with_the_same_file_and_line(loader, text, message):
    with pytest.raises(InputError) as info:
        load_yaml(text, "w.yaml")
    assert str(info.value).startswith(message)
    assert "\n" not in str(info.value) and len(str(info.value)) < 300


def test_the_alias_bomb_is_refused_by_both_loaders(loader):
    lines = ["l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    lines += [f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 9) + "]" for i in range(1, 9)]
    with pytest.raises(InputError, match="expands to more than 200,000 values"):
        load_yaml("\n".join(lines) + "\n", "bomb.yaml")
