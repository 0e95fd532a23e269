"""Instructors' judgement: submissions and their reviews on a rubric (drills, cases, rounds),
the review queue, and where each learner stands."""
