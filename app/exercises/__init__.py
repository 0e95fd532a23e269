"""Code exercises: a learner edits a small training script, a sandbox runs it, a judge reads how
it trained. The exercises themselves (story, starter, checks) live beside their drills in
drills/catalog/<drill>/exercises/; this package stores the runs, serves the pages and the API,
and sends the code to a worker, which judges it in a sandbox (drills.exercises, drills.sandbox).
"""
