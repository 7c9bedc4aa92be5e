"""The scalability family X(N) = lambda*N / (1 + sum_j theta_j g_j(N)), and each of its models declared once.

A model is its denominator terms g_j (one parameter theta_j each, plus lambda), their bounds, its formula and its peak;
the fitting engine (capmodel.models.usl.engine) and the results (capmodel.models.usl.results) are shared by all of them.

- ``linear``: X = lambda*N (no interference at all; 1 parameter).
- ``amdahl``: X = lambda*N / (1 + sigma(N-1)) (contention only; the USL with kappa = 0; 2 parameters).
- ``usl``: X = lambda*N / (1 + sigma(N-1) + kappa*N(N-1)) (Gunther, *Guerrilla Capacity Planning*, 2007; 3 parameters).
- ``log_coherency``: X = lambda*N / (1 + sigma(N-1) + kappa*N*ln N) (3 parameters). This variant is ours, not
  Gunther's: it assumes each of N clients pays a coherency cost that grows with log N (a tree-shaped exchange such as
  a B-tree latch hierarchy or a tree barrier) instead of with N (pairwise exchange). Throughput still peaks, but later
  and more gently: dX/dN = 0 at N* = (1 - sigma)/kappa.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from capmodel.errors import InputError
from capmodel.models.usl.closed_form import log_coherency_peak, usl_peak
from capmodel.models.usl.engine import fit_model
from capmodel.models.usl.region import Family
from capmodel.models.usl.results import ScalabilityFit
from capmodel.models.usl.usl_fit import USLFit


def contention_term(n):
    """sigma's term: N - 1 (queueing for a shared resource)."""
    return n - 1.0


def coherency_term(n):
    """kappa's term in the USL: N(N - 1) (pairwise exchange between clients)."""
    return n * (n - 1.0)


def log_coherency_term(n):
    """kappa's term in the log-coherency model: N ln N (tree-shaped exchange)."""
    return n * np.log(n)


CONTENTION_BOUNDS = (0.0, 1.0)       # sigma: 0 = no contention, 1 = fully serialised
SUPERLINEAR_SIGMA_LOWER = -1.0       # sigma's lower bound with allow_superlinear=True
COHERENCY_BOUNDS = (0.0, 1.0)
LAMBDA_BOUNDS = (0.0, math.inf)


@dataclass(frozen=True)
class ScalabilityModel:
    """One declared model of the USL family, X(N) = λN / (1 + Σ θ_j g_j(N)): its terms, bounds, formula and peak.

    ``capmodel.models.usl.family.MODELS`` declares ``linear``, ``amdahl``, ``usl`` and ``log_coherency``; ``fit(curve)``
    fits one.

    Parameters
    ----------
    name : str
        The model's name.
    terms : dict
        Parameter name to its term g(N), e.g. ``{"sigma": ..., "kappa": ...}``.
    bounds : dict
        Parameter name (λ included) to (low, high).
    formula : str
        The formula in words, for summaries.
    description : str
        What the model says about a system.
    peak : callable
        (σ, κ, λ) to (N*, X(N*)), arrays too.
    results_class : type
        The class its fits return (``ScalabilityFit`` or ``USLFit``).
    coherency : str
        The family whose edge it is (a key of ``COHERENCY``).
    """

    name: str
    terms: dict = field(default_factory=dict)
    bounds: dict = field(default_factory=dict)       # parameter name -> (low, high), lambda included
    formula: str = ""
    description: str = ""
    peak: Callable = usl_peak                        # (sigma, kappa, lambda) -> (N*, X(N*)), arrays too
    results_class: type = ScalabilityFit
    coherency: str = "usl"                           # the family whose edge it is: COHERENCY's key

    @property
    def names(self) -> tuple:
        """Parameter names in the order of the estimate vector: the thetas, then lambda."""
        return (*self.terms, "lambda")

    @property
    def n_params(self) -> int:
        """Number of fitted parameters (thetas + lambda)."""
        return len(self.terms) + 1

    def parameter_bounds(self, allow_superlinear: bool = False, overrides: dict | None = None):
        """(lower, upper) arrays in parameter order: the declared bounds, sigma's lower one at -1 with
        ``allow_superlinear``, then ``overrides`` (name -> (low, high)) checked and applied; the model is not
        changed."""
        bounds = dict(self.bounds)
        if allow_superlinear and "sigma" in bounds:
            bounds["sigma"] = (SUPERLINEAR_SIGMA_LOWER, bounds["sigma"][1])
        known = {"sigma", "kappa", "lambda"}
        for name, pair in (overrides or {}).items():
            if name not in known:
                raise InputError(f"bounds: unknown parameter(s) {sorted(set(overrides or {}) - known)}; "
                                 "use sigma, kappa, lambda")
            lo, hi = pair
            if not lo < hi:
                raise InputError(f"bounds: {name} needs low < high, got ({lo}, {hi})")
            if name in bounds:
                bounds[name] = (float(lo), float(hi))
        return (np.array([bounds[k][0] for k in self.names], float),
                np.array([bounds[k][1] for k in self.names], float))

    def design(self, n: np.ndarray) -> np.ndarray:
        """The m x k matrix of terms g_j(N) at each concurrency."""
        n = np.asarray(n, dtype=float)
        return np.column_stack([g(n) for g in self.terms.values()]) if self.terms else np.zeros((len(n), 0))

    def evaluate(self, n, p) -> np.ndarray:
        """X(N) at each concurrency for the estimate vector ``p`` (thetas, lambda)."""
        n = np.asarray(n, dtype=float)
        flat = np.atleast_1d(n).ravel()
        return (p[-1] * flat / (1.0 + self.design(flat) @ p[:-1])).reshape(n.shape)

    def jacobian(self, n, p) -> np.ndarray:
        """d X / d (theta_1..theta_k, lambda) at each concurrency: -lambda*N*g_j/D^2 and N/D."""
        n = np.atleast_1d(np.asarray(n, dtype=float)).ravel()
        G = self.design(n)
        denom = 1.0 + G @ p[:-1]
        return np.column_stack([-(p[-1] * n / denom**2)[:, None] * G, n / denom])

    def fit(self, curve, weights=None, allow_superlinear: bool = False, bounds: dict | None = None):
        """Fit this model to a curve table with the shared engine; returns its results object."""
        return fit_model(self, curve, allow_superlinear=allow_superlinear, weights=weights, bounds=bounds)

    def search_family(self, fit) -> Family:
        """The family a fit of this model is searched over for its likelihood region (capmodel.models.usl.region):
        the model's coherency term with σ and κ free within the fit's bounds (linear and Amdahl are edges of the
        USL's family, so their regions are the USL's), the fit's own (σ, κ) on the grid."""
        term, peak = COHERENCY[self.coherency]
        bounds = dict(zip(fit.names, zip(fit.lower, fit.upper)))
        return Family(self.coherency, term, peak, bounds.get("sigma", CONTENTION_BOUNDS),
                      bounds.get("kappa", COHERENCY_BOUNDS), ((fit.sigma, fit.kappa),))

    def rivals(self) -> dict:
        """Every declared model (name -> model), this one among them: what a fit of it is ranked against."""
        return MODELS

    def __repr__(self):
        return f"<ScalabilityModel {self.name}: {self.formula}>"


MODELS = {
    "linear": ScalabilityModel(
        "linear", {}, {"lambda": LAMBDA_BOUNDS}, "X(N) = lambda*N",
        "X = lambda*N: perfect scaling", results_class=USLFit),
    "amdahl": ScalabilityModel(
        "amdahl", {"sigma": contention_term}, {"sigma": CONTENTION_BOUNDS, "lambda": LAMBDA_BOUNDS},
        "X(N) = lambda*N / (1 + sigma*(N-1))",
        "contention only: rises to the ceiling lambda/sigma", results_class=USLFit),
    "usl": ScalabilityModel(
        "usl", {"sigma": contention_term, "kappa": coherency_term},
        {"sigma": CONTENTION_BOUNDS, "kappa": COHERENCY_BOUNDS, "lambda": LAMBDA_BOUNDS},
        "X(N) = lambda*N / (1 + sigma*(N-1) + kappa*N*(N-1))",
        "contention and pairwise coherency: peaks, then falls", results_class=USLFit),
    "log_coherency": ScalabilityModel(
        "log_coherency", {"sigma": contention_term, "kappa": log_coherency_term},
        {"sigma": CONTENTION_BOUNDS, "kappa": COHERENCY_BOUNDS, "lambda": LAMBDA_BOUNDS},
        "X(N) = lambda*N / (1 + sigma*(N-1) + kappa*N*ln(N))",
        "contention and log-growing coherency: peaks later, falls gently", peak=log_coherency_peak,
        coherency="log_coherency"),
}

#: each family's coherency term and vectorised peak, by the name its models' ``coherency`` gives
COHERENCY = {"usl": (coherency_term, usl_peak), "log_coherency": (log_coherency_term, log_coherency_peak)}


def get_model(name: str) -> ScalabilityModel:
    """The declared model of that name.

    Parameters
    ----------
    name : str
        ``linear``, ``amdahl``, ``usl`` or ``log_coherency``.

    Returns
    -------
    ScalabilityModel

    Raises
    ------
    InputError
        An unknown name (the message lists the known ones).
    """
    if name not in MODELS:
        raise InputError(f"unknown model {name!r} (known: {', '.join(MODELS)})")
    return MODELS[name]
