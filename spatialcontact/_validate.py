"""The argument checks of the package: each returns a clean value or raises, naming the parameter.

Coal checks nothing: it takes negative sizes, NaN and sizes of 1e300 silently and answers with
NaN, infinities or a segfault. Every public entry point therefore passes its arguments through
these checks first. Each check raises :class:`~spatialcontact.errors.ShapeTypeError` (a
``TypeError``) for a value of the wrong type, and for a value out of range the class given as
``error``: by default :class:`~spatialcontact.errors.InvalidShapeError` for the shape
parameters (sizes, coordinates, vectors), :class:`~spatialcontact.errors.InvalidMeshError` for
point sets and :class:`~spatialcontact.errors.InvalidArgumentError` for the others. Both error
classes can be replaced (``type_error=``, ``error=``), so a module with its own error classes
(the sensors) raises those.

What numpy would convert silently is refused as a type mistake: strings (also inside lists:
``np.array(["1", "2"], dtype=float)`` succeeds), booleans (``True`` is not ``1.0`` here),
complex numbers, ``None`` inside lists, object arrays and masked arrays. A 0-d numeric array is
a number. An integer too large for a float (``10**400``) is a value out of range.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from decimal import Decimal
from numbers import Real
from typing import Any, Literal, overload

import numpy as np

from .errors import InvalidArgumentError, InvalidMeshError, InvalidShapeError, ShapeTypeError

__all__ = [
    "MAX_ASPECT",
    "MAX_COORDINATE",
    "MAX_NESTING",
    "MAX_SIZE",
    "MIN_SIZE",
    "aspect",
    "bound",
    "coordinate",
    "count",
    "describe",
    "finite_real",
    "flag",
    "non_negative_real",
    "numbers",
    "points",
    "positive_real",
    "positive_vector3",
    "size",
    "size_vector3",
    "text",
    "vector3",
]

MIN_SIZE = 1e-5
"""Smallest size accepted, in metres (10 µm): a radius, a length, a side, a semi-axis, an octree
resolution, the extent of a scaled mesh or of a convex hull.

Coal's GJK and EPA stop at a tolerance of 1e-6, which acts in metres at small sizes. A cone
1 µm long (whatever its radius) against a sphere centred in it gives a distance of -1.8e308 in
about 40% of orientations, one 2 µm long in about 15%, and from 3 µm on none was seen; a cone
or ellipsoid 10 nm thin fails so when concentric with a sphere. Distances solved by GJK are off
by up to about 1e-6 m, so at this smallest size they are good to about 10%.
"""

MAX_SIZE = 1e6
"""Largest size accepted, in metres (1000 km); see :data:`MIN_SIZE` for what it applies to.

Far beyond it Coal fails: a capsule 1e300 long is at an infinite distance from everything, an
ellipsoid with a semi-axis of 1e300 gives NaN witness points, and a mesh scaled by 1e100 collides
with a sphere inside it although meshes are hollow.
"""

MAX_COORDINATE = 1e6
"""Largest coordinate accepted, in metres, on each axis: mesh vertices (after scaling), convex
hull points, octree points and half-space offsets lie within ``±MAX_COORDINATE``.

Coal's convex-hull code segfaults on points offset by 7e13 (for a 1 m hull) or scaled by
8.8e76; within the range, a 10 µm shape keeps a relative precision of about 1e-6.
"""

MAX_ASPECT = 1e4
"""Largest ratio of a cone's radius to its length (or the inverse) and of an ellipsoid's largest
to smallest semi-axis.

Coal's EPA fails (a distance of -1.8e308 or NaN witness points) for a third of the
orientations of a sphere centred in an ellipsoid of semi-axes (1e6, 1e6, 1) m and a sixth for
(1e5, 1e5, 0.1) m, and for some orientations of a sphere in a cone 1e5 times longer than wide.
No failure was seen up to a ratio of 1e4. Boxes, cylinders and capsules showed no such limit,
and take any sizes in range.
"""

MAX_NESTING = 100
"""Most levels of groups inside groups (a group of shapes is one level; a robot's is one).

Python copies, pickles, compares and writes out a nesting one call per level: at about 200
levels ``copy.deepcopy`` and ``pickle.dumps`` raise ``RecursionError`` under Python's default
recursion limit of 1000, and at 400 levels ``to_dict`` and ``equals`` do. Within 100 levels,
each of these works with room left for the caller's own stack.
"""

_SIZE_RANGE = f"sizes must lie in [{MIN_SIZE:g}, {MAX_SIZE:g}] m"
_COORDINATE_RANGE = f"coordinates must lie within ±{MAX_COORDINATE:g} m"


def describe(value: Any) -> str:
    """A short ``repr`` of ``value`` for error messages (at most 200 characters)."""
    try:
        shown = repr(value)
    except Exception:  # a repr that fails (or an int too long to print) must not hide the error
        shown = f"<{type(value).__name__} object>"
    return shown if len(shown) <= 200 else shown[:197] + "..."


def a_or_an(word: str) -> str:
    """``word`` after its indefinite article: ``"a Sphere"``, ``"an OcTree"``."""
    return f"an {word}" if word[:1].lower() in "aeiou" else f"a {word}"


# ---------------------------------------------------------------------------- numbers


def _real_item(value: Any) -> Any:
    """``value`` if it is a real number (a 0-d numeric array gives its item), else None."""
    if isinstance(value, np.ndarray) and not isinstance(value, np.ma.MaskedArray):
        if value.ndim == 0 and value.dtype.kind in "iuf":
            value = value[()]
    if isinstance(value, (bool, np.bool_)) or not isinstance(
        value, (Real, np.integer, np.floating)
    ):
        return None
    return value


def _to_float(item: Any, name: str, what: str, error: type[Exception]) -> float:
    """A real number as a float; one too large for a float raises ``error``."""
    try:
        return float(item)
    except OverflowError:
        shown = f"{Decimal(item):.3e}" if isinstance(item, int) else describe(item)
        raise error(
            f"{name} must be {what} within float range (about ±1.8e308), got {shown}"
        ) from None


def _scalar(
    value: Any, name: str, what: str, type_error: type[Exception], error: type[Exception]
) -> float:
    """``value`` as a float (possibly infinite or NaN); refuses bools and non-numbers."""
    item = _real_item(value)
    if item is None:
        raise type_error(f"{name} must be {what}, got {describe(value)}")
    return _to_float(item, name, what, error)


def _hidden_flag(value: Any) -> bool:
    """Whether a nested list or tuple holds a bool or a masked array, which numpy would turn
    into a number or unmask without a word."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, (list, tuple)):
            stack.extend(item)
        elif isinstance(item, (bool, np.bool_, np.ma.MaskedArray)) or (
            isinstance(item, np.ndarray) and item.dtype.kind == "b"
        ):
            return True
    return False


_KIND_NAMES = {
    "b": "booleans",
    "c": "complex numbers",
    "U": "strings",
    "S": "bytes",
    "M": "datetimes",
    "m": "timedeltas",
    "V": "structured records",
}


def numbers(
    value: Any,
    name: str,
    what: str = "real numbers",
    *,
    type_error: type[Exception] = ShapeTypeError,
    error: type[Exception] = InvalidArgumentError,
) -> np.ndarray:
    """``value`` as a new float64 array of any shape, refusing what numpy converts silently.

    Parameters
    ----------
    value : array_like
        Real numbers: a number, a nested sequence of them or a numeric array.
    name : str
        The parameter's name, for the error message.
    what : str
        What the parameter must be, for the error message ("3 real numbers", ...).
    type_error, error : exception classes
        Raised for a wrong type, and for an integer too large for a float.

    Returns
    -------
    ndarray, float64
        A new, writable array; it may hold infinities or NaN (the caller checks).

    Raises
    ------
    type_error
        For strings and bytes (also inside sequences), booleans, complex numbers, ``None`` or
        other objects inside sequences, object arrays and masked arrays.
    error
        For a nested sequence that is ragged, or an integer too large for a float.
    """
    if isinstance(value, np.ma.MaskedArray):
        raise type_error(
            f"{name} must be {what}, got {describe(value)} (a masked array: fill or compress "
            "it first)"
        )
    if isinstance(value, (str, bytes)):
        raise type_error(f"{name} must be {what}, got {describe(value)}")
    if isinstance(value, np.ndarray):
        raw = value
        if raw.dtype.kind == "O":
            raise type_error(
                f"{name} must be {what}, got {describe(value)} (an object array: give it a "
                "numeric dtype)"
            )
    else:
        try:
            raw = np.asarray(value)
        except ValueError:
            raise error(
                f"{name} must be {what}, got {describe(value)} (a ragged nested sequence)"
            ) from None
        except TypeError:
            raise type_error(f"{name} must be {what}, got {describe(value)}") from None
        if isinstance(value, (list, tuple)) and raw.dtype.kind in "iuf" and _hidden_flag(value):
            raise type_error(
                f"{name} must be {what}, got {describe(value)} (booleans or masked arrays among "
                "the values)"
            )
    kind = raw.dtype.kind
    if kind in "iuf":
        with np.errstate(over="ignore"):  # a long double beyond float range becomes inf
            return np.array(raw, dtype=np.float64)
    if kind == "O" and raw.ndim == 0:  # an int too large for numpy, or not a number at all
        return np.array(_scalar(value, name, what, type_error, error))
    if kind == "O":  # a sequence numpy could not type: find the culprit
        out = np.empty(raw.shape, dtype=np.float64)
        flat = out.reshape(-1)
        for i, item in enumerate(raw.flat):
            if isinstance(item, (list, tuple, np.ndarray)):
                raise error(
                    f"{name} must be {what}, got {describe(value)} (a ragged nested sequence)"
                )
            real = _real_item(item)
            if real is None:
                raise type_error(
                    f"{name} must be {what}, got {describe(value)} ({describe(item)} among the "
                    "values)"
                )
            flat[i] = _to_float(real, name, what, error)
        return out
    got = _KIND_NAMES.get(kind, f"values of dtype {raw.dtype}")
    raise type_error(f"{name} must be {what}, got {describe(value)} ({got})")


def finite_real(
    value: Any,
    name: str,
    *,
    error: type[Exception] = InvalidShapeError,
    type_error: type[Exception] = ShapeTypeError,
) -> float:
    """``value`` as a finite float; bools and non-numbers are refused.

    Raises
    ------
    type_error
        If ``value`` is not a real number (a bool, a string, ``None``, a sequence, ...).
    error
        If it is NaN or infinite, or an integer too large for a float.
    """
    out = _scalar(value, name, "a real number", type_error, error)
    if not math.isfinite(out):
        raise error(f"{name} must be finite, got {describe(value)}")
    return out


def bound(
    value: Any,
    name: str,
    *,
    error: type[Exception] = InvalidArgumentError,
    type_error: type[Exception] = ShapeTypeError,
) -> float:
    """``value`` as a float that may be infinite but not NaN (a cut-off such as ``inf_dist``)."""
    out = _scalar(value, name, "a real number", type_error, error)
    if math.isnan(out):
        raise error(f"{name} must not be NaN, got {describe(value)}")
    return out


def positive_real(
    value: Any,
    name: str,
    *,
    error: type[Exception] = InvalidShapeError,
    type_error: type[Exception] = ShapeTypeError,
) -> float:
    """``value`` as a finite float greater than zero (see :func:`finite_real`)."""
    out = finite_real(value, name, error=error, type_error=type_error)
    if out <= 0.0:
        raise error(f"{name} must be positive, got {describe(value)}")
    return out


def non_negative_real(
    value: Any,
    name: str,
    *,
    error: type[Exception] = InvalidArgumentError,
    type_error: type[Exception] = ShapeTypeError,
) -> float:
    """``value`` as a finite float, zero or greater (see :func:`finite_real`)."""
    out = finite_real(value, name, error=error, type_error=type_error)
    if out < 0.0:
        raise error(f"{name} must be zero or positive, got {describe(value)}")
    return out + 0.0  # -0.0 becomes 0.0


def size(
    value: Any,
    name: str,
    *,
    error: type[Exception] = InvalidShapeError,
    type_error: type[Exception] = ShapeTypeError,
) -> float:
    """``value`` as a length in metres within [:data:`MIN_SIZE`, :data:`MAX_SIZE`].

    Called as :func:`positive_real`; the messages say what is wrong and give the range.
    """
    out = _scalar(value, name, "a real number", type_error, error)
    if not MIN_SIZE <= out <= MAX_SIZE:
        raise error(f"{name} {_size_problem(out)}, got {describe(value)} ({_SIZE_RANGE})")
    return out


def _size_problem(value: float) -> str:
    if not math.isfinite(value):
        return "must be finite"
    if value <= 0.0:
        return "must be positive"
    return "is too small" if value < MIN_SIZE else "is too large"


def coordinate(
    value: Any,
    name: str,
    *,
    error: type[Exception] = InvalidShapeError,
    type_error: type[Exception] = ShapeTypeError,
) -> float:
    """``value`` as a finite float within ``±MAX_COORDINATE`` metres (a half-space offset, say)."""
    out = finite_real(value, name, error=error, type_error=type_error)
    if abs(out) > MAX_COORDINATE:
        raise error(f"{name} is too far out, got {describe(value)} ({_COORDINATE_RANGE})")
    return out


def count(
    value: Any,
    name: str,
    minimum: int = 1,
    *,
    error: type[Exception] = InvalidArgumentError,
    type_error: type[Exception] = ShapeTypeError,
) -> int:
    """``value`` as an int >= ``minimum`` (``max_contacts`` and the like).

    Python and numpy integers (and 0-d integer arrays) are accepted; bools and floats, even
    whole ones, are type mistakes.
    """
    item = integer(value, name, f"an integer >= {minimum}", type_error=type_error)
    if item < minimum:
        raise error(f"{name} must be an integer >= {minimum}, got {describe(value)}")
    return item


def integer(
    value: Any, name: str, what: str = "an integer", *, type_error: type[Exception] = ShapeTypeError
) -> int:
    """``value`` as an int: Python and numpy integers and 0-d integer arrays are accepted;
    bools and floats, even whole ones, raise ``type_error`` ("``name`` must be ``what``, got
    ...")."""
    item = value
    if isinstance(item, np.ndarray) and item.ndim == 0 and item.dtype.kind in "iu":
        item = item[()]
    if isinstance(item, (bool, np.bool_)) or not isinstance(item, (int, np.integer)):
        raise type_error(f"{name} must be {what}, got {describe(value)}")
    return int(item)


def flag(value: Any, name: str, *, type_error: type[Exception] = ShapeTypeError) -> bool:
    """``value`` as a bool: ``True``/``False`` or a numpy bool, nothing else (not 0 or 1)."""
    item = value
    if isinstance(item, np.ndarray) and item.ndim == 0 and item.dtype.kind == "b":
        item = item[()]
    if not isinstance(item, (bool, np.bool_)):
        raise type_error(f"{name} must be True or False, got {describe(value)}")
    return bool(item)


@overload
def text(
    value: Any,
    name: str,
    allow_none: Literal[False] = ...,
    *,
    type_error: type[Exception] = ...,
) -> str: ...
@overload
def text(
    value: Any, name: str, allow_none: bool, *, type_error: type[Exception] = ...
) -> str | None: ...
def text(
    value: Any,
    name: str,
    allow_none: bool = False,
    *,
    type_error: type[Exception] = ShapeTypeError,
) -> str | None:
    """``value`` if it is a ``str`` (or ``None`` when ``allow_none``)."""
    if isinstance(value, str) or (allow_none and value is None):
        return value
    kind = "a string or None" if allow_none else "a string"
    raise type_error(f"{name} must be {kind}, got {describe(value)}")


# ---------------------------------------------------------------------------- vectors


def vector3(
    value: Any,
    name: str,
    *,
    error: type[Exception] = InvalidShapeError,
    type_error: type[Exception] = ShapeTypeError,
) -> np.ndarray:
    """``value`` as a new finite float64 array of shape (3,) (writable)."""
    out = numbers(value, name, "3 real numbers", type_error=type_error, error=error)
    if out.shape != (3,):
        raise error(f"{name} must hold exactly 3 values, got shape {out.shape}: {describe(value)}")
    if not np.isfinite(out).all():
        raise error(f"{name} must be finite, got {describe(value)}")
    return out


def positive_vector3(
    value: Any,
    name: str,
    *,
    error: type[Exception] = InvalidShapeError,
    type_error: type[Exception] = ShapeTypeError,
) -> np.ndarray:
    """``value`` as a new read-only float64 array of shape (3,) with positive entries."""
    out = vector3(value, name, error=error, type_error=type_error)
    if not (out > 0.0).all():
        raise error(f"{name} must be positive, got {describe(value)}")
    out.flags.writeable = False
    return out


def size_vector3(
    value: Any,
    name: str,
    *,
    max_aspect: float | None = None,
    error: type[Exception] = InvalidShapeError,
    type_error: type[Exception] = ShapeTypeError,
) -> np.ndarray:
    """``value`` as a new read-only float64 array of 3 sizes, each in [:data:`MIN_SIZE`,
    :data:`MAX_SIZE`] metres.

    Called as :func:`positive_vector3`. With ``max_aspect`` (an ellipsoid's semi-axes take
    :data:`MAX_ASPECT`), the largest may be at most that many times the smallest.
    """
    out = numbers(value, name, "3 real numbers", type_error=type_error, error=error)
    if out.shape != (3,):
        raise error(f"{name} must hold exactly 3 values, got shape {out.shape}: {describe(value)}")
    outside = ~((out >= MIN_SIZE) & (out <= MAX_SIZE))  # NaN is outside too
    if outside.any():
        worst = float(out[np.argmax(outside)])
        raise error(f"{name} {_size_problem(worst)}, got {describe(value)} ({_SIZE_RANGE})")
    if max_aspect is not None:
        aspect(out, name, max_aspect, error=error)
    out.flags.writeable = False
    return out


def aspect(
    values: Sequence[float] | np.ndarray,
    name: str,
    limit: float = MAX_ASPECT,
    *,
    error: type[Exception] = InvalidShapeError,
) -> None:
    """Check that the largest of ``values`` (checked sizes) is at most ``limit`` times the
    smallest.

    Parameters
    ----------
    values : sequence of float
        Sizes already checked with :func:`size`, e.g. a cone's ``(radius, length)``.
    name : str
        What they are, for the message: ``"radii"``, ``"radius and length"``.
    limit : float
        The largest ratio accepted, :data:`MAX_ASPECT` by default.

    Raises
    ------
    error
        If the ratio exceeds ``limit``.
    """
    low, high = min(values), max(values)
    if high > limit * low:
        shown = ", ".join(f"{float(v):g}" for v in values)
        raise error(
            f"{name} must be within a factor of {limit:g} of each other (Coal's answers fail "
            f"beyond it), got {shown}: a factor of {high / low:.3g}"
        )


def points(
    value: Any,
    name: str,
    minimum: int,
    *,
    error: type[Exception] = InvalidMeshError,
    type_error: type[Exception] = ShapeTypeError,
) -> np.ndarray:
    """``value`` as a new read-only float64 array of shape (n, 3), n >= ``minimum``, every
    coordinate finite and within ``±MAX_COORDINATE`` metres.

    Raises
    ------
    type_error
        If ``value`` is not numbers (see :func:`numbers`).
    error
        For a wrong shape, too few points, or a coordinate that is not finite or out of range
        (the message gives the first such row).
    """
    out = numbers(value, name, "an (n, 3) array of numbers", type_error=type_error, error=error)
    if out.ndim != 2 or out.shape[1] != 3:
        raise error(f"{name} must have shape (n, 3), got shape {out.shape}: {describe(value)}")
    if len(out) < minimum:
        noun = "point" if minimum == 1 else "points"
        raise error(f"{name} must hold at least {minimum} {noun}, got {len(out)}")
    inside = np.abs(out) <= MAX_COORDINATE  # False for NaN too
    if not inside.all():
        row, column = np.argwhere(~inside)[0]
        bad = float(out[row, column])
        if not math.isfinite(bad):
            raise error(f"{name} must be finite, got {bad} at row {row}")
        raise error(
            f"{name} must lie within ±{MAX_COORDINATE:g} m on each axis, got {bad:g} at row {row}"
        )
    out.flags.writeable = False
    return out
