"""A simulated month of the nightly watch (issue 13, item 5): collect → run → record, night after night.

Usage (figures recorded in docs/benchmarks.md, section "A simulated month"):

    .venv/bin/python bench/month.py                          # 30 nights, offline engine
    .venv/bin/python bench/month.py --nights 3               # a quick look
    .venv/bin/python bench/month.py --backend gemini-fake    # the real google-genai SDK, fake server
    .venv/bin/python bench/month.py --items-per-night 1-3 --seed 13 --port 47013 --json month.json

A temporary copy of the bundled corpus (``corpus/``) gets a ``sources.toml`` watching one RSS feed
served by a stdlib HTTP server on 127.0.0.1 (``allow_private = true``, ``follow_links = true``).
Each night publishes a few generated French items (seeded; title, link to an article page on the
same server, description, pubDate; most about Kestrel, Tamaris or Orvet, some off-topic) and then
calls the veille flow once, as the nightly deployment does: its collect step fetches the feed (and
the item pages), then ingest → plan → analyse → write → review → grade → record. The feed keeps its
20 newest items, and feed and pages answer conditional GETs (ETag → 304), like a real site. The
item URLs hold the server's port (``--port``, fixed by default), and document ids are a hash of the
URL: the same seed and port replay the same month.

One process for every night: Prefect starts once (ephemeral API under a temporary PREFECT_HOME,
or the server of PREFECT_API_URL when set), the warehouse (DuckDB, task results, model cache, run
folders, Parquet) is one temporary folder shared by the nights, as on a deployment.

Per night: documents in the corpus, documents collect added / changed, model requests by role
(planner / analyst / other) and input tokens, from the run's call journal (``calls.jsonl``: one line
per attempt; model-cache hits are journaled with ``cache_hit`` and counted apart, task-result cache
hits are not journaled at all), the plan's sub-tasks and how many of them are *changed* (a
(question, documents) pair absent from the previous night's plan, or one whose documents collect
added or changed tonight), wall and CPU time (this process, all its threads; plus the Prefect API
subprocess's CPU when it is ours). Summary: night 1 vs the mean of nights 2..N, and the trend
(least-squares slope per night) of the requests and tokens beyond the changed material.

``--backend gemini-fake``: the flow runs with ``backend="gemini"`` through the real SDK against
testkit/fake_gemini.py. The fake answers every role as testkit/gemini_script.py does, except the
planner: its prompt (request + catalogue lines) is parsed back into a ``PlannerInput`` and answered
with the offline planner's plan, so new documents land in the sub-tasks they belong to. Input
tokens are then the fake's count (prompt characters / 4) and requests are also counted on the
server side (they must match the journal).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import re
import shutil
import statistics
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from email.utils import format_datetime
from html import escape
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the other benches (also when loaded by a test)
from pipeline import CORPUS, PROJECT_ROOT, TELEMETRY_OFF

FEED_ENTRIES = 20  # the feed shows its newest items only, as most feeds do
FIRST_DAY = date(2026, 11, 1)
# Document ids are sha1(item URL), and the URL holds the port: a fixed port makes two months with the
# same seed the same corpus (ids order the catalogue, and the offline planner breaks ties by id).
DEFAULT_PORT = 47013  # the simulated month's first night (pubDate of its items)

# ------------------------------------------------------------------------------ generated items
ENGINES = ("Kestrel", "Tamaris", "Orvet")
MONTHS = ("janvier", "février", "mars", "avril", "mai", "juin", "juillet", "septembre", "octobre")


@dataclass(frozen=True)
class FeedItem:
    slug: str
    title: str
    description: str
    paragraphs: tuple[str, ...]
    day: date


def _version(rng: random.Random, engine: str) -> str:
    major = {"Kestrel": 3, "Tamaris": 5, "Orvet": 2}[engine]
    return f"{major}.{rng.randint(4, 9)}"


def _perf(rng: random.Random, engine: str, ver: str) -> tuple[str, str, list[str]]:
    rate, ttft, gpus = rng.randrange(700, 2900, 10), rng.randrange(80, 420, 5), rng.choice((4, 8, 12))
    return (
        f"{engine} {ver} : {rate} tokens/s mesurés sur la charge de référence",
        f"Le banc d'essai mesure {rate} tokens/s par GPU et {ttft} ms de latence au premier token pour {engine} {ver}.",
        [
            f"L'équipe plateforme a rejoué la charge de référence sur {gpus} GPU avec {engine} {ver}. "
            f"Le débit mesuré atteint {rate} tokens/s par GPU avec des requêtes de 2 000 tokens en entrée.",
            f"La latence au premier token reste à {ttft} ms au 95e centile. Aucun redémarrage n'a été "
            f"observé pendant les {rng.randint(6, 72)} heures de l'essai de montée en charge.",
            f"Ces chiffres remplacent ceux du banc précédent pour {engine}. Le protocole de mesure, la "
            "charge et le dimensionnement retenu pour 2027 sont inchangés.",
        ],
    )


def _cost(rng: random.Random, engine: str, ver: str) -> tuple[str, str, list[str]]:
    price, support = rng.randrange(3000, 15000, 250), rng.randrange(10, 30)
    return (
        f"{engine} : nouvelle grille tarifaire à {price} EUR par GPU et par an",
        f"L'éditeur de {engine} publie une licence à {price} EUR par GPU et par an, support à {support} %.",
        [
            f"La grille tarifaire de {engine} {ver} fixe la licence à {price} EUR par GPU et par an. "
            f"Le support représente {support} % du prix de la licence.",
            f"Pour 12 GPU, la licence seule coûterait {12 * price} EUR par an. La mise en service est "
            f"facturée {rng.randrange(5, 40)} 000 EUR et la formation {rng.randrange(2, 9)} 000 EUR.",
            "Les prix s'entendent hors taxes et valent pour les contrats signés avant la fin de l'année.",
        ],
    )


def _security(rng: random.Random, engine: str, ver: str) -> tuple[str, str, list[str]]:
    bulletin = f"{engine[:3].upper()}-2026-{rng.randint(10, 99)}"
    fixed = rng.random() < 0.5
    return (
        f"Bulletin de sécurité {bulletin} : faille dans {engine} {ver}" + (" corrigée" if fixed else ""),
        f"Le bulletin {bulletin} décrit une faille de {engine} {ver}"
        + (
            ", corrigée par un correctif publié le même jour."
            if fixed
            else ", sans correctif pour l'instant."
        ),
        [
            f"Le bulletin de sécurité {bulletin} signale une faille dans {engine} {ver} : la journalisation "
            "des prompts peut conserver des données personnelles au-delà de la durée prévue.",
            (
                f"Le correctif {ver}.1 supprime les journaux en trop. L'éditeur recommande la mise à jour."
                if fixed
                else "Aucun correctif n'est encore disponible. L'éditeur conseille de désactiver la journalisation."
            ),
            f"Le score de gravité est de {rng.randint(4, 9)}.{rng.randint(0, 9)} sur 10. L'hébergement "
            "des données dans l'Union européenne n'est pas concerné.",
        ],
    )


def _ops(rng: random.Random, engine: str, ver: str) -> tuple[str, str, list[str]]:
    etp, month = rng.choice(("0,2", "0,3", "0,5", "0,8", "1")), rng.choice(MONTHS)
    return (
        f"{engine} {ver} sur Kubernetes : effort d'exploitation estimé à {etp} ETP",
        f"Le retour d'expérience sur {engine} {ver} estime l'exploitation à {etp} ETP ; la version suivante est prévue en {month} 2027.",
        [
            f"Le déploiement de {engine} {ver} sur Kubernetes passe par un opérateur maintenu par l'éditeur. "
            f"L'équipe d'exploitation estime l'effort à {etp} ETP pour la supervision et les mises à jour.",
            f"La feuille de route annonce la version suivante pour {month} 2027, avec une maintenance "
            "à long terme de trois ans pour chaque version majeure.",
            "Le risque d'abandon du projet est jugé faible par le comité d'architecture.",
        ],
    )


def _off_topic(rng: random.Random, engine: str, ver: str) -> tuple[str, str, list[str]]:
    month = rng.choice(MONTHS)
    return (
        f"Le restaurant d'entreprise ferme pour travaux en {month}",
        f"Le restaurant d'entreprise sera fermé {rng.randint(2, 4)} semaines en {month} pour des travaux de cuisine.",
        [
            f"Les travaux de la cuisine du restaurant d'entreprise commencent en {month}. Un service de "
            "plateaux-repas est prévu dans le hall du bâtiment B.",
            "Les horaires de la cafétéria sont étendus pendant la fermeture. Le menu sera affiché chaque lundi.",
        ],
    )


_KINDS: tuple[Callable[[random.Random, str, str], tuple[str, str, list[str]]], ...] = (
    _perf,
    _perf,
    _cost,
    _security,
    _ops,
    _off_topic,
)


def generate_items(rng: random.Random, night: int, count: int) -> list[FeedItem]:
    """``count`` new items for ``night`` (1-based): their slugs are unique over the month."""
    out = []
    for k in range(1, count + 1):
        engine = rng.choice(ENGINES)
        title, description, paragraphs = rng.choice(_KINDS)(rng, engine, _version(rng, engine))
        out.append(
            FeedItem(
                slug=f"n{night:02d}-{k}",
                title=title,
                description=description,
                paragraphs=tuple(paragraphs),
                day=FIRST_DAY + timedelta(days=night - 1),
            )
        )
    return out


# ------------------------------------------------------------------------------ the loopback site
class FeedSite:
    """A threaded HTTP server on 127.0.0.1: /robots.txt, /feed.xml (RSS 2.0, newest first, capped)
    and /articles/<slug>.html; feed and pages carry an ETag and answer If-None-Match with 304."""

    def __init__(self, port: int = 0) -> None:
        self._items: list[FeedItem] = []
        self._lock = threading.Lock()
        self.hits: Counter[str] = Counter()  # "feed 200", "page 304", ...
        try:
            self._server = ThreadingHTTPServer(("127.0.0.1", port), self._handler())
        except OSError:  # the port is taken (a shared machine): any free one, ids will differ
            self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="month-feed", daemon=True)

    def __enter__(self) -> FeedSite:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def publish(self, items: Sequence[FeedItem]) -> None:
        with self._lock:
            self._items.extend(items)

    def feed(self) -> bytes:
        with self._lock:
            newest = list(reversed(self._items))[:FEED_ENTRIES]
        entries = "".join(
            "<item>"
            f"<title>{escape(it.title)}</title>"
            f"<link>{self.base_url}/articles/{it.slug}.html</link>"
            f"<guid>{self.base_url}/articles/{it.slug}.html</guid>"
            f"<description>{escape(it.description)}</description>"
            f"<pubDate>{format_datetime(datetime(it.day.year, it.day.month, it.day.day, 6, tzinfo=UTC))}</pubDate>"
            "</item>"
            for it in newest
        )
        return (
            '<?xml version="1.0" encoding="utf-8"?><rss version="2.0"><channel>'
            "<title>Lettre de l'inférence</title>"
            f"<link>{self.base_url}/</link><description>Veille simulée</description>{entries}"
            "</channel></rss>"
        ).encode()

    def page(self, slug: str) -> bytes | None:
        with self._lock:
            item = next((it for it in self._items if it.slug == slug), None)
        if item is None:
            return None
        paragraphs = "".join(f"<p>{escape(p)}</p>" for p in item.paragraphs)
        return (
            f'<!doctype html><html lang="fr"><head><meta charset="utf-8"><title>{escape(item.title)}</title>'
            f'<meta name="description" content="{escape(item.description)}">'
            f'<meta property="article:published_time" content="{item.day.isoformat()}"></head>'
            "<body><nav>Accueil | Archives | Contact</nav>"
            f"<article><h1>{escape(item.title)}</h1>{paragraphs}</article>"
            "<footer>© Lettre de l'inférence</footer></body></html>"
        ).encode()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        site = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_GET(self) -> None:
                path = self.path.split("?", 1)[0]
                kind, body, ctype = "other", None, "text/plain; charset=utf-8"
                if path == "/robots.txt":
                    kind, body = "robots", b"User-agent: *\nAllow: /\n"
                elif path == "/feed.xml":
                    kind, body, ctype = "feed", site.feed(), "application/rss+xml; charset=utf-8"
                elif m := re.fullmatch(r"/articles/([\w-]+)\.html", path):
                    kind, body, ctype = "page", site.page(m.group(1)), "text/html; charset=utf-8"
                if body is None:
                    site.hits[f"{kind} 404"] += 1
                    self.send_error(404)
                    return
                etag = '"' + hashlib.sha1(body).hexdigest()[:16] + '"'
                if kind != "robots" and self.headers.get("If-None-Match") == etag:
                    site.hits[f"{kind} 304"] += 1
                    self.send_response(304)
                    self.send_header("ETag", etag)
                    self.end_headers()
                    return
                site.hits[f"{kind} 200"] += 1
                self.send_response(200)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.send_header("ETag", etag)
                self.end_headers()
                self.wfile.write(body)

        return Handler


def write_sources(corpus: Path, feed_url: str) -> None:
    (corpus / "sources.toml").write_text(
        "[[source]]\n"
        'name = "lettre-inference"\n'
        'kind = "feed"\n'
        f'url = "{feed_url}"\n'
        'source_type = "article-presse"\n'
        f"max_items = {FEED_ENTRIES}\n"
        "follow_links = true\n"
        "allow_private = true  # the bench's server is on loopback\n",
        encoding="utf-8",
    )


# ------------------------------------------------------------------------------ gemini-fake planner
def _planner_input(prompt: str) -> Any:
    """The ``PlannerInput`` behind a planner prompt (veille.roles.planner._prompt), parsed back."""
    from veille.roles.planner import CatalogueEntry, PlannerInput

    head, _, rest = prompt.partition("\nContraintes : ")
    limits = re.match(r"3 à (\d+) sous-tâches ; (\d+) documents", rest)
    if not head.startswith("Demande : ") or limits is None:
        raise ValueError("not a planner prompt")
    lines = head[len("Demande : ") :].split("\n")
    title, body = lines[0], "\n".join(lines[1:])
    terms: list[str] = []
    if m := re.search(r"^Termes de la demande : (.*)$", body, flags=re.MULTILINE):
        terms = [t.strip() for t in m.group(1).split(",") if t.strip()]
        body = body[: m.start()]
    block = re.search(r"<catalogue>\n(.*?)\n</catalogue>", rest, flags=re.DOTALL)
    entries = []
    for line in block.group(1).splitlines() if block else []:
        parts = line.split(" | ", 3)
        if len(parts) < 4:
            continue
        ident = parts[0].split(" (+", 1)[0].strip()
        title_part, _, summary = parts[3].partition(" — ")
        entries.append(
            CatalogueEntry(
                id=ident, date=parts[1], source_type=parts[2], title=title_part, summary=summary or None
            )
        )
    return PlannerInput(
        request_title=title,
        request=body.strip(),
        terms=terms,
        catalogue=entries,
        max_subtasks=int(limits.group(1)),
        max_docs=int(limits.group(2)),
    )


def month_responder(writer: Callable[[str], Any] | None = None) -> Callable[[dict[str, Any], str], Any]:
    """``FakeGemini.responder``: testkit/gemini_script.py for every role but the planner, which gets
    the offline planner's plan of the catalogue its prompt shows (``writer``: gemini_responder's)."""
    from testkit.fake_gemini import Reply
    from testkit.gemini_script import _text, gemini_responder, role_of
    from veille.offline.authority import load_authority
    from veille.offline.planner import plan
    from veille.settings import Settings

    others = gemini_responder(writer=writer)
    framing = load_authority(Settings().authority_file).framing()

    def respond(body: dict[str, Any], model: str) -> Any:
        if role_of(body) != "planner":
            return others(body, model)
        prompt = _text(body["contents"][0])
        answer = plan(_planner_input(prompt), framing_types=framing)
        return Reply.json(answer, prompt_tokens=len(prompt) // 4, output_tokens=200, model_version=model)

    return respond


# ------------------------------------------------------------------------------ one night
@dataclass
class Night:
    night: int
    published: int
    documents: int
    added: int
    changed: int
    status: str
    requests: Counter[str] = field(default_factory=Counter)  # planner / analyst / other
    input_tokens: Counter[str] = field(default_factory=Counter)
    model_cache_hits: int = 0
    server_requests: int | None = None  # gemini-fake: what the fake server received
    sub_tasks: int = 0
    changed_sub_tasks: int = 0
    wall_s: float = 0.0
    cpu_s: float = 0.0
    api_cpu_s: float | None = None

    @property
    def total_requests(self) -> int:
        return sum(self.requests.values())

    @property
    def total_tokens(self) -> int:
        return sum(self.input_tokens.values())


def _role_group(role: str) -> str:
    return role if role in ("planner", "analyst") else "other"


def _docs_snapshot(docs: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(docs.glob("*.md"))}


def _run_folder(state: Any, runs_dir: Path, before: set[Path]) -> Path | None:
    try:
        return Path(state.result())
    except Exception:  # a Failed state: its run folder is the new one under runs/
        new = sorted(set(runs_dir.glob("*/")) - before) if runs_dir.exists() else []
        return new[-1] if new else None


def _plan_keys(run_dir: Path | None) -> list[tuple[str, frozenset[str]]]:
    if run_dir is None or not (run_dir / "plan.json").exists():
        return []
    plan = json.loads((run_dir / "plan.json").read_text(encoding="utf-8"))
    return [(st["question"], frozenset(st["doc_ids"])) for st in plan.get("sub_tasks", [])]


class ApiCpu:
    """CPU seconds of the ephemeral Prefect API subprocess, when this process started it."""

    def __init__(self) -> None:
        self._proc: Any = None

    def start_ephemeral(self) -> float:
        from prefect.server.api.server import SubprocessASGIServer

        t0 = time.perf_counter()
        server = SubprocessASGIServer()
        server.start()
        try:
            import psutil

            process = server.server_process
            self._proc = psutil.Process(process.pid) if process is not None else None
        except Exception:
            self._proc = None
        return time.perf_counter() - t0

    def seconds(self) -> float | None:
        if self._proc is None:
            return None
        try:
            times = self._proc.cpu_times()
            return float(times.user + times.system + times.children_user + times.children_system)
        except Exception:
            return None


def run_night(
    flow: Any,
    night: int,
    published: int,
    corpus: Path,
    warehouse: Path,
    backend: str,
    previous_plan: list[tuple[str, frozenset[str]]],
    api: ApiCpu,
    fake: Any,
) -> tuple[Night, list[tuple[str, frozenset[str]]]]:
    from veille.journal import read_journal

    runs_dir = warehouse / "runs"
    before_docs = _docs_snapshot(corpus / "docs")
    before_runs = set(runs_dir.glob("*/")) if runs_dir.exists() else set()
    if fake is not None:
        fake.reset()
    api0 = api.seconds()
    t0, c0 = time.perf_counter(), time.process_time()
    state = flow(corpus=str(corpus), backend=backend, warehouse=str(warehouse), return_state=True)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    api1 = api.seconds()
    after_docs = _docs_snapshot(corpus / "docs")
    added = [n for n in after_docs if n not in before_docs]
    changed = [n for n in after_docs if n in before_docs and after_docs[n] != before_docs[n]]
    run_dir = _run_folder(state, runs_dir, before_runs)
    result = Night(
        night=night,
        published=published,
        documents=len(after_docs),
        added=len(added),
        changed=len(changed),
        status=str(state.type.value).lower(),
        wall_s=wall,
        cpu_s=cpu,
        api_cpu_s=None if api0 is None or api1 is None else api1 - api0,
    )
    if run_dir is not None and (run_dir / "calls.jsonl").exists():
        for record in read_journal(run_dir / "calls.jsonl"):
            if record.cache_hit:
                result.model_cache_hits += 1
                continue
            group = _role_group(record.role)
            result.requests[group] += 1
            result.input_tokens[group] += record.input_tokens
    if fake is not None:
        result.server_requests = len(fake.requests)
    plan = _plan_keys(run_dir)
    touched = {Path(n).stem for n in added + changed}
    seen = set(previous_plan)
    result.sub_tasks = len(plan)
    result.changed_sub_tasks = sum(1 for key in plan if key not in seen or key[1] & touched)
    return result, plan


# ------------------------------------------------------------------------------ output
HEADER = (
    "night  pub  docs  new  chg | requests: plan anal other  (sub-tasks chg/all) | input tokens: plan     anal    other"
    " | wall s   cpu s"
)


def night_line(n: Night) -> str:
    r, t = n.requests, n.input_tokens
    extra = []
    if n.model_cache_hits:
        extra.append(f"{n.model_cache_hits} model-cache hit(s)")
    if n.server_requests is not None and n.server_requests != n.total_requests:
        extra.append(f"fake server saw {n.server_requests}")
    if n.status != "completed":
        extra.append(n.status.upper())
    api = f" (+{n.api_cpu_s:.1f} API)" if n.api_cpu_s else ""
    return (
        f"{n.night:5d} {n.published:4d} {n.documents:5d} {n.added:4d} {n.changed:4d} | {r['planner']:14d} {r['analyst']:4d} "
        f"{r['other']:5d}  ({n.changed_sub_tasks:3d}/{n.sub_tasks:<3d})      | {t['planner']:18d} "
        f"{t['analyst']:8d} {t['other']:8d} | {n.wall_s:6.1f} {n.cpu_s:7.1f}{api}"
        + (f"  [{'; '.join(extra)}]" if extra else "")
    )


def _slope(ys: Sequence[float]) -> float:
    """Least-squares slope per night (0 with fewer than two points)."""
    if len(ys) < 2:
        return 0.0
    xs = range(len(ys))
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    den = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / den


def summary(nights: Sequence[Night]) -> list[str]:
    first, later = nights[0], nights[1:]
    lines = ["", f"night 1: {first.total_requests} requests, {first.total_tokens} input tokens"]
    if not later:
        return lines
    mean = statistics.fmean

    def ratio(a: float, b: float) -> str:
        return f"{a / b:.0%}" if b else "—"

    req, tok = mean(n.total_requests for n in later), mean(n.total_tokens for n in later)
    lines.append(
        f"nights 2-{nights[-1].night} (mean): {req:.1f} requests ({ratio(req, first.total_requests)} of night 1), "
        f"{tok:.0f} input tokens ({ratio(tok, first.total_tokens)} of night 1)"
    )
    for group in ("planner", "analyst", "other"):
        g_req = mean(n.requests[group] for n in later)
        g_tok = mean(n.input_tokens[group] for n in later)
        lines.append(
            f"  {group:8s} requests {first.requests[group]} → {g_req:.1f}, input tokens "
            f"{first.input_tokens[group]} → {g_tok:.0f}"
        )
    changed = mean(n.changed_sub_tasks for n in later)
    excess = [n.requests["analyst"] - n.changed_sub_tasks for n in later]
    lines.append(
        f"analyst requests per night {mean(n.requests['analyst'] for n in later):.1f} vs changed sub-tasks "
        f"{changed:.1f} (of {mean(n.sub_tasks for n in later):.1f}); excess (requests on unchanged sub-tasks) "
        f"mean {mean(excess):.1f}, trend {_slope(excess):+.2f} per night"
    )
    lines.append(
        f"trend over nights 2-{nights[-1].night} (least squares, per night): documents "
        f"{_slope([n.documents for n in later]):+.2f}, requests {_slope([n.total_requests for n in later]):+.2f}, "
        f"input tokens {_slope([n.total_tokens for n in later]):+.0f}, analyst tokens "
        f"{_slope([n.input_tokens['analyst'] for n in later]):+.0f}, planner tokens "
        f"{_slope([n.input_tokens['planner'] for n in later]):+.0f}, wall {_slope([n.wall_s for n in later]):+.2f} s"
    )
    lines.append(
        f"time per night: wall mean {mean(n.wall_s for n in later):.1f} s, CPU (this process) mean "
        f"{mean(n.cpu_s for n in later):.1f} s; night 1 wall {first.wall_s:.1f} s, CPU {first.cpu_s:.1f} s"
    )
    return lines


# ------------------------------------------------------------------------------ main
def _items_range(text: str) -> tuple[int, int]:
    lo, _, hi = text.partition("-")
    low, high = int(lo), int(hi or lo)
    if not 0 <= low <= high:
        raise argparse.ArgumentTypeError(f"expected N or LO-HI with 0 <= LO <= HI, got {text!r}")
    return low, high


def _prepare_env(home: Path) -> None:
    """Before Prefect is imported: telemetry off, a private PREFECT_HOME (unless a server is given)."""
    os.environ.update(TELEMETRY_OFF)
    for name in [k for k in os.environ if k.startswith("VEILLE_")]:
        del os.environ[name]  # the bench's own settings only
    for name in ("GEMINI_API_KEY", "GOOGLE_API_KEY"):
        os.environ.pop(name, None)
    os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")
    os.environ["PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS"] = "300"  # a loaded machine: wait
    if "PREFECT_API_URL" not in os.environ:
        os.environ["PREFECT_HOME"] = str(home)


@contextmanager
def _backend(name: str, writer: Callable[[str], Any] | None = None) -> Iterator[tuple[str, Any]]:
    if name == "offline":
        yield "offline", None
        return
    sys.path.insert(0, str(PROJECT_ROOT))  # testkit.* (the fake server is never shipped)
    from testkit.fake_gemini import FakeGemini

    with FakeGemini() as fake:
        fake.responder = month_responder(writer)
        os.environ.update(
            {
                "GEMINI_API_KEY": "bench-fake-key",
                "VEILLE_GEMINI_BASE_URL": fake.base_url,
                "VEILLE_GEMINI_API_VERSION": "v1beta",
            }
        )
        yield "gemini", fake


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nights", type=int, default=30)
    parser.add_argument("--items-per-night", type=_items_range, default=(1, 3), metavar="N|LO-HI")
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument(
        "--port",
        type=int,
        default=DEFAULT_PORT,
        help="feed server port (the item URLs, hence the document ids, contain it; 0: any free port)",
    )
    parser.add_argument("--backend", choices=["offline", "gemini-fake"], default="offline")
    parser.add_argument("--json", type=Path, help="also write every night's figures to this file")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder (corpus, warehouse)")
    args = parser.parse_args()
    if args.nights < 1:
        parser.error("--nights must be at least 1")

    tmp = Path(tempfile.mkdtemp(prefix="veille-month-"))
    _prepare_env(tmp / "prefect-home")
    rng = random.Random(args.seed)
    corpus, warehouse = tmp / "corpus", tmp / "warehouse"
    shutil.copytree(CORPUS, corpus, ignore=shutil.ignore_patterns("sources.toml", ".collect-state.json"))
    nights: list[Night] = []
    try:
        with FeedSite(args.port) as site, _backend(args.backend) as (backend, fake):
            write_sources(corpus, f"{site.base_url}/feed.xml")
            t0 = time.perf_counter()
            sys.path.insert(0, str(PROJECT_ROOT))
            from veille.flows.veille import veille_flow

            imports_s = time.perf_counter() - t0
            api = ApiCpu()
            if os.environ.get("PREFECT_API_URL"):
                startup = f"server {os.environ['PREFECT_API_URL']}"
            else:
                startup = f"ephemeral API started in {api.start_ephemeral():.1f} s"
            print(
                f"month: {args.nights} night(s), {args.items_per_night[0]}-{args.items_per_night[1]} item(s) "
                f"per night, seed {args.seed}, backend {args.backend}; {os.cpu_count()} CPU(s), load "
                f"{os.getloadavg()[0]:.2f}; feed {site.base_url}; imports {imports_s:.1f} s, Prefect {startup}; work dir {tmp}",
                flush=True,
            )
            print(HEADER, flush=True)
            plan: list[tuple[str, frozenset[str]]] = []
            for night in range(1, args.nights + 1):
                items = generate_items(rng, night, rng.randint(*args.items_per_night))
                site.publish(items)
                result, plan = run_night(
                    veille_flow, night, len(items), corpus, warehouse, backend, plan, api, fake
                )
                nights.append(result)
                print(night_line(result), flush=True)
            print(f"feed server: {dict(sorted(site.hits.items()))}")
            for line in summary(nights):
                print(line)
            recorded = _recorded(warehouse)
            if recorded:
                print(recorded)
    finally:
        if args.json:
            args.json.write_text(
                json.dumps([_as_json(n) for n in nights], indent=1, ensure_ascii=False), encoding="utf-8"
            )
        if args.keep:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


def _recorded(warehouse: Path) -> str:
    """What the warehouse holds after the month (the record step's Parquet), read back through its API."""
    try:
        from veille.warehouse import api

        runs = api.query("SELECT count(*) AS n FROM runs", warehouse_dir=warehouse)
        calls = api.query(
            "SELECT count(*) AS n, sum(input_tokens) AS t FROM llm_calls WHERE NOT cache_hit",
            warehouse_dir=warehouse,
        )
    except Exception as exc:  # informative only
        return f"warehouse: not read ({type(exc).__name__}: {exc})"
    return (
        f"warehouse (Parquet): {int(runs['n'][0])} run(s) recorded, {int(calls['n'][0])} model request(s), "
        f"{int(calls['t'][0] or 0)} input tokens"
    )


def _as_json(n: Night) -> dict[str, Any]:
    return {
        "night": n.night,
        "published": n.published,
        "documents": n.documents,
        "added": n.added,
        "changed": n.changed,
        "status": n.status,
        "requests": dict(n.requests),
        "input_tokens": dict(n.input_tokens),
        "model_cache_hits": n.model_cache_hits,
        "server_requests": n.server_requests,
        "sub_tasks": n.sub_tasks,
        "changed_sub_tasks": n.changed_sub_tasks,
        "wall_s": round(n.wall_s, 2),
        "cpu_s": round(n.cpu_s, 2),
        "api_cpu_s": None if n.api_cpu_s is None else round(n.api_cpu_s, 2),
    }


if __name__ == "__main__":
    main()
