"""The night key's code digest (veille.run.nightkey.code_tree_digest) lists the tree without resolving
every path: the same digest as every file ``rglob`` finds outside ``__pycache__``, resolved — for the
installed package and for a tree with linked files and folders, broken links and caches."""

from __future__ import annotations

from pathlib import Path

from veille.fingerprint import files_digest
from veille.run.nightkey import code_tree_digest

PACKAGE = Path(code_tree_digest.__code__.co_filename).resolve().parents[1]


def _rglob_digest(root: Path) -> str:
    """The digest as the key was first defined: rglob, then every path resolved."""
    files = [p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts]
    return files_digest(files, root.parent)


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
    (root / "a-b.py").write_text("ab = 1\n")  # sorts apart from a/… by path parts, not characters
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
