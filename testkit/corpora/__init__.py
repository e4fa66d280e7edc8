"""The generator of synthetic test corpora (``python -m testkit.corpora.generate``)."""
