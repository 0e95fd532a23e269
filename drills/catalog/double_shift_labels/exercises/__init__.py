"""Code exercises of "Double-shifted labels": one folder each, found by
drills.exercises.registry."""
