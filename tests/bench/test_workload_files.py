"""Issue 11, points 4 and 5 for workload files: a shared YAML file cannot make capmodel grow without bound or print a
traceback. Each case is one that used to: an alias bomb grew to 1.7 GB, ``fields: {count: 1e8, length: 1e8}`` to
5-7 GB; a list, binary or deeply nested file gave a traceback.
"""
from __future__ import annotations

import resource

import pytest

from capmodel.bench.workload.definition import load_workload
from capmodel.cli import main
from capmodel.errors import InputError


def _bomb() -> str:
    """The 'billion laughs' in YAML: nine levels of nine aliases, 9**9 (387 million) strings when expanded."""
    lines = ["name: bomb", "collection: c", "l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for level in range(1, 9):
        lines.append(f"l{level}: &l{level} [" + ", ".join([f"*l{level - 1}"] * 9) + "]")
    lines.append("operations: [{op: find, filter: {x: *l8}}]")
    return "\n".join(lines) + "\n"


def test_the_alias_bomb_is_refused_before_it_grows(tmp_path):
    """Refused from the composed node graph, before any object is built (the peak memory stays under 100 MB; its
    time and memory are measured by benchmarks/bench_hostile.py, not asserted here)."""
    path = tmp_path / "bomb.yaml"
    path.write_text(_bomb())
    assert path.stat().st_size < 1500
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    with pytest.raises(InputError, match=r"bomb\.yaml: the YAML expands to more than 200,000 values"):
        load_workload(path)
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss_before < 100 * 1024


# sizes below follow estimated_size: a key's length + 2, a string generator its length; fields: count x (length + 12)
@pytest.mark.parametrize("text, message", [
    ("name: f\nrecords: 1000\nfields: {count: 100000000, length: 100000000}\noperations: {read: 1}\nkeys: {}\n",
     "'fields' makes documents of about 10,000,001,200,000,000 bytes; MongoDB's limit is 16,777,216"),
    ("name: f\nrecords: 1000\nfields: {count: 100, length: 10000}\noperations: {read: 1}\nkeys: {}\n",
     "1,000 of them held at once (1,001,200,000 bytes); at most 268,435,456"),
    ("name: d\nrecords: 10\ndocument: {s: {gen: string, length: 1000000000000}}\n"
     "operations: [{op: find, filter: {}}]\n",
     "'document' makes documents of about 1,000,000,000,003 bytes"),
    ("name: i\noperations: [{op: insert, batch: 100000, document: {s: {gen: string, length: 100000}}}]\n",
     "operation 'insert': 'document' makes documents of about 100,003 bytes, 100,000 of them held at once"),
    ("- op: read\n- op: update\n", "a workload file must be a YAML mapping, not a list"),
    ("name: deep\nx: " + "[" * 5000 + "]" * 5000 + "\n", "nested more than 64 levels deep"),
    ("name: r\nrecords: " + "9" * 400 + "\noperations: {read: 1}\n", "'records' must be an integer >= 0 and <= "),
    ("a: &a [*a]\n", "a YAML alias refers to itself"),
    ("name: [unclosed\n", "not valid YAML at line 2"),
])
def test_hostile_workload_files_are_one_clear_error(tmp_path, text, message):
    path = tmp_path / "w.yaml"
    path.write_text(text)
    with pytest.raises(InputError) as info:
        load_workload(path)
    assert str(info.value).startswith(str(path)) and message in str(info.value)
    assert len(str(info.value)) < 400


@pytest.mark.parametrize("content, message", [
    (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "binary content, not text (NUL byte at byte offset 8)"),
    (b"name: caf\xe9\n", "not UTF-8 text (byte offset 9)"),
    (b"x" * (2 * 2**20), "2,097,152 bytes is more than the 1,048,576 this file may have"),
])
def test_binary_or_huge_workload_files_exit_2_with_one_line(tmp_path, capsys, content, message):
    path = tmp_path / "w.yaml"
    path.write_bytes(content)
    code = main(["bench", "--uri", "mongodb://127.0.0.1:1", "--workload", str(path), "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert code == 2 and message in err and str(path) in err and len(err.strip().splitlines()) == 1
