"""Code exercises of "Overfitting and leakage": one folder each, found by
drills.exercises.registry."""
