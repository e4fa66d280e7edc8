"""Parsing and validation of one document: the happy path and every bad-input case of the format.

Each bad-input test checks that the message names the file, the field (when there is one) and what
was expected, since that is the contract of CorpusError.
"""

from __future__ import annotations

import datetime
import hashlib
import os
import pickle
import random
from pathlib import Path

import pytest
import yaml

from tests.fixtures.corpus_factory import doc_text
from veille.corpus.document import parse_document
from veille.corpus.errors import CorpusError, StrictModeError
from veille.corpus.frontmatter import _FrontMatterLoader, _simple_front_matter


def write(tmp_path: Path, content: str | bytes, name: str = "doc-01.md") -> Path:
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def expect_error(path: Path, *, field: str | None, problem: str, expected: str, **kwargs: int) -> CorpusError:
    with pytest.raises(CorpusError) as info:
        parse_document(path, **kwargs)
    err = info.value
    message = str(err)
    assert str(path) in message
    assert err.path == path
    assert err.field == field
    if field is not None:
        assert f"champ '{field}' : " in message
    assert problem in message, message
    assert f" ; attendu : {expected}" in message, message
    return err


# ----------------------------------------------------------------------------------------- happy path
def test_parse_valid_document(tmp_path: Path) -> None:
    text = (
        "---\n"
        "id: doc-03\n"
        'date: "2026-07-08"\n'
        "source_type: benchmark-interne\n"
        'title: "Banc d\'essai de juillet :\n  Kestrel, Tamaris, Orvet"\n'
        "summary: Une phrase.\n"
        "url: https://example.org/banc\n"
        "author: Équipe plateforme\n"
        "---\n\n"
        "# Banc\n\nDébit mesuré : 1 180 tokens/s.\n\n"
    )
    path = write(tmp_path, text, "doc-03.md")
    doc = parse_document(path, relative_to=tmp_path)
    assert doc.id == "doc-03"
    assert doc.date == datetime.date(2026, 7, 8)
    assert doc.source_type == "benchmark-interne"
    # A folded title is collapsed to one line: the catalogue has one line per document.
    assert doc.title == "Banc d'essai de juillet : Kestrel, Tamaris, Orvet"
    assert doc.summary == "Une phrase."
    assert doc.url == "https://example.org/banc"
    assert doc.author == "Équipe plateforme"
    assert doc.body == "# Banc\n\nDébit mesuré : 1 180 tokens/s."
    assert doc.word_count == 8  # whitespace-separated tokens, Markdown markers included
    assert doc.content_hash == hashlib.sha256(text.encode()).hexdigest()
    assert doc.path == "doc-03.md"
    assert doc.unknown_fields == []


def test_unquoted_date_crlf_and_bom_are_accepted(tmp_path: Path) -> None:
    text = "\ufeff" + doc_text(date="2026-01-31").replace("\n", "\r\n")
    doc = parse_document(write(tmp_path, text))
    assert doc.date == datetime.date(2026, 1, 31)
    assert "\r" not in doc.body


def test_optional_fields_may_be_absent_or_null(tmp_path: Path) -> None:
    doc = parse_document(write(tmp_path, doc_text(extra="summary:\nurl: null\n")))
    assert (doc.summary, doc.url, doc.author) == (None, None, None)


def test_unknown_fields_are_reported_not_fatal(tmp_path: Path) -> None:
    doc = parse_document(write(tmp_path, doc_text(extra="tags: [a, b]\nlang: fr\n")))
    assert doc.unknown_fields == ["lang", "tags"]
    assert doc.id == "doc-01"


# ------------------------------------------------------------------------------------- front matter
def test_missing_front_matter_derives_every_field(tmp_path: Path) -> None:
    path = write(tmp_path, "# Titre\n\nPas d'en-tête.\n")
    os.utime(path, (1_760_000_000, 1_760_000_000))  # 2025-10-09 UTC
    doc = parse_document(path, relative_to=tmp_path)
    # No date of its own: unknown, never the file's clock unless the user opts in (issue 36).
    assert (doc.id, doc.title, doc.date, doc.source_type) == ("doc-01", "Titre", None, "markdown")
    assert doc.origins == {
        "id": "path",
        "title": "first heading",
        "date": "unknown",
        "source_type": "format",
    }
    clocked = parse_document(path, relative_to=tmp_path, file_clock=True)
    assert (clocked.date, clocked.origins["date"]) == (datetime.date(2025, 10, 9), "file_clock")


def test_front_matter_not_closed(tmp_path: Path) -> None:
    path = write(tmp_path, "---\nid: doc-01\ndate: 2026-01-01\n\nCorps sans fin d'en-tête.\n")
    expect_error(path, field=None, problem="front matter non fermé", expected="une ligne '---' qui ferme")


def test_yaml_refused_but_readable_as_key_value_lines_is_loaded_with_a_note(tmp_path: Path) -> None:
    doc = parse_document(write(tmp_path, doc_text(title="Kestrel: le retour")))
    assert doc.title == "Kestrel: le retour"
    assert len(doc.notes) == 1 and "YAML invalide à la ligne 5" in doc.notes[0]  # counted in the file


def test_unquoted_colon_beside_flow_lists_is_read_as_key_value_lines(tmp_path: Path) -> None:
    # The common Jekyll post shape (Chirpy's template and others): an unquoted title holding ": " beside
    # `categories: [a, b]` / `tags: [x]`. YAML refuses the title; each flow list alone is YAML.
    text = (
        "---\ntitle: Sortie à vélo: le col du Galibier\ndate: 2024-07-14 08:00:00 +0200\nlayout: post\n"
        "categories: [velo, montagne]\ntags: [col]\n---\n\nNous avons monté le Galibier en 2 h 40.\n"
    )
    doc = parse_document(write(tmp_path, text, name="2024-07-14-velo.markdown"))
    assert (doc.title, doc.date) == ("Sortie à vélo: le col du Galibier", datetime.date(2024, 7, 14))
    assert doc.unknown_fields == ["categories", "layout", "tags"]
    assert len(doc.notes) == 1 and "simples lignes 'clé: valeur'" in doc.notes[0]


@pytest.mark.parametrize("flow", ["[a, b", "{a: [b}", "[*x]", "[&a 1]"])
def test_flow_value_yaml_refuses_alone_keeps_the_yaml_error(tmp_path: Path, flow: str) -> None:
    path = write(tmp_path, doc_text(title="Kestrel: le retour", extra=f"tags: {flow}\n"))
    expect_error(path, field=None, problem="YAML invalide à la ligne", expected="un front matter")


@pytest.mark.parametrize(
    ("text", "marker"),
    [
        (doc_text(extra="draft: true\n"), "draft: true"),
        (doc_text(extra="published: false\n"), "published: false"),  # Jekyll
        ("Title: Kestrel\nDate: 2024-11-02 14:05\nStatus: draft\n\nCorps.\n", "status: draft"),  # Pelican
        ('+++\ntitle = "Kestrel"\ndraft = true\n+++\n\nCorps.\n', "draft: true"),  # Hugo TOML
        (doc_text(extra="draft: false\npublished: true\nstatus: published\n"), None),
    ],
)
def test_a_draft_is_read_with_one_note_saying_so(tmp_path: Path, text: str, marker: str | None) -> None:
    doc = parse_document(write(tmp_path, text))
    assert doc.body
    drafts = [note for note in doc.notes if "marqué comme brouillon" in note]
    assert drafts == ([] if marker is None else [drafts[0]])
    if marker is not None:
        assert f"({marker})" in drafts[0]


def test_malformed_yaml_names_the_line(tmp_path: Path) -> None:
    path = write(tmp_path, doc_text(extra="summary: [a, b\n"))
    err = expect_error(path, field=None, problem="YAML invalide à la ligne", expected="un front matter")
    assert "à la ligne" in str(err)


def test_yaml_that_is_not_a_mapping(tmp_path: Path) -> None:
    path = write(tmp_path, "---\n- id\n- date\n---\n\nCorps.\n")
    expect_error(
        path, field=None, problem="le front matter est un(e) liste YAML", expected="un dictionnaire YAML"
    )


def test_empty_front_matter_derives_the_fields(tmp_path: Path) -> None:
    doc = parse_document(write(tmp_path, "---\n---\n\nCorps.\n", name="2024-05-06-note du jour.md"))
    assert (doc.id, doc.title, doc.date) == (
        "2024-05-06-note-du-jour",
        "note du jour",
        datetime.date(2024, 5, 6),
    )
    assert doc.origins["date"] == "file_name"


def test_duplicate_yaml_key(tmp_path: Path) -> None:
    path = write(tmp_path, doc_text(extra='title: "Second titre"\n'))
    expect_error(path, field=None, problem="duplicate key 'title'", expected="un front matter")


@pytest.mark.parametrize("field", ["id", "date", "source_type", "title"])
def test_missing_required_field_is_derived_and_its_origin_recorded(tmp_path: Path, field: str) -> None:
    text = "\n".join(line for line in doc_text().splitlines() if not line.startswith(f"{field}:")) + "\n"
    doc = parse_document(write(tmp_path, text), relative_to=tmp_path)
    assert doc.origins[field] != "front matter"
    given = {name: "front_matter" if name == "date" else "front matter" for name in doc.origins}
    assert all(origin == given[name] for name, origin in doc.origins.items() if name != field)


def test_null_title_is_derived(tmp_path: Path) -> None:
    doc = parse_document(write(tmp_path, doc_text(title="null")))
    assert doc.origins["title"] in ("first heading", "file name") and doc.title


@pytest.mark.parametrize("bad_id", ["doc_01", "-doc-01", '"doc 01"', '"doc-é"', '""'])
def test_bad_id_pattern(tmp_path: Path, bad_id: str) -> None:
    path = write(tmp_path, doc_text(doc_id=bad_id))
    problem = "valeur vide" if bad_id == '""' else "reçu :"
    expect_error(path, field="id", problem=problem, expected="")


def test_bad_id_message_states_the_pattern(tmp_path: Path) -> None:
    path = write(tmp_path, doc_text(doc_id="doc_01"))
    expect_error(
        path,
        field="id",
        problem="reçu : 'doc_01'",
        expected="un identifiant en minuscules de la forme [a-z0-9][a-z0-9-]*",
    )


def test_id_with_capitals_gets_a_hint(tmp_path: Path) -> None:
    # Ids that differ only by case would collide on case-insensitive file systems and in people's heads:
    # ids are lowercase only, and the message says which id to write.
    path = write(tmp_path, doc_text(doc_id="Doc-01"))
    expect_error(
        path,
        field="id",
        problem="identifiants en minuscules : écrivez 'doc-01'",
        expected="un identifiant en minuscules",
    )


def test_numeric_id_must_be_quoted(tmp_path: Path) -> None:
    path = write(tmp_path, doc_text(doc_id="0012"))  # YAML 1.1 would read this as the integer 10
    expect_error(
        path, field="id", problem="reçu : entier YAML", expected="une chaîne non vide (entre guillemets"
    )


@pytest.mark.parametrize("bad_date", ['"2026/07/08"', '"08-07-2026"', '"2026-7-8"', "20260708", '"demain"'])
def test_invalid_date_format(tmp_path: Path, bad_date: str) -> None:
    path = write(tmp_path, doc_text(date=bad_date))
    expect_error(path, field="date", problem="reçu :", expected="une date ISO AAAA-MM-JJ")


@pytest.mark.parametrize("impossible", ['"2026-02-30"', "2026-02-30", "2026-13-01", "2025-02-29"])
def test_impossible_date(tmp_path: Path, impossible: str) -> None:
    # Unquoted, PyYAML itself would raise a bare ValueError; the loader keeps dates as text instead.
    path = write(tmp_path, doc_text(date=impossible))
    expect_error(path, field="date", problem="date impossible", expected="une date ISO AAAA-MM-JJ qui existe")


@pytest.mark.parametrize(
    ("value", "day"),
    [
        ('"2026-07-08T10:00:00"', "2026-07-08"),
        ("2025-01-27 20:45:32 +0530", "2025-01-27"),  # Jekyll
        ("2025-01-27T23:45:32-08:00", "2025-01-27"),  # the author's day, in the author's zone
        ("2024-01-02 10:20", "2024-01-02"),  # Pelican
        ('"2024-03-04T05:06:07Z"', "2024-03-04"),
    ],
)
def test_date_times_give_the_authors_day(tmp_path: Path, value: str, day: str) -> None:
    doc = parse_document(write(tmp_path, doc_text(date=value)))
    assert doc.date.isoformat() == day


@pytest.mark.parametrize("bad_type", ['"Benchmark Interne"', "benchmark_interne", "Fiche", "-note"])
def test_source_type_must_be_kebab_case(tmp_path: Path, bad_type: str) -> None:
    path = write(tmp_path, doc_text(source_type=bad_type))
    expect_error(
        path,
        field="source_type",
        problem="reçu :",
        expected="un type de source en minuscules reliées par des tirets",
    )


@pytest.mark.parametrize(
    ("title", "problem"), [("2027", "reçu : entier YAML"), ("yes", "reçu : booléen YAML")]
)
def test_title_must_be_a_string(tmp_path: Path, title: str, problem: str) -> None:
    path = write(tmp_path, doc_text(title=title))
    expect_error(path, field="title", problem=problem, expected="une chaîne non vide")


def test_blank_title(tmp_path: Path) -> None:
    path = write(tmp_path, doc_text(title='"   "'))
    expect_error(path, field="title", problem="valeur vide", expected="une chaîne non vide")


def test_bad_url(tmp_path: Path) -> None:
    path = write(tmp_path, doc_text(extra="url: www.example.org\n"))
    expect_error(path, field="url", problem="reçu : 'www.example.org'", expected="une URL http(s) absolue")


def test_list_summary_is_rejected(tmp_path: Path) -> None:
    path = write(tmp_path, doc_text(extra="summary: [a, b]\n"))
    expect_error(path, field="summary", problem="reçu : liste YAML", expected="une chaîne non vide")


# --------------------------------------------------------------------------------------------- body
@pytest.mark.parametrize("body", ["", "   \n\n  \t"])
def test_empty_body(tmp_path: Path, body: str) -> None:
    path = write(tmp_path, doc_text(body=body))
    expect_error(
        path, field="body", problem="le corps du document est vide", expected="du texte Markdown non vide"
    )


# -------------------------------------------------------------------------------------- file level
def test_non_utf8_bytes(tmp_path: Path) -> None:
    raw = doc_text(body="Débit mesuré.").encode("latin-1")
    path = write(tmp_path, raw)
    offset = raw.index(b"\xe9")
    err = expect_error(
        path,
        field=None,
        problem=f"UTF-8 invalide : octet 0xe9 à la position {offset}",
        expected="du texte encodé en UTF-8",
    )
    assert "(ligne 8)" in str(err)


def test_binary_file_with_md_extension(tmp_path: Path) -> None:
    path = write(tmp_path, b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    expect_error(
        path,
        field=None,
        problem="contenu binaire (octet NUL à la position 8)",
        expected="du texte Markdown en UTF-8",
    )


def test_file_over_size_limit(tmp_path: Path) -> None:
    text = doc_text(body="x" * 5_000)
    path = write(tmp_path, text)
    size = len(text.encode())
    expect_error(
        path,
        field=None,
        problem=f"fichier de {size} octets, au-delà de la limite",
        expected="un fichier d'au plus 4096 octets",
        max_bytes=4096,
    )


def test_symlink_loop(tmp_path: Path) -> None:
    path = tmp_path / "loop.md"
    os.symlink(path, path)
    expect_error(
        path, field=None, problem="boucle de liens symboliques", expected="un fichier ordinaire lisible"
    )


def test_dangling_symlink(tmp_path: Path) -> None:
    path = tmp_path / "gone.md"
    os.symlink(tmp_path / "nowhere.md", path)
    expect_error(path, field=None, problem="fichier introuvable", expected="un fichier existant")


def test_directory_named_like_a_document(tmp_path: Path) -> None:
    path = tmp_path / "dir.md"
    path.mkdir()
    expect_error(path, field=None, problem="pas un fichier ordinaire", expected="un fichier ordinaire")


# ----------------------------------------------------------------------------------------- errors
def test_corpus_error_survives_pickling() -> None:
    # Prefect pickles exceptions into failed states; the default reduce would lose the attributes.
    err = CorpusError(Path("docs/a.md"), "date", "an ISO date", "got 'x'")
    copy = pickle.loads(pickle.dumps(err))
    assert (copy.path, copy.field, copy.expected, copy.problem, str(copy)) == (
        err.path,
        err.field,
        err.expected,
        err.problem,
        str(err),
    )


def test_strict_mode_error_names_the_first_and_counts_the_others() -> None:
    errors = [CorpusError(Path(f"docs/{i}.md"), "id", "an id", "bad") for i in "abc"]
    err = StrictModeError(errors)
    assert err.path == Path("docs/a.md")
    assert "2 autre(s) fichier(s) invalide(s) : docs/b.md, docs/c.md" in str(err)
    assert len(pickle.loads(pickle.dumps(err)).errors) == 3


# ----------------------------------------------------------------------------- front-matter fast path
def _yaml(front: str) -> object:
    return yaml.load(front, Loader=_FrontMatterLoader)


FAST_PATH_CASES = [
    'id: doc-01\ndate: "2026-07-08"\ntitle: "Banc d\'essai : Kestrel"\n',
    "title: Banc d'essai de juillet\n",
    "title: 'Deux-points : ici'\n",
    "title: a: b\n",
    "title: a #commentaire\n",
    "title: C#\n",
    "title: yes\n",
    "title: No\n",
    "title: ~\n",
    "title: null\n",
    "title: 12\n",
    "title: 1.5\n",
    "title: 1_000\n",
    "title: 0x1f\n",
    "title: .inf\n",
    "title: 1:20\n",
    "title: =\n",
    "title: <<\n",
    "date: 2026-07-08\n",
    'title: "a \\" b"\n',
    'title: "a\\tb"\n',
    "title: 'it''s'\n",
    "title: - x\n",
    "title: [a, b]\n",
    "title: {a: b}\n",
    "title: &x a\n",
    "title: *x\n",
    "title: !tag a\n",
    "title: |\n  a\n",
    "title: >\n  a\n",
    "title: a\n  suite\n",
    "title: a\ttab\n",
    "title: a\rb\n",
    "title: a\x85b\n",
    "title: a\u2028b\n",
    "title: %a\n",
    "title: @a\n",
    "title: `a\n",
    "title:   espaces   \n",
    "# commentaire\ntitle: a\n",
    "yes: a\n",
    "null: a\n",
    "on: a\n",
    "Title: a\ntitle: b\n",
    "title: a\ntitle: b\n",
    "title: 'a\n",
    'title: "a\n',
    "title: é'è\n",
    "title: a ,b\n",
    "title: ?a\n",
    "title: a?\n",
    "title: 'a' b\n",
    'title: "a" b\n',
    "\n\ntitle: a\n\n",
    "title: a\n\t\nb: c\n",
    "title: a\n   \nb: c\n",
    "2026: a\n",
]


@pytest.mark.parametrize("front", FAST_PATH_CASES)
def test_fast_path_agrees_with_yaml(front: str) -> None:
    fast = _simple_front_matter(front)
    try:
        expected = _yaml(front)
    except yaml.YAMLError:
        assert fast is None  # invalid YAML must go through the loader (and its error message)
        return
    if fast is not None:
        assert fast == expected


def test_fast_path_covers_the_usual_front_matter() -> None:
    front = 'id: doc-03\ndate: "2026-07-08"\nsource_type: benchmark-interne\ntitle: "Banc : Kestrel"\n'
    assert _simple_front_matter(front) == _yaml(front)


def test_fast_path_agrees_with_yaml_on_random_lines() -> None:
    rng = random.Random(20260708)
    alphabet = [*"ab -:#'\"\\[]{},&*!|>%@`?~=<.0123456789éT\t", "yes", "null", "2026-01-01", "1e3"]
    disagreements = []
    for _ in range(3000):
        lines = []
        for _ in range(rng.randint(1, 3)):
            key = rng.choice(["id", "title", "summary", "yes", "x_1"])
            value = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 8)))
            lines.append(f"{key}: {value}")
        front = "\n".join(lines) + "\n"
        fast = _simple_front_matter(front)
        if fast is None:
            continue
        try:
            expected = _yaml(front)
        except yaml.YAMLError:
            disagreements.append((front, fast, "yaml error"))
            continue
        if fast != expected:
            disagreements.append((front, fast, expected))
    assert disagreements == []
