"""Code exercises of "Overfit a single batch": one folder each, found by
drills.exercises.registry."""
