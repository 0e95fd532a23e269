"""Code exercises of "Batch size and noise": one folder each, found by
drills.exercises.registry."""
