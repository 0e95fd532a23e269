"""Code exercises of "Evaluation pipeline mismatch": one folder each, found by
drills.exercises.registry."""
