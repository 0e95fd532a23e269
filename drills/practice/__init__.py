"""Practice that sticks: the track's review items, their spaced schedule, and the catalogue of
curve-diagnosis rounds.

Pure Python: no torch and nothing of the web layer. The app stores a learner's schedule and
review log; this package decides what an item asks, when it comes back and which curve a round
shows.

    items.py       the track's review questions with model answers and the drills behind them
    scheduling.py  when an item is due again (the FSRS algorithm of the `fsrs` package)
    rounds.py      the curve variants a round may show, and the draw of one for a learner's day
    simulate.py    a simulated learner over a few weeks (for the command line and the note)
"""
