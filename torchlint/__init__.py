"""torchlint: a static linter for PyTorch training and model code."""

__version__ = "0.1.0"
