"""Exponentials, logarithms, powers and inverse trigonometric functions that give the same bits on
every x86-64 CPU, for everything a model is trained from.

numpy runs float64 ``exp``, ``log``, ``log1p``, ``expm1``, ``power``, ``arctan2``, ``arccos`` and
``arcsin`` (and float32 ``arctan2``) through AVX-512 code on CPUs that have it, which rounds the
last bit differently from the code other CPUs run (``sin``, ``cos``, ``sqrt`` and the arithmetic
agree).  Measured: every engine but the field trained another model on an AVX-512 machine than on
an AVX2 one from the same clips and seed (``tests/test_reproducible.py``).  These compute in long
double (x87, never dispatched to SIMD code) and round back to the input's float type; where long
double is double (Windows, Arm) they are numpy's own.  Costs: 4-30x numpy's time per element,
tens of milliseconds per million elements.
"""

from __future__ import annotations

import numpy as np

_LONG = np.longdouble


def _exact(ufunc):
    def fn(*args):
        arrays = [np.asarray(a) for a in args]
        kind = np.result_type(*[a.dtype if a.dtype.kind == "f" else np.float64 for a in arrays])
        out = ufunc(*[a.astype(_LONG) for a in arrays])
        return out.astype(kind) if isinstance(out, np.ndarray) else kind.type(out)

    fn.__name__ = ufunc.__name__
    fn.__doc__ = f"``np.{ufunc.__name__}``, the same bits on every x86-64 CPU (module docstring)."
    return fn


exp = _exact(np.exp)
log = _exact(np.log)
log1p = _exact(np.log1p)
expm1 = _exact(np.expm1)
power = _exact(np.power)
arctan2 = _exact(np.arctan2)
arccos = _exact(np.arccos)
arcsin = _exact(np.arcsin)

__all__ = ["arccos", "arcsin", "arctan2", "exp", "expm1", "log", "log1p", "power"]
