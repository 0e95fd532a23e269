"""Torch helpers for drill authors: the parameter audit, the first non-finite tensor, checkpoints,
tables, confusion matrices, and the shared models and data sources. Imported only
by training code, inside a worker."""
