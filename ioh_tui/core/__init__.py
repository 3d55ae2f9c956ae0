"""Shared vocabulary of every layer: events, errors, acts, transcript types. Stdlib only."""
