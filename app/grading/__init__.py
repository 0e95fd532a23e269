"""Instructors' judgement: submissions and their reviews on a rubric (drills, cases, rounds),
revise and resubmit (revisions/), the review queue, and where each learner stands."""
