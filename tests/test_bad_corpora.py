"""Bad corpora through `veille run`: a catalogue of malformed inputs, each with the documented outcome.

Every case goes through the real command line (a `veille run` process forked from a pre-imported
one, tests/crashkit.py, offline backend) and is checked against docs/corpus-format.md:

- a bad document is **skipped with an alert** naming its file, what is wrong and what is expected
  (``ingest.invalid_document`` / ``ingest.duplicate_id``, severity error) and the run goes on with
  the valid documents; with ``--strict`` the same corpus **fails** with exit code 2 and one
  ``error: <fichier> : ... ; attendu : ...`` line, and the database keeps its previous commit;
- a few inputs are **loaded with a warning** (unknown field, a date in the future) or **ignored**
  (a non-Markdown file: info alert; a hidden file: silently);
- a bad corpus as a whole (no request.md, no docs/, an empty docs/, nothing valid, an invalid
  request) **fails** with exit code 2 and one clear error line, and the previous database stays intact.

No output may contain a traceback. Each case is recorded in docs/reliability.md.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.crashkit import (
    PROJECT_ROOT,
    RunResult,
    Zygote,
    corpus_hashes,
    database_state,
    run_folder_from_output,
    start_zygote,
)
from tests.fixtures.corpus_factory import doc_text

pytestmark = [pytest.mark.process, pytest.mark.slow, pytest.mark.timeout(600)]

HUGE_BYTES = 4 * 1024**3  # sparse: refused from its size, never read


@dataclass(frozen=True)
class DocCase:
    name: str  # what the catalogue calls it
    file: str  # docs/<file>
    make: Callable[[Path], object]  # writes docs/<file> (the path is given)
    outcome: str  # "skip", "warning", "note" (loaded, info alert) or "ignored"
    code: str | None  # alert code (None: no alert at all)
    fragment: str  # text the alert message must contain
    names_file_first: bool = True  # False: an alert aggregating several files (subject: the first one)


def _text(content: str) -> Callable[[Path], object]:
    return lambda path: path.write_text(content, encoding="utf-8")


def _bytes(content: bytes) -> Callable[[Path], object]:
    return lambda path: path.write_bytes(content)


def _sparse(size: int) -> Callable[[Path], None]:
    def make(path: Path) -> None:
        with path.open("wb") as handle:
            handle.truncate(size)

    return make


def _symlink_loop(path: Path) -> None:
    other = path.with_name("zz-loop-b.md")
    os.symlink(other.name, path)
    os.symlink(path.name, other)  # zz-loop-b.md is part of the loop: it is reported too


DOC_CASES: list[DocCase] = [
    DocCase(
        "YAML alias bomb (billion laughs) in the front matter",
        "zz-laughs.md",
        _text(
            "---\nid: zz-laughs\na: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
            + "".join(
                f"{k}: &{k} [{', '.join(['*' + p] * 9)}]\n"
                for p, k in zip("abcdefgh", "bcdefghi", strict=False)
            )
            + "title: *i\n---\n\nCorps.\n"
        ),
        "skip",
        "ingest.invalid_document",
        "ancres et alias YAML (&nom, *nom) refusés",
    ),
    DocCase(
        "front matter nested 50,000 deep",
        "zz-deep.md",
        _text("---\nid: zz-deep\ntitle: " + "[" * 50_000 + "]" * 50_000 + "\n---\n\nCorps.\n"),
        "skip",
        "ingest.invalid_document",
        "front matter de 100020 caractères, au-delà de 65536",  # refused before YAML reads it
    ),
    DocCase(
        "front matter nested 10,000 deep (within the size limit)",
        "zz-deep-small.md",
        _text("---\nid: zz-deep-small\ntitle: " + "[" * 10_000 + "]" * 10_000 + "\n---\n\nCorps.\n"),
        "skip",
        "ingest.invalid_document",
        "YAML imbriqué sur plus de 32 niveaux",
    ),
    DocCase(
        "front matter not closed",
        "zz-unclosed.md",
        _text("---\nid: zz-unclosed\ndate: 2026-03-01\n\nCorps.\n"),
        "skip",
        "ingest.invalid_document",
        "front matter non fermé ; attendu : une ligne '---' qui ferme le front matter",
    ),
    DocCase(
        "malformed YAML",
        "zz-bad-yaml.md",
        _text('---\nid: zz-bad-yaml\ntitle: "unterminated\ndate: 2026-03-01\n---\n\nCorps.\n'),
        "skip",
        "ingest.invalid_document",
        "YAML invalide à la ligne",
    ),
    DocCase(
        "front matter valid YAML but not a mapping",
        "zz-list.md",
        _text("---\n- id: zz-list\n- date: 2026-03-01\n---\n\nCorps.\n"),
        "skip",
        "ingest.invalid_document",
        "le front matter est un(e) liste YAML, pas un dictionnaire ; attendu : un dictionnaire YAML",
    ),
    DocCase(
        "duplicate YAML key",
        "zz-dup-key.md",
        _text(doc_text("zz-dup-key", extra='title: "Encore"\n')),
        "skip",
        "ingest.invalid_document",
        "found duplicate key 'title'",
    ),
    DocCase(
        "control and bidi characters in the title (terminal escape)",
        "zz-control.md",
        _text(doc_text("zz-control", title='"Titre \\e]0;pwned\\a \\u202e inversé"')),
        "note",
        "ingest.document_note",
        "champ 'title' : caractères invisibles retirés ou valeur coupée",
    ),
    DocCase(
        "bad id pattern",
        "zz-bad-id.md",
        _text(doc_text('"doc_07!"')),
        "skip",
        "ingest.invalid_document",
        "champ 'id' : reçu : 'doc_07!' ; attendu : un identifiant en minuscules de la forme [a-z0-9][a-z0-9-]*",
    ),
    DocCase(
        "id differing from an existing one only by case",
        "zz-upper-id.md",
        _text(doc_text("DOC-05")),
        "skip",
        "ingest.invalid_document",
        "champ 'id' : reçu : 'DOC-05' (identifiants en minuscules : écrivez 'doc-05')",
    ),
    DocCase(
        "duplicate id",
        "zz-dup-id.md",
        _text(doc_text("doc-03")),
        "skip",
        "ingest.duplicate_id",
        "champ 'id' : identifiant en double 'doc-03'",
    ),
    DocCase(
        "impossible date",
        "zz-feb-30.md",
        _text(doc_text("zz-feb-30", date='"2026-02-30"')),
        "skip",
        "ingest.invalid_document",
        "champ 'date' : date impossible '2026-02-30'",
    ),
    DocCase(
        "date not in ISO form",
        "zz-fr-date.md",
        _text(doc_text("zz-fr-date", date='"30/01/2026"')),
        "skip",
        "ingest.invalid_document",
        "champ 'date' : reçu : '30/01/2026', pas de la forme AAAA-MM-JJ",
    ),
    DocCase(
        "wrong type (title is a YAML integer)",
        "zz-int-title.md",
        _text(doc_text("zz-int-title", title="2027")),
        "skip",
        "ingest.invalid_document",
        "champ 'title' : reçu : entier YAML (2027)",
    ),
    DocCase(
        "bad url",
        "zz-bad-url.md",
        _text(doc_text("zz-bad-url", extra="url: intranet/page\n")),
        "skip",
        "ingest.invalid_document",
        "champ 'url' : reçu : 'intranet/page' ; attendu : une URL http(s) absolue",
    ),
    DocCase(
        "non-UTF-8 bytes (Latin-1)",
        "zz-latin1.md",
        _bytes(doc_text("zz-latin1", body="Débit mesuré.").encode("latin-1")),
        "skip",
        "ingest.invalid_document",
        "UTF-8 invalide : octet 0xe9",
    ),
    DocCase(
        "binary file with a .md extension (PNG)",
        "zz-image.md",
        _bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256))),
        "skip",
        "ingest.invalid_document",
        "contenu binaire (octet NUL à la position 8), pas un fichier texte ; attendu : du texte Markdown en UTF-8",
    ),
    DocCase(
        "empty body",
        "zz-empty-body.md",
        _text(doc_text("zz-empty-body", body="")),
        "skip",
        "ingest.invalid_document",
        "champ 'body' : le corps du document est vide",
    ),
    DocCase(
        "empty file",
        "zz-empty-file.md",
        _text(""),
        "skip",
        "ingest.invalid_document",
        "le corps du document est vide",
    ),
    DocCase(
        "file over the size limit (1 MiB + 1 KiB)",
        "zz-big.md",
        _text(doc_text("zz-big", body="mot " * (1024**2 // 4 + 256))),
        "skip",
        "ingest.invalid_document",
        "au-delà de la limite ; attendu : un fichier d'au plus 1048576 octets",
    ),
    DocCase(
        "huge file (4 GiB, sparse)",
        "zz-huge.md",
        _sparse(HUGE_BYTES),
        "skip",
        "ingest.invalid_document",
        f"fichier de {HUGE_BYTES} octets, au-delà de la limite",
    ),
    DocCase(
        "symlink loop",
        "zz-loop-a.md",
        _symlink_loop,
        "skip",
        "ingest.invalid_document",
        "fichier illisible (boucle de liens symboliques) ; attendu : un fichier ordinaire lisible",
    ),
    DocCase(
        "dangling symlink",
        "zz-dangling.md",
        lambda path: os.symlink("nowhere.md", path),
        "skip",
        "ingest.invalid_document",
        "fichier introuvable (lien cassé ?)",
    ),
    DocCase(
        "unknown extra front-matter field",
        "zz-extra.md",
        _text(doc_text("zz-extra", extra='confidentiel: "oui"\n')),
        "note",
        "ingest.unknown_fields",
        "1 document(s) portent des champs de front matter que veille n'utilise pas, ignorés (documents "
        "chargés) : confidentiel (1)",
        names_file_first=False,
    ),
    DocCase(
        "date in the future (2062 for 2026)",
        "zz-future.md",
        _text(doc_text("zz-future", date='"2062-03-01"')),
        "warning",
        "ingest.future_date",
        "champ « date » : 2062-03-01 est après aujourd'hui",
    ),
    DocCase(
        "file of a format not read (spreadsheet) in docs/",
        "notes.xlsx",
        _text("brouillon\n"),
        "ignored",
        "ingest.ignored_files",
        "1 fichier(s) non lu(s), format non pris en charge : .xlsx (1)",
        names_file_first=False,
    ),
    DocCase("hidden file", ".brouillon.md", _text("pas un document\n"), "ignored", None, ""),
]


@pytest.fixture(scope="module")
def zygote(prefect_harness: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Zygote]:
    process = start_zygote(tmp_path_factory.mktemp("bad-corpora"))
    try:
        yield process
    finally:
        process.close()


def _argv(corpus: Path, warehouse: Path, *extra: str) -> list[str]:
    return ["run", "--corpus", str(corpus), "--warehouse", str(warehouse), "--backend", "offline", *extra]


def _short(text: str, *roots: Path) -> str:
    for root in roots:
        text = text.replace(str(root), f"<{root.name}>")
    return text


def _error_line(result: RunResult) -> str:
    """The one line a failing `veille run` ends with on stderr."""
    lines = [line for line in result.err.splitlines() if line.startswith("error: ")]
    assert len(lines) == 1, result.err[-3000:]
    return lines[0]


def _no_traceback(result: RunResult) -> None:
    assert "Traceback" not in result.out + result.err, (result.out + result.err)[-4000:]


def test_bad_documents_are_skipped_with_alerts_and_fail_strict_mode(
    zygote: Zygote, tmp_path: Path, reliability: Any
) -> None:
    corpus, warehouse = tmp_path / "corpus", tmp_path / "warehouse"
    shutil.copytree(PROJECT_ROOT / "corpus", corpus)
    good = corpus_hashes(corpus)

    # A first clean run: the database the strict failure must leave intact.
    clean = zygote.run(_argv(corpus, warehouse))
    assert clean.code == 0, clean.err[-3000:]
    for case in DOC_CASES:
        case.make(corpus / "docs" / case.file)

    # Strict mode: every file checked, the first invalid one named, nothing written.
    before = database_state(warehouse / "veille.duckdb")
    strict = zygote.run(_argv(corpus, warehouse, "--strict"))
    assert strict.code == 2, strict.err[-3000:]
    _no_traceback(strict)
    error = _error_line(strict)
    skipped = [c.file for c in DOC_CASES if c.outcome == "skip"] + ["zz-loop-b.md"]
    first = sorted(skipped)[0]
    assert error.startswith(f"error: {corpus / 'docs' / first} : ")
    assert (
        f"(mode strict ; {len(skipped) - 1} autre(s) fichier(s) invalide(s) :" in error
        and " ; attendu : " in error
    )
    assert database_state(warehouse / "veille.duckdb") == before

    # Lenient mode: one alert per bad file, the run goes on with every valid document.
    lenient = zygote.run(_argv(corpus, warehouse))
    assert lenient.code == 0, lenient.err[-3000:]
    _no_traceback(lenient)
    run_dir = run_folder_from_output(lenient.out)
    assert json.loads((run_dir / "run.json").read_text(encoding="utf-8"))["status"] == "completed"
    alerts = json.loads((run_dir / "alerts.json").read_text(encoding="utf-8"))
    by_subject: dict[str, list[dict[str, Any]]] = {}
    for alert in alerts:
        if alert["code"].startswith("ingest."):  # (injection screening also reports at this stage)
            by_subject.setdefault(str(alert["subject"]), []).append(alert)

    db = database_state(warehouse / "veille.duckdb")
    loaded = {"zz-extra", "zz-future", "zz-control"}
    assert set(db.documents) == {p.stem for p in (PROJECT_ROOT / "corpus" / "docs").glob("*.md")} | loaded
    assert good <= set(db.documents.values())

    for case in DOC_CASES:
        found = by_subject.pop(f"docs/{case.file}", [])
        if case.code is None:
            assert found == [], (case.name, found)
            observed = "no alert, not loaded (hidden files are ignored silently)"
        else:
            assert [a["code"] for a in found] == [case.code], (case.name, found)
            message = found[0]["message"]
            if case.names_file_first:
                assert message.startswith(f"{corpus / 'docs' / case.file} : "), (case.name, message)
            assert case.fragment in message, (case.name, message)
            assert message in lenient.out  # the user sees it in the run's summary
            severity = {"skip": "error", "warning": "warning", "note": "info", "ignored": "info"}[
                case.outcome
            ]
            assert found[0]["severity"] == severity
            observed = f"`{case.code}` ({severity}): {_short(message, corpus)}"
        stem = Path(case.file).stem
        assert (stem in db.documents) == (case.outcome in ("warning", "note")), case.name
        expected = {
            "skip": "skipped with an error alert naming the file, the problem and what is expected; the run "
            "goes on; `--strict` fails (exit 2) and writes nothing",
            "warning": "loaded, with a warning alert naming the file",
            "note": "loaded, with an info alert naming the file (aggregated over files when repeated)",
            "ignored": "not a document: ignored (info alert, or silently for hidden files)",
        }[case.outcome]
        if case.outcome == "skip":
            observed += (
                f"; exit 0 and {len(db.documents)} documents loaded; strict: exit 2, database unchanged"
            )
        reliability.record(f"bad corpus: {case.name} (`docs/{case.file}`)", expected, observed)
    # The second file of the loop is reported too; nothing else produced an ingest alert.
    assert [a["code"] for a in by_subject.pop("docs/zz-loop-b.md")] == ["ingest.invalid_document"]
    assert not by_subject, by_subject


@dataclass(frozen=True)
class CorpusCase:
    name: str
    make: Callable[[Path], object]  # breaks a copy of the bundled corpus
    fragment: str  # the error line must contain it
    strict: bool = False


def _rm(*parts: str) -> Callable[[Path], None]:
    def make(corpus: Path) -> None:
        target = corpus.joinpath(*parts)
        if target.is_dir():
            shutil.rmtree(target)
        else:
            target.unlink()

    return make


def _empty_docs(corpus: Path) -> None:
    shutil.rmtree(corpus / "docs")
    (corpus / "docs").mkdir()


def _only_invalid(corpus: Path) -> None:
    shutil.rmtree(corpus / "docs")
    (corpus / "docs").mkdir()
    (corpus / "docs" / "a.md").write_text("---\nid: [\n---\nCorps.\n", encoding="utf-8")
    (corpus / "docs" / "b.md").write_text(doc_text("b", body=""), encoding="utf-8")


def _request_without_title(corpus: Path) -> None:
    (corpus / "request.md").write_text("---\nterms: [Kestrel]\n---\n\nQuel moteur ?\n", encoding="utf-8")


def _bad_facts(corpus: Path) -> None:
    (corpus / "reference" / "facts.yaml").write_text("exlude: [doc-32]\n", encoding="utf-8")


CORPUS_CASES: list[CorpusCase] = [
    CorpusCase(
        "request.md missing",
        _rm("request.md"),
        "request.md : fichier de demande introuvable ; attendu : un fichier request.md",
    ),
    CorpusCase(
        "request.md without a title",
        _request_without_title,
        "request.md : champ 'title' : champ obligatoire absent ; attendu : une chaîne non vide",
    ),
    CorpusCase(  # without docs/ the root is read (issue 39): request.md and README.md are not documents
        "docs/ folder missing",
        _rm("docs"),
        "docs : aucun document trouvé ; attendu : au moins un fichier de document",
    ),
    CorpusCase(
        "empty corpus (docs/ without any file)",
        _empty_docs,
        "docs : aucun document trouvé ; attendu : au moins un fichier de document dans docs/",
    ),
    CorpusCase(
        "no valid document",
        _only_invalid,
        "docs : aucun des 2 fichier(s) de document n'est valide (première erreur : ",
    ),
    CorpusCase(
        "corpus folder missing",
        lambda corpus: shutil.rmtree(corpus),
        "dossier de corpus introuvable ; attendu : un dossier de corpus contenant request.md et docs/*.md",
    ),
    CorpusCase(
        "invalid reference/facts.yaml in strict mode (a typo: exlude)",
        _bad_facts,
        "facts.yaml : champ 'exlude' : champ inconnu",
        strict=True,
    ),
]


def test_bad_corpora_fail_clearly_and_keep_the_previous_database(
    zygote: Zygote, tmp_path: Path, reliability: Any
) -> None:
    warehouse = tmp_path / "warehouse"
    clean = zygote.run(_argv(PROJECT_ROOT / "corpus", warehouse))
    assert clean.code == 0, clean.err[-3000:]
    before = database_state(warehouse / "veille.duckdb")
    assert len(before.documents) == 40

    for number, case in enumerate(CORPUS_CASES):
        corpus = tmp_path / f"corpus-{number}"
        shutil.copytree(PROJECT_ROOT / "corpus", corpus)
        case.make(corpus)
        result = zygote.run(_argv(corpus, warehouse, *(["--strict"] if case.strict else [])))
        assert result.code == 2, (case.name, result.code, result.err[-3000:])
        _no_traceback(result)
        line = _error_line(result)
        assert case.fragment in line and " ; attendu : " in line, (case.name, line)
        assert re.match(r"error: /", line), line  # starts with the file or folder at fault
        assert database_state(warehouse / "veille.duckdb") == before, f"{case.name}: database changed"
        reliability.record(
            f"bad corpus: {case.name}",
            "the run stops with exit code 2 and one `error: <fichier> : <problème> ; attendu : <attente>` line, no "
            "traceback; the previous corpus database is intact",
            f"exit 2, {_short(line, corpus, tmp_path)}; database unchanged (40 documents, "
            f"{before.ingest_runs} ingestion(s))",
        )

    # Lenient mode: the same bad facts.yaml is an alert and the run completes.
    corpus = tmp_path / "corpus-facts"
    shutil.copytree(PROJECT_ROOT / "corpus", corpus)
    _bad_facts(corpus)
    lenient = zygote.run(_argv(corpus, warehouse))
    assert lenient.code == 0, lenient.err[-3000:]
    _no_traceback(lenient)
    alerts = json.loads((run_folder_from_output(lenient.out) / "alerts.json").read_text(encoding="utf-8"))
    bad_reference = [a for a in alerts if a["code"] == "ingest.invalid_reference"]
    assert len(bad_reference) == 1 and "champ 'exlude'" in bad_reference[0]["message"]
    reliability.record(
        "bad corpus: invalid reference/facts.yaml without --strict",
        "an `ingest.invalid_reference` error alert naming the file and the field; the run completes",
        f"exit 0; alert: {_short(bad_reference[0]['message'], corpus)}",
    )
