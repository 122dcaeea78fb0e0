"""Exact signed distances and witness points of one placement of a primitive pair, in floats.

The same answers as :mod:`spatialcontact._closed_form` (the same definitions, the same fixed
choices where the answer is not unique; ``tests/test_closed_form.py`` checks that they agree)
for a single placement, written in plain Python floats: on one placement a numpy call costs
more than the arithmetic it does. Every pair function takes and returns tuples and floats and
answers ``(d, p1, p2, normal)``: the signed distance (minus the penetration depth on overlap),
the witness points on shape 1 and shape 2 and the unit normal from shape 1 to shape 2, world
frame, ``p2 - p1 == d * normal`` to rounding.

:func:`pair_form` gives, for two leaf shapes of the package, the function that answers their
current placement from their Coal transforms; the query code uses it where Coal's own answer
is wrong (overlapping placements, see ``docs/conventions-distance.md``).

Inputs are not checked: rotations must be rigid (rows of a 3x3 nested sequence), sizes
positive, half-space normals unit.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from ._closed_form import TIE

__all__ = [
    "Answer",
    "box_halfspace",
    "capsule_capsule",
    "capsule_halfspace",
    "cylinder_halfspace",
    "pair_form",
    "sphere_box",
    "sphere_capsule",
    "sphere_cylinder",
    "sphere_halfspace",
    "sphere_sphere",
]

Vec = tuple[float, float, float]
Rows = Sequence[Sequence[float]]
Answer = tuple[float, Vec, Vec, Vec]
"""``(d, p1, p2, normal)`` of one placement, world frame."""

_SHORT = 1e-150
"""Vectors shorter than this have a squared norm below the normal range of float64."""
_NOISE = 1e-30
"""As in :mod:`spatialcontact._closed_form`: a squared core distance below this times the
squared scale of the inputs is rounding."""
_EX: Vec = (1.0, 0.0, 0.0)
_sqrt = math.sqrt


# ------------------------------------------------------------------------------- helpers


def _dot(u: Sequence[float], v: Sequence[float]) -> float:
    return u[0] * v[0] + u[1] * v[1] + u[2] * v[2]


def _cross(u: Sequence[float], v: Sequence[float]) -> Vec:
    return (u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0])


def _clamp(x: float) -> float:
    return 0.0 if x < 0.0 else (1.0 if x > 1.0 else x)


def _unit(v: Vec, length: float) -> Vec | None:
    """``v / length`` (``length`` its norm), rescaled first when tiny; None when zero."""
    if length >= _SHORT:
        return (v[0] / length, v[1] / length, v[2] / length)
    if length == 0.0:
        return None
    big = max(abs(v[0]), abs(v[1]), abs(v[2]))
    w = (v[0] / big, v[1] / big, v[2] / big)
    n = _sqrt(_dot(w, w))
    return (w[0] / n, w[1] / n, w[2] / n)


def _perpendicular(u: Vec) -> Vec:
    """``u x e_k`` made unit, ``e_k`` the world axis of the smallest ``|u_k|`` (the lowest on
    ties); world +x for a zero ``u``."""
    a = (abs(u[0]), abs(u[1]), abs(u[2]))
    k = 0 if a[0] <= a[1] and a[0] <= a[2] else (1 if a[1] <= a[2] else 2)
    e = (1.0 if k == 0 else 0.0, 1.0 if k == 1 else 0.0, 1.0 if k == 2 else 0.0)
    w = _cross(u, e)
    length = _sqrt(_dot(w, w))
    if length > 0.0:
        return (w[0] / length, w[1] / length, w[2] / length)
    return _EX


def _local(R: Rows, v: Vec) -> Vec:
    """``R.T @ v``."""
    return (
        R[0][0] * v[0] + R[1][0] * v[1] + R[2][0] * v[2],
        R[0][1] * v[0] + R[1][1] * v[1] + R[2][1] * v[2],
        R[0][2] * v[0] + R[1][2] * v[1] + R[2][2] * v[2],
    )


def _world(R: Rows, v: Vec) -> Vec:
    """``R @ v``."""
    return (
        R[0][0] * v[0] + R[0][1] * v[1] + R[0][2] * v[2],
        R[1][0] * v[0] + R[1][1] * v[1] + R[1][2] * v[2],
        R[2][0] * v[0] + R[2][1] * v[1] + R[2][2] * v[2],
    )


def _finish(k1: Vec, r1: float, k2: Vec, r2: float, n: Vec, s: float) -> Answer:
    """Two cores ``k1``, ``k2`` swept by radii ``r1``, ``r2``; ``k2 - k1 == s * n``."""
    return (
        s - (r1 + r2),
        (k1[0] + r1 * n[0], k1[1] + r1 * n[1], k1[2] + r1 * n[2]),
        (k2[0] - r2 * n[0], k2[1] - r2 * n[1], k2[2] - r2 * n[2]),
        n,
    )


def _on_plane(k1: Vec, r1: float, pn: Vec, offset: float) -> Answer:
    """The core point ``k1`` swept by ``r1`` against the half-space ``pn . x <= offset``."""
    s = _dot(k1, pn) - offset
    k2 = (k1[0] - s * pn[0], k1[1] - s * pn[1], k1[2] - s * pn[2])
    return _finish(k1, r1, k2, 0.0, (0.0 - pn[0], 0.0 - pn[1], 0.0 - pn[2]), s)


def _sign(x: float, scale: float = 1.0) -> float:
    """The sign of ``x``, 0 within ``TIE * scale`` of 0 (the tie rule of :data:`TIE`)."""
    tie = TIE * scale
    return 1.0 if x > tie else (-1.0 if x < -tie else 0.0)


# ---------------------------------------------------------------------------- pair forms


def sphere_sphere(c1: Vec, r1: float, c2: Vec, r2: float) -> Answer:
    """Sphere (centre ``c1``, radius ``r1``) against sphere; concentric: normal world +x.

    >>> sphere_sphere((0.0, 0.0, 0.0), 1.0, (1.5, 0.0, 0.0), 1.0)
    (-0.5, (1.0, 0.0, 0.0), (0.5, 0.0, 0.0), (1.0, 0.0, 0.0))
    """
    v = (c2[0] - c1[0], c2[1] - c1[1], c2[2] - c1[2])
    s = _sqrt(_dot(v, v))
    return _finish(c1, r1, c2, r2, _unit(v, s) or _EX, s)


def sphere_box(c: Vec, r: float, R: Rows, t: Vec, half: Vec) -> Answer:
    """Sphere against the box of rotation ``R``, centre ``t`` and half sides ``half``.

    A centre inside or on the surface leaves through the nearest face (ties: the lowest axis,
    then the centre's side, + on the mid-plane).

    >>> I = ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0))
    >>> sphere_box((0.25, 0.0, 0.0), 0.125, I, (0.0, 0.0, 0.0), (0.5, 0.5, 0.5))[0]
    -0.375
    """
    q = _local(R, (c[0] - t[0], c[1] - t[1], c[2] - t[2]))
    k = [min(max(q[i], -half[i]), half[i]) for i in range(3)]
    v = (k[0] - q[0], k[1] - q[1], k[2] - q[2])
    s = _sqrt(_dot(v, v))
    local = _unit(v, s)
    if local is None:
        gaps = [half[i] - abs(q[i]) for i in range(3)]
        axis = 0 if gaps[0] <= gaps[1] and gaps[0] <= gaps[2] else (1 if gaps[1] <= gaps[2] else 2)
        side = 1.0 if q[axis] >= 0.0 else -1.0
        k = list(q)
        k[axis] = side * half[axis]
        towards = [0.0, 0.0, 0.0]
        towards[axis] = -side
        local = (towards[0], towards[1], towards[2])
        s = -gaps[axis]
    w = _world(R, (k[0], k[1], k[2]))
    return _finish(c, r, (t[0] + w[0], t[1] + w[1], t[2] + w[2]), 0.0, _world(R, local), s)


def sphere_capsule(c: Vec, r: float, a: Vec, b: Vec, rc: float) -> Answer:
    """Sphere against the capsule of segment ``a``-``b`` and radius ``rc``; a centre on the
    segment gets the segment's fixed perpendicular (:func:`_perpendicular`) as normal.

    >>> sphere_capsule((0.0, 0.0, 0.0), 0.5, (1.0, 0.0, -1.0), (1.0, 0.0, 1.0), 0.25)[:2]
    (0.25, (0.5, 0.0, 0.0))
    """
    axis = (b[0] - a[0], b[1] - a[1], b[2] - a[2])
    length2 = _dot(axis, axis)
    if length2 == 0.0:
        length2 = 1.0
    ac = (c[0] - a[0], c[1] - a[1], c[2] - a[2])
    along = _dot(ac, axis) / length2
    t = _clamp(along)
    k = (a[0] + t * axis[0], a[1] + t * axis[1], a[2] + t * axis[2])
    v = (k[0] - c[0], k[1] - c[1], k[2] - c[2])
    if t == along:
        f = _dot(v, axis) / length2
        v = (v[0] - f * axis[0], v[1] - f * axis[1], v[2] - f * axis[2])
    s2 = _dot(v, v)
    if s2 <= _NOISE * (_dot(ac, ac) + length2):
        v, s2 = (0.0, 0.0, 0.0), 0.0
    s = _sqrt(s2)
    return _finish(c, r, k, rc, _unit(v, s) or _perpendicular(axis), s)


def capsule_capsule(a1: Vec, b1: Vec, r1: float, a2: Vec, b2: Vec, r2: float) -> Answer:
    """Capsule against capsule: the best of the five candidate pairs of
    :func:`spatialcontact._closed_form.capsule_capsule`, with its choices of normal.

    >>> d = capsule_capsule((-1.0, 0, 0), (1.0, 0, 0), 0.5, (0, -1.0, 0.1), (0, 1.0, 0.1), 0.5)
    >>> round(d[0], 12), d[3]
    (-0.9, (0.0, 0.0, 1.0))
    """
    d1 = (b1[0] - a1[0], b1[1] - a1[1], b1[2] - a1[2])
    d2 = (b2[0] - a2[0], b2[1] - a2[1], b2[2] - a2[2])
    r0 = (a2[0] - a1[0], a2[1] - a1[1], a2[2] - a1[2])
    aa, ee, bb = _dot(d1, d1), _dot(d2, d2), _dot(d1, d2)
    cc, ff = _dot(r0, d1), _dot(r0, d2)
    aa1 = aa if aa != 0.0 else 1.0
    ee1 = ee if ee != 0.0 else 1.0
    w = _cross(d1, d2)
    ww = _dot(w, w)
    if ww == 0.0:
        foot = 0.5 * (_clamp(cc / aa1) + _clamp((cc + bb) / aa1))
    else:
        foot = _clamp(_dot(_cross(r0, d2), w) / ww)
    t_foot = (foot * bb - ff) / ee1
    t0 = _clamp(t_foot)
    s0 = foot if t0 == t_foot else (cc + t0 * bb) / aa1
    # The foot first; another candidate wins only when shorter by more than rounding, so that
    # exactly parallel segments keep the middle of their overlap (all candidates tie there).
    s, t = _clamp(s0), t0
    gx = r0[0] + t * d2[0] - s * d1[0]
    gy = r0[1] + t * d2[1] - s * d1[1]
    gz = r0[2] + t * d2[2] - s * d1[2]
    best = gx * gx + gy * gy + gz * gz - 1e-15 * (aa + ee + _dot(r0, r0))
    for si, ti in (
        (0.0, -ff / ee1),
        (1.0, (bb - ff) / ee1),
        (cc / aa1, 0.0),
        ((cc + bb) / aa1, 1.0),
    ):
        si, ti = _clamp(si), _clamp(ti)
        gx = r0[0] + ti * d2[0] - si * d1[0]
        gy = r0[1] + ti * d2[1] - si * d1[1]
        gz = r0[2] + ti * d2[2] - si * d1[2]
        g = gx * gx + gy * gy + gz * gz
        if g < best:
            best, s, t = g, si, ti
    k1 = (a1[0] + s * d1[0], a1[1] + s * d1[1], a1[2] + s * d1[2])
    k2 = (a2[0] + t * d2[0], a2[1] + t * d2[1], a2[2] + t * d2[2])
    v = (k2[0] - k1[0], k2[1] - k1[1], k2[2] - k1[2])
    s_in = s * (1.0 - s) > 0.0
    t_in = t * (1.0 - t) > 0.0
    if s_in:
        f = _dot(v, d1) / aa1
        v = (v[0] - f * d1[0], v[1] - f * d1[1], v[2] - f * d1[2])
    elif t_in:
        f = _dot(v, d2) / ee1
        v = (v[0] - f * d2[0], v[1] - f * d2[1], v[2] - f * d2[2])
    dist2 = _dot(v, v)
    scale2 = aa + ee + _dot(r0, r0)
    if dist2 <= _NOISE * scale2:
        v, dist2 = (0.0, 0.0, 0.0), 0.0
    dist = _sqrt(dist2)
    normal = _unit(v, dist)
    if ww > 1e-16 * aa * ee and dist2 * aa * ee < scale2 * ww and ((s_in and t_in) or dist2 == 0):
        root = _sqrt(ww)
        wu = (w[0] / root, w[1] / root, w[2] / root)
        along = _dot(v, wu)
        if along < 0.0:
            wu = (-wu[0], -wu[1], -wu[2])
        normal, dist = wu, abs(along)
    if normal is None:
        normal = _perpendicular(d1 if aa > 0.0 else d2)
    return _finish(k1, r1, k2, r2, normal, dist)


def sphere_cylinder(c: Vec, r: float, R: Rows, t: Vec, rc: float, half: float) -> Answer:
    """Sphere against the solid cylinder of rotation ``R`` (axis local z), centre ``t``,
    radius ``rc`` and half length ``half``. A centre inside leaves through the nearest of the
    side and the caps (ties: the side, then the cap on its side, +z on the mid-plane); on the
    axis, through the side along local +x.

    >>> I = ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0))
    >>> d = sphere_cylinder((0.1, 0.0, 0.2), 0.1, I, (0.0, 0.0, 0.0), 0.5, 0.5)
    >>> round(d[0], 12), d[3]
    (-0.4, (0.0, 0.0, -1.0))
    """
    q = _local(R, (c[0] - t[0], c[1] - t[1], c[2] - t[2]))
    rho = math.hypot(q[0], q[1])
    f = rc / max(rho, rc)
    k = [q[0] * f, q[1] * f, min(max(q[2], -half), half)]
    v = (k[0] - q[0], k[1] - q[1], k[2] - q[2])
    s = _sqrt(_dot(v, v))
    local = _unit(v, s)
    if local is None:
        side_gap = rc - rho
        cap_gap = half - abs(q[2])
        up = 1.0 if q[2] >= 0.0 else -1.0
        k = list(q)
        if side_gap <= cap_gap:
            radial = _unit((q[0], q[1], 0.0), rho) or _EX
            k[0], k[1] = rc * radial[0], rc * radial[1]
            local = (-radial[0], -radial[1], -radial[2])
        else:
            k[2] = up * half
            local = (0.0, 0.0, -up)
        s = -min(side_gap, cap_gap)
    w = _world(R, (k[0], k[1], k[2]))
    return _finish(c, r, (t[0] + w[0], t[1] + w[1], t[2] + w[2]), 0.0, _world(R, local), s)


def sphere_halfspace(c: Vec, r: float, n: Vec, offset: float) -> Answer:
    """Sphere against the half-space ``n . x <= offset`` (``n`` unit, world frame).

    >>> sphere_halfspace((0.0, 0.0, 0.0625), 0.125, (0.0, 0.0, 1.0), 0.0)[0]
    -0.0625
    """
    return _on_plane(c, r, n, offset)


def capsule_halfspace(a: Vec, b: Vec, r: float, n: Vec, offset: float) -> Answer:
    """Capsule against half-space; over the deepest end point (the middle of a segment
    parallel to the plane).

    >>> capsule_halfspace((0.0, 0.0, 1.0), (0.0, 0.0, 3.0), 0.5, (0.0, 0.0, 1.0), 0.0)[:2]
    (0.5, (0.0, 0.0, 0.5))
    """
    axis = (b[0] - a[0], b[1] - a[1], b[2] - a[2])
    f = 0.5 - 0.5 * _sign(_dot(axis, n), _sqrt(_dot(axis, axis)))
    return _on_plane((a[0] + f * axis[0], a[1] + f * axis[1], a[2] + f * axis[2]), r, n, offset)


def box_halfspace(R: Rows, t: Vec, half: Vec, n: Vec, offset: float) -> Answer:
    """Box against half-space; from the deepest vertex (the centre of the deepest edge or face
    parallel to the plane).

    >>> I = ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0))
    >>> box_halfspace(I, (0.0, 0.0, 0.0), (1.0, 1.0, 1.0), (0.0, 0.0, 1.0), -0.5)[:2]
    (-0.5, (0.0, 0.0, -1.0))
    """
    m = _local(R, n)
    w = _world(R, (half[0] * _sign(m[0]), half[1] * _sign(m[1]), half[2] * _sign(m[2])))
    return _on_plane((t[0] - w[0], t[1] - w[1], t[2] - w[2]), 0.0, n, offset)


def cylinder_halfspace(R: Rows, t: Vec, rc: float, half: float, n: Vec, offset: float) -> Answer:
    """Cylinder against half-space; from the deepest rim point (the centre of the deepest cap,
    or the middle of the deepest side line).

    >>> I = ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0))
    >>> cylinder_halfspace(I, (0.0, 0.0, 0.0), 0.5, 1.0, (0.0, 0.0, 1.0), 0.0)[:2]
    (-1.0, (0.0, 0.0, -1.0))
    """
    axis = (R[0][2], R[1][2], R[2][2])
    h = half * _sign(_dot(n, axis))
    w = _cross(axis, _cross(n, axis))
    wn = _sqrt(_dot(w, w))
    f = rc / wn if wn > TIE else 0.0
    rim = (
        t[0] - h * axis[0] - f * w[0],
        t[1] - h * axis[1] - f * w[1],
        t[2] - h * axis[2] - f * w[2],
    )
    return _on_plane(rim, 0.0, n, offset)


# ------------------------------------------------------------------- shapes of the package

Form = Callable[[Any, Any], Answer]
"""``form(tf1, tf2) -> (d, p1, p2, normal)``: one leaf pair answered at the placements of its
two Coal transforms, plain floats, world frame."""


def _swapped(answer: Answer) -> Answer:
    d, p1, p2, n = answer
    return d, p2, p1, (0.0 - n[0], 0.0 - n[1], 0.0 - n[2])


def _translation(tf: Any) -> Vec:
    t: Vec = tf.getTranslation().tolist()  # a list of 3 floats, read like the tuple
    return t


def _segment(tf: Any, half: float) -> tuple[Vec, Vec]:
    """End points of a capsule's segment of half length ``half`` along its local z."""
    (_, _, zx), (_, _, zy), (_, _, zz) = tf.getRotation().tolist()
    x, y, z = tf.getTranslation().tolist()
    return (x - half * zx, y - half * zy, z - half * zz), (
        x + half * zx,
        y + half * zy,
        z + half * zz,
    )


def _plane(shape: Any, tf: Any) -> tuple[Vec, float]:
    """A half-space shape's world normal and offset at the placement ``tf``."""
    R = tf.getRotation().tolist()
    n = _world(R, tuple(shape._normal.tolist()))
    return n, float(shape._offset) + _dot(n, _translation(tf))


def _reader(shape: Any) -> Callable[[Any], tuple[Any, ...]] | None:
    """How the closed forms see a leaf at the placement ``tf``: (kind, *arguments)."""
    kind = shape.stype
    if kind == "sphere":
        radius = float(shape._radius)
        return lambda tf: (_translation(tf), radius)
    if kind == "cuboid":
        half = tuple(0.5 * float(v) for v in shape._scale)
        return lambda tf: (tf.getRotation().tolist(), _translation(tf), half)
    if kind == "capsule":
        radius, h = float(shape._radius), 0.5 * float(shape._length)
        return lambda tf: (*_segment(tf, h), radius)
    if kind == "cylinder":
        radius, h = float(shape._radius), 0.5 * float(shape._length)
        return lambda tf: (tf.getRotation().tolist(), _translation(tf), radius, h)
    if kind == "halfspace":
        return lambda tf: _plane(shape, tf)
    return None


_PAIRS: dict[tuple[str, str], Callable[..., Answer]] = {
    ("sphere", "sphere"): sphere_sphere,
    ("sphere", "cuboid"): sphere_box,
    ("sphere", "capsule"): sphere_capsule,
    ("capsule", "capsule"): capsule_capsule,
    ("sphere", "cylinder"): sphere_cylinder,
    ("sphere", "halfspace"): sphere_halfspace,
    ("capsule", "halfspace"): capsule_halfspace,
    ("cuboid", "halfspace"): box_halfspace,
    ("cylinder", "halfspace"): cylinder_halfspace,
}


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
        (``coal.Transform3s``), plain floats, world frame; None for a pair with no
        closed form here. Two shapes of one type are answered in the order of their serial
        numbers, so that the fixed choices of a concentric placement (see the module notes of
        :mod:`spatialcontact._closed_form`) are the same in both argument orders.
    """
    key = (a.stype, b.stype)
    of = _PAIRS.get(key)
    swap = of is None or (key[0] == key[1] and a._uid > b._uid)
    if of is None:
        of = _PAIRS.get(key[::-1])
        if of is None:
            return None
    if swap:
        a, b = b, a
    read_a, read_b = _reader(a), _reader(b)
    if read_a is None or read_b is None:
        return None
    pair, first, second = of, read_a, read_b
    if swap:
        return lambda tf1, tf2: _swapped(pair(*first(tf2), *second(tf1)))
    return lambda tf1, tf2: pair(*first(tf1), *second(tf2))
