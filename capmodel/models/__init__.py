"""Models: the USL family and its fitting, model selection, uncertainty, and queueing (operational laws, Erlang C, MVA).

Pure computation: no I/O, no global state. Import the submodule you need: ``usl`` (``fit_usl``), ``family`` (each
model declared once), ``engine`` (the shared fit), ``results`` / ``usl_results`` (what a fit derives),
``closed_form`` (the USL's peak and quadratics), ``selection`` (and ``extrapolation``, its scikit-learn
cross-validation), ``evidence`` and ``assessment`` (the verdict on an answer), ``uncertainty``, ``lack_of_fit``,
``robust``, ...
"""
