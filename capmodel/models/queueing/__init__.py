"""Queueing models: the operational laws, Erlang C, mean value analysis (single, multi-class, load-dependent), open and
mixed networks, bounds."""
