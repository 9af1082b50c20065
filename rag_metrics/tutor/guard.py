"""The tutor's guard (issue 48): every reply is checked in code before it is shown as final.

A reply *leaks* when it gives the exercise away:

**Code.**  Every piece of code in the reply (fenced blocks, indented blocks, paragraphs that parse as
Python, and inline ```code``` spans) is compared with the exercise's reference solution
(:mod:`rag_metrics.exercises.reference`, ``reference_generation``, ``reference_system``) and with the
lesson's code (:attr:`~rag_metrics.exercises.catalogue.Exercise.lesson_code`), one function at a time, on
normalised ASTs: docstrings, comments, imports and annotations dropped; every local name, argument and
function name made ``_`` (a renamed variable changes nothing); ``math.log2`` read as ``log2``; numbers as
floats (``0`` = ``0.0``); ``x += y`` read as ``x = x + y``.  Builtins (``len``, ``any``, ...), attribute
names (``.retrieve``), keyword names (``top_k=``) and string constants (``"relevant_chunk_ids"``) are kept:
they are what makes code *this* solution.  Three measures, each against each function:

- *statements*: the share of the function's statements (each with its nested bodies cut off; weighted by
  its number of AST nodes) that occur in the piece: a pasted, renamed, reformatted function, or its body
  without the ``def``, scores near 1;
- *expressions*: the share (weighted by size) of the function's expressions that occur in the piece:
  catches the same arithmetic written another way (a list comprehension for the loop);
- *key lines*: a single expression or statement of at least :data:`KEY_MIN` nodes that occurs in the
  solution and nowhere in what the student is shown anyway (the exercise's prompt, starter, examples and
  hints, the mistakes' hints) is a key line (the hit condition, the reciprocal rank): quoting it leaks.

The skeleton every such function shares (``total = 0``, ``for item in golden_dataset:``, ``return total /
len(golden_dataset)``, ``out.append(x)``, ...: :data:`GENERIC`) weighs a quarter (:data:`GENERIC_WEIGHT`), so
a loop skeleton or a small example on another function scores low while a whole function made only of such
parts still scores; fewer than :data:`MIN_WEIGHT` matched AST nodes never leak by share.  Thresholds:
:data:`STATEMENT_SHARE`, :data:`EXPRESSION_SHARE`.

**Expected values.**  Every number in the reply (English ``0.7237``, Danish ``0,7237``, a percentage
``72.37 %``, a fraction ``55/76``) is compared with the checks' hidden expected values: a number with at
least two decimals equal to a hidden value at the precision written leaks (``0.72`` and ``0,724`` both give
0.723684 away).  Whole numbers (k, counts, 0 and 1) and the simple fractions (halves, thirds, quarters: the
reciprocal rank at rank 3 is 1/3) are too common in any explanation to withhold on (:func:`simple`); nor does
a value the exercise shows anyway (a worked example's ``0.75`` in its prompt, examples or hints) count.

>>> check_reply("Count each question once: which line adds more than 1 per question?",
...             exercise="hit_rate_at_k").leaked
False
>>> check_reply("It should be 0,7237.", exercise="hit_rate_at_k", hidden_values=[0.723684]).reason
'an expected value'
"""
from __future__ import annotations

import ast
import builtins
import copy
import functools
import math
import re
import textwrap
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["CODE_LINE", "EXPRESSION_SHARE", "GENERIC", "GENERIC_WEIGHT", "GuardResult", "KEY_MIN", "MIN_WEIGHT",
           "NEW_MIN", "STATEMENT_SHARE", "check_reply", "code_pieces", "numbers_in", "protected_functions",
           "similarity", "simple"]

#: A part of :data:`GENERIC` weighs this share of its AST nodes.
GENERIC_WEIGHT = 0.25
#: A reply piece that holds this share (by weight) of a solution function's statements leaks.
STATEMENT_SHARE = 0.6
#: A reply piece that holds this share (by weight) of a solution function's expressions leaks.
EXPRESSION_SHARE = 0.6
#: Matched statements or expressions lighter than this (AST nodes) never leak by share: too little code.
MIN_WEIGHT = 12
#: A piece matching a function by share leaks to a student whose code lacks at least this many of its AST nodes.
NEW_MIN = 3
#: A solution's expression or statement of at least this many AST nodes, not shown to the student anyway,
#: is a key line: a reply holding it leaks.
KEY_MIN = 12

#: The skeleton shared by every function of the course (and by any small example): it weighs nothing.
GENERIC = '''
total = 0
total = []
total = {}
total = 0.0
hits = hits + 1
for item in golden_dataset:
    pass
for x in xs:
    pass
for i, x in enumerate(xs):
    pass
for i, x in enumerate(xs, start=1):
    pass
if not xs:
    return 0.0
if not xs:
    return None
if not xs:
    continue
if x:
    pass
return total
return total / len(xs)
return total / n
return sum(xs) / len(xs)
return sum(xs) / len(xs) if xs else 0.0
out.append(x)
results = retriever.retrieve(item["question"], top_k=k)
results = retriever.retrieve(question, top_k=k)
retrieved_ids = [r["id"] for r in results]
relevant = set(item["relevant_chunk_ids"])
relevant = set(relevant_ids)
continue
break
pass
'''

_KEEP = frozenset(n for n in dir(builtins) if not n.startswith("_")) | {"log2", "log", "log10", "sqrt", "math"}
_MATH = {"math", "np", "numpy"}


@dataclass(frozen=True)
class GuardResult:
    """What the guard found: ``leaked`` and, when it did, what leaked (``reason``) and how (``detail``:
    which function or value, and the measure)."""

    leaked: bool
    reason: str = ""            # "" or "code matching the reference solution" / "... the lesson's code" /
    detail: str = ""            # "a key line of the solution" / "an expected value"
    scores: dict[str, float] = field(default_factory=dict, compare=False)


# ---- normalised ASTs ----------------------------------------------------------------------------------------
class _Normalise(ast.NodeTransformer):
    def visit_FunctionDef(self, node: ast.FunctionDef) -> Any:
        node.name, node.returns, node.decorator_list = "_", None, []
        node.body = _drop_docstring(node.body)
        self.generic_visit(node)
        return node

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]

    def visit_arg(self, node: ast.arg) -> Any:
        node.arg, node.annotation = "_", None
        return node

    def visit_Name(self, node: ast.Name) -> Any:
        return ast.Name(id=node.id if node.id in _KEEP else "_", ctx=ast.Load())

    def visit_Attribute(self, node: ast.Attribute) -> Any:
        if isinstance(node.value, ast.Name) and node.value.id in _MATH:
            return ast.Name(id=node.attr, ctx=ast.Load())
        self.generic_visit(node)
        node.ctx = ast.Load()
        return node

    def visit_Subscript(self, node: ast.Subscript) -> Any:
        self.generic_visit(node)
        node.ctx = ast.Load()
        return node

    def visit_Starred(self, node: ast.Starred) -> Any:
        self.generic_visit(node)
        node.ctx = ast.Load()
        return node

    def visit_Tuple(self, node: ast.Tuple) -> Any:
        self.generic_visit(node)
        node.ctx = ast.Load()
        return node

    def visit_List(self, node: ast.List) -> Any:
        self.generic_visit(node)
        node.ctx = ast.Load()
        return node

    def visit_Constant(self, node: ast.Constant) -> Any:
        v = node.value
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return ast.Constant(value=float(v))
        return ast.Constant(value=v)

    def visit_AugAssign(self, node: ast.AugAssign) -> Any:
        self.generic_visit(node)
        return ast.Assign(targets=[node.target], value=ast.BinOp(left=copy.deepcopy(node.target), op=node.op,
                                                                 right=node.value), type_comment=None)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> Any:
        self.generic_visit(node)
        if node.value is None:
            return None
        return ast.Assign(targets=[node.target], value=node.value, type_comment=None)

    def visit_Import(self, node: ast.Import) -> Any:
        return None

    def visit_ImportFrom(self, node: ast.ImportFrom) -> Any:
        return None

    def visit_Expr(self, node: ast.Expr) -> Any:
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return None  # a docstring or a string used as a comment
        self.generic_visit(node)
        return node


def _drop_docstring(body: list[ast.stmt]) -> list[ast.stmt]:
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        return body[1:] or [ast.Pass()]
    return body


def _normalise(tree: ast.AST) -> ast.AST:
    out = _Normalise().visit(copy.deepcopy(tree))
    for node in ast.walk(out):  # a body emptied by the dropped docstring/import still parses as a tree
        for name in ("body", "orelse", "finalbody"):
            if name in getattr(node, "_fields", ()) and isinstance(getattr(node, name, None), list) \
                    and not getattr(node, name) and not isinstance(node, (ast.Module, ast.If, ast.For,
                                                                           ast.While, ast.Try, ast.AsyncFor)):
                setattr(node, name, [ast.Pass()])
    return out


def _size(node: ast.AST) -> int:
    return sum(1 for n in ast.walk(node) if not isinstance(n, ast.expr_context))


def _dump(node: ast.AST) -> str:
    return ast.dump(node, annotate_fields=False, include_attributes=False)


_BODIES = ("body", "orelse", "finalbody", "handlers")


def _header(stmt: ast.stmt) -> ast.stmt:
    """The statement without its nested statements (a ``for`` line, an ``if`` line)."""
    head = copy.copy(stmt)
    for name in _BODIES:
        if isinstance(getattr(head, name, None), list):
            setattr(head, name, [])
    return head


def _parse(code: str) -> ast.Module | None:
    """``code`` as a module; a piece that does not parse as a whole is read line by line (a line ending in
    ``:`` gets a ``pass``), keeping the lines that parse; None when nothing does."""
    text = textwrap.dedent(code.expandtabs(4)).strip("\n")
    if not text.strip():
        return None
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError):
        pass
    stmts: list[ast.stmt] = []
    for line in text.splitlines():
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        if s.endswith(":"):
            s += " pass"
        try:
            stmts.extend(ast.parse(s).body)
        except (SyntaxError, ValueError):
            continue
    return ast.Module(body=stmts, type_ignores=[]) if stmts else None


@dataclass(frozen=True)
class _Shape:
    """A piece of code as the measures see it: statement headers and expressions, each with its weight."""

    statements: dict[str, int]     # dump of a statement header -> its weight (AST nodes)
    expressions: dict[str, int]    # dump of an expression -> its weight

    @property
    def everything(self) -> set[str]:
        return set(self.statements) | set(self.expressions)


def _shape(tree: ast.AST, *, top: bool = True) -> _Shape:
    norm = _normalise(tree)
    statements: dict[str, int] = {}
    expressions: dict[str, int] = {}
    for node in ast.walk(norm):
        if isinstance(node, ast.stmt):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue  # the def line: a name and arguments, made anonymous
            head = _header(node)
            statements[_dump(head)] = _size(head)
        elif isinstance(node, ast.expr) and not isinstance(node, ast.expr_context):
            expressions[_dump(node)] = _size(node)
    return _Shape(statements, expressions)


@functools.lru_cache(maxsize=1)
def _generic() -> frozenset[str]:
    out: set[str] = set()
    block: list[str] = []
    for line in GENERIC.strip().splitlines() + [""]:
        if line and not line.startswith(" ") and block:
            out |= _shape_of_text("\n".join(block)).everything
            block = []
        if line:
            block.append(line)
    if block:
        out |= _shape_of_text("\n".join(block)).everything
    return frozenset(out)


@functools.lru_cache(maxsize=256)
def _shape_of_text(code: str) -> _Shape:
    tree = _parse(code)
    return _shape(tree) if tree is not None else _Shape({}, {})


# ---- what is protected, and what the student sees anyway ----------------------------------------------------
@dataclass(frozen=True)
class _Function:
    label: str                   # "reference" | "lesson"
    name: str                    # the function's name
    shape: _Shape
    keys: frozenset[str]         # its key lines (dumps)


_REFERENCE_MODULES = ("rag_metrics.exercises.reference", "rag_metrics.exercises.reference_generation",
                      "rag_metrics.exercises.reference_system")


def _references() -> dict[str, str]:
    import importlib

    out: dict[str, str] = {}
    for module in _REFERENCE_MODULES:
        try:
            mod = importlib.import_module(module)
        except ModuleNotFoundError as e:
            if e.name == module:
                continue
            raise
        out.update(getattr(mod, "REFERENCE", {}) or {})
    return out


def _exercise(name: str) -> Any:
    from rag_metrics.errors import InputError
    from rag_metrics.exercises.catalogue import exercise

    try:
        return exercise(name)
    except (InputError, KeyError, LookupError):
        return None


_INLINE = re.compile(r"`([^`\n]+)`")


def _public_texts(name: str) -> list[str]:
    """The code the student is shown anyway for exercise ``name``: inline code of its prompt, examples, hints
    and conventions, its starter, and the mistakes' hints."""
    from rag_metrics.exercises.mistakes import MISTAKES

    ex = _exercise(name)
    texts: list[str] = []
    if ex is not None:
        texts.append(ex.starter)
        prose: list[str] = []
        for table in (ex.prompt, ex.title):
            prose.extend(table.values())
        for table in (ex.examples, ex.hints, ex.conventions):
            for seq in table.values():
                prose.extend(seq)
        for p in prose:
            texts.extend(_INLINE.findall(p))
    for hints in MISTAKES.values():
        for h in hints:
            texts.extend(_INLINE.findall(h))
    return texts


@functools.lru_cache(maxsize=64)
def _public(name: str) -> frozenset[str]:
    out: set[str] = set(_generic())
    for text in _public_texts(name):
        out |= _shape_of_text(text).everything
    return frozenset(out)


@functools.lru_cache(maxsize=64)
def protected_functions(name: str) -> tuple[_Function, ...]:
    """The functions of exercise ``name``'s reference solution and of its lesson's code, ready to compare."""
    ex = _exercise(name)
    sources = [("reference", _references().get(name, "")), ("lesson", ex.lesson_code if ex is not None else "")]
    public = _public(name)
    out: list[_Function] = []
    for label, source in sources:
        if not source.strip():
            continue
        tree = ast.parse(textwrap.dedent(source))
        for node in tree.body:
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            shape = _shape(node)
            keys = frozenset(_keys(node, public))
            out.append(_Function(label, node.name, shape, keys))
    return tuple(out)


def _keys(fn: ast.AST, public: frozenset[str]) -> Iterator[str]:
    """The key lines of function ``fn``: its expressions of at least :data:`KEY_MIN` nodes that the student is
    not shown anyway, and its statements holding one (``if any(...)`` is not a key line when ``any(...)`` is
    in a hint)."""
    norm = _normalise(fn)
    for node in ast.walk(norm):
        if isinstance(node, ast.expr) and not isinstance(node, ast.expr_context):
            d = _dump(node)
            if _size(node) >= KEY_MIN and d not in public:
                yield d
        elif isinstance(node, ast.stmt) and not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            head = _header(node)
            d = _dump(head)
            if _size(head) < KEY_MIN or d in public:
                continue
            parts = [c for c in ast.iter_child_nodes(head) if isinstance(c, ast.expr)]
            if any(_size(c) >= KEY_MIN and _dump(c) not in public for c in parts) or \
                    not any(_dump(c) in public for c in parts):
                yield d


# ---- the measures ---------------------------------------------------------------------------------------------
def _share(solution: dict[str, int], piece: set[str], generic: frozenset[str]) -> tuple[float, int]:
    """(share of the solution's weight found in the piece, AST nodes found); a generic part weighs
    :data:`GENERIC_WEIGHT` of its nodes."""
    def weight(d: str, w: int) -> float:
        return w * GENERIC_WEIGHT if d in generic else float(w)

    total = sum(weight(d, w) for d, w in solution.items())
    found = sum(weight(d, w) for d, w in solution.items() if d in piece)
    nodes = sum(w for d, w in solution.items() if d in piece)
    return (found / total if total else 0.0), nodes


def similarity(piece: str, name: str) -> dict[str, float]:
    """The measures of one code ``piece`` against exercise ``name``'s functions (the best over them):
    ``statements``, ``expressions`` (shares) and ``key`` (1.0 when the piece holds a key line)."""
    tree = _parse(piece)
    if tree is None:
        return {"statements": 0.0, "expressions": 0.0, "key": 0.0}
    shape = _shape(tree)
    mine = shape.everything
    generic = _generic()
    best = {"statements": 0.0, "expressions": 0.0, "key": 0.0}
    for fn in protected_functions(name):
        s, sw = _share(fn.shape.statements, set(shape.statements), generic)
        e, ew = _share(fn.shape.expressions, set(shape.expressions), generic)
        best["statements"] = max(best["statements"], s if sw >= MIN_WEIGHT else 0.0)
        best["expressions"] = max(best["expressions"], e if ew >= MIN_WEIGHT else 0.0)
        if fn.keys & mine:
            best["key"] = 1.0
    return best


def _precision(statements: dict[str, int], fn: _Function, generic: frozenset[str]) -> float:
    """The share (by weight) of ``statements`` that are statements of ``fn``."""
    def weight(d: str, w: int) -> float:
        return w * GENERIC_WEIGHT if d in generic else float(w)

    total = sum(weight(d, w) for d, w in statements.items())
    return sum(weight(d, w) for d, w in statements.items() if d in fn.shape.statements) / total if total else 0.0


@functools.lru_cache(maxsize=1024)  # a streamed reply is checked again as it grows: its finished pieces repeat
def _code_leak(piece: str, name: str, *, whole: bool, own_code: str = "") -> tuple[str, str, dict[str, float]] | None:
    """What ``piece`` of a reply gives away of exercise ``name`` (None: nothing).  ``own_code``: the student's.

    A piece that matches a function by share leaks when there is no student code, or when it gives the student
    something of the solution they do not have: a matched statement or expression (of :data:`NEW_MIN` nodes or
    more) not in their code, or fewer statements foreign to the solution than their code has (the solution
    made by deleting their wrong lines).  Their own code quoted back never leaks."""
    tree = _parse(piece)
    if tree is None:
        return None
    full = _shape(tree)
    own = _shape_of_text(own_code) if own_code.strip() else None
    mine = own.everything if own is not None else frozenset()
    new = _Shape({d: w for d, w in full.statements.items() if d not in mine},
                 {d: w for d, w in full.expressions.items() if d not in mine})
    generic = _generic()
    for fn in protected_functions(name):
        what = "code matching the reference solution" if fn.label == "reference" else "code matching the lesson's code"
        if whole:
            s, sw = _share(fn.shape.statements, set(full.statements), generic)
            e, ew = _share(fn.shape.expressions, set(full.expressions), generic)
            scores = {"statements": round(s, 3), "expressions": round(e, 3)}
            by = (f"{s:.0%} of its statements" if s >= STATEMENT_SHARE and sw >= MIN_WEIGHT else
                  f"{e:.0%} of its expressions" if e >= EXPRESSION_SHARE and ew >= MIN_WEIGHT else "")
            if by and own is not None:
                added = max(_share(fn.shape.statements, set(new.statements), generic)[1],
                            _share(fn.shape.expressions, set(new.expressions), generic)[1])
                cleaner = _precision(full.statements, fn, generic) > _precision(own.statements, fn, generic) + 0.01
                if added < NEW_MIN and not cleaner:
                    by = ""  # the student's own code (or a part of it) quoted back
            if by:
                return what, f"{fn.name}: {by}", scores
        hit = fn.keys & new.everything
        if hit:
            return "a key line of the solution", f"{fn.name} ({fn.label}): {ast_text(min(hit, key=len))}", {"key": 1.0}
    return None


def ast_text(dump: str) -> str:
    """A short form of a normalised AST dump, for a detail line."""
    return dump if len(dump) <= 80 else dump[:77] + "..."


# ---- the reply's code ----------------------------------------------------------------------------------------
_FENCED = re.compile(r"^[ \t]{0,3}(```|~~~)[^\n]*\n(.*?)(?:^[ \t]{0,3}\1[ \t]*$|\Z)", re.M | re.S)


def code_pieces(reply: str) -> tuple[list[str], list[str]]:
    """``(blocks, spans)``: the reply's code blocks (fenced, indented by 4 spaces or a tab after a blank line,
    and prose paragraphs that parse as Python statements) and its inline code spans."""
    blocks = [m.group(2) for m in _FENCED.finditer(reply)]
    rest = _FENCED.sub("\n\n", reply)
    lines = rest.split("\n")
    kept: list[str] = []
    run: list[str] = []
    prev_blank = True
    for line in lines + [""]:
        indented = line.startswith(("    ", "\t")) and line.strip() != ""
        if indented and (run or prev_blank):
            run.append(line)
            continue
        if run:
            if line.strip() == "" and run:
                run.append(line)  # a blank line inside an indented block
                continue
            blocks.append("\n".join(run))
            run = []
        kept.append(line)
        prev_blank = line.strip() == ""
    if run:
        blocks.append("\n".join(run))
    prose = "\n".join(kept)
    spans = _INLINE.findall(prose)
    loose: list[str] = []
    for para in re.split(r"\n[ \t]*\n", _INLINE.sub(" ", prose)):
        if _looks_like_code(para):
            blocks.append(para)
        else:  # code lines inside prose ("Write this:" and then code without a fence)
            loose.extend(line.strip() for line in para.splitlines() if CODE_LINE.match(line))
    if loose:
        blocks.append("\n".join(loose))
    return [b for b in blocks if b.strip()], spans


#: A line of prose that is code (a statement or a call), read as code even without a fence.
CODE_LINE = re.compile(r"^\s*(def |for |if |elif |while |return\b|[\w.\[\]'\"]+\s*(=|\+=|-=|\*=|/=)[^=]|"
                        r"[\w.]+\(.*\)\s*$)")


def _looks_like_code(para: str) -> bool:
    text = textwrap.dedent(para).strip()
    if not text or "\n" not in text and not re.match(r"^(def|for|return|if|while)\b|^\w+\s*(\+?=)", text):
        return False
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return False
    return any(not isinstance(s, ast.Expr) or isinstance(s.value, (ast.Call, ast.BinOp)) for s in tree.body)


# ---- expected values ------------------------------------------------------------------------------------------
_NUMBER = re.compile(r"(?<![\w.,/])(-?\d+(?:[.,]\d+)?)(\s?%)?(?![\w])")
_FRACTION = re.compile(r"(?<![\w.,])(\d+)\s*/\s*(\d+)(?![\w.,]\d)")


def simple(value: float) -> bool:
    """A whole number, or a whole number plus a quarter, a third, a half, two thirds or three quarters: values
    every explanation of these metrics writes (``1/2``, ``0.5``, ``2/3 = 0.667``), never withheld on."""
    frac = value - math.floor(value)
    return any(abs(frac - a / b) < 1e-9 for b in (1, 2, 3, 4) for a in range(b + 1))


def _hidden_numbers(values: Iterable[Any]) -> list[float]:
    out: list[float] = []

    def walk(v: Any) -> None:
        if isinstance(v, bool) or v is None:
            return
        if isinstance(v, (int, float)):
            f = float(v)
            if math.isfinite(f) and not simple(f):
                out.append(f)
        elif isinstance(v, dict):
            for x in v.values():
                walk(x)
        elif isinstance(v, (list, tuple, set, frozenset)):
            for x in v:
                walk(x)
        else:
            try:  # numpy scalars
                walk(float(v))
            except (TypeError, ValueError):
                return
    for v in values:
        walk(v)
    return out


def numbers_in(text: str) -> Iterator[tuple[float, int, str]]:
    """Every decimal number written in ``text`` as ``(value, decimals, as written)``: ``0.7237`` and the Danish
    ``0,7237`` alike; a percentage as its fraction (``72.4 %`` -> 0.724 with 3 decimals)."""
    for m in _NUMBER.finditer(text):
        raw = m.group(1)
        if "." not in raw and "," not in raw:
            continue
        digits = raw.replace(",", ".")
        try:
            value = float(digits)
        except ValueError:
            continue
        decimals = len(digits.split(".", 1)[1])
        if m.group(2):
            value, decimals = value / 100, decimals + 2
        yield value, decimals, m.group(0)


def _matches(value: float, decimals: int, hidden: float) -> bool:
    return decimals >= 2 and abs(value - hidden) <= 0.5 * 10 ** -decimals + 1e-12 or value == hidden


@functools.lru_cache(maxsize=64)
def _public_numbers(name: str) -> tuple[tuple[float, int], ...]:
    """The numbers exercise ``name`` shows anyway (its prompt, examples, hints, conventions): a hidden value
    equal to one of them is not hidden (an example's ``2 / 3 = 0.667``)."""
    ex = _exercise(name)
    if ex is None:
        return ()
    texts: list[str] = []
    for table in (ex.prompt, ex.title):
        texts.extend(table.values())
    for table in (ex.examples, ex.hints, ex.conventions):
        for seq in table.values():
            texts.extend(seq)
    out = [(v, d) for t in texts for v, d, _ in numbers_in(t)]
    out += [(int(m.group(1)) / int(m.group(2)), 12) for t in texts for m in _FRACTION.finditer(t)
            if int(m.group(2)) > 1]
    return tuple(out)


def _value_leak(reply: str, values: Sequence[Any], exercise: str | None = None) -> str | None:
    hidden = _hidden_numbers(values)
    if exercise:
        shown = _public_numbers(exercise)
        hidden = [h for h in hidden if not any(_matches(v, d, h) for v, d in shown)]
    if not hidden:
        return None
    for value, decimals, written in numbers_in(reply):
        if decimals < 2:
            continue
        for h in hidden:
            if _matches(value, decimals, h):
                return written.strip()
    for m in _FRACTION.finditer(reply):
        a, b = int(m.group(1)), int(m.group(2))
        if b > 1 and any(abs(a / b - h) <= 1e-9 for h in hidden):
            return m.group(0)
    return None


# ---- the guard ------------------------------------------------------------------------------------------------
def check_reply(reply: str, *, exercise: str | None, hidden_values: Sequence[Any] = (),
                student_code: str = "") -> GuardResult:
    """Whether ``reply`` gives exercise ``exercise`` away (module docstring): code matching its reference
    solution or its lesson's code, a key line of either, or one of the checks' ``hidden_values``.
    ``exercise=None`` (a lesson step with no exercise): only the values are looked for.  ``student_code``:
    what the student wrote; quoting it back gives nothing away (its statements and expressions do not count)."""
    reply = str(reply or "")
    written = _value_leak(reply, hidden_values, exercise)
    if written is not None:
        return GuardResult(True, "an expected value", f"{written}")
    if not exercise or not protected_functions(exercise):
        return GuardResult(False)
    blocks, spans = code_pieces(reply)
    for block in blocks:
        found = _code_leak(block, exercise, whole=True, own_code=student_code)
        if found is not None:
            return GuardResult(True, found[0], found[1], found[2])
    for span in spans:
        found = _code_leak(span, exercise, whole=False, own_code=student_code)
        if found is not None:
            return GuardResult(True, found[0], found[1], found[2])
    return GuardResult(False)
