"""Code exercises of "Loss vs metric": one folder each, found by drills.exercises.registry."""
