"""The fuzz cases' vocabulary: a case, its expectation, the registry of targets and the judge.

A *target* is a function ``make(rng, env) -> Case`` registered with :func:`target`; it names
the public API entries it exercises (``covers``), so a public callable with no target shows up
in ``tests/test_fuzz.py``. A :class:`Case` holds a thunk and what must come of it:

- ``"error"``: a clean refusal: an instance of ``SpatialContactError`` that is also a
  ``ValueError`` or ``TypeError`` (or, for a name a scene does not hold, the documented
  ``KeyError`` of ``NotInSceneError``), whose message names the parameter and shows the value;
- ``"answer"``: a return value, passed to ``check`` (an oracle: closed forms or invariants),
  which raises ``AssertionError`` on a wrong answer;
- ``"either"``: one of the two (for inputs whose validity the generator cannot tell cheaply,
  such as a random point cloud), each judged as above.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import numpy as np

from spatialcontact.errors import NotInSceneError, SpatialContactError

Check = Callable[[Any], None]


@dataclass
class Case:
    """One input and what must come of it (see the module docstring)."""

    label: str
    """What was called with what, to reproduce the case by hand."""
    call: Callable[[], Any]
    expect: str = "answer"
    """``"error"``, ``"answer"`` or ``"either"``."""
    param: str | tuple[str, ...] = ()
    """The parameter the error message must name (any of several spellings)."""
    value: Any = None
    """The value the error message must show (its repr, str, ``:g`` form, an element or its
    type's name)."""
    check: Check | None = None
    """The oracle for an answer; raises AssertionError when the answer is wrong."""
    shows_value: bool = True
    """False when the value cannot be shown (a whole file's content, a shape object)."""


@dataclass
class Target:
    """A generator of cases for some public entry points."""

    name: str
    make: Callable[[np.random.Generator, Any], Case]
    covers: tuple[str, ...]
    weight: int = 1


TARGETS: list[Target] = []
"""Every registered target, in registration order (the order fixes case ids)."""


def target(
    name: str, covers: Iterable[str], weight: int = 1
) -> Callable[[Callable[[np.random.Generator, Any], Case]], Callable[..., Case]]:
    """Register ``make`` as the target ``name`` covering the API entries ``covers``."""

    def register(make: Callable[[np.random.Generator, Any], Case]) -> Callable[..., Case]:
        if any(t.name == name for t in TARGETS):
            raise ValueError(f"fuzz target {name!r} registered twice")
        TARGETS.append(Target(name, make, tuple(covers), weight))
        return make

    return register


# ------------------------------------------------------------------------------ judging


@dataclass
class Outcome:
    """What one case gave: its kind and a one-line detail."""

    kind: str
    """``"answer"``, ``"error"`` (a clean refusal), ``"wrong"`` (a wrong answer, a missing
    refusal, or a refusal of the wrong class or wording), ``"crash"`` or ``"hang"``."""
    detail: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


def _renderings(value: Any, depth: int = 0) -> set[str]:
    """Ways an error message may show ``value``."""
    out: set[str] = {type(value).__name__}
    for show in (repr, str):
        try:
            text = show(value)
        except Exception:
            continue
        out.add(text)
        for n in (60, 20):  # a prefix (messages shorten long reprs), marked PREFIX
            if len(text) > n:
                out.add(text[:n] + PREFIX)
    if isinstance(value, os.PathLike):
        out.add(os.fspath(value))
    if isinstance(value, (int, float, np.number)) and not isinstance(value, bool):
        out.add(f"shape {np.shape(value)}")  # "must have 3 values, got an array of shape ()"
    if isinstance(value, (float, np.floating)) or (
        isinstance(value, (int, np.integer)) and not isinstance(value, bool)
    ):
        try:
            out.add(f"{float(value):g}")
            out.add(repr(float(value)))
        except OverflowError:
            out.add(f"{Decimal(int(value)):.3e}")
    if depth < 2 and isinstance(value, (list, tuple, np.ndarray)) and _ndim(value) > 0:
        flat = np.asarray(value, dtype=object).reshape(-1) if _flattens(value) else list(value)
        for item in list(flat)[:64]:
            out |= _renderings(item, depth + 1)
        if len(value) == 0:
            out.add("empty")
        out.add(str(len(value)))  # "must hold at least 4 points, got 3"
        if isinstance(value, np.ndarray):
            out.add(f"shape {value.shape}")
            out.add(str(value.shape))
            out.add(str(value.dtype))
    return {r for r in out if r}


def _flattens(value: Any) -> bool:
    try:
        np.asarray(value, dtype=object).reshape(-1)
    except Exception:  # a ragged nested sequence
        return False
    return True


def _ndim(value: Any) -> int:
    try:
        return int(np.ndim(value))
    except Exception:  # a ragged nested sequence
        return 1


PREFIX = "\u2026"
"""Ends a rendering that is a prefix: it may go on with anything in the message."""


def mentions(message: str, text: str) -> bool:
    """Whether ``text`` appears in ``message`` as a whole token (not inside a longer number or
    word; a :data:`PREFIX` rendering may be followed by anything)."""
    prefix = text.endswith(PREFIX)
    text = text.removesuffix(PREFIX)
    if not text:
        return False
    before = r"(?<![\w.])" if re.match(r"[\w.]", text[0]) else ""
    after = r"(?![\w]|\.\d)" if re.match(r"\w", text[-1]) and not prefix else ""
    return re.search(before + re.escape(text) + after, message) is not None


def shows(message: str, value: Any) -> bool:
    """Whether an error message shows ``value`` (any of its :func:`_renderings`)."""
    return any(mentions(message, r) for r in _renderings(value))


def clean_error(error: BaseException) -> bool:
    """Whether ``error`` is of the documented hierarchy."""
    if not isinstance(error, SpatialContactError):
        return False
    if isinstance(error, NotInSceneError):
        return True
    return isinstance(error, (ValueError, TypeError))


def judge(case: Case) -> Outcome:
    """Run ``case`` and judge what it gave (in this process)."""
    try:
        result = case.call()
    except Exception as error:  # judged below: any class may come out of a fuzzed call
        message = str(error)
        name = f"{type(error).__module__}.{type(error).__qualname__}"
        if case.expect == "answer":
            return Outcome("wrong", f"raised {name}: {message[:300]}")
        if not clean_error(error):
            return Outcome("wrong", f"raised a foreign {name}: {message[:300]}")
        params = (case.param,) if isinstance(case.param, str) else case.param
        if params and not any(mentions(message, p) for p in params):
            return Outcome("wrong", f"{name} does not name {params}: {message[:300]}")
        if case.shows_value and not _large(case.value) and not shows(message, case.value):
            return Outcome(
                "wrong", f"{name} does not show the value {_short(case.value)}: {message[:300]}"
            )
        return Outcome("error", f"{type(error).__name__}: {message[:200]}")
    if case.expect == "error":
        return Outcome("wrong", f"accepted (expected a refusal), returned {_short(result)}")
    if case.check is not None:
        try:
            case.check(result)
        except AssertionError as failure:
            return Outcome("wrong", f"wrong answer {_short(result)}: {failure}")
        except Exception as failure:  # the oracle itself met a broken answer
            return Outcome(
                "wrong", f"checking {_short(result)} raised {type(failure).__name__}: {failure}"
            )
    return Outcome("answer", _short(result))


def _large(value: Any) -> bool:
    """Whether ``value`` is an array of more than 3 numbers (point sets, vertex arrays): a
    message may then describe what is wrong with it (its shape, a row) instead of showing it."""
    if isinstance(value, (np.ndarray, list, tuple)):
        try:
            return int(np.size(np.asarray(value, dtype=object))) > 3
        except Exception:
            return True
    return False


def _short(value: Any) -> str:
    try:
        text = repr(value)
    except Exception:
        text = f"<{type(value).__name__}>"
    return text if len(text) <= 160 else text[:157] + "..."


# ------------------------------------------------------------------------------ oracles


def close(a: float, b: float, tol: float = 1e-6, what: str = "value") -> None:
    """Assert ``a`` and ``b`` agree within ``tol`` (absolute, or relative to their size)."""
    assert math.isfinite(a), f"{what} {a} is not finite"
    scale = max(1.0, abs(b))
    assert abs(a - b) <= tol * scale, f"{what} {a!r}, expected {b!r}"


def finite(value: Any, what: str = "answer") -> None:
    """Assert every number in ``value`` is finite."""
    array = np.asarray(value, dtype=np.float64)
    assert np.all(np.isfinite(array)), f"{what} not finite: {value!r}"
