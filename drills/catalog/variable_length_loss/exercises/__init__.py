"""Code exercises of "Variable-length losses": one folder each, found by
drills.exercises.registry."""
