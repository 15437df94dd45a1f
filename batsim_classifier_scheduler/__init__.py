"""A Batsim-compatible batch scheduler with online job runtime classification."""

__version__ = "0.1.0"
