"""The seed range every run accepts, torch-free so the web layer can check it before dispatch."""

MAX_SEED = 2**63 - 1  # torch.manual_seed accepts 64-bit seeds; stay inside signed range
