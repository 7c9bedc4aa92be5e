"""Shard scale-out (the DocumentDB elastic-cluster insert benchmark): shards needed for a target insert rate, and the
client concurrency needed to drive it.

Throughput over shard count follows a USL through the per-shard throughput X(1): X(s) = X(1) s / (1 + sigma (s-1) +
kappa s (s-1)), the request router's overhead acting as contention (sigma) and cross-shard coordination as coherency
(kappa). Clients: by Little's law N = X R / batch (each client waits R seconds per batch of ``batch_size`` documents),
or, without a measured batch latency, the benchmark's own rule: 64 client processes per shard, at least 128
(128, 128, 256, 512, 1024 for 1, 2, 4, 8, 16 shards).
"""
from __future__ import annotations

import math

from capmodel.plan.checks import positive
from capmodel.plan.scaling import units_for_throughput, units_interval, usl

DOCUMENTDB_MAX_SHARDS = 32        # "you can deploy a maximum of 32 shards" (AWS post)
CLIENTS_PER_SHARD = 64            # 256/4, 512/8, 1024/16 in the AWS post
MIN_CLIENTS = 128                 # 1- and 2-shard clusters were driven by 128 processes


def shards_needed(target_rate: float, per_shard_throughput: float, sigma: float = 0.0, kappa: float = 0.0,
                  max_shards: float = DOCUMENTDB_MAX_SHARDS) -> tuple[int | None, str]:
    """Smallest shard count whose throughput reaches ``target_rate`` (None and the reason when none does)."""
    target = positive(target_rate, "target rate")
    per_shard = positive(per_shard_throughput, "per-shard throughput")
    return units_for_throughput(target, per_shard, 1.0, sigma, kappa, max_shards, "shards")


def clients_needed(shards: int, throughput: float | None = None, batch_size: int = 1000,
                   batch_latency_s: float | None = None, clients_per_shard: int = CLIENTS_PER_SHARD,
                   min_clients: int = MIN_CLIENTS) -> int:
    """Client processes to drive ``shards`` shards: Little's law with a batch latency, else the per-shard rule."""
    if batch_latency_s is not None:
        x = positive(throughput, "throughput")
        return math.ceil(x / positive(batch_size, "batch size") * positive(batch_latency_s, "batch latency") - 1e-9)
    return max(int(min_clients), int(clients_per_shard) * int(shards))


def plan_shards(target_rate: float, per_shard_throughput: float, sigma: float = 0.0, kappa: float = 0.0,
                max_shards: float = DOCUMENTDB_MAX_SHARDS, batch_size: int = 1000,
                batch_latency_s: float | None = None, clients_per_shard: int = CLIENTS_PER_SHARD,
                min_clients: int = MIN_CLIENTS, usl_samples=None, level: float = 0.95) -> dict:
    """Shards, the throughput they give, the efficiency vs linear, and the clients to drive them.

    ``usl_samples`` (DataFrame with sigma, kappa, e.g. a bootstrap of a fit over shard count) adds the percentile
    interval ``shards_low``/``shards_high`` (an unreachable sample counts as infinitely many shards).
    """
    shards, reason = shards_needed(target_rate, per_shard_throughput, sigma, kappa, max_shards)
    row = {"target_rate": float(target_rate), "per_shard_throughput": float(per_shard_throughput), "sigma": sigma,
           "kappa": kappa, "shards": shards, "reason": reason}
    if usl_samples is not None:
        row["shards_low"], row["shards_high"], row["unreachable_share"] = units_interval(
            target_rate, per_shard_throughput, 1.0, usl_samples, max_shards, level)
    if shards is None:
        return row
    throughput = float(usl(shards, sigma, kappa, per_shard_throughput))
    row.update(
        throughput=throughput,
        linear_shards=math.ceil(target_rate / per_shard_throughput - 1e-9),
        efficiency=throughput / (shards * per_shard_throughput),
        clients=clients_needed(shards, throughput, batch_size, batch_latency_s, clients_per_shard, min_clients),
    )
    return row
