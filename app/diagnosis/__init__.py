"""The diagnosis a case, a curve round and a revision all ask for, over a case set: its form
(form.py) and how the set's causes, charts and runs are put before a learner (shown.py). A base
the three features share, so none of them calls another's code for it."""
