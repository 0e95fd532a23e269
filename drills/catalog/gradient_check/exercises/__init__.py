"""Code exercises of "Check a hand-written gradient": one folder each, found by
drills.exercises.registry."""
