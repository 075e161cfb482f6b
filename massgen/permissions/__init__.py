"""The permission engine: one checkpoint in front of every toolbox (ARCHITECTURE.md §8)."""
