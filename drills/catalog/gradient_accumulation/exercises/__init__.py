"""Code exercises of "Gradient accumulation": one folder each, found by
drills.exercises.registry."""
