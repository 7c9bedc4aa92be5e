"""Random number generators for benchmark keys and document values, vectorised with numpy.

Key choosers follow YCSB's request distributions (YCSB wiki "Core Workloads"; ``core/.../generator/*.java`` of
brianfrankcooper/YCSB), written here from the published definitions:

- ``ZipfianGenerator``: Gray et al., "Quickly Generating Billion-Record Synthetic Databases", SIGMOD 1994, section 6
  (the method YCSB uses, with YCSB's constant theta = 0.99). Ranks 0 and 1 are drawn exactly; ranks >= 2 come from
  Gray's closed-form approximation of the inverse CDF, so their probabilities are close to, not equal to, the zipf
  pmf. ``method="exact"`` samples the exact pmf by inverse CDF instead (O(n) memory).
- ``ScrambledZipfianGenerator``: YCSB's default request distribution. A zipfian rank over a very large item space
  (10**10 items, zeta constant 26.46902820178302 as in YCSB) is hashed with YCSB's ``fnvhash64`` and taken modulo
  the record count, so popular keys are spread over the key space instead of clustered at its start.
- ``SkewedLatestGenerator``: "latest" (workload D): key = newest - zipfian(rank), so recently inserted keys are hot.
- ``UniformGenerator`` and ``HotspotGenerator`` (a hot fraction of the keys receives a hot fraction of requests).

Every generator draws in blocks (``sample(size)``); the runner keeps one generator per worker thread so no lock is
taken per operation.
"""
from __future__ import annotations

import functools
import threading

import numpy as np

from capmodel.errors import InputError

ZIPFIAN_CONSTANT = 0.99  # YCSB's ZipfianGenerator.ZIPFIAN_CONSTANT
SCRAMBLED_ITEM_COUNT = 10_000_000_000  # YCSB's ScrambledZipfianGenerator.ITEM_COUNT
SCRAMBLED_ZETAN = 26.46902820178302  # YCSB's precomputed zeta(10**10, 0.99)

FNV_OFFSET_BASIS_64 = 0xCBF29CE484222325
FNV_PRIME_64 = 0x100000001B3


def ycsb_fnvhash64(values) -> np.ndarray:
    """YCSB's ``Utils.fnvhash64`` of each integer: what YCSB names records and scrambles zipfian ranks with.

    The 64-bit FNV-1a hash (xor, then multiply) of the value's 8 bytes, lowest first, read as a signed 64-bit
    integer (Java's ``long``) and made non-negative with ``Math.abs``, whose one exception Java keeps: -2**63 stays
    -2**63. As in ``site.ycsb.Utils.fnvhash64`` of YCSB 0.17.0 (its bytecode, ``javap -c``, in ``core-0.17.0.jar``).
    Returns int64.
    """
    v = np.asarray(values, dtype=np.int64).astype(np.uint64)
    h = np.full(v.shape, FNV_OFFSET_BASIS_64, dtype=np.uint64)
    prime = np.uint64(FNV_PRIME_64)
    mask, eight = np.uint64(0xFF), np.uint64(8)
    with np.errstate(over="ignore"):
        for _ in range(8):
            h ^= v & mask
            h *= prime  # wraps modulo 2**64, as FNV requires
            v >>= eight
        return np.abs(h.view(np.int64))  # Java's Math.abs: wraps at -2**63 as numpy's does


@functools.lru_cache(maxsize=64)
def _zeta_from_zero(n: int, theta: float) -> float:
    return zeta(n, theta, 1, 1.0) if n >= 1 else 0.0


def zeta(n: int, theta: float, start: int = 0, partial: float = 0.0) -> float:
    """sum_{i=start+1}^{n} 1/i**theta + partial (incremental, as YCSB extends zeta when the item count grows)."""
    if start == 0:
        return _zeta_from_zero(int(n), float(theta))
    if n <= start:
        return partial
    total = partial
    for lo in range(start + 1, n + 1, 1_000_000):  # chunks keep memory flat for large n
        i = np.arange(lo, min(n, lo + 999_999) + 1, dtype=np.float64)
        total += float(np.sum(i ** -theta))
    return total


def zipf_pmf(n: int, theta: float = ZIPFIAN_CONSTANT) -> np.ndarray:
    """Exact zipf probabilities of ranks 0..n-1: p(k) = (k+1)**-theta / zeta(n, theta)."""
    w = np.arange(1, n + 1, dtype=np.float64) ** -theta
    return w / w.sum()


class UniformGenerator:
    """Integers uniform on [low, high] (inclusive, as YCSB's UniformLongGenerator)."""

    def __init__(self, low: int, high: int, seed=None):
        if high < low:
            raise InputError(f"uniform generator: high {high} < low {low}")
        self.low, self.high = int(low), int(high)
        self.rng = np.random.default_rng(seed)

    def sample(self, size: int) -> np.ndarray:
        return self.rng.integers(self.low, self.high + 1, size=size)


class ZipfianGenerator:
    """Zipf-distributed integers on [low, high]; the smallest values are the most popular.

    ``method="gray"`` (default, YCSB's) uses Gray et al.'s closed form: with zeta_n = zeta(n, theta),
    alpha = 1/(1-theta), eta = (1 - (2/n)**(1-theta)) / (1 - zeta(2, theta)/zeta_n) and u ~ U(0,1):
    rank = 0 if u*zeta_n < 1, 1 if u*zeta_n < 1 + 0.5**theta, else floor(n * (eta*u - eta + 1)**alpha).
    ``method="exact"`` inverts the exact CDF.
    """

    def __init__(self, low: int, high: int, theta: float = ZIPFIAN_CONSTANT, seed=None, method: str = "gray",
                 zetan: float | None = None):
        if high < low:
            raise InputError(f"zipfian generator: high {high} < low {low}")
        if not 0 < theta < 1:
            raise InputError(f"zipfian generator: theta {theta} must be between 0 and 1")
        if method not in ("gray", "exact"):
            raise InputError(f"zipfian generator: method {method!r} must be 'gray' or 'exact'")
        self.low, self.theta, self.method = int(low), float(theta), method
        self.rng = np.random.default_rng(seed)
        self.alpha = 1.0 / (1.0 - theta)
        self.zeta2 = 1.0 + 0.5 ** theta
        self._lock = threading.Lock()
        self.n = 0
        self.zetan = 0.0
        self._cdf: np.ndarray | None = None
        self._resize(int(high) - int(low) + 1, zetan)

    def _resize(self, n: int, zetan: float | None = None) -> None:
        if zetan is not None:
            self.zetan = float(zetan)
        else:
            self.zetan = zeta(n, self.theta, self.n, self.zetan) if n >= self.n else zeta(n, self.theta)
        self.n = n
        self.eta = (1 - (2.0 / n) ** (1 - self.theta)) / (1 - self.zeta2 / self.zetan) if n > 2 else 0.0
        self._cdf = np.cumsum(zipf_pmf(n, self.theta)) if self.method == "exact" else None

    def set_item_count(self, n: int) -> None:
        """Grow (or shrink) the item space; zeta is extended incrementally when it grows."""
        with self._lock:
            if n != self.n:
                self._resize(int(n))

    def sample_ranks(self, size: int) -> np.ndarray:
        """Zipf ranks 0..n-1 (0 the most popular)."""
        u = self.rng.random(size)
        cdf = self._cdf
        if self.method == "exact" and cdf is not None:   # the exact method keeps its CDF
            return np.minimum(np.searchsorted(cdf, u * cdf[-1], side="right"), self.n - 1)
        uz = u * self.zetan
        with np.errstate(invalid="ignore"):
            tail = np.floor(self.n * np.power(self.eta * u - self.eta + 1.0, self.alpha))
        ranks = np.where(uz < 1.0, 0, np.where(uz < self.zeta2, 1, np.nan_to_num(tail)))
        return np.minimum(ranks.astype(np.int64), self.n - 1)

    def sample(self, size: int) -> np.ndarray:
        return self.low + self.sample_ranks(size)


class ScrambledZipfianGenerator:
    """YCSB's scrambled zipfian on [low, high]: zipfian rank over 10**10 items, ``ycsb_fnvhash64``, modulo the range."""

    def __init__(self, low: int, high: int, seed=None):
        if high < low:
            raise InputError(f"scrambled zipfian generator: high {high} < low {low}")
        self.low, self.count = int(low), int(high) - int(low) + 1
        self._zipf = ZipfianGenerator(0, SCRAMBLED_ITEM_COUNT - 1, seed=seed, zetan=SCRAMBLED_ZETAN)

    def set_item_count(self, n: int) -> None:
        self.count = int(n)

    def sample(self, size: int) -> np.ndarray:
        ranks = self._zipf.sample_ranks(size)
        return self.low + np.fmod(ycsb_fnvhash64(ranks), self.count)  # Java's remainder (lrem) truncates


class SkewedLatestGenerator:
    """YCSB's "latest": key = newest - zipfian rank, where newest follows the insert counter."""

    def __init__(self, newest, seed=None):
        """``newest`` is a callable returning the newest existing key number (it grows as inserts happen)."""
        self.newest = newest
        self._zipf = ZipfianGenerator(0, max(int(newest()), 0), seed=seed)

    def sample(self, size: int) -> np.ndarray:
        top = int(self.newest())
        self._zipf.set_item_count(top + 1)
        return top - self._zipf.sample_ranks(size)


class HotspotGenerator:
    """A hot set (fraction ``hot_data`` of [low, high]) gets a fraction ``hot_ops`` of the requests (YCSB hotspot)."""

    def __init__(self, low: int, high: int, hot_data: float = 0.2, hot_ops: float = 0.8, seed=None):
        if high < low:
            raise InputError(f"hotspot generator: high {high} < low {low}")
        if not (0 < hot_data < 1 and 0 <= hot_ops <= 1):
            raise InputError("hotspot generator: hot_data must be in (0, 1) and hot_ops in [0, 1]")
        self.low, self.high = int(low), int(high)
        self.hot_size = max(1, int((self.high - self.low + 1) * hot_data))
        self.hot_ops = hot_ops
        self.rng = np.random.default_rng(seed)

    def sample(self, size: int) -> np.ndarray:
        hot = self.rng.random(size) < self.hot_ops
        hot_keys = self.rng.integers(self.low, self.low + self.hot_size, size=size)
        cold_keys = self.rng.integers(min(self.low + self.hot_size, self.high), self.high + 1, size=size)
        return np.where(hot, hot_keys, cold_keys)


DISTRIBUTIONS = ("uniform", "zipfian", "scrambled_zipfian", "latest", "hotspot")


def key_chooser(distribution: str, count, seed=None, **options):
    """A generator of key numbers for a request distribution; ``count`` is a callable giving the current key count."""
    n = max(int(count()), 1)
    if distribution == "uniform":
        return _Growing(lambda: UniformGenerator(0, n - 1, seed=seed), count, "uniform")
    if distribution == "zipfian":
        zipfian = ZipfianGenerator(0, n - 1, seed=seed, theta=options.get("theta", ZIPFIAN_CONSTANT),
                                   method=options.get("method", "gray"))
        return _Growing(lambda: zipfian, count, "zipfian")
    if distribution == "scrambled_zipfian":
        gen = ScrambledZipfianGenerator(0, n - 1, seed=seed)
        return _Growing(lambda: gen, count, "scrambled_zipfian")
    if distribution == "latest":
        return SkewedLatestGenerator(lambda: max(int(count()) - 1, 0), seed=seed)
    if distribution == "hotspot":
        return HotspotGenerator(0, n - 1, options.get("hot_data", 0.2), options.get("hot_ops", 0.8), seed=seed)
    raise InputError(f"unknown request distribution {distribution!r}; choose one of {', '.join(DISTRIBUTIONS)}")


class _Growing:
    """Wrap a generator over [0, n) so that it follows a key count that grows with inserts.

    Like YCSB's CoreWorkload, requests only go to keys below the insert counter. For zipfian distributions the
    item count is updated before each block, so zeta is extended incrementally rather than recomputed.
    """

    def __init__(self, make, count, kind):
        self.gen, self.count, self.kind = make(), count, kind

    def sample(self, size: int) -> np.ndarray:
        n = max(int(self.count()), 1)
        if self.kind == "uniform":
            self.gen.high = n - 1
        else:
            self.gen.set_item_count(n)
        return self.gen.sample(size)
