"""Collect against real feeds and pages nobody on the project wrote, served on loopback.

Feeds: every test feed of feedparser's repository whose ``Expect:`` line speaks of ``entries``,
served with the HTTP headers its ``Header:`` lines give (``application/xml`` when none). Pages: the
cached pages of trafilatura's ``tests/realworld_tests.py::test_extract`` with the passages it
asserts, served as ``text/html`` without a charset (the page's own declaration must decide). One
corpus per feed or page, collected once (and the feeds a second night, to see rewrites).

    python bench/collect_realweb.py --feedparser DIR --trafilatura DIR [--json OUT]

DIR: a checkout of each repository (its ``tests/`` folder). Prints counts; run it with
``PYTHONPATH`` on two checkouts of veille to compare them (docs/benchmarks.md, "Collect on real feeds
and pages"). The repositories are read, never copied into veille.
"""

from __future__ import annotations

import argparse
import ast
import datetime as dt
import json
import re
import tempfile
import threading
import time
from collections import Counter
from functools import cache
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx._transports.default

from veille.collect import collect_corpus
from veille.corpus.document import parse_document

__all__ = ["main"]

_HEADER = re.compile(r"^Header:\s*([^:]+):\s*(.*)$", re.MULTILINE)
_EXPECT = re.compile(r"^Expect:\s*(.*)$", re.MULTILINE)
_SPACES = re.compile(r"\s+")
_TAG = re.compile(r"</?(?:[a-z]+)[^<>]*>")  # what a markup tag looks like in a title (a measure only)
TODAY = dt.date(2026, 7, 25)


def _feeds(root: Path) -> list[tuple[str, bytes, dict[str, str]]]:
    out = []
    for path in sorted((root / "tests").rglob("*.xml")):
        data = path.read_bytes()
        head = data[:2000].decode("latin-1")
        expect = _EXPECT.search(head)
        if expect is None or "entries" not in expect.group(1):
            continue
        headers = {k.strip().lower(): v.strip() for k, v in _HEADER.findall(head)}
        headers.setdefault("content-type", "application/xml")
        out.append((str(path.relative_to(root)), data, headers))
    return out


def _pages(root: Path) -> list[tuple[str, bytes, list[str]]]:
    source = (root / "tests" / "realworld_tests.py").read_text(encoding="utf-8")
    tree = ast.parse(source)
    mock: dict[str, str] = {}
    snippets: dict[str, list[str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "MOCK_PAGES":
            mock = ast.literal_eval(node.value)
        if isinstance(node, ast.FunctionDef) and node.name == "test_extract":
            current = None
            for stmt in node.body:
                if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Call) and stmt.value.args:
                    arg = stmt.value.args[0]
                    current = arg.value if isinstance(arg, ast.Constant) else None
                elif isinstance(stmt, ast.Assert) and current and isinstance(stmt.test, ast.Compare):
                    test = stmt.test
                    if isinstance(test.ops[0], ast.In) and isinstance(test.left, ast.Constant):
                        snippets.setdefault(current, []).append(str(test.left.value))
    cache = root / "tests" / "cache"
    return [(url, (cache / mock[url]).read_bytes(), found) for url, found in snippets.items() if url in mock]


class _Server(ThreadingHTTPServer):
    routes: dict[str, tuple[bytes, dict[str, str]]]


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def do_GET(self) -> None:  # the stdlib calls it by this name
        body, headers = self.server.routes.get(self.path, (b"", {}))
        self.send_response(200 if self.path in self.server.routes else 404)
        for key, value in headers.items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_args: object) -> None:
        pass


def _collect(server: _Server, body: bytes, headers: dict[str, str], kind: str, nights: int) -> list[dict]:
    port = server.server_address[1]
    server.routes = {"/s": (body, headers)}
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        corpus = Path(tmp)
        (corpus / "docs").mkdir()
        (corpus / "sources.toml").write_text(
            f'[[source]]\nname = "s"\nkind = "{kind}"\nurl = "http://127.0.0.1:{port}/s"\n'
            'source_type = "forum"\nallow_private = true\n',
            encoding="utf-8",
        )
        for night in range(nights):
            report = collect_corpus(corpus, today=TODAY + dt.timedelta(days=night))
            docs, refused = [], 0
            for path in sorted((corpus / "docs").glob("*.md")):
                try:
                    doc = parse_document(path)
                except Exception:
                    refused += 1
                    continue
                docs.append(doc)
            results.append(
                {
                    "counts": dict(report.counts),
                    "alerts": [a.code for a in report.alerts],
                    "failed": report.failed_sources,
                    "docs": len(docs),
                    "refused": refused,
                    "fffd": sum((d.title + d.body).count("\ufffd") for d in docs),
                    "markup_titles": sum(1 for d in docs if _TAG.search(d.title)),
                    "empty": sum(1 for d in docs if not d.body.replace(f"# {d.title}", "").strip()),
                    "text": [_SPACES.sub(" ", d.body) for d in docs],
                }
            )
    return results


def main() -> None:
    # Every collect builds an HTTP client, and loading the CA bundle costs ~0.5 s each time; the
    # servers here are plain-HTTP loopback, so one context serves all (both code versions alike).
    cached = cache(httpx.create_ssl_context)
    httpx._transports.default.create_ssl_context = cached  # type: ignore[attr-defined]
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--feedparser", type=Path, required=True)
    parser.add_argument("--trafilatura", type=Path, required=True)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    server = _Server(("127.0.0.1", 0), _Handler)
    server.routes = {}
    threading.Thread(target=server.serve_forever, daemon=True).start()
    started, cpu = time.monotonic(), time.process_time()
    feeds = Counter()
    for _name, data, headers in _feeds(args.feedparser):
        first, second = _collect(server, data, headers, "feed", 2)
        feeds["feeds"] += 1
        feeds["feeds_with_documents"] += first["docs"] > 0
        feeds["feeds_nothing_no_alert"] += first["docs"] == 0 and not first["alerts"]
        feeds["feeds_no_link_alerted"] += "collect.no_link" in first["alerts"]
        for key in ("docs", "refused", "fffd", "markup_titles", "empty"):
            feeds[key] += first[key]
        feeds["feeds_with_empty"] += first["empty"] > 0
        feeds["feeds_with_empty_flagged"] += first["empty"] > 0 and "collect.empty_body" in first["alerts"]
        feeds["feeds_rewritten_second_night"] += second["counts"]["updated"] > 0
    pages = Counter()
    for _url, data, snippets in _pages(args.trafilatura):
        (night,) = _collect(server, data, {"content-type": "text/html"}, "page", 1)
        text = " ".join(night["text"])
        pages["pages"] += 1
        pages["pages_with_document"] += night["docs"] > 0
        pages["snippets"] += len(snippets)
        pages["snippets_found"] += sum(_SPACES.sub(" ", s) in text for s in snippets)
        pages["fffd"] += night["fffd"]
    server.shutdown()
    result = {
        "feeds": dict(feeds),
        "pages": dict(pages),
        "wall_s": round(time.monotonic() - started, 1),
        "cpu_s": round(time.process_time() - cpu, 1),
    }
    print(json.dumps(result, indent=1))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
