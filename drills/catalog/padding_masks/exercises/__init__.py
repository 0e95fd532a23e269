"""Code exercises of "Padding masks": one folder each, found by drills.exercises.registry."""
