"""Code exercises of "Learning-rate sweep": one folder each, found by
drills.exercises.registry."""
