"""The package version, declared once (read by ``jaxdp.__version__`` and the run records)."""
__version__ = "0.1.0"
