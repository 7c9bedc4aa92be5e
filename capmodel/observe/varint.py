"""The integer coding of FTDC's metric stream (MongoDB ``src/mongo/db/ftdc/varint.h`` and ``decompressor.cpp``):
unsigned LEB128 varints, vectorised with numpy, and the runs of zeros written as a zero followed by the run's length.

``DeltaStream`` reads a chunk's stream once (its codes and where each one lands in the metric-major delta matrix) and
then gives any metric's deltas without expanding the others: a day of FTDC holds about 2,000 metrics a sample, and
``capmodel observe`` needs 30 of them. Every size is checked before anything is allocated from it: a stream can hold
at most two codes per delta (a zero and its run length), and no run may reach past the deltas the header promises.
"""
from __future__ import annotations

import numpy as np

MAX_VARINT_BYTES = 10       # 64 bits, 7 a byte


def decode_varints(buffer: np.ndarray, limit: int | None = None) -> np.ndarray:
    """Every unsigned LEB128 varint in ``buffer`` (uint8) as uint64; a final incomplete varint, one longer than 10
    bytes, or (with ``limit``) more than ``limit`` varints raise ValueError.

    Most of a real stream's varints are one byte (zeros, small deltas, run lengths): every varint's first byte is
    taken at once, then byte k of only the varints longer than k, in arrays that shrink with each pass."""
    if buffer.size == 0:
        return np.zeros(0, dtype=np.uint64)
    last = buffer < 0x80
    found = int(np.count_nonzero(last))
    if limit is not None and found > limit:
        raise ValueError(f"the delta stream holds {found:,} codes, more than the {limit:,} its header allows")
    if not last[-1]:
        raise ValueError("the delta stream ends inside a varint")
    ends = np.flatnonzero(last)
    del last
    starts = np.empty_like(ends)
    starts[0] = 0
    starts[1:] = ends[:-1] + 1
    longer = np.flatnonzero(ends != starts)            # the varints of more than one byte
    if longer.size:
        longest = int((ends[longer] - starts[longer]).max()) + 1
        if longest > MAX_VARINT_BYTES:
            raise ValueError(f"a varint of {longest} bytes (at most {MAX_VARINT_BYTES})")
    values = (buffer[starts] & 0x7F).astype(np.uint64)
    k = 1
    while longer.size:
        at = starts[longer] + k
        values[longer] |= (buffer[at] & 0x7F).astype(np.uint64) << np.uint64(7 * k)
        longer = longer[ends[longer] > at]
        k += 1
    return values


def zero_run_ends(codes: np.ndarray, expected: int) -> np.ndarray:
    """Where the values of decoded ``codes`` end once the zero runs are undone ((0, k) stands for k + 1 zeros, every
    other code for itself): ``codes[i]`` covers values ``[ends[i] - repeats, ends[i])``. ValueError unless they make
    exactly ``expected`` values."""
    zeros = np.flatnonzero(codes == 0)
    # A run of zero codes is read from its first code on (the code before it, a value or a count, ends a pair), so
    # inside a run the codes alternate zero, count: a zero opens a pair at an even place in its run.
    order = np.arange(zeros.size)
    opens_run = np.ones(zeros.size, dtype=bool)
    opens_run[1:] = zeros[1:] != zeros[:-1] + 1
    first = np.maximum.accumulate(np.where(opens_run, order, 0))
    marks = zeros[(order - first) % 2 == 0]
    del zeros, order, opens_run, first
    if marks.size and marks[-1] + 1 >= codes.size:
        raise ValueError("the delta stream ends after a zero without its run length")
    counts = codes[marks + 1]
    if counts.size and int(counts.max()) >= max(expected, 1):
        raise ValueError(f"a run of {int(counts.max()) + 1:,} zeros, more than the {expected:,} deltas the header "
                         "promises")
    repeats = np.ones(codes.size, dtype=np.int64)
    repeats[marks + 1] = 0
    repeats[marks] = counts.astype(np.int64) + 1
    ends = np.cumsum(repeats)
    total = int(ends[-1]) if ends.size else 0
    if total != expected:
        raise ValueError(f"the delta stream holds {total:,} values, the header promises {expected:,}")
    return ends


def expand_zero_runs(codes: np.ndarray, expected: int) -> np.ndarray:
    """Every value of decoded ``codes`` with the zero runs undone (see ``zero_run_ends``)."""
    ends = zero_run_ends(codes, expected)
    return codes[np.searchsorted(ends, np.arange(expected), side="right")]


class DeltaStream:
    """A chunk's delta stream, checked: ``n_metrics`` x ``n_deltas`` values, metric by metric."""

    def __init__(self, buffer: np.ndarray, n_metrics: int, n_deltas: int):
        self.n_metrics, self.n_deltas = n_metrics, n_deltas
        expected = n_metrics * n_deltas
        self.codes = decode_varints(buffer, limit=2 * expected)
        try:
            self.ends = zero_run_ends(self.codes, expected)
        except ValueError as exc:
            raise ValueError(f"{exc} ({n_metrics:,} metrics x {n_deltas:,} deltas)") from None

    def rows(self, metrics) -> np.ndarray:
        """The deltas of the given metric rows, shape (len(metrics), n_deltas), uint64."""
        metrics = np.asarray(metrics, dtype=np.int64)
        if metrics.size == self.n_metrics and (metrics == np.arange(self.n_metrics)).all():    # all: expand at once
            return np.repeat(self.codes, np.diff(self.ends, prepend=0)).reshape(self.n_metrics, self.n_deltas)
        at = (metrics[:, None] * self.n_deltas + np.arange(self.n_deltas)[None, :]).ravel()
        return self.codes[np.searchsorted(self.ends, at, side="right")].reshape(metrics.size, self.n_deltas)
