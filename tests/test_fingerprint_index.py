"""Code fingerprints without compiling (issue 40 item 1): imports read from tokens, hashes and
imports reused from a per-tree cache file while a file's size and mtime are unchanged.

The token reader is checked three ways: against CPython's own compiler on every module of veille
(the bytecode's IMPORT_NAME instructions, which the fingerprint used to read), on generated packages
whose runtime imports are known by construction, and the cache against no cache after any edits.
"""

from __future__ import annotations

import dis
import os
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from types import CodeType

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import veille
import veille.fingerprint as fp
from veille.source_imports import resolve, source_imports

ROOT = Path(veille.__file__).resolve().parent


def _bytecode_imports(code: CodeType) -> Iterator[tuple[int, str, tuple[str, ...]]]:
    """The oracle: imports as CPython compiles them, ``if TYPE_CHECKING:`` bodies left out."""
    instructions = list(dis.get_instructions(code))
    skip_until = -1
    for i, ins in enumerate(instructions):
        if ins.offset < skip_until:
            continue
        if ins.argval == "TYPE_CHECKING" and ins.opname in {"LOAD_NAME", "LOAD_GLOBAL", "LOAD_ATTR"}:
            jump = next((j for j in instructions[i + 1 : i + 3] if "IF_FALSE" in j.opname), None)
            skip_until = int(jump.argval) if jump is not None else -1
        elif ins.opname == "IMPORT_NAME":
            level, fromlist = instructions[i - 2].argval, instructions[i - 1].argval
            yield int(level or 0), str(ins.argval), tuple(fromlist or ())
    for const in code.co_consts:
        if isinstance(const, CodeType):
            yield from _bytecode_imports(const)


def _module_name(path: Path) -> str:
    parts = ("veille", *path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _package(path: Path) -> str:
    name = _module_name(path)
    return name if path.name == "__init__.py" else name.rpartition(".")[0]


def test_tokens_find_the_imports_the_compiler_emits() -> None:
    """On every module of veille (one test, not one per file: the suite's time counts too)."""
    differ: dict[str, set[str]] = {}
    paths = sorted(ROOT.rglob("*.py"))
    assert len(paths) > 100
    for path in paths:
        source = path.read_bytes()
        code = compile(source, str(path), "exec", dont_inherit=True)
        package = _package(path)
        expected = set().union(*(resolve(r, package) for r in _bytecode_imports(code)))
        found = set().union(*(resolve(r, package) for r in source_imports(source)))
        if found != expected:
            differ[str(path.relative_to(ROOT))] = found ^ expected
    assert differ == {}


# One statement form per kind of import: (template, does it run?). {j} is the imported module.
_FORMS = [
    ("import veille.m{j}\n", True),
    ("import os, veille.m{j} as alias\n", True),
    ("from veille import m{j}\n", True),
    ("from . import m{j}\n", True),
    ("from .m{j} import thing\n", True),
    ("from veille.m{j} import (\n    a,\n    b as c,\n)\n", True),
    ("def later():\n    from veille.m{j} import x\n    return x\n", True),
    ("class Box:\n    import veille.m{j}\n", True),
    ("if TYPE_CHECKING:\n    import veille.m{j}\n", False),
    ("if typing.TYPE_CHECKING: import veille.m{j}\n", False),
    ("if TYPE_CHECKING:\n    pass\nelse:\n    import veille.m{j}\n", True),
    ("if not TYPE_CHECKING:\n    import veille.m{j}\n", True),
    ("text = 'import veille.m{j}'\n", False),
    ("# import veille.m{j}\n", False),
    ('"""\nfrom veille import m{j}\n"""\n', False),
    ("def gen():\n    yield from range({j})\n", False),
]


def _targets(form: int, j: int) -> set[str]:
    """What the fingerprint must follow for a form that runs: the module, and ``veille`` itself
    for the forms that import from the package (its ``__init__`` runs and can change them)."""
    template = _FORMS[form][0]
    package = {"veille"} if "from veille import" in template or "from . import" in template else set()
    return {f"veille.m{j}", *package}


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.integers(min_value=2, max_value=6).flatmap(
        lambda n: st.lists(
            st.lists(st.tuples(st.integers(0, len(_FORMS) - 1), st.integers(0, n - 1)), max_size=4),
            min_size=n,
            max_size=n,
        )
    )
)
def test_the_closure_is_the_runtime_imports_of_any_package(statements: list[list[tuple[int, int]]]) -> None:
    edges: dict[str, set[str]] = {"veille": set()}
    with tempfile.TemporaryDirectory() as tmp:
        pkg = Path(tmp) / "veille"
        pkg.mkdir()
        (pkg / "__init__.py").write_text("", encoding="utf-8")
        for i, body in enumerate(statements):
            text = "import typing\nfrom typing import TYPE_CHECKING\n" + "".join(
                _FORMS[form][0].format(j=j) for form, j in body
            )
            (pkg / f"m{i}.py").write_text(text, encoding="utf-8")
            edges[f"veille.m{i}"] = set().union(set(), *(_targets(f, j) for f, j in body if _FORMS[f][1]))
        expected, todo = set(), ["veille.m0"]
        while todo:
            name = todo.pop()
            if name not in expected:
                expected.add(name)
                todo.extend(edges[name])
        names = {str(p.relative_to(tmp)) for p in fp.import_closure(["veille.m0"], root=pkg)}
    files = {"veille/__init__.py" if m == "veille" else f"veille/{m.split('.')[1]}.py" for m in expected}
    assert names == files


def _age(path: Path, seconds: float) -> None:
    then = time.time() - seconds
    os.utime(path, (then, then))


def _fresh_digest(pkg: Path, *, cached: bool) -> str:
    """The digest a new process computes (nothing kept in memory), with or without the cache file."""
    fp._index.cache_clear()
    fp._module_file.cache_clear()
    if not cached:
        (pkg / "__pycache__" / "fingerprints.json").unlink(missing_ok=True)
    return fp.files_digest(fp.import_closure(["veille.m0"], root=pkg), pkg.parent)


def _small_package(root: Path) -> Path:
    pkg = root / "veille"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("", encoding="utf-8")
    (pkg / "m0.py").write_text("from veille import m1\n", encoding="utf-8")
    (pkg / "m1.py").write_text("from .m2 import thing\n", encoding="utf-8")
    (pkg / "m2.py").write_text("thing = 1\n", encoding="utf-8")
    (pkg / "m3.py").write_text("unrelated = 1\n", encoding="utf-8")
    for path in pkg.glob("*.py"):
        _age(path, 60)
    return pkg


def test_a_second_process_reads_no_unchanged_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pkg = _small_package(tmp_path)
    first = _fresh_digest(pkg, cached=True)
    assert (pkg / "__pycache__" / "fingerprints.json").is_file()
    read: list[Path] = []
    original = Path.read_bytes

    def counting(self: Path) -> bytes:
        read.append(self)
        return original(self)

    monkeypatch.setattr(Path, "read_bytes", counting)
    assert _fresh_digest(pkg, cached=True) == first
    assert [p.name for p in read] == ["fingerprints.json"]  # the cache, no source

    # An edit inside the closure is read again and changes the digest; one outside does not.
    with (pkg / "m2.py").open("a", encoding="utf-8") as handle:
        handle.write("thing = 2\n")
    _age(pkg / "m2.py", 60)
    read.clear()
    edited = _fresh_digest(pkg, cached=True)
    assert edited != first and sorted(p.name for p in read) == ["fingerprints.json", "m2.py"]
    (pkg / "m3.py").write_text("unrelated = 2\n", encoding="utf-8")
    assert _fresh_digest(pkg, cached=True) == edited


def test_a_file_modified_within_the_clock_tick_is_never_recorded(tmp_path: Path) -> None:
    pkg = _small_package(tmp_path)
    _fresh_digest(pkg, cached=True)
    # Same size, same mtime: what a cache keyed on them cannot see, unless the entry was never
    # recorded because the file was too recent to trust.
    (pkg / "m2.py").write_text("thing = 3\n", encoding="utf-8")
    now = time.time()
    os.utime(pkg / "m2.py", (now, now))
    racy = _fresh_digest(pkg, cached=True)
    (pkg / "m2.py").write_text("thing = 4\n", encoding="utf-8")
    os.utime(pkg / "m2.py", (now, now))
    assert _fresh_digest(pkg, cached=True) != racy


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(
            st.integers(0, 3),
            st.sampled_from(["x = 1\n", "import veille.m3\n", "from . import m2\n", "# note\n"]),
            st.sampled_from([0.0, 30.0]),
        ),
        min_size=1,
        max_size=6,
    )
)
def test_the_cached_digest_is_the_uncached_one_after_any_edits(edits: list[tuple[int, str, float]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        pkg = _small_package(Path(tmp))
        for module, line, age in edits:
            with (pkg / f"m{module}.py").open("a", encoding="utf-8") as handle:
                handle.write(line)
            _age(pkg / f"m{module}.py", age)
            cached = _fresh_digest(pkg, cached=True)
            assert cached == _fresh_digest(pkg, cached=False)
