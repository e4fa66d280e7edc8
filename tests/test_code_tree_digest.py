"""The code digests (veille.run.nightkey.code_tree_digest, veille.fingerprint.files_digest) list and
name files without pathlib's parsing and without resolving every path again: the same digest as the
first definition — every file ``rglob`` finds outside ``__pycache__``, resolved, sorted as paths, each
named relative to the base by pathlib and hashed — for the installed package and for a tree with
linked files and folders, broken links, caches, names that sort apart as text and as paths, and files
outside the base."""

from __future__ import annotations

import hashlib
from pathlib import Path

from veille.fingerprint import files_digest, text_digest
from veille.run.nightkey import code_tree_digest

PACKAGE = Path(code_tree_digest.__code__.co_filename).resolve().parents[1]


def _reference(files: list[Path], root: Path) -> str:
    """files_digest as first written: resolved, sorted as paths, named by pathlib, hashed."""
    base = root.resolve()
    parts: list[str] = []
    for path in sorted({p.resolve() for p in files}):
        label = str(path.relative_to(base)) if path.is_relative_to(base) else path.name
        parts += [label, hashlib.sha256(path.read_bytes()).hexdigest()]
    return text_digest(*parts)


def _rglob_digest(root: Path) -> str:
    """The night key's code digest as first defined: rglob, then every path resolved."""
    files = [p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts]
    return _reference(files, root.parent)


def test_the_package_digest_is_the_rglob_one() -> None:
    assert code_tree_digest(PACKAGE) == _rglob_digest(PACKAGE)


def test_links_caches_and_nesting_give_the_rglob_digest(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    (outside / "deep").mkdir(parents=True)
    (outside / "target.py").write_text("x = 1\n")
    (outside / "deep" / "inner.py").write_text("y = 2\n")
    root = tmp_path / "real" / "pkg"
    (root / "sub" / "__pycache__").mkdir(parents=True)
    (root / "__pycache__").mkdir()
    (root / "a.py").write_text("a = 1\n")
    (root / "a-b.py").write_text("ab = 1\n")  # after a/x.py as paths, before it as text
    (root / "a").mkdir()
    (root / "a" / "x.py").write_text("x = 1\n")
    (root / "sub" / "b.toml").write_text("k = 1\n")
    (root / "sub" / "__pycache__" / "b.pyc").write_bytes(b"\0")
    (root / "__pycache__" / "fingerprints.json").write_text("{}")
    (root / "linked.py").symlink_to(outside / "target.py")  # a file outside: its target's name
    (root / "sub" / "same.py").symlink_to(root / "a.py")  # a file inside: counted once
    (root / "linked_dir").symlink_to(outside / "deep", target_is_directory=True)  # not entered
    (root / "broken.py").symlink_to(tmp_path / "missing.py")  # no file: left out
    (tmp_path / "via").symlink_to(tmp_path / "real", target_is_directory=True)
    for given in (root, tmp_path / "via" / "pkg"):  # the root itself reached through a link
        assert code_tree_digest(given) == _rglob_digest(given)
    before = code_tree_digest(root)
    (outside / "target.py").write_text("x = 2\n")
    assert code_tree_digest(root) != before  # a linked file's content is in the key


def test_files_inside_and_outside_the_base_give_the_first_digest(tmp_path: Path) -> None:
    root = tmp_path / "base"
    (root / "pkg" / "a").mkdir(parents=True)
    inside = [root / "pkg" / "a-b.py", root / "pkg" / "a" / "x.py", root / "top.toml"]
    outside = tmp_path / "elsewhere" / "authority.toml"
    outside.parent.mkdir()
    for n, path in enumerate([*inside, outside]):
        path.write_text(f"v = {n}\n")
    files = [*inside, outside, root / "pkg" / "." / "a-b.py"]  # one named twice
    assert files_digest(files, root) == _reference(files, root)
    assert files_digest(files) == _reference(files, tmp_path / "unrelated")  # no base: names only
