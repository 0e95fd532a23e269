"""The torch-free contract and pipeline: what a drill is, how knobs resolve, how a run becomes a
record. Importing anything here never imports torch (only `core.runner` does, when it runs)."""
