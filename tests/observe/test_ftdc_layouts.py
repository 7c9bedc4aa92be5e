"""The cache of sub-document layouts (``capmodel.observe.ftdc_bson``): a reference document read through the cache
gives exactly the names and values of a fresh walk, when a string changes length (the documents around it are walked
again, the others reused) and when a field changes type at the same width (no reuse: the type byte differs)."""
from __future__ import annotations

from pathlib import Path

import bson
import numpy as np
import pytest
from bson.int64 import Int64
from bson.son import SON

from capmodel.observe import ftdc
from capmodel.observe.ftdc_bson import LayoutCache

REALISTIC_DAY = Path(__file__).resolve().parents[3] / "shared" / "data" / "ftdc-realistic-day"   # ../shared


def _document(text: str, x) -> bytes:
    stats = SON([(f"counter{i}", Int64(i * 1000)) for i in range(12)])     # large enough to be cached
    return bson.encode(SON([("start", bson.DatetimeMS(1_700_000_000_000)),
                            ("serverStatus", SON([("tcmalloc", SON([("formattedString", text), ("x", x)])),
                                                  ("stats", stats), ("after", 3.5)]))]))


def _same_as_a_fresh_walk(reference: bytes, cache: LayoutCache):
    names, values = ftdc.metric_names(reference, cache)
    fresh_names, fresh_values = ftdc.metric_names(reference)
    assert names == fresh_names and np.array_equal(values, fresh_values)
    return dict(zip(names, values.view(np.int64).tolist()))


def test_a_string_of_another_length_rewalks_only_the_documents_around_it():
    cache = LayoutCache()
    first = _same_as_a_fresh_walk(_document("short", Int64(7)), cache)
    hits = cache.hits
    second = _same_as_a_fresh_walk(_document("a much longer string " * 5, Int64(9)), cache)
    assert cache.hits == hits + 1                            # serverStatus.stats came from the cache
    assert first["serverStatus.tcmalloc.x"] == 7 and second["serverStatus.tcmalloc.x"] == 9
    assert second["serverStatus.stats.counter11"] == 11_000 and second["serverStatus.after"] == 3


def test_the_same_layout_with_other_numbers_and_text_of_the_same_length_is_reused():
    cache = LayoutCache()
    _same_as_a_fresh_walk(_document("abcde", Int64(1)), cache)
    hits = cache.hits
    values = _same_as_a_fresh_walk(_document("vwxyz", Int64(-5)), cache)
    assert cache.hits == hits + 1 and values["serverStatus.tcmalloc.x"] == -5      # the whole document reused


@pytest.mark.parametrize("x, expected", [(7.9, 7), (-7.9, -7), (bson.DatetimeMS(1234), 1234),
                                         (Int64(2 ** 40), 2 ** 40)])
def test_a_field_changing_type_at_the_same_width_is_read_in_its_new_type(x, expected):
    cache = LayoutCache()
    _same_as_a_fresh_walk(_document("abcde", Int64(1)), cache)
    values = _same_as_a_fresh_walk(_document("abcde", x), cache)
    assert values["serverStatus.tcmalloc.x"] == expected


@pytest.mark.skipif(not REALISTIC_DAY.is_dir(), reason="the shared realistic day is not on this machine")
def test_real_chunks_read_through_the_cache_equal_fresh_walks():
    cache = LayoutCache()
    for count, chunk in enumerate(ftdc.iter_chunks(ftdc.ftdc_files(REALISTIC_DAY)[0])):
        _same_as_a_fresh_walk(chunk.raw[:chunk.layout.size], cache)
        if count == 40:
            break
    assert cache.hits > 40
