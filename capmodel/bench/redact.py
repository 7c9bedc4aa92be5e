"""Redaction for the benchmark's logs and run.json: the functions live in capmodel.redact (one module owns the secret
patterns and the mask); this name stays for the code that imports it from here."""
from capmodel.redact import MASK, SECRET_KEY, redact_mapping, redact_text, redact_uri

__all__ = ["MASK", "SECRET_KEY", "redact_mapping", "redact_text", "redact_uri"]
