"""Code exercises of "Break the graph": one folder each, found by drills.exercises.registry."""
