"""How the benchmark's clients talk to the server (the bindings, the operations, the measuring loops) and what they
saw (measurements, telemetry, errors)."""
