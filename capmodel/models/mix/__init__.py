"""The mix what-if: per-class service demands from a server's own telemetry, and what the server does at another mix."""
