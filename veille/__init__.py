"""veille: a cited, critic-checked technology-watch dossier, every night."""

__all__ = ["__version__"]

__version__ = "0.1.0"
