"""Import a claims table from CSV, Parquet or a DataFrame, long or wide, with validation.

Layouts
-------
* **long**: one row per claim, columns item, source, claim and optionally truth, split,
  weight (any names: pass ``columns={"item": "task", "source": "worker", …}``).
* **wide**: one row per item, an item column, optional truth and split columns, and one
  column per source whose cell is that source's claim (empty: no claim). The source columns
  are every other column unless ``columns["sources"]`` lists them.

Files may be gzip-compressed (the size cap applies to the decompressed bytes). Every value
is read as a string (claims are categorical; "1" and "1.0" differ unless a
normaliser of :mod:`core.fusion.normalise` says otherwise). Missing values (empty cells,
``None``, NaN in a DataFrame) are the empty string.

Errors and warnings
-------------------
Each refusal is a ``ValueError`` with one line naming the row (``row N`` counts data rows from
1, the header excluded; in a wide table, the item's row and the source's column):

* size: bytes, rows, columns or characters in one field over :class:`Caps`;
* encoding (``line N: not UTF-8 …``) and CSV structure (pandas' tokenizer line);
* a missing or repeated column, an empty item or source name, an empty claim (long layout);
* a weight that is not a finite non-negative number;
* two truths (or two splits) for one item;
* a repeated (item, source) pair (``duplicates="first"`` keeps the first and warns instead);
* an empty table.

Warnings (kept in :class:`ImportResult`, the table is still good): items with one claim (no
conflict to resolve), sources with one item (their accuracy is not identifiable), gold items
whose truth no source claims (unreachable under the item scope), items without truth when
some have one. Keeping the last good table is the caller's job (the page keeps it).
"""

from __future__ import annotations

import gzip
import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from core.fusion.claims import Claims

__all__ = ["Caps", "ImportResult", "claims_from_frame", "read_claims", "to_wide"]

_LONG_ROLES = ("item", "source", "claim", "truth", "split", "weight")
_WIDE_ROLES = ("item", "truth", "split")


@dataclass(frozen=True)
class Caps:
    """Size limits of an import (each refusal names the limit)."""

    max_bytes: int = 256 * 2**20
    max_rows: int = 10_000_000
    max_columns: int = 5_000
    max_field_chars: int = 1_000


@dataclass(frozen=True, eq=False)
class ImportResult:
    """A validated table: the claims, the warnings, and what was done to the input."""

    claims: Claims
    warnings: tuple[str, ...]
    layout: str
    columns: tuple[tuple[str, str], ...]
    n_rows: int
    n_duplicates_dropped: int
    rules: tuple[str, ...]


def _fail(msg: str) -> ValueError:
    return ValueError(" ".join(str(msg).split()))


def _decode(data: bytes, encoding: str) -> str:
    try:
        return data.decode("utf-8-sig" if encoding.lower() in ("utf-8", "utf8") else encoding)
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise _fail(f"line {line}: not {encoding} (byte 0x{data[exc.start]:02x} at offset "
                    f"{exc.start}); pass encoding=… or re-save as UTF-8") from None


def _read_bytes(source, caps: Caps) -> tuple[bytes, str]:
    if isinstance(source, bytes | bytearray):
        data, name = bytes(source), ""
    else:
        path = Path(source)
        if not path.is_file():
            raise _fail(f"no file at {path}")
        size = path.stat().st_size
        if size > caps.max_bytes:
            raise _fail(f"{path.name} is {size:,} bytes; the cap is {caps.max_bytes:,}")
        data, name = path.read_bytes(), path.name
    if len(data) > caps.max_bytes:
        raise _fail(f"the file is {len(data):,} bytes; the cap is {caps.max_bytes:,}")
    if data[:2] == b"\x1f\x8b":  # gzip: decompress at most the cap (+1 byte to see it)
        try:
            with gzip.GzipFile(fileobj=io.BytesIO(data)) as fh:
                data = fh.read(caps.max_bytes + 1)
        except (OSError, EOFError) as exc:
            raise _fail(f"not a readable gzip file: {exc}") from None
        if len(data) > caps.max_bytes:
            raise _fail(f"the file decompresses to more than {caps.max_bytes:,} bytes (the cap)")
        name = name.removesuffix(".gz")
    return data, name


def read_claims(source: str | Path | bytes | pd.DataFrame, *, layout: str = "long",
                columns: Mapping[str, object] | None = None, file_type: str | None = None,
                sep: str = ",", encoding: str = "utf-8", normalise: Sequence = (),
                scope: str = "auto", duplicates: str = "error",
                caps: Caps = Caps()) -> ImportResult:
    """Read a CSV or Parquet file (a path or its bytes) or a DataFrame into claims.

    Parameters
    ----------
    source : path, bytes or DataFrame
    layout : {"long", "wide"}
    columns : mapping, optional
        Role → column name (roles: item, source, claim, truth, split, weight in the long
        layout; item, truth, split and ``sources`` (a list) in the wide one). Roles left out
        default to the column of the same name when it exists; a role mapped to ``None`` is
        not read.
    file_type : {"csv", "parquet"}, optional
        Default: Parquet when the name ends ``.parquet``/``.pq`` or the bytes start ``PAR1``.
    sep, encoding : CSV options.
    normalise : sequence of normalisers (:mod:`core.fusion.normalise`), applied in order.
    scope : {"auto", "global", "item"}
        The claims' default candidate scope (:mod:`core.fusion.claims`).
    duplicates : {"error", "first"}
        A repeated (item, source) pair is refused, or all but its first row are dropped.
    caps : Caps

    Returns
    -------
    ImportResult

    Raises
    ------
    ValueError
        One line naming the row (see the module docstring).
    """
    if isinstance(source, pd.DataFrame):
        frame = source
    else:
        data, name = _read_bytes(source, caps)
        kind = file_type or ("parquet" if name.lower().endswith((".parquet", ".pq"))
                             or data[:4] == b"PAR1" else "csv")
        if kind == "parquet":
            try:
                frame = pd.read_parquet(io.BytesIO(data))
            except Exception as exc:  # pyarrow raises many types for a broken file
                raise _fail(f"not a readable Parquet file: {type(exc).__name__}: {exc}") \
                    from None
        elif kind == "csv":
            text = _decode(data, encoding)
            if not text.strip():
                raise _fail("the file is empty")
            try:
                frame = pd.read_csv(io.StringIO(text), sep=sep, dtype=str,
                                    keep_default_na=False, na_filter=False)
            except (pd.errors.ParserError, ValueError) as exc:
                raise _fail(f"CSV: {exc}") from None
        else:
            raise _fail(f"file_type must be 'csv' or 'parquet', got {file_type!r}")
    return claims_from_frame(frame, layout=layout, columns=columns, normalise=normalise,
                             scope=scope, duplicates=duplicates, caps=caps)


def _as_str(col: pd.Series) -> np.ndarray:
    """Column values as Python strings, missing values (None, NaN, NA) as ''."""
    missing = col.isna().to_numpy()
    values = col.to_numpy(dtype=object)
    if missing.any():
        values = np.where(missing, "", values)
    if pd.api.types.infer_dtype(values, skipna=False) in ("string", "empty"):
        return values
    return np.array([v if isinstance(v, str) else str(v) for v in values], dtype=object)


def _mapping(frame: pd.DataFrame, layout: str, columns) -> dict[str, object]:
    columns = dict(columns or {})
    roles = _LONG_ROLES if layout == "long" else (*_WIDE_ROLES, "sources")
    unknown = sorted(set(columns) - set(roles))
    if unknown:
        raise _fail(f"unknown column role(s) {unknown}; the {layout} layout has {list(roles)}")
    names = [str(c) for c in frame.columns]
    dup = sorted({c for c in names if names.count(c) > 1})
    if dup:
        raise _fail(f"header: column {dup[0]!r} appears more than once")
    out: dict[str, object] = {}
    for role in roles:
        if role == "sources":
            continue
        col = columns.get(role, role if role in names else None)
        if col is not None:
            if str(col) not in names:
                raise _fail(f"header: no column {col!r} for the {role} "
                            f"(columns: {', '.join(names[:12])}{' …' if len(names) > 12 else ''})")
            out[role] = str(col)
    required = ("item", "source", "claim") if layout == "long" else ("item",)
    for role in required:
        if role not in out:
            raise _fail(f"header: no {role} column; map one with columns={{'{role}': …}}")
    if layout == "wide":
        taken = set(out.values())
        if "sources" in columns:
            srcs = [str(c) for c in columns["sources"]]
            missing = [c for c in srcs if c not in names]
            if missing:
                raise _fail(f"header: no source column {missing[0]!r}")
        else:
            srcs = [c for c in names if c not in taken]
        if not srcs:
            raise _fail("header: a wide table needs at least one source column")
        out["sources"] = srcs
    return out


def _first_row(mask: np.ndarray, rows: np.ndarray) -> int:
    return int(rows[int(np.flatnonzero(mask)[0])])


def claims_from_frame(frame: pd.DataFrame, *, layout: str = "long",
                      columns: Mapping[str, object] | None = None, normalise: Sequence = (),
                      scope: str = "auto", duplicates: str = "error",
                      caps: Caps = Caps()) -> ImportResult:
    """Validate and encode a DataFrame (see :func:`read_claims` for the options)."""
    if layout not in ("long", "wide"):
        raise _fail(f"layout must be 'long' or 'wide', got {layout!r}")
    if duplicates not in ("error", "first"):
        raise _fail(f"duplicates must be 'error' or 'first', got {duplicates!r}")
    if frame.shape[1] > caps.max_columns:
        raise _fail(f"{frame.shape[1]:,} columns; the cap is {caps.max_columns:,}")
    if len(frame) > caps.max_rows:
        raise _fail(f"{len(frame):,} rows; the cap is {caps.max_rows:,}")
    if len(frame) == 0:
        raise _fail("the table has no rows")
    long_names = [str(c) for c in frame.columns if len(str(c)) > caps.max_field_chars]
    if long_names:  # a wide table's source names are header cells: the same cap
        raise _fail(f"header: a column name of {len(long_names[0]):,} characters; the cap is "
                    f"{caps.max_field_chars:,}")
    m = _mapping(frame, layout, columns)
    used = [c for r, c in m.items() if r != "sources"] + list(m.get("sources", []))
    cols = {c: _as_str(frame[c]) for c in used}
    for c in used:
        lengths = pd.Series(cols[c], dtype=object).str.len().to_numpy()
        over = lengths > caps.max_field_chars
        if over.any():
            r = int(np.flatnonzero(over)[0])
            raise _fail(f"row {r + 1}, column {c!r}: {int(lengths[r]):,} characters; the cap "
                        f"is {caps.max_field_chars:,}")
    rows = np.arange(1, len(frame) + 1)
    item = cols[m["item"]]
    if (item == "").any():
        raise _fail(f"row {_first_row(item == '', rows)}: empty item")
    extra = {r: cols[m[r]] for r in ("truth", "split") if r in m}
    if layout == "wide":
        srcs = m["sources"]
        cells = np.column_stack([cols[c] for c in srcs]).ravel()
        has = cells != ""
        n_rows_wide = len(frame)
        rows = np.repeat(rows, len(srcs))[has]
        src_names = np.tile(np.asarray(srcs, object), n_rows_wide)[has]
        claim, source = cells[has], src_names
        item = np.repeat(item, len(srcs))[has]
        extra = {r: np.repeat(v, len(srcs))[has] for r, v in extra.items()}
        weight = None
        if claim.size == 0:
            raise _fail("the table has no claims (every source cell is empty)")
        if claim.size > caps.max_rows:
            raise _fail(f"{claim.size:,} claims; the cap is {caps.max_rows:,}")
    else:
        source, claim = cols[m["source"]], cols[m["claim"]]
        if (source == "").any():
            raise _fail(f"row {_first_row(source == '', rows)}: empty source")
        if (claim == "").any():
            raise _fail(f"row {_first_row(claim == '', rows)}: empty claim (drop the row, or "
                        "use the wide layout where an empty cell means no claim)")
        weight = None
        if "weight" in m:
            raw = cols[m["weight"]]
            w = pd.to_numeric(pd.Series(raw, dtype=object), errors="coerce").to_numpy(float)
            bad = ~np.isfinite(w) | (w < 0)
            if bad.any():
                r = int(np.flatnonzero(bad)[0])
                raise _fail(f"row {rows[r]}, column {m['weight']!r}: weight {raw[r]!r} is not a "
                            "finite non-negative number")
            weight = w
    # normalisers (claims and truths; item codes only group the rows)
    rules = []
    truth = extra.get("truth")
    if normalise:
        item_code = pd.factorize(item)[0]
        for norm in normalise:
            if not hasattr(norm, "apply") or not hasattr(norm, "rule"):
                raise _fail(f"{norm!r} is no normaliser (core.fusion.normalise)")
            claim, truth = norm.apply(item_code, claim, truth)
            rules.append(norm.rule)
        if (claim == "").any():
            raise _fail(f"row {_first_row(claim == '', rows)}: the claim is empty after "
                        "normalising")
    # repeated (item, source) pairs
    key = pd.MultiIndex.from_arrays([item, source])
    dup = key.duplicated(keep="first")
    warnings: list[str] = []
    n_dup = int(dup.sum())
    if n_dup:
        r = int(np.flatnonzero(dup)[0])
        earlier = int(np.flatnonzero((item == item[r]) & (source == source[r]))[0])
        where = f"first repeat at row {rows[r]}, of row {rows[earlier]}"
        if duplicates == "error":
            raise _fail(f"row {rows[r]}: source {source[r]!r} already claimed item {item[r]!r} "
                        f"at row {rows[earlier]} (one claim per source and item; or "
                        "duplicates='first')")
        keep = ~dup
        item, source, claim, rows = item[keep], source[keep], claim[keep], rows[keep]
        truth = None if truth is None else truth[keep]
        extra = {r_: v[keep] for r_, v in extra.items()}
        weight = None if weight is None else weight[keep]
        warnings.append(f"{n_dup:,} repeated (item, source) row(s) dropped, the first "
                        f"kept ({where})")
    if truth is not None:
        extra["truth"] = truth
    # one truth / one split per item
    per_item: dict[str, np.ndarray] = {}
    for role, values in extra.items():
        s = pd.DataFrame({"item": item, "v": values})
        given = s[s["v"] != ""]
        first = given.drop_duplicates("item").set_index("item")["v"]
        clash = given["v"].to_numpy() != first.reindex(given["item"]).to_numpy()
        if clash.any():
            r = int(given.index[int(np.flatnonzero(clash)[0])])
            raise _fail(f"row {rows[r]}: item {item[r]!r} has a second {role} "
                        f"{values[r]!r} (first: {first[item[r]]!r})")
        per_item[role] = first
    items = Claims.names(item)
    sources = Claims.names(source)
    t_item = per_item.get("truth")
    classes = Claims.names(np.concatenate([claim, [] if t_item is None
                                           else t_item.to_numpy(object)]))
    item_idx = pd.Index(items)
    i_code = item_idx.get_indexer(item)
    s_code = pd.Index(sources).get_indexer(source)
    c_code = pd.Index(classes).get_indexer(claim)
    truth_codes = split_codes = None
    splits: tuple[str, ...] = ()
    if t_item is not None:
        truth_codes = np.full(len(items), -1, np.int64)
        truth_codes[item_idx.get_indexer(t_item.index)] = \
            pd.Index(classes).get_indexer(t_item.to_numpy(object))
    if "split" in per_item:
        sp = per_item["split"]
        splits = Claims.names(sp.to_numpy(object))
        split_codes = np.full(len(items), -1, np.int64)
        split_codes[item_idx.get_indexer(sp.index)] = pd.Index(splits).get_indexer(
            sp.to_numpy(object))
    claims = Claims(item=i_code, source=s_code, claim=c_code, items=items, sources=sources,
                    classes=classes, truth=truth_codes, split=split_codes, splits=splits,
                    weight=weight, scope=scope)
    warnings += _warnings(claims, "truth" in m)
    mapping = tuple((r, c if isinstance(c, str) else ",".join(c)) for r, c in m.items())
    return ImportResult(claims=claims, warnings=tuple(warnings), layout=layout,
                        columns=mapping, n_rows=len(frame), n_duplicates_dropped=n_dup,
                        rules=tuple(rules))


def _examples(names: tuple[str, ...], idx: np.ndarray, k: int = 3) -> str:
    shown = ", ".join(repr(names[i]) for i in idx[:k])
    return shown + (" …" if idx.size > k else "")


def _warnings(claims: Claims, truth_column: bool) -> list[str]:
    out = []
    one = np.flatnonzero(claims.claims_per_item() == 1)
    if one.size:
        out.append(f"{one.size:,} item(s) with one claim (nothing to resolve): "
                   f"{_examples(claims.items, one)}")
    lone = np.flatnonzero(claims.items_per_source() == 1)
    if lone.size:
        out.append(f"{lone.size:,} source(s) with one item (accuracy not identifiable): "
                   f"{_examples(claims.sources, lone)}")
    if truth_column:
        gold = claims.gold
        if not gold.any():
            out.append("the truth column is empty for every item")
        elif not gold.all():
            out.append(f"{int((~gold).sum()):,} of {claims.n_items:,} items have no truth "
                       "(scored on the rest)")
        if gold.any():
            cand = claims.candidates("item")
            where = cand.lookup(np.flatnonzero(gold), claims.truth[gold])
            miss = np.flatnonzero(gold)[where < 0]
            if miss.size:
                out.append(f"{miss.size:,} gold item(s) whose truth no source claims: "
                           f"{_examples(claims.items, miss)}")
    return out


def to_wide(claims: Claims, *, item_column: str = "item") -> pd.DataFrame:
    """The wide layout: one row per item, ``item_column``, truth and split (when present),
    then one column per source ('' = no claim). Weights are not representable and refused."""
    if claims.weight is not None:
        raise _fail("a weighted table has no wide layout (weights are per claim)")
    reserved = {item_column, "truth", "split"}
    clash = sorted(reserved & set(claims.sources))
    if clash:
        raise _fail(f"source {clash[0]!r} collides with a reserved column; pick another "
                    "item_column or rename the source")
    grid = np.full((claims.n_items, claims.n_sources), "", dtype=object)
    grid[claims.item, claims.source] = np.asarray(claims.classes, object)[claims.claim]
    out = {item_column: np.asarray(claims.items, object)}
    if claims.truth is not None:
        out["truth"] = np.asarray((*claims.classes, ""), object)[claims.truth]
    if claims.split is not None:
        out["split"] = np.asarray((*claims.splits, ""), object)[claims.split]
    frame = pd.DataFrame(out)
    return pd.concat([frame, pd.DataFrame(grid, columns=list(claims.sources))], axis=1)
