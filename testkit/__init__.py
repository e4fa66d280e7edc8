"""Support code shared by the tests and the benchmarks: loopback fakes (a fake Gemini server and its
scripted responders), a small flow corpus, the offline pipeline without Prefect, and the generator
of synthetic corpora. Neither production code (``veille``, ``tasks``, ``flows``) nor a test: the
tests and ``bench/`` both import it, and ``bench/`` imports nothing from ``tests/``.
"""
