"""Key generators of capmodel.bench.workload.generators against independent references.

References: FNV test vectors from the FNV reference page (Fowler/Noll/Vo, isthe.com/chongo/tech/comp/fnv, "FNV-1a
64-bit" test suite) and YCSB's use of it (``Utils.fnvhash64``: the hash as a Java long, ``Math.abs``); the zipf pmf
p(k) ~ 1/(k+1)**theta; Gray et al., SIGMOD 1994, section 6 for the closed-form
sampler, whose exact output distribution is derived here independently from its inverse formula.
"""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from capmodel.bench.workload import generators as g
from capmodel.errors import InputError

P_MIN = 1e-3  # chi-square / binomial tests at a fixed seed must not reject at this level


def fnv1a_reference(data: bytes) -> int:
    h = 0xCBF29CE484222325
    for byte in data:
        h ^= byte
        h = (h * 0x100000001B3) % 2**64
    return h


def test_fnv_reference_matches_published_vectors():
    assert fnv1a_reference(b"") == 0xCBF29CE484222325
    assert fnv1a_reference(b"a") == 0xAF63DC4C8601EC8C
    assert fnv1a_reference(b"foobar") == 0x85944171F73967E8


def java_abs_of_signed(h: int) -> int:
    """Java's Math.abs of the unsigned 64-bit ``h`` read as a long: -2**63 stays -2**63."""
    signed = h - 2**64 if h >= 2**63 else h
    return signed if signed == -(2**63) else abs(signed)


def test_ycsb_hash_is_fnv1a_of_the_eight_little_endian_bytes_as_a_java_long_made_non_negative():
    values = np.random.default_rng(3).integers(0, 2**62, size=2000)
    expected = [java_abs_of_signed(fnv1a_reference(int(v).to_bytes(8, "little"))) for v in values]
    got = g.ycsb_fnvhash64(values)
    assert got.dtype == np.int64 and got.tolist() == expected
    # the sample holds hashes of both signs before Math.abs, so both branches are checked
    assert {fnv1a_reference(int(v).to_bytes(8, "little")) >= 2**63 for v in values} == {True, False}


def test_zeta_incremental_equals_direct_sum():
    direct = sum(1 / i**0.99 for i in range(1, 5001))
    assert g.zeta(5000, 0.99) == pytest.approx(direct, rel=1e-12)
    assert g.zeta(5000, 0.99, start=3000, partial=g.zeta(3000, 0.99)) == pytest.approx(direct, rel=1e-12)


def test_ycsb_scrambled_constant_is_zeta_of_ten_billion():
    # YCSB hard-codes zeta(10**10, 0.99); check it by Euler-Maclaurin: sum_1^m + integral tail + half-term correction
    m, n, s = 10**6, 10**10, 0.99
    head = np.sum(np.arange(1, m + 1, dtype=float) ** -s)
    tail = (n ** (1 - s) - m ** (1 - s)) / (1 - s) + 0.5 * (n ** -s - m ** -s)
    assert head + tail == pytest.approx(g.SCRAMBLED_ZETAN, rel=1e-9)


def _chisquare(counts, probs, min_expected=5.0):
    """Chi-square with tail bins merged until every expected count is >= min_expected."""
    counts, expected = np.asarray(counts, float), np.asarray(probs, float) * np.sum(counts)
    obs, exp, acc_o, acc_e = [], [], 0.0, 0.0
    for o, e in zip(counts, expected):
        acc_o, acc_e = acc_o + o, acc_e + e
        if acc_e >= min_expected:
            obs.append(acc_o)
            exp.append(acc_e)
            acc_o = acc_e = 0.0
    obs[-1] += acc_o
    exp[-1] += acc_e
    return stats.chisquare(obs, exp).pvalue


def test_exact_zipfian_matches_the_zipf_pmf():
    n = 200
    gen = g.ZipfianGenerator(0, n - 1, seed=11, method="exact")
    counts = np.bincount(gen.sample(200_000), minlength=n)
    assert _chisquare(counts, g.zipf_pmf(n)) > P_MIN


def gray_pmf(n, theta):
    """The exact output distribution of Gray's sampler, from its definition (u ~ U(0,1))."""
    zetan = sum(1 / i**theta for i in range(1, n + 1))
    zeta2 = 1 + 0.5**theta
    alpha, eta = 1 / (1 - theta), (1 - (2 / n) ** (1 - theta)) / (1 - zeta2 / zetan)
    p = np.zeros(n)
    p[0], p[1] = 1 / zetan, (zeta2 - 1) / zetan
    u_tail = zeta2 / zetan
    for k in range(n):
        lo = ((k / n) ** (1 / alpha) - 1 + eta) / eta  # u where floor(n*(eta*u-eta+1)**alpha) reaches k
        hi = (((k + 1) / n) ** (1 / alpha) - 1 + eta) / eta if k < n - 1 else 1.0
        p[k] += max(0.0, min(hi, 1.0) - max(lo, u_tail))
    return p


def test_gray_zipfian_matches_its_closed_form_distribution():
    n, theta = 1000, 0.99
    expected = gray_pmf(n, theta)
    assert expected.sum() == pytest.approx(1.0, abs=1e-9)
    counts = np.bincount(g.ZipfianGenerator(0, n - 1, seed=0).sample(300_000), minlength=n)
    assert _chisquare(counts, expected) > P_MIN


def test_gray_zipfian_draws_the_two_most_popular_ranks_exactly():
    n, theta = 1000, 0.99
    exact = g.zipf_pmf(n, theta)
    ranks = g.ZipfianGenerator(0, n - 1, seed=9).sample(300_000)
    counts = [np.sum(ranks == 0), np.sum(ranks == 1), np.sum(ranks >= 2)]
    assert _chisquare(counts, [exact[0], exact[1], 1 - exact[0] - exact[1]]) > P_MIN
    # and the whole approximation stays close to zipf: total variation distance of its exact output distribution
    assert 0.5 * np.abs(gray_pmf(n, theta) - exact).sum() < 0.05


def test_zipfian_growing_item_count_extends_zeta():
    gen = g.ZipfianGenerator(0, 99, seed=1)
    gen.set_item_count(500)
    assert gen.zetan == pytest.approx(g.zeta(500, 0.99), rel=1e-12)
    assert gen.sample(10_000).max() <= 499


def test_scrambled_zipfian_hot_keys_are_the_hashed_top_ranks():
    n, size = 1000, 400_000
    keys = g.ScrambledZipfianGenerator(0, n - 1, seed=2).sample(size)
    assert keys.min() >= 0 and keys.max() <= n - 1
    top0, top1 = (java_abs_of_signed(fnv1a_reference(r.to_bytes(8, "little"))) % n for r in (0, 1))
    # rank 0 over 10**10 items has probability 1/zeta(10**10); other ranks hashing to the same key add a little
    p0 = 1 / g.SCRAMBLED_ZETAN
    share0 = np.mean(keys == top0)
    assert share0 >= p0 - 4 * np.sqrt(p0 * (1 - p0) / size)
    counts = np.bincount(keys, minlength=n)
    assert counts.argmax() == top0
    p1 = 0.5**0.99 / g.SCRAMBLED_ZETAN
    assert counts[top1] / size >= p1 - 4 * np.sqrt(p1 * (1 - p1) / size)
    # the hashing spreads popularity: the 10 hottest keys are not the 10 smallest key numbers
    assert set(np.argsort(counts)[-10:]) != set(range(10))


def test_latest_prefers_the_newest_key():
    newest = [999]
    gen = g.SkewedLatestGenerator(lambda: newest[0], seed=4)
    keys = gen.sample(100_000)
    counts = np.bincount(999 - keys, minlength=1000)
    assert _chisquare(counts, gray_pmf(1000, 0.99)) > P_MIN
    newest[0] = 4999  # inserts happened: the hot spot moves with the newest key
    assert np.bincount(gen.sample(50_000)).argmax() == 4999


def test_uniform_and_hotspot():
    keys = g.UniformGenerator(10, 59, seed=6).sample(100_000)
    assert keys.min() == 10 and keys.max() == 59
    assert _chisquare(np.bincount(keys - 10, minlength=50), np.full(50, 1 / 50)) > P_MIN
    hot = g.HotspotGenerator(0, 999, hot_data=0.2, hot_ops=0.8, seed=7).sample(100_000)
    k = int(np.sum(hot < 200))
    assert stats.binomtest(k, 100_000, 0.8).pvalue > P_MIN


def test_key_chooser_follows_the_key_count():
    count = [100]
    chooser = g.key_chooser("uniform", lambda: count[0], seed=1)
    assert chooser.sample(5000).max() <= 99
    count[0] = 1000
    assert chooser.sample(5000).max() > 99
    with pytest.raises(InputError, match="unknown request distribution"):
        g.key_chooser("gaussian", lambda: 10)


def test_bad_generator_arguments_raise_input_errors():
    with pytest.raises(InputError):
        g.ZipfianGenerator(5, 1)
    with pytest.raises(InputError):
        g.ZipfianGenerator(0, 10, theta=1.5)
