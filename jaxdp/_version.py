"""The package version, declared once: ``jaxdp.__version__`` and the engine's run records read
it."""
__version__ = "0.1.0"
