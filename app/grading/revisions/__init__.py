"""Revise and resubmit: a learner's revised diagnosis of a reviewed case attempt or curve round,
after their instructor asked for changes, and the instructor's review of each revision."""
