"""Code exercises of "The loop runs, nothing learns": one folder each, found by
drills.exercises.registry."""
