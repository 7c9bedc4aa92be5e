"""How dependent consecutive intervals are, and the circular block bootstrap that respects it: the block length and
the widening its percentiles need (Politis & White's rule), and the runs of intervals a resample draws.

Consecutive intervals of a server are not independent draws: a checkpoint, a cache warming up or a changing mix of
operations moves the CPU per operation for many seconds at a time. A bootstrap that resamples single intervals
treats each as a fresh draw and gives an interval too narrow by the square root of the variance inflation. The
circular block bootstrap (Politis & Romano 1992) resamples runs of ``block`` contiguous intervals (wrapping at the
end), so the dependence within a run is kept. Used by ``capmodel.observe.service_demand`` (a server's CPU per
operation) and ``capmodel.models.mix.production`` (the mix what-if's refits).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

#: Politis & White's significance constant c and the run K_N of small autocorrelations that ends the dependence
PW_C, PW_MIN_RUN = 2.0, 5
#: degrees of freedom from which ``student_t_quantile`` takes the Cornish-Fisher expansion (its error below 3e-13 there)
CORNISH_FISHER_FROM = 1000


def autocovariances(series: np.ndarray, max_lag: int) -> np.ndarray:
    """Sample autocovariances R(0..max_lag) of ``series`` (divisor n, mean removed), by FFT."""
    n = len(series)
    centred = series - series.mean()
    size = 1 << int(math.ceil(math.log2(max(2 * n, 2))))
    spectrum = np.fft.rfft(centred, size)
    return np.fft.irfft(spectrum * np.conj(spectrum), size)[:max_lag + 1] / n


@dataclass(frozen=True)
class Dependence:
    """What the autocorrelation of a series says about the variance of its mean: its autocovariances ``acov``
    (lags 0..), the flat-top estimate ``g0`` of the long-run variance Σ R(k) and ``g1`` of Σ |k| R(k) (Politis &
    White 2004), the number of terms ``n``."""

    acov: np.ndarray
    g0: float
    g1: float
    n: int

    @property
    def block(self) -> int:
        """The circular block bootstrap's MSE-optimal block length (Politis & White 2004, corrected by Patton,
        Politis & White 2009): b = (2 G² / D_CB)^(1/3) n^(1/3), D_CB = 4/3 g(0)², rounded up, from 1 to
        min(3√n, n/3); 1 where no dependence is found."""
        if not (self.g0 > 0 and self.g1 != 0):
            return 1
        b = (2.0 * self.g1 ** 2 / (4.0 / 3.0 * self.g0 ** 2)) ** (1 / 3) * self.n ** (1 / 3)
        return int(min(max(math.ceil(b), 1), math.ceil(min(3 * math.sqrt(self.n), self.n / 3))))

    def bartlett(self, block: int) -> float:
        """v_b = Σ_{|k|<b} (1 − |k|/b) R(k): the variance (times n) of the mean that circular blocks of ``block``
        intervals reproduce."""
        k = np.arange(1, min(block, len(self.acov)))
        return float(self.acov[0]) + 2.0 * float(((1.0 - k / block) * self.acov[k]).sum())

    def widening(self, block: int, level: float) -> float:
        """How much wider than the circular block bootstrap's percentiles the interval must be, for two known
        shortfalls of it. Its variance is the Bartlett sum v_b (``bartlett``), low against the long-run variance by
        about G / b (Künsch 1989; Politis & White 2004): factor sqrt(V / v_b), never below 1, where V is the larger of
        the flat-top g(0) and 2·v_2b − v_b (the Bartlett sums at b and 2b with their 1/b bias cancelled: flat-top
        lags stop early under moderate dependence). And it draws only k = ceil(n / b) blocks, so its spread is
        itself a k-block estimate: Student's t with k − 1 degrees of freedom for the normal quantile. 1 for block 1
        (the ordinary bootstrap: today's interval where the intervals show no dependence)."""
        if block <= 1:
            return 1.0
        v_b, v_2b = self.bartlett(block), self.bartlett(2 * block)
        target = max(2.0 * v_2b - v_b, self.g0)
        bias = math.sqrt(max(target / v_b, 1.0)) if v_b > 0 else 1.0
        tail = 0.5 + level / 2.0
        blocks = -(-self.n // block)
        return bias * (student_t_quantile(tail, blocks - 1) / NormalDist().inv_cdf(tail) if blocks > 1 else 1.0)


def student_t_quantile(p: float, df: int) -> float:
    """The ``p`` quantile (1/2 < p < 1) of Student's t with ``df`` (a whole number, at least 1) degrees of freedom,
    within 1e-12 of scipy's ``stdtrit`` below p = 0.999 (importing ``scipy.special`` costs ``capmodel observe`` a
    quarter of a second of CPU and 27 MB). From ``CORNISH_FISHER_FROM`` degrees of freedom on, the Cornish-Fisher
    expansion in powers of 1 / df (Abramowitz & Stegun 26.7.5); below, Newton's method on P(|T| <= t), summed
    exactly for a whole df (26.7.3, 26.7.4), from the normal quantile: P(|T| <= t) is concave for t > 0, so every
    step stays below the root."""
    z = NormalDist().inv_cdf(p)
    if df >= CORNISH_FISHER_FROM:
        terms = ((z ** 3 + z) / 4, (5 * z ** 5 + 16 * z ** 3 + 3 * z) / 96,
                 (3 * z ** 7 + 19 * z ** 5 + 17 * z ** 3 - 15 * z) / 384,
                 (79 * z ** 9 + 776 * z ** 7 + 1482 * z ** 5 - 1920 * z ** 3 - 945 * z) / 92160)
        return z + sum(g / df ** (k + 1) for k, g in enumerate(terms))
    scale = math.exp(math.lgamma((df + 1) / 2) - math.lgamma(df / 2)) / math.sqrt(df * math.pi)
    t = z
    for _ in range(200):
        density = scale * (1 + t * t / df) ** (-(df + 1) / 2)
        step = (2 * p - 1 - _t_within(t, df)) / (2 * density)
        t += step
        if step <= 1e-15 * t:
            break
    return t


def _t_within(t: float, df: int) -> float:
    """P(|T| <= t) of Student's t with a whole ``df`` (Abramowitz & Stegun 26.7.3 and 26.7.4)."""
    theta = math.atan(t / math.sqrt(df))
    c2 = math.cos(theta) ** 2
    term = total = 1.0
    if df % 2 == 0:
        for k in range(1, df // 2):
            term *= c2 * (2 * k - 1) / (2 * k)
            total += term
        return math.sin(theta) * total
    if df == 1:
        return 2 * theta / math.pi
    for k in range(1, (df - 1) // 2):
        term *= c2 * (2 * k) / (2 * k + 1)
        total += term
    return 2 / math.pi * (theta + math.sin(theta) * math.cos(theta) * total)


def dependence(series: np.ndarray) -> Dependence:
    """``Dependence`` of ``series`` by Politis & White's rule: the flat-top lag window λ(t) (1 to t = 1/2, then
    falling linearly to 0 at t = 1) over lags up to M, twice the first lag m after which K_N = max(5,
    sqrt(log10 n)) autocorrelations in a row lie within c·sqrt(log10(n) / n), c = 2 (at most sqrt(n) + K_N)."""
    n = len(series)
    if n < 4:
        return Dependence(np.zeros(1), 0.0, 0.0, n)
    run = max(PW_MIN_RUN, math.ceil(math.sqrt(math.log10(n))))
    m_max = math.ceil(math.sqrt(n)) + run
    max_lag = n - 1
    acov = autocovariances(series, max_lag)
    if not acov[0] > 0:
        return Dependence(acov, 0.0, 0.0, n)
    small = np.abs(acov[1:] / acov[0]) < PW_C * math.sqrt(math.log10(n) / n)    # small[k - 1]: lag k
    m_hat = m_max
    for m in range(0, min(m_max, max_lag - run) + 1):
        if small[m:m + run].all():                       # lags m+1 .. m+run all small
            m_hat = m
            break
    big_m = min(2 * m_hat, m_max, max_lag)
    if big_m == 0:
        return Dependence(acov, float(acov[0]), 0.0, n)
    lags = np.arange(1, big_m + 1)
    t = lags / big_m
    window = np.where(t <= 0.5, 1.0, 2.0 * (1.0 - t))
    g0 = float(acov[0]) + 2.0 * float((window * acov[1:big_m + 1]).sum())
    g1 = 2.0 * float((window * lags * acov[1:big_m + 1]).sum())
    return Dependence(acov, g0, g1, n)


def circular_blocks(rng: np.random.Generator, n: int, block: int) -> np.ndarray:
    """The interval indices of one circular block resample of ``n``: ceil(n / block) starts drawn uniformly
    (``rng.integers(0, n, k)``), each a run of ``block`` (wrapping past the last interval to the first), cut to n.
    Block 1 is the ordinary bootstrap, draw for draw."""
    if block <= 1:
        return rng.integers(0, n, n)
    starts = rng.integers(0, n, -(-n // block))
    return ((starts[:, None] + np.arange(block)[None, :]) % n).ravel()[:n]
