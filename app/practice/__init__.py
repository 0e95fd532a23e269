"""Coming back: spaced review of the track's questions and a learner's misses, the study path,
and curve-diagnosis rounds."""
