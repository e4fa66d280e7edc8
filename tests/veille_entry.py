"""The ``veille`` command with the crash-test observer installed (tests/killhooks.py).

``python -m tests.veille_entry run --corpus ...`` behaves like ``veille run --corpus ...``, except
that ``VEILLE_TEST_KILL_AT`` / ``VEILLE_TEST_PAUSE_AT`` kill or pause it at a checkpoint. Tests
only: the installed ``veille`` never reads those variables.
"""

from __future__ import annotations

from tests.killhooks import install
from veille.cli import main

if __name__ == "__main__":
    install()
    main()
