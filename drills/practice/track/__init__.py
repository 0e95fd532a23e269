"""The track's review items, one module per group of topics, in the order a learner meets them
(drills/practice/items.py puts them together)."""
