"""Diagnostics over `retrieve()`: why a chunk ranked where it did (explain), where an expected chunk was
lost (track), two configs side by side (compare), the collection's health (probe), and the link
parameters that reopen the inspector on an exact config (params)."""
