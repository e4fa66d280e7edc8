"""Arrow arrays and tables built from Python values without importing pandas.

``pa.array`` of a Python list, ``pa.Table.from_pylist``/``from_pydict``, ``pa.table`` of a dict and
``Schema.empty_table()`` all ask pyarrow's pandas shim whether the values are a pandas object, which
imports pandas (0.12–0.3 s of CPU) although no step of a night uses it (issue 40 item 1). Here each
column is assembled from its buffers (``pa.Array.from_buffers``), for exactly the types the
warehouse and the store declare; the result equals what ``pa.array(values, type)`` gives (same type,
same values, same NULLs: checked by ``tests/test_arrowrows.py`` against pyarrow's own conversion).
A value pyarrow refuses raises ``TypeError`` or ``ValueError`` here too; of pyarrow's looser readings
only the numeric ones are kept (a float truncated to an integer, a number as days or microseconds):
a string or bytes given for a list is refused here, never split into characters. A table's text
column past one array's 32-bit offsets (2 GiB: an ingest batch of very large documents) is split
into chunks of consecutive rows, as pyarrow splits it. pandas stays available to whoever asks for it (``veille.warehouse.api``'s DataFrames).
"""

from __future__ import annotations

from array import array as pyarray
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, date, datetime
from typing import Any

import pyarrow as pa

__all__ = ["MAX_ARRAY_BYTES", "column", "empty_table", "table_from_columns", "table_from_rows", "table_rows"]

_EPOCH_DATE = date(1970, 1, 1)
_EPOCH = datetime(1970, 1, 1)
_FIXED: dict[pa.DataType, str] = {pa.int32(): "i", pa.int64(): "q", pa.uint64(): "Q", pa.float64(): "d"}


def _validity(values: Sequence[object]) -> pa.Buffer | None:
    """The validity bitmap (bit set = a value), or None when nothing is NULL (as pyarrow does)."""
    if all(v is not None for v in values):
        return None
    bits = bytearray((len(values) + 7) // 8)
    for i, v in enumerate(values):
        if v is not None:
            bits[i >> 3] |= 1 << (i & 7)
    return pa.py_buffer(bytes(bits))


def _bool_bits(values: Sequence[object]) -> pa.Buffer:
    bits = bytearray((len(values) + 7) // 8)
    for i, v in enumerate(values):
        if v is None:
            continue
        if not isinstance(v, bool):
            raise TypeError(f"valeur non booléenne : {type(v).__name__}")
        if v:
            bits[i >> 3] |= 1 << (i & 7)
    return pa.py_buffer(bytes(bits))


def _int(v: object) -> int:
    # as pyarrow: a bool is refused, a float truncated toward zero (NaN and infinities refused)
    if isinstance(v, bool) or not isinstance(v, int | float):
        raise TypeError(f"valeur non entière : {type(v).__name__}")
    return int(v)


def _float(v: object) -> float:
    if not isinstance(v, int | float):  # a bool is accepted (1.0), as pyarrow does
        raise TypeError(f"valeur non numérique : {type(v).__name__}")
    if isinstance(v, int) and not -(2**63) <= v < 2**63:  # pyarrow reads an int as an int64 first
        raise ValueError(f"entier hors de int64 : {v}")
    return float(v)


def _days(v: object) -> int:
    if isinstance(v, datetime):  # its calendar date, as pyarrow does
        v = v.date()
    if isinstance(v, date):
        return (v - _EPOCH_DATE).days
    return _int(v)  # a number of days, as pyarrow takes it


def _micros(v: object) -> int:
    """Microseconds since the epoch, UTC; a naive datetime is read as UTC, as pyarrow does."""
    if not isinstance(v, datetime):
        if isinstance(v, date):
            raise TypeError("une date n'est pas un horodatage")
        return _int(v)  # a number of microseconds, as pyarrow takes it
    if v.tzinfo is not None and v.utcoffset() is not None:
        v = v.astimezone(UTC).replace(tzinfo=None)
    delta = v.replace(tzinfo=None) - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def _fixed(values: Sequence[object], code: str, convert: Callable[[object], float | int]) -> pa.Buffer:
    try:
        data = pyarray(code, [0 if v is None else convert(v) for v in values])
    except OverflowError as exc:  # an infinity or out of range: pyarrow raises ArrowInvalid, a ValueError
        raise ValueError(str(exc)) from exc
    return pa.py_buffer(data.tobytes())


# One array's 32-bit offsets hold at most this many bytes of text or items (Arrow's ``string`` and
# ``list``); a table's text column past it is split into chunks, as pyarrow's own conversion does.
MAX_ARRAY_BYTES = 2**31 - 1


def _offsets(lengths: Iterable[int]) -> pa.Buffer:
    offsets = pyarray("i", [0])
    total = 0
    for length in lengths:
        total += length
        if total > MAX_ARRAY_BYTES:
            raise ValueError("plus de 2 Gio dans un tableau Arrow : trop pour ses positions 32 bits")
        offsets.append(total)
    return pa.py_buffer(offsets.tobytes())


def _encoded(values: Sequence[object]) -> list[bytes]:
    encoded: list[bytes] = []
    for v in values:
        if v is None:
            encoded.append(b"")
        elif isinstance(v, str):
            encoded.append(v.encode("utf-8"))
        elif isinstance(v, bytes):  # taken as UTF-8 text, as pyarrow does
            encoded.append(v.decode("utf-8").encode("utf-8"))
        else:
            raise TypeError(f"valeur non textuelle : {type(v).__name__}")
    return encoded


def _string_array(values: Sequence[object], encoded: Sequence[bytes]) -> pa.Array:
    buffers = [_validity(values), _offsets(map(len, encoded)), pa.py_buffer(b"".join(encoded))]
    return pa.Array.from_buffers(pa.string(), len(values), buffers)


def _strings(values: Sequence[object]) -> pa.Array:
    return _string_array(values, _encoded(values))


def _string_chunks(values: Sequence[object]) -> list[pa.Array]:
    """``values`` as string arrays of consecutive rows, each within :data:`MAX_ARRAY_BYTES` (one
    array unless the column holds more; a single value past it is refused)."""
    encoded = _encoded(values)
    chunks: list[pa.Array] = []
    start = total = 0
    for i, data in enumerate(encoded):
        if total + len(data) > MAX_ARRAY_BYTES and i > start:
            chunks.append(_string_array(values[start:i], encoded[start:i]))
            start, total = i, 0
        total += len(data)
    chunks.append(_string_array(values[start:], encoded[start:]))
    return chunks


def _table_column(values: Sequence[object], type_: pa.DataType) -> pa.Array | pa.ChunkedArray:
    """A table's column: :func:`column`, a text column past one array's offsets in chunks."""
    if type_ == pa.string():
        values = values if isinstance(values, list) else list(values)
        chunks = _string_chunks(values)
        return chunks[0] if len(chunks) == 1 else pa.chunked_array(chunks, type_)
    return column(values, type_)


def _items(v: object) -> list[Any]:
    if isinstance(v, list | tuple):
        return list(v)
    raise TypeError(f"valeur non liste : {type(v).__name__}")


def _pairs(v: object) -> list[tuple[Any, Any]]:
    if isinstance(v, Mapping):
        return list(v.items())
    if isinstance(v, list | tuple) and all(isinstance(p, tuple) and len(p) == 2 for p in v):
        return list(v)
    raise TypeError(f"valeur non dictionnaire : {type(v).__name__}")


def _nested(values: Sequence[object], type_: pa.DataType) -> pa.Array:
    validity = _validity(values)
    if isinstance(type_, pa.MapType):
        pairs = [[] if v is None else _pairs(v) for v in values]
        keys = [k for p in pairs for k, _ in p]
        if any(k is None for k in keys):
            raise ValueError("clé NULL dans une table d'association")
        entries = pa.StructArray.from_arrays(
            [column(keys, type_.key_type), column([x for p in pairs for _, x in p], type_.item_type)],
            fields=[type_.key_field, type_.item_field],
        )
        return pa.Array.from_buffers(
            type_, len(values), [validity, _offsets(map(len, pairs))], children=[entries]
        )
    items = [[] if v is None else _items(v) for v in values]
    child = column([x for i in items for x in i], type_.value_type)
    return pa.Array.from_buffers(type_, len(values), [validity, _offsets(map(len, items))], children=[child])


def column(values: Sequence[object], type_: pa.DataType) -> pa.Array:
    """``values`` (None = NULL) as an Arrow array of ``type_``, equal to ``pa.array(values, type_)``."""
    values = values if isinstance(values, list) else list(values)
    n = len(values)
    if type_ == pa.string():
        return _strings(values)
    if type_ in _FIXED:
        convert = _float if type_ == pa.float64() else _int
        return pa.Array.from_buffers(type_, n, [_validity(values), _fixed(values, _FIXED[type_], convert)])
    if type_ == pa.bool_():
        return pa.Array.from_buffers(type_, n, [_validity(values), _bool_bits(values)])
    if type_ == pa.date32():
        return pa.Array.from_buffers(type_, n, [_validity(values), _fixed(values, "i", _days)])
    if isinstance(type_, pa.TimestampType) and type_.unit == "us" and type_.tz in (None, "UTC"):
        return pa.Array.from_buffers(type_, n, [_validity(values), _fixed(values, "q", _micros)])
    if isinstance(type_, pa.MapType | pa.ListType):
        return _nested(values, type_)
    raise NotImplementedError(f"type Arrow non pris en charge sans pandas : {type_}")


def table_from_columns(columns: Mapping[str, Sequence[object]], schema: pa.Schema) -> pa.Table:
    """``pa.table(columns, schema=schema)``: one list per field (a missing one is all NULL)."""
    n = len(next(iter(columns.values()), []))
    arrays = [_table_column(columns.get(f.name, [None] * n), f.type) for f in schema]
    return pa.Table.from_arrays(arrays, schema=schema)


def table_from_rows(rows: Sequence[Mapping[str, object]], schema: pa.Schema) -> pa.Table:
    """``pa.Table.from_pylist(rows, schema=schema)``: a missing key is NULL, an extra key ignored."""
    arrays = [_table_column([row.get(f.name) for row in rows], f.type) for f in schema]
    return pa.Table.from_arrays(arrays, schema=schema)


def empty_table(schema: pa.Schema) -> pa.Table:
    """``schema.empty_table()``: zero rows, the same schema and metadata."""
    return pa.Table.from_arrays([pa.nulls(0, f.type) for f in schema], schema=schema)


def _values(values: pa.ChunkedArray) -> list[Any]:
    type_ = values.type
    if not isinstance(type_, pa.TimestampType) or type_.tz is None or type_.unit == "ns":
        return values.to_pylist()
    # A zoned timestamp's ``as_py`` asks the shim whether pandas is there (for nanoseconds): read
    # the same instants unzoned and put the zone back as pyarrow does (UTC, then the type's zone).
    zone = pa.lib.string_to_tzinfo(type_.tz)
    naive = values.cast(pa.timestamp(type_.unit)).to_pylist()
    return [None if v is None else v.replace(tzinfo=UTC).astimezone(zone) for v in naive]


def table_rows(table: pa.Table) -> list[dict[str, Any]]:
    """``table.to_pylist()`` (one dict per row), without pyarrow asking for pandas."""
    columns = [_values(c) for c in table.columns]
    if not columns:
        return [{} for _ in range(table.num_rows)]
    return [dict(zip(table.column_names, row, strict=True)) for row in zip(*columns, strict=True)]
