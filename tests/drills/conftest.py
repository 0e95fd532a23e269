# Import the package before any test module imports torch directly: drills/__init__ silences
# torch's "NumPy is missing" import warning, which filterwarnings=error would turn into a failure.
import drills  # noqa: F401
