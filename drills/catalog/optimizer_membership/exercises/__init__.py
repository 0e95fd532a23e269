"""Code exercises of "Optimizer membership": one folder each, found by drills.exercises.registry."""
