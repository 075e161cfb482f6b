"""Agents' working directories, and what runs in them."""
