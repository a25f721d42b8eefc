"""Tests that pass on any CPU (issue 57): a test assertion comparing two computed values by strict
order (<, >, <=, >=) or exact equality (==), without pytest.approx, says why the comparison cannot
flip on another CPU, BLAS kernel (OpenBLAS picks AVX-512, AVX2 or SSE kernels by CPU), numpy SIMD
path or thread count.  Two such assertions once failed on a CPU with AVX-512: two gains that tied
exactly came out 3 ulp apart, and a graph's construction flipped on a near tie of BLAS-rounded costs.

The justification is a comment on the assertion (any of its lines) or alone on the line just above it:

- ``# count: ...``: integers, booleans, strings, names or sets: no float is compared;
- ``# margin: ...``: floats whose gap is far above rounding on this data (say how far);
- ``# exact: ...``: bit-identical floats the code promises (say what promises it: the same
  computation on the same inputs, a writer and reader that round-trip, a seed's saved arrays).

Obvious integer comparisons need no comment: ``len()``, ``int()``, ``round()``, ``.sum()`` or
``np.sum()``/``np.count_nonzero()`` of a comparison (a bool mask), ``sum()`` of booleans, ``.count()``,
``.index()``, ``.keys()``, integer literals, counts named ``n`` or ``n_*``, ``.nbytes``, ``.line`` and
sums and products of those.  The search is the audit's (pure AST, and tokenize for the comments of a
flagged assertion): a comparison with a literal on one side (``x < 0.5``, ``len(a) == 3``, ``{}``,
``.shape``) is not flagged."""

import ast
import glob
import io
import os
import re
import tokenize

from conftest import ROOT

JUSTIFIED = re.compile(r"#\s*(exact|margin|count):")
ORDER_OR_EQUAL = (ast.Lt, ast.Gt, ast.LtE, ast.GtE, ast.Eq)
LITERAL_CALLS = ("len", "set", "sorted", "list", "tuple", "str", "int", "bool", "type", "isinstance")
LITERAL_ATTRS = ("shape", "dtype", "n", "size", "ndim", "name", "keys")
INT_CALLS = ("len", "int", "round", "str", "bool", "repr")
INT_ATTRS = ("shape", "size", "ndim", "nbytes", "itemsize", "st_size", "line", "lineno")
NP_COUNTS = ("count_nonzero", "argmax", "argmin")
INT_OPS = (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Mod)


def literal(n: ast.AST) -> bool:
    """A side the audit treats as given, not computed (a literal, a length, a shape)."""
    if isinstance(n, ast.Constant):
        return True
    if isinstance(n, ast.UnaryOp) and isinstance(n.operand, ast.Constant):
        return True
    if isinstance(n, (ast.Tuple, ast.List, ast.Set)):
        return all(literal(e) for e in n.elts)
    if isinstance(n, ast.Dict):  # as a list or a set of literals is ({} too)
        return all(k is not None and literal(k) for k in n.keys) and all(literal(v) for v in n.values)
    if isinstance(n, ast.Call) and getattr(n.func, "id", "") in LITERAL_CALLS:
        return True
    if isinstance(n, ast.Attribute) and n.attr in LITERAL_ATTRS:
        return True
    if isinstance(n, ast.BinOp):
        return literal(n.left) and literal(n.right)
    return False


def boolean(n: ast.AST) -> bool:
    """A comparison or a mask built of comparisons (its sum is a count)."""
    if isinstance(n, ast.Compare):
        return True
    if isinstance(n, ast.UnaryOp) and isinstance(n.op, (ast.Invert, ast.Not)):
        return boolean(n.operand)
    if isinstance(n, ast.BinOp) and isinstance(n.op, (ast.BitAnd, ast.BitOr, ast.BitXor)):
        return boolean(n.left) and boolean(n.right)
    return isinstance(n, ast.BoolOp)


def integral(n: ast.AST) -> bool:
    """An expression that is obviously an integer, a boolean or a string (no float in it)."""
    if isinstance(n, ast.Constant):
        return not isinstance(n.value, (float, complex))
    if isinstance(n, ast.JoinedStr):
        return True
    if isinstance(n, ast.UnaryOp):
        return integral(n.operand) if isinstance(n.op, (ast.USub, ast.UAdd)) else isinstance(n.op, ast.Not)
    if isinstance(n, ast.BinOp):
        return isinstance(n.op, INT_OPS) and integral(n.left) and integral(n.right)
    if isinstance(n, ast.Name):
        return n.id == "n" or n.id.startswith("n_") or n.id in ("line", "lineno")
    if isinstance(n, ast.Attribute):
        return n.attr == "n" or n.attr.startswith("n_") or n.attr in INT_ATTRS
    if isinstance(n, ast.Subscript):  # a.shape[0]
        return isinstance(n.value, ast.Attribute) and n.value.attr == "shape"
    if isinstance(n, ast.Call):
        f, args = n.func, n.args
        if isinstance(f, ast.Name):
            if f.id == "round":
                return len(args) == 1
            if f.id == "sum" and args and isinstance(args[0], ast.GeneratorExp):
                return integral(args[0].elt) or boolean(args[0].elt)
            return f.id in INT_CALLS
        if isinstance(f, ast.Attribute):
            if f.attr == "sum" and isinstance(f.value, ast.Name) and f.value.id == "np":
                return bool(args) and boolean(args[0])
            if f.attr in NP_COUNTS and isinstance(f.value, ast.Name) and f.value.id == "np":
                return True
            if f.attr == "sum" and not args:
                return boolean(f.value)
            return f.attr in ("count", "index", "startswith", "endswith", "keys")
    return False


def approx(cmp: ast.Compare) -> bool:
    """The comparison goes through pytest.approx (its tolerance is the justification)."""
    return any(isinstance(n, ast.Attribute) and n.attr == "approx" or isinstance(n, ast.Name) and n.id == "approx"
               for n in ast.walk(cmp))


def flagged(cmp: ast.Compare) -> bool:
    """The audit's search: two computed sides compared by order or equality, without approx,
    unless both sides are obviously integers (then a count needs no comment)."""
    operands = [cmp.left] + cmp.comparators
    for op, a, b in zip(cmp.ops, operands[:-1], operands[1:]):
        if isinstance(op, ORDER_OR_EQUAL) and not literal(a) and not literal(b):
            if approx(cmp):
                return False
            if not (integral(a) and integral(b)):
                return True
    return False


def justified(lines: list, first: int, last: int) -> bool:
    """A justification comment on lines ``first``..``last`` (1-based: one statement), or alone
    on the line above them."""
    if first > 1 and JUSTIFIED.match(lines[first - 2].lstrip()):
        return True
    statement = io.StringIO("\n".join(line.lstrip() if i == 0 else line
                                      for i, line in enumerate(lines[first - 1:last])) + "\n")
    return any(tok.type == tokenize.COMMENT and JUSTIFIED.match(tok.string)
               for tok in tokenize.generate_tokens(statement.readline))


def unjustified(src: str, name: str = "<test>") -> list:
    """``name:line: code`` of each flagged assertion carrying no justification comment."""
    lines = src.splitlines()
    out = []
    for node in ast.walk(ast.parse(src)):
        if (isinstance(node, ast.Assert) and any(isinstance(c, ast.Compare) and flagged(c) for c in ast.walk(node.test))
                and not justified(lines, node.lineno, node.end_lineno)):
            out.append(f"{name}:{node.lineno}: {lines[node.lineno - 1].strip()[:120]}")
    return sorted(out, key=lambda s: int(s.split(":")[1]))


def test_every_strict_comparison_of_computed_values_in_the_tests_says_why_it_cannot_flip():
    found = []
    for path in sorted(glob.glob(os.path.join(ROOT, "tests", "*.py"))):
        with open(path, encoding="utf-8") as fh:
            found += unjustified(fh.read(), os.path.relpath(path, ROOT))
    assert not found, ("a float compared by strict order or ==, which another CPU's rounding can flip: compare "
                       "with a tolerance or pytest.approx, or say why it cannot flip in a comment on the assertion "
                       "or alone above it, '# exact: ...', '# margin: ...' or '# count: ...' (see "
                       "tests/test_float_comparisons.py):\n" + "\n".join(found))


def test_the_checker_flags_computed_floats_and_passes_counts_literals_and_justified_ones():
    src = '''
def t(a, b, keys, xs, mask, hist):
    assert a < b
    assert a.mean() == b.mean() and len(xs) == 3
    assert np.all(a <= b + 1e-9)
    assert sum(x for x in xs) > 0.5 * a
    assert a.n_frames == b.n_frames and len(xs) == keys.count(1) and a.keys() == b.keys() and a.get(1) == {}
    assert np.sum(a <= 1.0) > 2 * ((a > 0) & ~(b > 0)).sum() and np.count_nonzero(mask) == round(b)
    assert x.shape[0] == a.size // 2 and a.line == b.lineno + 1 and f"{a}" == str(b)
    assert a < 0.5 and a == pytest.approx(b)
    assert a <= b  # margin: 3x apart on this data
    # exact: the same computation twice
    assert a == b
    assert (a, b) == (b,
                      a)  # count: integers
    x = 1  # margin: not an assertion
    assert a > b
'''
    got = [int(s.split(":")[1]) for s in unjustified(src)]
    assert got == [3, 4, 5, 6, 17]
