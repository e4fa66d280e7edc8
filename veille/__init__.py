"""veille: a cited, critic-checked technology-watch dossier, every night."""

__all__ = ["__version__"]

__version__ = "0.1.0"

# Every log record of a process that imports veille is scrubbed of the configured secrets as it is
# made (veille.secrets: the model key, delivery URL passwords), whichever handler writes it.
from veille.secrets import install_log_scrubbing

install_log_scrubbing()
