"""The catalogue of drills, the learner's home, and a drill's page. A report: it sets each drill
beside the learner's standing, study path, streak and reviews due, reading those features, and
no feature reads it."""
