"""Drillbook drills: tiny, real PyTorch training jobs with injectable bugs.

Pure torch + stdlib; nothing here knows about the web app. Describing a drill (its knobs,
hypotheses, charts) imports no torch: only running one does.
"""

import warnings

# torch warns at import time when NumPy is missing. Drills never use NumPy, and the warning would
# otherwise land on every CLI run's stderr.
warnings.filterwarnings("ignore", message="Failed to initialize NumPy", category=UserWarning)
