"""Exact signed distances and witness points of one placement of a primitive pair.

The same answers as :mod:`spatialcontact._closed_form` (the same definitions, the same fixed
choices where the answer is not unique; ``tests/test_penetration.py`` checks that they agree)
for a single placement, computed by :func:`spatialcontact._native.closed_form` from the two
shapes' Coal transforms: on one placement a numpy call costs more than the arithmetic it does.
A form answers ``(d, p1, p2, normal)``: the signed distance (minus the penetration depth on
overlap), the witness points on shape 1 and shape 2 and the unit normal from shape 1 to shape
2, world frame, ``p2 - p1 == d * normal`` to rounding.

:func:`pair_form` gives, for two leaf shapes of the package, the function that answers their
current placement; the query code uses it where Coal's own answer is wrong (overlapping
placements, see ``docs/conventions-distance.md``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from . import _native

__all__ = ["KINDS", "Answer", "Form", "pair_form"]

Answer = tuple[float, np.ndarray, np.ndarray, np.ndarray]
"""``(d, p1, p2, normal)`` of one placement, world frame: a float and three new float64
arrays of shape (3,)."""

Form = Callable[[Any, Any], Answer]
"""``form(tf1, tf2) -> (d, p1, p2, normal)``: one leaf pair answered at the placements of its
two Coal transforms, world frame."""

KINDS = {"sphere": 0, "cuboid": 1, "capsule": 2, "cylinder": 3, "halfspace": 4, "cone": 5}
"""The shape types with closed forms, by their code in :func:`_native.closed_form`."""

PAIRS = frozenset(
    {
        ("sphere", "sphere"),
        ("sphere", "cuboid"),
        ("sphere", "capsule"),
        ("capsule", "capsule"),
        ("sphere", "cylinder"),
        ("sphere", "cone"),
        ("sphere", "halfspace"),
        ("capsule", "halfspace"),
        ("cuboid", "halfspace"),
        ("cylinder", "halfspace"),
    }
)
"""The pairs with a closed form, in the argument order of the compiled forms."""


def _sizes(shape: Any) -> tuple[float, ...]:
    """What the closed forms read of a shape besides its pose: a sphere's radius, a box's half
    sides, a capsule's, cylinder's or cone's radius and half length, a half-space's local
    normal and offset."""
    kind = shape.stype
    if kind == "sphere":
        return (float(shape._radius),)
    if kind == "cuboid":
        return tuple(0.5 * float(v) for v in shape._scale)
    if kind in ("capsule", "cylinder", "cone"):
        return (float(shape._radius), 0.5 * float(shape._length))
    return (*(float(v) for v in shape._normal.tolist()), float(shape._offset))


def pair_form(a: Any, b: Any) -> Form | None:
    """The closed form of the leaf shapes ``a``, ``b`` (in that order), or None.

    Parameters
    ----------
    a, b : CollisionShape
        Two leaves. Their sizes are read now: the form must be made again when either is
        resized (the query caches, which hold it, are).

    Returns
    -------
    callable or None
        ``form(tf_a, tf_b) -> (d, p1, p2, normal)`` for the placements ``tf_a``, ``tf_b``
        (``coal.Transform3s``), world frame (see :data:`Answer`); None for a pair with no
        closed form here. Two shapes of one type are answered in the order of their serial
        numbers, so that the fixed choices of a concentric placement (see the module notes of
        :mod:`spatialcontact._closed_form`) are the same in both argument orders.

    Examples
    --------
    >>> from spatialmath import SE3
    >>> from spatialcontact import Sphere
    >>> a, b = Sphere(1.0), Sphere(1.0, pose=SE3.Trans(1.5, 0.0, 0.0))
    >>> d, p1, p2, normal = pair_form(a, b)(a._tf, b._tf)
    >>> d, p1.tolist(), p2.tolist(), normal.tolist()
    (-0.5, [1.0, 0.0, 0.0], [0.5, 0.0, 0.0], [1.0, 0.0, 0.0])
    """
    key = (a.stype, b.stype)
    swap = key not in PAIRS or (key[0] == key[1] and a._uid > b._uid)
    if swap:
        a, b = b, a
        if (a.stype, b.stype) not in PAIRS:
            return None
    form: Form = functools.partial(
        _native.closed_form, KINDS[a.stype], KINDS[b.stype], swap, _sizes(a), _sizes(b)
    )
    return form
