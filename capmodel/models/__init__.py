"""Models: the USL and its rivals, model selection, uncertainty, and queueing (operational laws, Erlang C, MVA).

Pure computation: no I/O, no global state. Import the submodule you need (``capmodel.models.usl`` ...).
"""
