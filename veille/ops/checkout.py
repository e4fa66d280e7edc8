"""One checkout, one server: the Prefect servers veille starts are keyed by checkout and virtual
environment (and ``PREFECT_HOME``), so one never serves another checkout's code.

Two checkouts of veille on one machine share ``~/.prefect`` and, before this, port 4200: `make run`
then used the shared API that another checkout's virtual environment had started (its Prefect, its
database), and `make server` of a second checkout talked to the first one's server. Now:

- each server keeps its database in its own folder, ``<PREFECT_HOME>/<kind>/<key>``, where the key is
  a digest of the checkout (the folder holding the ``veille`` package that runs), the virtual
  environment (``sys.prefix``) and ``PREFECT_HOME``; what the folder holds says which it is;
- the shared API's keeper records the checkout and environment that started it, and a client of
  another one never uses it (veille.ops.shared_api.usable);
- a `veille server` (`make server`) answers ``GET /api/admin/settings`` with its ``home``: a client
  compares it with the folder its own key gives (:func:`server_is_ours`) before deploying or
  starting a worker on it, and a second checkout's `veille server` refuses a port already served.

Nothing here imports Prefect: the shared API's client reads it before Prefect is imported.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "SERVER_KIND",
    "SHARED_API_KIND",
    "Identity",
    "ServerFacts",
    "current_identity",
    "keyed_home",
    "keyed_path",
    "server_facts",
    "server_is_ours",
]

SHARED_API_KIND = "veille-shared-api"
SERVER_KIND = "veille-server"
_MARK = "veille-identity.json"  # written in each keyed folder: says whose it is


@dataclass(frozen=True)
class Identity:
    """The code a server would run: this checkout and this virtual environment."""

    checkout: str
    environment: str

    def key(self, home: Path) -> str:
        raw = "\0".join((self.checkout, self.environment, str(home.expanduser().resolve())))
        return hashlib.sha256(raw.encode("utf-8")).hexdigest()[:16]


def current_identity() -> Identity:
    """This process's checkout (the folder holding the imported ``veille`` package: an editable
    install's clone, or site-packages) and virtual environment (``sys.prefix``)."""
    package = Path(__file__).resolve().parents[1]
    return Identity(checkout=str(package.parent), environment=str(Path(sys.prefix).resolve()))


def keyed_path(home: Path, kind: str, identity: Identity | None = None) -> Path:
    """The folder where a server of ``kind`` for ``identity`` (default: this process's) keeps its
    database and files, under ``home`` (``PREFECT_HOME``)."""
    return home.expanduser() / kind / (identity or current_identity()).key(home)


def keyed_home(home: Path, kind: str, identity: Identity | None = None) -> Path:
    """:func:`keyed_path`, created."""
    who = identity or current_identity()
    folder = keyed_path(home, kind, who)
    folder.mkdir(parents=True, exist_ok=True)
    mark = folder / _MARK
    if not mark.exists():  # for a human listing the folders; the key decides, not this file
        mark.write_text(json.dumps(who.__dict__, indent=1), encoding="utf-8")
    return folder


@dataclass(frozen=True)
class ServerFacts:
    """What a running Prefect server says of itself (``GET /api/admin/settings``)."""

    home: Path | None
    ui_url: str | None


def server_facts(api_url: str, timeout_s: float = 5.0) -> ServerFacts | None:
    """The server's ``home`` and ``ui_url``, or None when nothing answers as a Prefect server."""
    request = urllib.request.Request(f"{api_url.rstrip('/')}/admin/settings", headers=_auth_headers())
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as response:
            raw = json.loads(response.read().decode("utf-8"))
    except (OSError, urllib.error.URLError, ValueError):
        return None
    if not isinstance(raw, dict):
        return None
    home, ui = raw.get("home"), raw.get("ui_url")
    return ServerFacts(
        home=Path(home) if isinstance(home, str) and home else None,
        ui_url=ui if isinstance(ui, str) and ui else None,
    )


def _auth_headers() -> dict[str, str]:
    import base64

    auth = os.environ.get("PREFECT_API_AUTH_STRING", "")
    return {"Authorization": "Basic " + base64.b64encode(auth.encode()).decode()} if auth else {}


def server_is_ours(facts: ServerFacts, home: Path, identity: Identity | None = None) -> bool:
    """The server keeps its database in this checkout's keyed folder of ``home``."""
    if facts.home is None:
        return False
    return facts.home.expanduser().resolve() == keyed_path(home, SERVER_KIND, identity).resolve()
