"""Ingestion of real-size, mixed-format corpora (issue 27 item 3, issue 29 item 7).

Usage (figures in docs/benchmarks.md, « Ingestion at real size »):

    .venv/bin/python bench/ingest_realsize.py --sizes 2000,20000
    /usr/bin/time -v .venv/bin/python bench/ingest_realsize.py --phase full --corpus C --db D

The generator writes ~20 KB documents made of real paragraphs (the docstrings of the Python standard
library — real prose nobody on the project wrote — mixed with the bundled corpus's French paragraphs),
with ids of every style: Jekyll date-slug files without an id, ``doc-N`` and collector-style
``web-<hex>`` ids in front matter, documents without front matter in sub-folders; formats mixed:
~80 % Markdown (YAML, TOML, Pelican headers), 10 % HTML, 5 % text, 5 % DOCX. Each phase runs in its own
process and reports its wall time, CPU time and peak RSS (``ru_maxrss``):

- ``full``: ``ingest_corpus`` into a new database;
- ``nochange``: the same again, nothing changed (size+mtime shortcut);
- ``nochange-hash``: the same with every file re-read and hashed (conversion cache hit for HTML/DOCX).

``--convert`` times conversion per format on the real files of tests/fixtures/real (CPU ms per file).
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import io
import json
import random
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _paragraphs() -> list[str]:
    found: list[str] = []
    skip = {"antigravity", "this", "idlelib", "turtledemo", "tkinter", "turtle", "pydoc_data"}
    for name in sorted(sys.stdlib_module_names):
        if name.startswith("_") or name in skip:
            continue
        if len(found) > 4000:
            break
        try:
            module = importlib.import_module(name)
        except Exception:
            continue
        for obj in [
            module,
            *(v for _, v in inspect.getmembers(module) if inspect.isclass(v) or inspect.isfunction(v)),
        ]:
            doc = inspect.getdoc(obj) or ""
            found += [" ".join(p.split()) for p in doc.split("\n\n") if len(p.split()) >= 25]
    for path in sorted((ROOT / "corpus" / "docs").glob("*.md")):
        text = path.read_text(encoding="utf-8").split("---", 2)[-1]
        found += [" ".join(p.split()) for p in text.split("\n\n") if len(p.split()) >= 15]
    return sorted(set(found))


def _docx(title: str, paragraphs: list[str]) -> bytes:
    import docx

    document = docx.Document()
    document.core_properties.title = title
    document.add_heading(title, level=1)
    for p in paragraphs:
        document.add_paragraph(p)
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def generate(root: Path, n: int, seed: int = 7) -> dict[str, int]:
    rng = random.Random(seed)
    pool = _paragraphs()
    docs = root / "docs"
    for folder in ("blog/_posts", "web", "notes", "wiki", "pages", "docx"):
        (docs / folder).mkdir(parents=True, exist_ok=True)
    (root / "request.md").write_text("---\ntitle: Banc réel\n---\n\nDemande du banc.\n", encoding="utf-8")
    formats = {"markdown": 0, "html": 0, "text": 0, "docx": 0}
    for i in range(n):
        paragraphs, size = [], 0
        while size < 19_500:
            p = rng.choice(pool)
            paragraphs.append(p)
            size += len(p) + 2
        title = " ".join(paragraphs[0].split()[:8])
        day = f"20{rng.randint(20, 26)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
        body = "\n\n".join(
            f"## {' '.join(p.split()[:5])}\n\n{p}" if k % 6 == 0 else p for k, p in enumerate(paragraphs)
        )
        kind = rng.random()
        if kind < 0.25:  # Jekyll post: date-slug file name, no id
            slug = "-".join(re.sub(r"[^a-z0-9]+", " ", title.lower()).split()[:4])
            name = f"blog/_posts/{day}-{slug}-{i}.md"
            text = f'---\nlayout: post\ntitle: "{title.replace(chr(34), "")}"\ndate: {day} 10:00:00 +0200\ncategories: bench\n---\n\n{body}\n'
        elif kind < 0.45:  # doc-N ids
            name = f"notes/doc-{i:05d}.md"
            text = f'---\nid: doc-{i:05d}\ndate: "{day}"\nsource_type: note-interne\ntitle: "{title.replace(chr(34), "")}"\n---\n\n{body}\n'
        elif kind < 0.65:  # collector-style ids
            name = f"web/web-{rng.getrandbits(48):012x}.md"
            text = f'---\nid: {Path(name).stem}\ndate: "{day}"\nsource_type: web\ntitle: "{title.replace(chr(34), "")}"\nurl: https://example.org/{i}\n---\n\n{body}\n'
        elif kind < 0.72:  # Hugo TOML
            name = f"wiki/hugo-{i}.md"
            text = f'+++\ntitle = "{title.replace(chr(34), "")}"\ndate = {day}T08:00:00Z\ntags = ["bench"]\n+++\n\n{body}\n'
        elif kind < 0.80:  # no front matter at all
            name = f"wiki/page {i}.md"
            text = f"# {title}\n\n{body}\n"
        elif kind < 0.90:
            name = f"pages/page-{i}.html"
            html_body = "".join(f"<p>{p}</p>" for p in paragraphs)
            (docs / name).write_text(
                f"<html><head><title>{title}</title></head><body><article><h1>{title}</h1>{html_body}</article></body></html>",
                encoding="utf-8",
            )
            formats["html"] += 1
            continue
        elif kind < 0.95:
            (docs / f"notes/note-{i}.txt").write_text("\n\n".join(paragraphs) + "\n", encoding="utf-8")
            formats["text"] += 1
            continue
        else:
            (docs / f"docx/rapport-{i}.docx").write_bytes(_docx(title, paragraphs))
            formats["docx"] += 1
            continue
        (docs / name).write_text(text, encoding="utf-8")
        formats["markdown"] += 1
    return formats


def _peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def child(phase: str, corpus: Path, db: Path) -> dict[str, float]:
    from veille.store.ingest import ingest_corpus

    cpu, wall = _cpu_seconds(), time.perf_counter()
    report = ingest_corpus(corpus, db, trust_file_stat=phase != "nochange-hash")
    return {
        "wall_s": round(time.perf_counter() - wall, 2),
        "cpu_s": round(_cpu_seconds() - cpu, 2),
        "peak_rss_mib": round(_peak_rss_mib(), 1),
        "added": report.added,
        "unchanged": report.unchanged,
        "skipped": report.skipped,
        "alerts": len(report.alerts),
    }


def convert_times() -> dict[str, float]:
    from veille.corpus.convert import convert_file

    out: dict[str, float] = {}
    for path in sorted((ROOT / "tests" / "fixtures" / "real").iterdir()):
        if path.suffix in (".md", ".markdown", ".html", ".pdf", ".docx"):
            convert_file(path)  # warm imports
            cpu = _cpu_seconds()
            for _ in range(5):
                convert_file(path)
            out[f"{path.suffix} {path.name} ({path.stat().st_size // 1024} KB)"] = round(
                (_cpu_seconds() - cpu) / 5 * 1000, 1
            )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="2000,20000")
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument(
        "--phase", default=None, help="run one phase in this process (full, nochange, nochange-hash)"
    )
    parser.add_argument("--corpus", type=Path, default=None)
    parser.add_argument("--db", type=Path, default=None)
    parser.add_argument("--convert", action="store_true", help="CPU ms per file and format on real files")
    args = parser.parse_args()
    if args.convert:
        print(json.dumps(convert_times(), indent=1))
        return
    if args.phase:
        print(json.dumps(child(args.phase, args.corpus, args.db)))
        return
    work = args.workdir or Path(tempfile.mkdtemp(prefix="veille-realsize-"))
    for n in (int(x) for x in args.sizes.split(",")):
        corpus, db = work / f"corpus-{n}", work / f"db-{n}.duckdb"
        started = time.perf_counter()
        formats = generate(corpus, n) if not corpus.exists() else {}
        print(
            json.dumps({"n": n, "generated_s": round(time.perf_counter() - started, 1), "formats": formats}),
            flush=True,
        )
        db.unlink(missing_ok=True)
        for phase in ("full", "nochange", "nochange-hash"):
            argv = [sys.executable, __file__, "--phase", phase, "--corpus", str(corpus), "--db", str(db)]
            result = subprocess.run(argv, capture_output=True, text=True, check=True, timeout=7200)
            with open("/proc/loadavg", encoding="ascii") as handle:
                load = handle.read().split()[0]
            print(
                json.dumps(
                    {"n": n, "phase": phase, "load1": load, **json.loads(result.stdout.splitlines()[-1])}
                ),
                flush=True,
            )


if __name__ == "__main__":
    main()
