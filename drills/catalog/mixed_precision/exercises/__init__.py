"""Code exercises of "Mixed precision": one folder each, found by drills.exercises.registry."""
