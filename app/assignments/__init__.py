"""Assignments: work an instructor sets a cohort with a due date, followed per learner, and the
cohort's gradebook."""
