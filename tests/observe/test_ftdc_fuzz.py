"""Property-based tests of the FTDC reader on damaged bytes: real chunks mutated inside and outside their zlib
stream, crafted chunks with random counts and varint / zero-run streams, truncated files. Whatever is drawn, the
reader accepts it or refuses it with one ``InputError`` naming the file and the byte offset, never a traceback, and
allocates at most 64 MB (tracemalloc). Each run draws 20 new cases per property (10 truncations; no example
database, so every run draws others); ``benchmarks/fuzz.py --only ftdc`` runs the same check on many more.
"""
from __future__ import annotations

from hypothesis import HealthCheck, given, settings

from tests.support import awkward_ftdc as hf

QUICK = settings(max_examples=20, deadline=None, database=None,
                 suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@QUICK
@given(data=hf.mutated_files())
def test_mutated_real_files(data):
    assert hf.check_ftdc(data) in hf.ACCEPTABLE


@QUICK
@given(data=hf.mutated_chunks())
def test_real_chunks_mutated_inside_their_zlib_stream(data):
    assert hf.check_ftdc(data) in hf.ACCEPTABLE


@QUICK
@given(data=hf.crafted_chunks())
def test_crafted_counts_and_streams(data):
    assert hf.check_ftdc(data) in hf.ACCEPTABLE


@settings(QUICK, max_examples=10)
@given(data=hf.truncated_files())
def test_truncations(data):
    assert hf.check_ftdc(data) in hf.ACCEPTABLE


def test_the_unmutated_sample_is_accepted():
    assert hf.check_ftdc(hf.real_file()) == "ok"
