"""The case pool: one module per drill, each exposing CASES."""
