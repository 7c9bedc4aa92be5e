"""The integer coding of FTDC's metric stream (MongoDB ``src/mongo/db/ftdc/varint.h`` and ``decompressor.cpp``):
unsigned LEB128 varints, vectorised with numpy, and the runs of zeros written as a zero followed by the run's length.
"""
from __future__ import annotations

import numpy as np



def decode_varints(buffer: np.ndarray) -> np.ndarray:
    """Every unsigned LEB128 varint in ``buffer`` (uint8) as uint64; a final incomplete varint raises ValueError."""
    if buffer.size == 0:
        return np.zeros(0, dtype=np.uint64)
    ends = np.flatnonzero(buffer < 0x80)
    if ends.size == 0 or ends[-1] != buffer.size - 1:
        raise ValueError("the delta stream ends inside a varint")
    starts = np.empty_like(ends)
    starts[0] = 0
    starts[1:] = ends[:-1] + 1
    lengths = ends - starts + 1
    if lengths.max() > 10:
        raise ValueError("a varint longer than 10 bytes")
    position = np.arange(buffer.size) - np.repeat(starts, lengths)
    parts = (buffer & 0x7F).astype(np.uint64) << (7 * position).astype(np.uint64)
    return np.bitwise_or.reduceat(parts, starts)


def expand_zero_runs(codes: np.ndarray, expected: int) -> np.ndarray:
    """Undo the zero run-length coding: (0, k) stands for k + 1 zeros; every other value for itself.

    A run of zero codes is read from its first code on (the code before it, a value or a count, ends a pair), so
    inside a run the codes alternate zero, count.
    """
    zero = codes == 0
    index = np.arange(codes.size)
    run_start = zero & ~np.concatenate(([False], zero[:-1]))
    first = np.maximum.accumulate(np.where(run_start, index, 0))
    marker = zero & ((index - first) % 2 == 0)
    marks = np.flatnonzero(marker)
    if marks.size and marks[-1] + 1 >= codes.size:
        raise ValueError("the delta stream ends after a zero without its run length")
    repeats = np.ones(codes.size, dtype=np.uint64)
    counts = codes[marks + 1]
    repeats[marks + 1] = 0
    repeats[marks] = counts + np.uint64(1)
    total = int(repeats.sum()) if not (counts > expected).any() else expected + 1
    if total != expected:
        raise ValueError(f"the delta stream holds {total} values, the header promises {expected}")
    return np.repeat(codes, repeats.astype(np.int64))


# ------------------------------------------------------------------------------------------------------------ chunks
