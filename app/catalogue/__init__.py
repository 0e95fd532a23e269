"""The catalogue of drills, the learner's home, their progress page, and a drill's page. A
report: it sets each drill beside the learner's standing, study path, streak and reviews due,
reading those features, and no feature reads it."""
