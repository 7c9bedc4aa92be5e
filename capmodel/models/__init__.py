"""Models: pure computation, no I/O, no global state; each package answers one question.

- ``usl``: the scalability family (linear, Amdahl, USL, log-coherency) declared once (``family``), fitted by one
  engine (``engine``), its results (``results``, ``usl_fit``), closed forms (``closed_form``), model choice
  (``selection``, ``ranking``), the figures a fit answers with their intervals over the likelihood region
  (``region``, ``figures``), the USL's latency form (``latency_form``); entry points ``usl.fit.fit_usl`` and
  ``usl.selection.compare_models``. ``usl.verdict``: how far a fit supports its answer (``assessment``).
- ``queueing``: operational laws, Erlang C, MVA (single, multi-class, load-dependent), open and mixed networks,
  bounds, a USL fit as a queueing station.
- ``mix``: the mix what-if from a server's own telemetry.
- ``evidence`` (the grades and their reasons), ``estimate`` (a figure with its interval), ``runway`` (months of
  growth), ``block_bootstrap`` (resampling runs of consecutive intervals): what every package above uses.
"""
