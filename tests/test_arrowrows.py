"""Arrow tables built without pandas (veille/arrowrows.py, issue 40 item 1) equal pyarrow's own.

For random values of every column type the warehouse and the store declare (NULLs included), the
columns, tables and rows built by ``veille.arrowrows`` equal what ``pa.array``, ``from_pylist``,
``empty_table`` and ``to_pylist`` give: same types, schema, metadata, values, same Parquet bytes;
a value pyarrow refuses is refused too. And none of it imports pandas in a fresh interpreter.
"""

from __future__ import annotations

import io
import re
import subprocess
import sys
from datetime import UTC, timedelta, timezone
from functools import cache
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from veille import arrowrows
from veille.arrowrows import column, empty_table, table_from_columns, table_from_rows, table_rows
from veille.graders.batch import SCORES_SCHEMA
from veille.store import conversions, ingest, section_rows
from veille.warehouse import dictionary
from veille.warehouse.schema import TABLES

SCHEMAS: dict[str, pa.Schema] = {
    **TABLES,
    "grader scores file": SCORES_SCHEMA,
    "warehouse dictionary": dictionary._SCHEMA,
    "store documents": ingest._DOC_SCHEMA,
    "store touch": ingest._TOUCH_SCHEMA,
    "store ingest log": ingest._LOG_SCHEMA,
    "store sections": section_rows._SECTION_SCHEMA,
    "store digests": section_rows._DIGEST_SCHEMA,
    "store conversions": conversions._CONVERSION_SCHEMA,
}
TYPES = sorted({f.type for s in SCHEMAS.values() for f in s}, key=str)
ZONES = st.sampled_from(
    [
        None,
        UTC,
        timezone(timedelta(hours=5, minutes=30)),
        timezone(-timedelta(hours=8)),
        ZoneInfo("Europe/Paris"),
    ]
)
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# Strategies built once per type and per schema, then reused: the tests draw from them in every
# example, and building a strategy tree again (hypothesis's recursive properties of each one_of, list
# and dictionary) cost more than drawing. A strategy is an immutable description of values.
@cache
def values_of(type_: pa.DataType) -> st.SearchStrategy[Any]:
    """One value of ``type_`` as a row producer would give it, or None."""
    if type_ == pa.string():
        base: st.SearchStrategy[Any] = st.text(max_size=12)
    elif type_ == pa.bool_():
        base = st.booleans()
    elif type_ == pa.int32():
        base = st.integers(-(2**31), 2**31 - 1)
    elif type_ == pa.int64():
        base = st.integers(-(2**63), 2**63 - 1)
    elif type_ == pa.uint64():
        base = st.integers(0, 2**64 - 1)
    elif type_ == pa.float64():
        base = st.floats() | st.integers(-(2**53), 2**53)
    elif type_ == pa.date32():
        base = st.dates()
    elif isinstance(type_, pa.TimestampType):
        base = st.datetimes(timezones=ZONES, min_value=_year(1900), max_value=_year(2200))
    elif isinstance(type_, pa.MapType):
        base = st.dictionaries(st.text(max_size=6), values_of(type_.item_type), max_size=4)
    elif isinstance(type_, pa.ListType):
        base = st.lists(values_of(type_.value_type), max_size=4) | st.tuples(values_of(type_.value_type))
    else:
        raise AssertionError(f"a declared type without a strategy: {type_}")
    return st.none() | base


@cache
def _columns(type_: pa.DataType) -> st.SearchStrategy[list[Any]]:
    return st.lists(values_of(type_), max_size=12)


def _year(year: int) -> Any:
    from datetime import datetime

    return datetime(year, 1, 1)


def test_every_declared_type_has_values_and_builds() -> None:
    for type_ in TYPES:
        assert column([None], type_).type == type_


@pytest.mark.parametrize("type_", TYPES, ids=str)
@SETTINGS
@given(data=st.data())
def test_a_column_equals_pyarrows_conversion(type_: pa.DataType, data: st.DataObject) -> None:
    values = data.draw(_columns(type_))
    built, expected = column(values, type_), pa.array(values, type_)
    assert _same(built, expected), (built, expected)


def _same(built: pa.Array, expected: pa.Array) -> bool:
    """Equal type, NULLs and values; NaN equal to NaN (``equals`` says a NaN differs from itself)."""
    if built.type != expected.type or built.null_count != expected.null_count:
        return False
    return built.equals(expected) or _parquet(pa.table({"c": built})) == _parquet(pa.table({"c": expected}))


@cache
def _rows(name: str) -> st.SearchStrategy[list[dict[str, Any]]]:
    schema = SCHEMAS[name]
    # A row may miss a key (NULL) and carry one the schema lacks (ignored), as from_pylist reads them.
    row = st.fixed_dictionaries(
        {}, optional={f.name: values_of(f.type) for f in schema} | {"not_a_column": st.integers()}
    )
    return st.lists(row, max_size=6)


def _parquet(table: pa.Table) -> bytes | str:
    """The Parquet file's bytes, or the writer's refusal (a NULL in a non-nullable column)."""
    out = io.BytesIO()
    try:
        pq.write_table(table, out)
    except pa.ArrowInvalid as exc:
        return str(exc)
    return out.getvalue()


@pytest.mark.parametrize("name", sorted(SCHEMAS))
@SETTINGS
@given(data=st.data())
def test_tables_and_rows_equal_pyarrows(name: str, data: st.DataObject) -> None:
    schema = SCHEMAS[name]
    rows = data.draw(_rows(name))
    built, expected = table_from_rows(rows, schema), pa.Table.from_pylist(rows, schema=schema)
    assert built.schema.equals(expected.schema, check_metadata=True)
    assert all(_same(b, e) for b, e in zip(built.columns, expected.columns, strict=True))
    assert _parquet(built) == _parquet(expected)
    columns = {f.name: [r.get(f.name) for r in rows] for f in schema}
    assert _parquet(table_from_columns(columns, schema)) == _parquet(pa.table(columns, schema=schema))
    # back to Python: the same rows (repr: a NaN equals itself there), the same time zone objects
    back, expected_back = table_rows(built), expected.to_pylist()
    assert repr(back) == repr(expected_back)
    assert [[type(getattr(v, "tzinfo", None)) for v in r.values()] for r in back] == [
        [type(getattr(v, "tzinfo", None)) for v in r.values()] for r in expected_back
    ]


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_an_empty_table_equals_the_schemas_own(name: str) -> None:
    schema = SCHEMAS[name]
    assert empty_table(schema).equals(schema.empty_table(), check_metadata=True)
    assert _parquet(empty_table(schema)) == _parquet(schema.empty_table())


WRONG = [
    True,
    1,
    1.5,
    -1,
    2**70,
    float("nan"),
    float("inf"),
    "x",
    b"x",
    [1],
    {"a": 1},
    (1,),
    [("a", 1)],
    [None],
]


@pytest.mark.parametrize("type_", TYPES, ids=str)
def test_a_value_pyarrow_refuses_is_refused_and_one_taken_is_read_alike(type_: pa.DataType) -> None:
    for value in [*WRONG, _year(2000), _year(2000).date()]:
        if isinstance(type_, pa.ListType) and isinstance(value, str | bytes):
            with pytest.raises(TypeError):  # pyarrow splits it into characters or bytes: refused here
                column([value], type_)
            continue
        if isinstance(type_, pa.MapType) and value == [None]:
            with pytest.raises(TypeError):  # pyarrow 26 aborts the process on it
                column([value], type_)
            continue
        try:
            expected = pa.array([value], type_)
        except (pa.ArrowException, TypeError, ValueError, OverflowError):
            with pytest.raises((TypeError, ValueError)):
                column([value], type_)
            continue
        assert _same(column([value], type_), expected), (type_, value)


def test_building_reading_and_empty_tables_import_no_pandas() -> None:
    script = """
import sys
from functools import cache
from datetime import UTC, date, datetime
from veille.arrowrows import column, empty_table, table_from_rows, table_rows
from veille.warehouse.schema import TABLES
one = {"string": "x", "int32": 1, "int64": 1, "uint64": 1, "double": 1.5, "bool": True,
       "date32[day]": date(2026, 1, 1), "timestamp[us, tz=UTC]": datetime(2026, 1, 1, tzinfo=UTC),
       "timestamp[us]": datetime(2026, 1, 1)}
def value(t):
    if isinstance(t, type(TABLES["runs"].field("models").type)):
        return {"k": value(t.item_type)}
    if hasattr(t, "value_type"):
        return [value(t.value_type), None]
    return one[str(t)]
for schema in TABLES.values():
    table = table_from_rows([{f.name: value(f.type) for f in schema}, {}], schema)
    assert table_rows(table)[0]
    empty_table(schema)
print("pandas" in sys.modules)
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "False"


# The calls that ask pyarrow's pandas shim (and so import pandas) when given Python values.
SHIM_CALLS = re.compile(
    r"\bpa\.(array|table|scalar|repeat)\(|\.from_pylist\(|\.from_pydict\(|\.empty_table\("
)


def test_no_module_of_the_package_builds_arrow_from_python_values_through_pyarrows_shim() -> None:
    package = Path(__file__).resolve().parents[1] / "veille"
    found = [
        f"{path.relative_to(package)}:{n}: {line.strip()}"
        for path in sorted(package.rglob("*.py"))
        if path.name != "arrowrows.py"
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if SHIM_CALLS.search(line.split("#", 1)[0])
    ]
    assert not found, "use veille.arrowrows instead:\n" + "\n".join(found)


@settings(max_examples=60, deadline=None)
@given(
    texts=st.lists(st.one_of(st.none(), st.text(max_size=12)), min_size=1, max_size=30),
    limit=st.integers(48, 120),  # each value (12 characters, 4 bytes at most) fits one array
)
def test_a_text_column_past_one_arrays_offsets_is_chunked_as_pyarrow_chunks_it(
    texts: list[str | None], limit: int
) -> None:
    """Past 2 GiB of text a table's column is split into chunks of consecutive rows, each within
    one array's 32-bit offsets (pyarrow's own conversion chunks it too): the same limit made small."""
    schema = pa.schema([pa.field("body", pa.string())])
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(arrowrows, "MAX_ARRAY_BYTES", limit)
        built = table_from_rows([{"body": t} for t in texts], schema)
    body = built.column("body")
    assert built.schema == schema
    assert body.to_pylist() == texts
    assert all(sum(len(v.encode("utf-8")) for v in chunk.to_pylist() if v) <= limit for chunk in body.chunks)
    total = sum(len(t.encode("utf-8")) for t in texts if t)
    assert (body.num_chunks > 1) == (total > limit)
