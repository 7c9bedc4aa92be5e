"""The published figures of the studies capmodel bundles, quoted once (standard library only, so that the command
line's help can name them without importing the planning layer).

The AWS DocumentDB elastic-cluster insert benchmark (``data/documentdb_insert_config.csv``; seed 004_): "over a
million inserts per second on the 16-shard elastic cluster", and "you can deploy a maximum of 32 shards".
"""
from __future__ import annotations

DOCUMENTDB_TARGET_RATE = 1_000_000.0   # "over a million inserts per second ..."
DOCUMENTDB_SHARDS = 16                 # "... on the 16-shard elastic cluster"
DOCUMENTDB_MAX_SHARDS = 32             # "you can deploy a maximum of 32 shards"
