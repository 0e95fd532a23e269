"""One package per drill. Each `drills/catalog/<name>/__init__.py` describes its drill (no torch
import) and exposes it as `DRILL`; its training code lives beside it in `train.py`, imported only
when the drill runs. The registry finds every package here: adding a drill touches nothing else."""
