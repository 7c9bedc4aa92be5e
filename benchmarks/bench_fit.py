"""Speed of the USL fit and of its bootstrap, against a plain scipy.optimize.curve_fit loop on the same data.

    python benchmarks/bench_fit.py [--repeat 7]

Prints the median time of one ``fit_usl`` on a 10-point curve and of ``fit.bootstrap(1000)`` (both resampling
methods), each as a ratio against the same work done with ``curve_fit`` (one call; 1,000 calls on resampled data).
Targets: one fit <= 2 ms, a 1,000-sample bootstrap <= 0.5 s on one core.
"""
from __future__ import annotations

import argparse
import os

os.environ.setdefault("OMP_NUM_THREADS", "1")          # one core, as the targets say
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from scipy.optimize import curve_fit  # noqa: E402

from capmodel.models.usl.closed_form import usl_throughput  # noqa: E402
from capmodel.models.usl.fit import fit_usl  # noqa: E402
from timing import median_time  # noqa: E402 - benchmarks/timing.py, beside this script

TARGET_FIT_S = 0.002
TARGET_BOOTSTRAP_S = 0.5


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7, help="timed repetitions (median reported)")
    args = parser.parse_args()

    rng = np.random.default_rng(0)
    n = np.array([1, 2, 4, 8, 12, 16, 24, 32, 48, 64.0])
    x = usl_throughput(n, 0.03, 3e-4, 1000.0) * (1 + 0.03 * rng.standard_normal(len(n)))
    curve = pd.DataFrame({"concurrency": n, "throughput": x})
    start = [0.01, 1e-4, float(np.max(x / n))]          # the usual hand-picked start (R usl uses the same)

    def plain_fit(xs=x, ns=n):
        return curve_fit(usl_throughput, ns, xs, p0=start, bounds=([0, 0, 0], [1, 1, np.inf]))[0]

    fit = fit_usl(curve)
    assert np.allclose(plain_fit(), [fit.sigma, fit.kappa, fit.lambda_], rtol=1e-4), "the two fits disagree"

    loops = 200
    ours_fit = median_time(lambda: [fit_usl(curve) for _ in range(loops)], args.repeat) / loops
    plain_one = median_time(lambda: [plain_fit() for _ in range(loops)], args.repeat) / loops
    unbounded = median_time(lambda: [curve_fit(usl_throughput, n, x, p0=start) for _ in range(loops)],
                            args.repeat) / loops

    idx = rng.integers(0, len(n), size=(1000, len(n)))
    resamples = [(n[i], x[i]) for i in idx if len(np.unique(n[i])) >= 3]

    def plain_bootstrap():
        for ns, xs in resamples:
            try:
                plain_fit(xs, ns)
            except RuntimeError:
                pass

    plain_boot = median_time(plain_bootstrap, max(1, args.repeat // 3)) * 1000 / len(resamples)
    ours_case = median_time(lambda: fit.bootstrap(1000, seed=1, method="case"), args.repeat)
    ours_resid = median_time(lambda: fit.bootstrap(1000, seed=1, method="residual"), args.repeat)

    print(f"one USL fit, 10 points:        {ours_fit * 1e3:8.3f} ms  (curve_fit, bounded: {plain_one * 1e3:.3f} ms; "
          f"ratio {ours_fit / plain_one:.2f})  target <= {TARGET_FIT_S * 1e3:g} ms: "
          f"{'ok' if ours_fit <= TARGET_FIT_S else 'OVER'}")
    print(f"  (curve_fit without bounds, which may leave the physical range: {unbounded * 1e3:.3f} ms; "
          f"ratio {ours_fit / unbounded:.2f})")
    for label, t in (("case", ours_case), ("residual", ours_resid)):
        print(f"bootstrap 1,000 ({label:8}):    {t * 1e3:8.1f} ms  (curve_fit loop: {plain_boot * 1e3:.1f} ms; "
              f"ratio {t / plain_boot:.3f})  target <= {TARGET_BOOTSTRAP_S * 1e3:g} ms: "
              f"{'ok' if t <= TARGET_BOOTSTRAP_S else 'OVER'}")


if __name__ == "__main__":
    main()
