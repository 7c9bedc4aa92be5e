"""How far a fitted curve supports its answer: the grade, its reasons and the next measurement."""
