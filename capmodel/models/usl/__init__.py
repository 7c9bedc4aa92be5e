"""The scalability family and its fits: declare, fit, derive, choose a model, read figures with their intervals."""
