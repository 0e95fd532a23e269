"""The one warm pool of this process, for a worker that runs learners' code (also importable
as drills.sandbox.pool.shared_pool)."""

from drills.sandbox.pool import shared_pool

__all__ = ["shared_pool"]
