"""A CSV trace's rows as numbers, in bounded memory: read line by line and parsed by numpy
``CSV_BLOCK`` rows at a time (a 64 MB trace, 2.25 million rows, took 1.4 GB as lists of strings;
430 MB so).  ``commands.read_trace`` checks what the numbers mean."""

from __future__ import annotations

import csv
import io

import numpy as np

from ..errors import MotionFileError

CSV_BLOCK = 65536  # trace rows parsed at once


def read_csv_samples(text: str, path, columns: tuple, check_rate) -> tuple[np.ndarray, float, np.ndarray]:
    """(samples [T, len(columns)], rate, each sample's line number [T]) of a CSV trace's ``text``:
    ``# rate: 10`` comments (``check_rate(rate, path, line)`` refuses one out of range), a header
    starting with the first column's name, rows of numbers.  MotionFileError names ``path`` and the
    line of the first problem."""
    head = columns[0].lower() + ","
    rate, blocks, numbers, rows, where = 10.0, [], [], [], []
    n = 0
    for n, line in enumerate(io.StringIO(text, newline=None), 1):  # line by line (any line ending), never a list
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith("#"):
            key, _, value = stripped[1:].partition(":")
            if key.strip().lower() == "rate":
                try:
                    rate = float(value)
                except ValueError:
                    raise MotionFileError(path, f"bad rate {value.strip()!r}", n) from None
                check_rate(rate, path, n)
            continue
        if stripped.replace(" ", "").lower().startswith(head):
            continue  # header
        rows.append(stripped)
        where.append(n)
        if len(rows) == CSV_BLOCK:
            blocks.append(_block(rows, where, path, columns))
            numbers.append(np.array(where))
            rows, where = [], []
    if rows:
        blocks.append(_block(rows, where, path, columns))
        numbers.append(np.array(where))
    if not blocks:
        raise MotionFileError(path, "empty trace: no control samples", n or 1)
    return np.concatenate(blocks), rate, np.concatenate(numbers)


def _block(rows: list, where: list, path, columns: tuple) -> np.ndarray:
    """[len(rows), width] floats of CSV rows (line numbers ``where``), or MotionFileError naming the
    first bad line."""
    width, text = len(columns), ",".join(rows)
    if '"' not in text and all(r.count(",") == width - 1 for r in rows):
        try:
            return np.array(text.split(","), dtype=float).reshape(-1, width)
        except ValueError:
            pass  # a value that is not a number: found below, with its line
    try:
        parsed = list(csv.reader(rows))  # quoted values, or a problem to name
    except csv.Error as exc:  # an unbalanced quote
        raise MotionFileError(path, f"not comma-separated numbers ({exc})", where[0]) from None
    for row, n in zip(parsed, where):
        if len(row) != width:
            raise MotionFileError(path, f"{len(row)} values, expected {width} {columns}", n)
        for v in row:
            try:
                float(v)
            except ValueError:
                raise MotionFileError(path, f"non-numeric value {v.strip()!r}", n) from None
    return np.array(parsed, dtype=float).reshape(-1, width)
