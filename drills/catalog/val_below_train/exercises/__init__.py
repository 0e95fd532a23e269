"""Code exercises of "Validation below training": one folder each, found by
drills.exercises.registry."""
