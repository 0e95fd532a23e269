"""Code exercises of "Hunt the NaN": one folder each, found by drills.exercises.registry."""
