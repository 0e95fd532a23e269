"""Code exercises of "Group and near-copy leakage": one folder each, found by
drills.exercises.registry."""
