"""A new user's own folder (issue 39, item 1): `veille init`, `veille check`, then a run, with the
request and the documents where a user guesses them (docs/corpus-format.md, « A user's folder »)."""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
import typer
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from veille.cli import folder as cli_folder
from veille.cli import run as cli_run
from veille.corpus.errors import CorpusError
from veille.corpus.layout import REQUEST_NAMES, documents_place
from veille.corpus.request import load_request, parse_request_text
from veille.corpus.request_reading import read_request
from veille.store.files import list_document_files

FIXTURES = Path(__file__).parent / "fixtures"
REAL = FIXTURES / "real"
MINI_DOCS = FIXTURES / "mini_corpus" / "docs"

# What a user writes: no front matter, no heading, French, the options in the sentence.
PLAIN_DEMANDE = (
    "Quel moteur d'inférence choisir pour la plateforme interne en 2027 : Kestrel, Tamaris ou Orvet ?\n\n"
    "Comparez Kestrel, Tamaris et Orvet sur les performances, le coût sur 3 ans, la sécurité et la "
    "pérennité.\n"
)


@pytest.fixture()
def app() -> typer.Typer:
    app = typer.Typer()
    cli_folder.register(app)
    cli_run.register(app)
    return app


def invoke(app: typer.Typer, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout + result.stderr


def users_folder(app: typer.Typer, folder: Path) -> Path:
    """`veille init`, then what a user does: a plain demande.md and the files dropped at the root."""
    code, out = invoke(app, "init", str(folder))
    assert code == 0, out
    (folder / "demande.md").write_text(PLAIN_DEMANDE, encoding="utf-8")
    for doc in MINI_DOCS.glob("*.md"):
        shutil.copy(doc, folder / doc.name)
    shutil.copy(REAL / "pdflatex-outline.pdf", folder / "outline.pdf")
    shutil.copy(REAL / "The-Basics.html", folder / "The-Basics.html")
    return folder


# ------------------------------------------------------------------------------------------- init
def test_init_writes_a_template_that_is_a_valid_request_and_explains_itself(
    app: typer.Typer, tmp_path: Path
) -> None:
    folder = tmp_path / "ma-veille"
    code, out = invoke(app, "init", str(folder))
    assert code == 0, out
    assert (folder / "docs").is_dir() and not any((folder / "docs").iterdir())
    template = (folder / "demande.md").read_text(encoding="utf-8")
    for explained in ("Les axes", "Les options", "La période"):
        assert explained in template
    request = load_request(folder)
    # The explanations are a comment: never part of the request a model or the engine reads.
    assert "Les axes" not in request.text and "Ceci est la demande" not in request.text
    reading = read_request(
        request.text, ["Prometheus, Zabbix et Nagios supervisent des serveurs."], title=request.title
    )
    assert len(reading.axes) == 3
    assert sorted(reading.options) == ["Nagios", "Prometheus", "Zabbix"]
    assert (reading.period_start, reading.period_end) != (None, None)
    assert reading.kind == "choice"
    # delivery.toml is all comments: a valid file with no channel (nothing is sent).
    from veille.delivery.config import load_delivery

    config = load_delivery(folder)
    assert config is not None and config.email is None and config.chat == [] and config.operators is None


def test_init_never_overwrites_nor_adds_a_second_request(app: typer.Typer, tmp_path: Path) -> None:
    folder = tmp_path / "existant"
    folder.mkdir()
    (folder / "Request.md").write_text("# Ma demande\n\nComparer A et B.\n", encoding="utf-8")
    (folder / "delivery.toml").write_text("# mes réglages\n", encoding="utf-8")
    code, out = invoke(app, "init", str(folder))
    assert code == 0, out
    assert not (folder / "demande.md").exists()
    assert (folder / "delivery.toml").read_text(encoding="utf-8") == "# mes réglages\n"
    assert load_request(folder).title == "Ma demande"


def test_init_refuses_a_file(app: typer.Typer, tmp_path: Path) -> None:
    path = tmp_path / "fichier"
    path.write_text("x", encoding="utf-8")
    code, out = invoke(app, "init", str(path))
    assert code == 1 and "is a file" in out


# -------------------------------------------------------------------------------------- the request
@pytest.mark.parametrize(
    ("text", "title", "starts"),
    [
        ("# Titre de la demande\n\nLe texte.\n", "Titre de la demande", "Le texte."),
        (
            "Une première ligne qui sert de titre.\nLa suite.\n",
            "Une première ligne qui sert de titre.",
            "Une",
        ),
        ("<!-- note -->\n## Titre\n\nTexte.\n", "Titre", "Texte."),
        ("---\ntitle: Avec front matter\n---\n\n<!-- caché -->Texte.\n", "Avec front matter", "Texte."),
    ],
)
def test_a_request_without_front_matter(text: str, title: str, starts: str) -> None:
    request, unknown = parse_request_text(text, Path("demande.md"))
    assert (request.title, unknown) == (title, [])
    assert request.text.startswith(starts)
    assert "<!--" not in request.text


@pytest.mark.parametrize("text", ["", "  \n\n", "# Seulement un titre\n", "<!-- rien -->\n"])
def test_an_empty_request_is_refused(text: str) -> None:
    with pytest.raises(CorpusError, match="le texte de la demande est vide"):
        parse_request_text(text, Path("demande.md"))


def test_a_long_first_line_is_cut_at_a_word_for_the_title() -> None:
    line = "mot " * 200
    request, _ = parse_request_text(line + "\n", Path("demande.txt"))
    assert len(request.title) <= 300 and request.title.endswith("mot…")
    assert request.text == line.strip()


def test_two_request_files_are_an_error_naming_both(tmp_path: Path) -> None:
    (tmp_path / "request.md").write_text("# A\n\nTexte A.\n", encoding="utf-8")
    (tmp_path / "demande.md").write_text("# B\n\nTexte B.\n", encoding="utf-8")
    with pytest.raises(CorpusError, match=r"plusieurs fichiers de demande : request\.md, demande\.md"):
        load_request(tmp_path)
    # Naming one settles it.
    assert load_request(tmp_path, str(tmp_path / "demande.md")).title == "B"


def test_request_given_as_text_or_file(tmp_path: Path) -> None:
    other = tmp_path / "ailleurs.txt"
    other.write_text("Titre donné\nTexte donné.\n", encoding="utf-8")
    assert load_request(tmp_path, str(other)).title == "Titre donné"
    assert load_request(tmp_path, "Comparer Kestrel et Tamaris sur le coût").title.startswith("Comparer")
    with pytest.raises(CorpusError, match="fichier de demande introuvable"):
        load_request(tmp_path, str(tmp_path / "absent.md"))


# ------------------------------------------------------------------------------------ the documents
_ROOT_NAMES = st.sampled_from(
    [
        *REQUEST_NAMES,
        "DEMANDE.md",
        "Request.TXT",
        "delivery.toml",
        "sources.toml",
        "README.md",
        "readme.txt",
        "notes.md",
        "offre.pdf",
        "page.html",
        "compte-rendu.txt",
        "tableau.xlsx",
        ".cache.md",
    ]
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    names=st.sets(_ROOT_NAMES, max_size=8), in_docs=st.sets(st.sampled_from(["a.md", "b.pdf"]), max_size=2)
)
def test_documents_are_in_docs_else_at_the_root_never_the_folders_own_files(
    names: set[str], in_docs: set[str]
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "docs").mkdir()
        (root / "reference").mkdir()
        (root / "reference" / "dossier.md").write_text("x", encoding="utf-8")
        for name in names:
            (root / name).write_text("x", encoding="utf-8")
        for name in in_docs:
            (root / "docs" / name).write_text("x", encoding="utf-8")
        place = documents_place(root)
        listed = list_document_files(place, str(root.resolve()), [])
        if in_docs:  # docs/ holds documents: only they are read
            assert (place.prefix, sorted(listed)) == ("docs/", sorted(in_docs))
            return
        own = {
            n
            for n in names
            if n.lower() in REQUEST_NAMES or n.endswith(".toml") or n.lower().startswith("readme")
        }
        readable = {"notes.md", "offre.pdf", "page.html", "compte-rendu.txt"}
        assert place.prefix == ""
        assert set(listed) == (names & readable) - own
        assert not any(n.startswith(("reference/", "docs/")) for n in listed)


# ----------------------------------------------------------------------------------------- check
def _broken_folder(root: Path) -> Path:
    root.mkdir()
    (root / "demande.md").write_text("---\nterms: [Kestrel]\n---\n\nQuel moteur ?\n", encoding="utf-8")
    (root / "docs").mkdir()
    (root / "docs" / "a.md").write_text("---\nid: [\n---\nCorps.\n", encoding="utf-8")
    (root / "docs" / "b.pdf").write_bytes((REAL / "pdflatex-outline.pdf").read_bytes()[:700])
    (root / "oublie.txt").write_text("Un document posé à côté de docs/.\n", encoding="utf-8")
    (root / "delivery.toml").write_text('[email]\nto = ["pas une adresse"]\n', encoding="utf-8")
    return root


def test_check_lists_every_problem_at_once_and_records_nothing(
    app: typer.Typer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import veille.flows.veille as flows

    def no_night(*args: object, **kwargs: object) -> None:
        raise AssertionError("veille check started a night")

    monkeypatch.setattr(flows, "veille_flow", no_night)
    folder = _broken_folder(tmp_path / "casse")
    warehouse = tmp_path / "entrepot"
    code, out = invoke(app, "check", "--corpus", str(folder), "--warehouse", str(warehouse))
    assert code == 1, out
    errors = [line for line in out.splitlines() if line.startswith("ERROR")]
    warnings = [line for line in out.splitlines() if line.startswith("warning")]
    assert len(errors) >= 2 and len(errors) + len(warnings) >= 5, out
    assert out.count("fix: ") == len(errors) + len(warnings)
    assert "champ 'title': champ obligatoire absent" in out  # the request
    assert "none of the 2 document file(s) is valid" in out  # both documents, each named
    assert "docs/a.md" in out and "docs/b.pdf" in out
    assert "oublie.txt" in out  # a file docs/ hides
    assert "delivery.toml" in out and "pas une adresse" in out
    assert "veille run would fail" in out
    assert not warehouse.exists()  # nothing recorded, not even the warehouse's folder
    # The same folder, mended, passes; the warehouse stays untouched.
    (folder / "demande.md").write_text(PLAIN_DEMANDE, encoding="utf-8")
    shutil.copy(MINI_DOCS / "doc-01.md", folder / "docs" / "a.md")
    code, out = invoke(app, "check", "--corpus", str(folder), "--warehouse", str(warehouse))
    assert code == 0, out
    assert not warehouse.exists()


def test_check_an_unusable_warehouse_and_a_missing_folder(app: typer.Typer, tmp_path: Path) -> None:
    blocker = tmp_path / "fichier"
    blocker.write_text("x", encoding="utf-8")
    code, out = invoke(app, "check", "--corpus", str(tmp_path / "absent"), "--warehouse", str(blocker))
    assert code == 1 and "dossier de corpus introuvable" in out and "veille init" in out


# ------------------------------------------------------------------------- init, check, run: a night
@pytest.mark.slow
@pytest.mark.usefixtures("prefect_harness")
def test_a_new_users_folder_through_init_check_and_run(app: typer.Typer, tmp_path: Path) -> None:
    from veille.flows.veille import veille_flow
    from veille.store.readers import read_catalogue

    folder = users_folder(app, tmp_path / "ma-veille")
    warehouse = tmp_path / "entrepot"
    code, out = invoke(app, "check", "--corpus", str(folder), "--warehouse", str(warehouse))
    assert code == 0, out
    assert "documents read in the folder's root: 6 file(s)" in out
    assert "options: Kestrel, Tamaris, Orvet" in out
    assert not warehouse.exists()

    state = veille_flow(corpus=str(folder), warehouse=str(warehouse), backend="offline", return_state=True)
    assert state.is_completed(), state.message
    run_dir = Path(state.result())
    listing = read_catalogue(warehouse / "veille.duckdb")
    ids = sorted(e.id for e in listing.entries)
    # The four notes, the PDF and the HTML page; never the request nor delivery.toml.
    assert ids == ["doc-01", "doc-02", "doc-03", "doc-04", "outline", "the-basics"]
    plan = json.loads((run_dir / "plan.json").read_text(encoding="utf-8"))
    assert plan["request"]["options"] == ["Kestrel", "Tamaris", "Orvet"]
    report = (run_dir / "report.md").read_text(encoding="utf-8")
    assert "Kestrel" in report and "demande.md" not in report


def test_a_warehouse_inside_the_folder_is_never_read_as_documents(tmp_path: Path) -> None:
    from veille.store.ingest import ingest_corpus
    from veille.store.readers import read_catalogue

    folder = tmp_path / "dossier"
    folder.mkdir()
    (folder / "demande.md").write_text(PLAIN_DEMANDE, encoding="utf-8")
    shutil.copy(MINI_DOCS / "doc-01.md", folder / "note.md")
    report = folder / "entrepot" / "runs" / "r1" / "report.md"
    report.parent.mkdir(parents=True)
    report.write_text("# Dossier d'hier\n\nKestrel 9 999 tokens/s.\n", encoding="utf-8")
    database = folder / "entrepot" / "veille.duckdb"
    ingested = ingest_corpus(folder, database)
    assert ingested.documents == 1 and not ingested.alerts
    assert [e.id for e in read_catalogue(database).entries] == ["doc-01"]


def test_check_warns_that_collected_pages_would_hide_the_roots_files(
    app: typer.Typer, tmp_path: Path
) -> None:
    folder = users_folder(app, tmp_path / "ma-veille")
    (folder / "sources.toml").write_text(
        '[[source]]\nname = "s"\nurl = "https://example.org/feed"\n', encoding="utf-8"
    )
    code, out = invoke(app, "check", "--corpus", str(folder), "--warehouse", str(tmp_path / "w"))
    assert code == 0, out
    assert "collected pages are written in docs/" in out and "fix: move your documents into docs/" in out


@pytest.mark.parametrize("where", ["brief.md", "notes/brief.txt", "docs/brief.md"])
def test_a_request_file_given_inside_the_folder_is_not_a_document(tmp_path: Path, where: str) -> None:
    from veille.store.ingest import ingest_corpus

    folder = tmp_path / "dossier"
    (folder / "docs").mkdir(parents=True)
    shutil.copy(MINI_DOCS / "doc-01.md", folder / ("docs" if where.startswith("docs/") else "") / "note.md")
    brief = folder / where
    brief.parent.mkdir(parents=True, exist_ok=True)
    brief.write_text(PLAIN_DEMANDE, encoding="utf-8")
    ingested = ingest_corpus(folder, tmp_path / "w" / "veille.duckdb", request=str(brief))
    assert ingested.documents == 1, ingested.alerts


@pytest.mark.parametrize(
    ("make", "said"),
    [
        (
            lambda f: (f / "note.md").write_text("# Note\n\nKestrel.\n", encoding="utf-8"),
            "fichier de demande introuvable",
        ),
        (lambda f: (f / "demande.md").write_text(PLAIN_DEMANDE, encoding="utf-8"), "aucun document trouvé"),
    ],
)
def test_run_refuses_a_folder_that_cannot_run_before_any_night(
    app: typer.Typer, tmp_path: Path, make: Callable[[Path], object], said: str
) -> None:
    folder = tmp_path / "dossier"
    (folder / "docs").mkdir(parents=True)
    (folder / "README.md").write_text("# Ce dossier\n", encoding="utf-8")  # never a document
    make(folder)
    warehouse = tmp_path / "entrepot"
    code, out = invoke(
        app, "run", "--corpus", str(folder), "--warehouse", str(warehouse), "--backend", "offline"
    )
    assert code == 2 and said in out and "No night recorded" in out and "veille check" in out, out
    assert not warehouse.exists()  # refused before the warehouse, a server or a flow run


@pytest.mark.parametrize("name", ["demande.md", "request.md", "Demande.txt"])
def test_an_installed_veille_run_inside_the_users_folder_reads_that_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    """Installed (the working directory is veille's home): `veille run` inside a folder holding a
    request file and no `corpus/` reads that folder; with a `corpus/` there, or no request file,
    `corpus/` as before; in a checkout, always the bundled corpus."""
    import veille.settings
    from veille.settings import Settings

    folder = tmp_path / "ma-veille"
    folder.mkdir()
    monkeypatch.chdir(folder)
    monkeypatch.setattr(veille.settings, "default_home", lambda: folder)
    assert Settings().corpus_dir == folder / "corpus"  # no request file: the default, as before
    (folder / name).write_text("Comparer Atlas et Borea sur le coût.\n", encoding="utf-8")
    assert Settings().corpus_dir == folder
    (folder / "corpus").mkdir()
    assert Settings().corpus_dir == folder / "corpus"
    monkeypatch.setattr(veille.settings, "default_home", lambda: veille.settings.PROJECT_ROOT)
    assert Settings().corpus_dir == veille.settings.PROJECT_ROOT / "corpus"
