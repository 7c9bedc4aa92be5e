"""Rivals of the USL, all of the form X(N) = lambda*N / (1 + sum_j theta_j g_j(N)), fitted the same way.

- ``linear``: X = lambda*N (no interference at all; 1 parameter).
- ``amdahl``: X = lambda*N / (1 + sigma(N-1)) (contention only; the USL with kappa = 0; 2 parameters).
- ``usl``: X = lambda*N / (1 + sigma(N-1) + kappa*N(N-1)) (Gunther 2007; 3 parameters).
- ``log_coherency``: X = lambda*N / (1 + sigma(N-1) + kappa*N*ln N) (3 parameters). This variant is ours, not
  Gunther's: it assumes each of N clients pays a coherency cost that grows with log N (a tree-shaped exchange such as
  a B-tree latch hierarchy or a tree barrier) instead of with N (pairwise exchange). Throughput still peaks, but later
  and more gently: dX/dN = 0 at N* = (1 - sigma)/kappa.

Every model has ``name``, ``n_params`` and ``fit(curve, weights=None)``; every fitted object has ``params``,
``n_params``, ``predict(n)``, ``aic``, ``aicc``, ``bic``, ``rmse``, ``r2`` (plus everything of ``ScalabilityFit``).
"""
from __future__ import annotations

import math

import numpy as np

from capmodel.models.usl import (AMDAHL_TERMS, USL_TERMS, ScalabilityFit, USLFit, contention_term, fit_family)


def log_coherency_term(n):
    return n * np.log(n)


LOG_COHERENCY_TERMS = {"sigma": contention_term, "kappa": log_coherency_term}


class LogCoherencyFit(ScalabilityFit):
    """Fitted log-coherency model; ``peak_concurrency`` = (1 - sigma)/kappa (inf when kappa = 0)."""

    def _check(self):
        self.sigma = self.params["sigma"]
        self.kappa = self.params["kappa"]
        self.peak_concurrency = (1.0 - self.sigma) / self.kappa if self.kappa > 0 else math.inf
        self.peak_throughput = (float(self._eval(self.peak_concurrency)) if math.isfinite(self.peak_concurrency)
                                else (self.lambda_ / self.sigma if self.sigma > 0 else math.inf))
        super()._check()
        self._warn_if_peak_extrapolated()

    def _summary_extra(self):
        if math.isfinite(self.peak_concurrency):
            return [f"peak concurrency: {self.peak_concurrency:.4g}", f"peak throughput: {self.peak_throughput:.5g}"]
        return ["peak concurrency: none (kappa = 0)"]


class RivalModel:
    """A model of the USL family: a name, its denominator terms and how to fit it."""

    def __init__(self, name: str, terms: dict, fit_class=USLFit, description: str = ""):
        self.name = name
        self.terms = terms
        self.fit_class = fit_class
        self.description = description

    @property
    def n_params(self) -> int:
        return len(self.terms) + 1

    def fit(self, curve, weights=None) -> ScalabilityFit:
        return fit_family(curve, self.terms, self.name, weights=weights, fit_class=self.fit_class)

    def __repr__(self):
        return f"<RivalModel {self.name}: {self.n_params} parameters>"


MODELS = {
    "linear": RivalModel("linear", {}, description="X = lambda*N: perfect scaling"),
    "amdahl": RivalModel("amdahl", AMDAHL_TERMS, description="contention only: rises to the ceiling lambda/sigma"),
    "usl": RivalModel("usl", USL_TERMS, description="contention and pairwise coherency: peaks, then falls"),
    "log_coherency": RivalModel("log_coherency", LOG_COHERENCY_TERMS, fit_class=LogCoherencyFit,
                                description="contention and log-growing coherency: peaks later, falls gently"),
}


def get_model(name: str) -> RivalModel:
    """The rival model called ``name``; ``InputError`` listing the known names otherwise."""
    from capmodel.errors import InputError

    if name not in MODELS:
        raise InputError(f"unknown model {name!r} (known: {', '.join(MODELS)})")
    return MODELS[name]


def fit_amdahl(curve, weights=None) -> USLFit:
    """Amdahl's law, the USL with kappa held at 0: ``peak_concurrency`` is inf, ``ceiling`` lambda/sigma."""
    return MODELS["amdahl"].fit(curve, weights=weights)


def fit_linear(curve, weights=None) -> USLFit:
    """Linear scaling X = lambda*N."""
    return MODELS["linear"].fit(curve, weights=weights)


def fit_log_coherency(curve, weights=None) -> LogCoherencyFit:
    return MODELS["log_coherency"].fit(curve, weights=weights)
