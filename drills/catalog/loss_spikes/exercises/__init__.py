"""Code exercises of "Loss spikes": one folder each, found by drills.exercises.registry."""
