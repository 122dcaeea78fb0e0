"""Exact signed distances and witness points of primitive pairs, for batches of placements.

Every pair function answers ``N`` placements at once in plain numpy and returns a
:class:`SignedDistance`: the signed distance ``d``, the witness points ``p1`` on shape 1 and
``p2`` on shape 2 and the unit ``normal`` from shape 1 to shape 2, all in the world frame, with
``p2 - p1 == d * normal`` to rounding. Separated (``d > 0``), ``p1`` and ``p2`` are the closest
points and ``normal = (p2 - p1) / d``. Overlapping, ``d`` is minus the penetration depth (the
length of the shortest translation that separates the two solids), translating shape 2 by
``-d * normal`` makes the solids touch, and ``p1`` and ``p2`` are the deepest points: ``p1`` is
the point of shape 1 farthest along the normal and ``p2`` the point of shape 2 farthest against
it, both on the surfaces (in a shallow overlap, ``p1`` lies inside shape 2 and ``p2`` inside
shape 1).

Shapes, as in the package and in Coal:

- sphere: ``centre`` and ``radius``; a point is a sphere of radius 0;
- box: a pose and the full side lengths ``size``, centred, edges along its local axes;
- capsule: the segment from ``a`` to ``b`` swept by a sphere of ``radius``
  (:func:`capsule_endpoints` gives ``a`` and ``b`` for a pose and a segment length);
- cylinder: a pose, ``radius`` and the full ``length`` along local z, centred, solid with
  flat caps;
- cone: a pose, the base ``radius`` and the full ``length`` along local z, centred: the base
  disc at local ``z = -length / 2``, the apex at ``z = +length / 2``;
- half-space: the solid ``{x : normal . x <= offset}``, ``normal`` a unit vector in the
  world frame.

Batches: points are ``(N, 3)`` or ``(3,)``, poses ``(N, 4, 4)`` or ``(4, 4)`` rigid transforms
from the shape's frame to the world, half-space normals ``(N, 3)`` or ``(3,)`` and offsets
``(N,)`` or scalars. Unbatched inputs are broadcast against batched ones, and every result has
the batch axis (``N = 1`` when no input has one). Radii and lengths are scalars, a box size is
``(3,)``. Inputs are not checked: poses must be rigid, sizes positive, normals unit.

Placements where the answer is not unique get fixed answers:

- concentric spheres (or a point at a sphere's centre): the normal is world +x;
- a centre inside a box or on its surface: the nearest face, ties to the lowest axis of the
  box frame, then to the face on the centre's side (the + face for a centre on the mid-plane);
- a sphere centre on a capsule's segment: the normal is the segment's fixed perpendicular,
  ``u x e_k`` made unit for the segment direction ``u``, ``e_k`` the world axis of the smallest
  ``|u_k|`` (the lowest on ties); world +x for a segment of length 0;
- capsule segments that touch or cross: the normal is along ``d1 x d2`` (``d1 = b1 - a1``,
  ``d2 = b2 - a2``), or the fixed perpendicular of ``d1`` for parallel segments;
- exactly parallel capsule segments (``d1 x d2 == 0``): the middle of their overlap;
- a centre inside a cylinder or on its surface: the nearest of the side and the caps, ties to
  the side, then to the cap on the centre's side (+z for a centre on the mid-plane); on the
  axis, the side's direction is local +x;
- a centre inside a cone or on its surface: the nearest of the slant side and the base, ties
  to the slant side; on the axis (the apex included), the slant side's direction is the one
  over local +x. A centre outside the cone nearest to its apex or to its rim circle goes
  straight to that point; a centre exactly on the rim circle is on the surface (the slant
  side's normal);
- a box, capsule or cylinder with a face, edge or side parallel to a half-space's plane: the
  centre of the deepest face, edge, segment or side line.

The box, cylinder, cone and half-space choices are made in the shapes' own frames and turn
with a rigid motion of both shapes; the concentric-sphere and segment choices are made in the
world frame and do not.

A centre closer to a segment, or two segments closer to each other, than about 1e-15 times
the inputs' size count as on it, or touching. ``d`` is exact to rounding everywhere. The normal
of segments that cross within about 1e-6 rad of parallel is only as accurate as ``d1 x d2`` is
in floating point (about 1e-16 / angle), so that moving by ``-d`` along it can leave an
overlap of that order times the segments' length (measured with 0.5 and 0.7 m segments: up to
2e-9 m at 1e-8 rad, 2e-10 m at 1e-7 rad, 2e-11 m at 1e-6 rad).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import numpy.typing as npt

__all__ = [
    "SignedDistance",
    "box_halfspace",
    "capsule_capsule",
    "capsule_endpoints",
    "capsule_halfspace",
    "cylinder_halfspace",
    "point_box",
    "point_capsule",
    "point_cone",
    "point_cylinder",
    "point_halfspace",
    "point_sphere",
    "sdf_box",
    "sdf_capsule",
    "sdf_cone",
    "sdf_cylinder",
    "sdf_halfspace",
    "sdf_sphere",
    "sphere_box",
    "sphere_capsule",
    "sphere_cone",
    "sphere_cylinder",
    "sphere_halfspace",
    "sphere_sphere",
    "swap",
]

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]

_EYE = np.eye(3)
_EX = _EYE[0]
_XY = np.array([1.0, 1.0, 0.0])
_SHORT = 1e-150
"""Vectors shorter than this have a squared norm below the normal range of float64."""
_NOISE = 1e-30
"""A squared core distance below ``_NOISE`` times the squared scale of the inputs is rounding:
the centre is on the axis, or the segments meet."""
TIE = 1e-12
"""The half-space pairs' tie rule: a unit vector's component (or a cosine) within this of 0 is
0, so a box face, a capsule or a cylinder cap that is parallel to the plane up to rounding
gives the centre of the face, segment or cap as its deepest point (its depth is then off by at
most ``TIE`` times its size), the same in the scalar and the vectorised forms."""


def _sign(x: FloatArray, scale: FloatArray | float = 1.0) -> FloatArray:
    """The sign of ``x``, 0 within ``TIE * scale`` of 0."""
    out: FloatArray = np.sign(x) * (np.abs(x) > TIE * scale)
    return out


_SMALL = 64
"""Batches up to this size take the paths with the fewest numpy calls (a call costs more than
its arithmetic there); larger ones the paths with the fewest slow strided passes."""
_NEXT = np.array([1, 2, 0])
_LAST = np.array([2, 0, 1])


class SignedDistance(NamedTuple):
    """Signed distances and witness points of ``N`` placements of a pair, world frame.

    Attributes
    ----------
    d : ndarray, shape (N,)
        Signed distance: positive apart, negative on overlap (minus the penetration depth).
    p1 : ndarray, shape (N, 3), world frame
        Witness point on shape 1.
    p2 : ndarray, shape (N, 3), world frame
        Witness point on shape 2.
    normal : ndarray, shape (N, 3), world frame
        Unit vector from shape 1 to shape 2, with ``p2 - p1 == d * normal``.
    """

    d: FloatArray
    p1: FloatArray
    p2: FloatArray
    normal: FloatArray


def swap(result: SignedDistance) -> SignedDistance:
    """The same answers with the two shapes exchanged.

    Parameters
    ----------
    result : SignedDistance
        Answers for the pair (shape 1, shape 2).

    Returns
    -------
    SignedDistance
        Answers for (shape 2, shape 1): ``d`` unchanged, ``p1`` and ``p2`` exchanged, the
        normal negated (all ``(N, 3)`` or ``(N,)``, world frame).

    Examples
    --------
    >>> r = swap(sphere_box([0.0, 0.0, 2.0], 0.5, np.eye(4), [1.0, 1.0, 1.0]))
    >>> r.d.tolist(), r.p1.tolist(), r.normal.tolist()
    ([1.0], [[0.0, 0.0, 0.5]], [[0.0, 0.0, 1.0]])
    """
    return SignedDistance(result.d, result.p2, result.p1, 0.0 - result.normal)


# ------------------------------------------------------------------------------- helpers


def _points(x: npt.ArrayLike) -> FloatArray:
    """``x`` as a float ``(N, 3)`` array, a ``(3,)`` point becoming ``(1, 3)``."""
    a = np.asarray(x, dtype=np.float64)
    return a[None] if a.ndim == 1 else a


def _frames(pose: npt.ArrayLike) -> tuple[FloatArray, FloatArray]:
    """Rotations ``(N, 3, 3)`` and translations ``(N, 3)`` of ``(N, 4, 4)`` or ``(4, 4)``."""
    T = np.asarray(pose, dtype=np.float64)
    if T.ndim == 2:
        T = T[None]
    return T[:, :3, :3], T[:, :3, 3]


def _dot(a: FloatArray, b: FloatArray) -> FloatArray:
    """Row-wise dot products of ``(N, 3)`` arrays (rows of length 1 broadcast)."""
    out: FloatArray = np.einsum("ij,ij->i", a, b)
    return out


def _cross(a: FloatArray, b: FloatArray) -> FloatArray:
    """Row-wise cross products of ``(N, 3)`` arrays (rows of length 1 broadcast).

    ``np.cross`` costs several times more than either path here.
    """
    if max(len(a), len(b)) <= _SMALL:
        return a.take(_NEXT, 1) * b.take(_LAST, 1) - a.take(_LAST, 1) * b.take(_NEXT, 1)
    out = np.empty((max(len(a), len(b)), 3))
    ax, ay, az = a[:, 0], a[:, 1], a[:, 2]
    bx, by, bz = b[:, 0], b[:, 1], b[:, 2]
    np.subtract(ay * bz, az * by, out=out[:, 0])
    np.subtract(az * bx, ax * bz, out=out[:, 1])
    np.subtract(ax * by, ay * bx, out=out[:, 2])
    return out


def _to_local(v: FloatArray, rot: FloatArray) -> FloatArray:
    """World vectors ``(N, 3)`` in the frames of ``rot`` (``(N, 3, 3)`` or ``(1, 3, 3)``)."""
    out: FloatArray
    if len(rot) == 1:
        out = v @ rot[0]
    elif len(rot) <= _SMALL:
        out = (v[:, None, :] @ rot)[:, 0, :]
    else:
        out = np.einsum("ni,nij->nj", v, rot)
    return out


def _to_world(v: FloatArray, rot: FloatArray) -> FloatArray:
    """Local vectors ``(N, 3)`` of the frames ``rot`` (``(N, 3, 3)`` or ``(1, 3, 3)``), in world."""
    out: FloatArray
    if len(rot) == 1:
        out = v @ rot[0].T
    elif len(rot) <= _SMALL:
        out = (rot @ v[:, :, None])[:, :, 0]
    else:
        out = np.einsum("nij,nj->ni", rot, v)
    return out


def _unit(v: FloatArray, length: FloatArray) -> tuple[FloatArray, BoolArray | None]:
    """``v / length`` row by row, ``length`` being the rows' norms.

    Rows of zero length are left zero and returned as a mask (``None`` when there are none).
    Rows so short that their squared norm loses precision are scaled up first.
    """
    short = length < _SHORT
    if not np.count_nonzero(short):
        return v / length[:, None], None
    unit = v / (length + short)[:, None]
    zero = length == 0.0
    tiny = short & ~zero
    if np.count_nonzero(tiny):
        w = v[tiny] / np.abs(v[tiny]).max(axis=1, keepdims=True)
        unit[tiny] = w / np.sqrt(_dot(w, w))[:, None]
    return unit, zero if np.count_nonzero(zero) else None


def _perpendicular(u: FloatArray) -> FloatArray:
    """The fixed unit perpendicular of each row of ``u`` ``(M, 3)``: ``u x e_k``, unit.

    ``e_k`` is the world axis of the smallest ``|u_k|`` (the lowest on ties); world +x for a
    zero row.
    """
    w = _cross(u, _EYE[np.abs(u).argmin(axis=1)])
    length = np.sqrt(_dot(w, w))
    out: FloatArray = np.broadcast_to(_EX, u.shape).copy()
    some = length > 0.0
    out[some] = w[some] / length[some, None]
    return out


def _finish(
    k1: FloatArray, r1: float, k2: FloatArray, r2: float, normal: FloatArray, s: FloatArray
) -> SignedDistance:
    """The answer of two cores ``k1``, ``k2`` swept by spheres of radii ``r1``, ``r2``.

    ``k2 - k1 == s * normal``: ``s`` is the signed distance of the cores along the normal.
    """
    return SignedDistance(s - (r1 + r2), k1 + r1 * normal, k2 - r2 * normal, normal)


def _on_plane(
    k1: FloatArray, r1: float, plane_normal: FloatArray, offset: npt.ArrayLike
) -> SignedDistance:
    """The answer of the core point ``k1`` swept by a sphere of ``r1`` against a half-space."""
    s = _dot(k1, plane_normal) - np.asarray(offset, dtype=np.float64)
    k2 = k1 - s[:, None] * plane_normal
    normal = np.subtract(0.0, plane_normal, out=np.empty_like(k2))  # no -0.0
    return _finish(k1, r1, k2, 0.0, normal, s)


# ---------------------------------------------------------------------------- pair forms


def sphere_sphere(
    centre1: npt.ArrayLike, radius1: float, centre2: npt.ArrayLike, radius2: float
) -> SignedDistance:
    """Sphere against sphere.

    Parameters
    ----------
    centre1 : array_like, shape (N, 3) or (3,), world frame
        Centres of sphere 1.
    radius1 : float
        Radius of sphere 1 (0 for a point).
    centre2 : array_like, shape (N, 3) or (3,), world frame
        Centres of sphere 2.
    radius2 : float
        Radius of sphere 2.

    Returns
    -------
    SignedDistance
        ``d`` ``(N,)``; ``p1``, ``p2``, ``normal`` ``(N, 3)``, world frame. Concentric spheres
        get the normal world +x.

    Examples
    --------
    >>> r = sphere_sphere([0.0, 0.0, 0.0], 1.0, [1.5, 0.0, 0.0], 1.0)
    >>> r.d.tolist(), r.p1.tolist(), r.p2.tolist(), r.normal.tolist()
    ([-0.5], [[1.0, 0.0, 0.0]], [[0.5, 0.0, 0.0]], [[1.0, 0.0, 0.0]])
    """
    c1 = _points(centre1)
    c2 = _points(centre2)
    v = c2 - c1
    s = np.sqrt(_dot(v, v))
    normal, zero = _unit(v, s)
    if zero is not None:
        normal[zero] = _EX
    return _finish(c1, radius1, c2, radius2, normal, s)


def sphere_box(
    centre: npt.ArrayLike, radius: float, pose: npt.ArrayLike, size: npt.ArrayLike
) -> SignedDistance:
    """Sphere against box.

    Parameters
    ----------
    centre : array_like, shape (N, 3) or (3,), world frame
        Centres of the sphere.
    radius : float
        Radius of the sphere (0 for a point).
    pose : array_like, shape (N, 4, 4) or (4, 4)
        Box frames in the world (rigid).
    size : array_like, shape (3,)
        Full side lengths of the box along its local x, y, z.

    Returns
    -------
    SignedDistance
        ``d`` ``(N,)``; ``p1``, ``p2``, ``normal`` ``(N, 3)``, world frame. A centre inside the
        box or on its surface leaves through the nearest face (ties: the lowest axis, then the
        centre's side, + on the mid-plane); ``p2`` is then the centre's projection on that
        face.

    Examples
    --------
    >>> r = sphere_box([0.25, 0.0, 0.0], 0.125, np.eye(4), [1.0, 1.0, 1.0])
    >>> r.d.tolist(), r.p1.tolist(), r.p2.tolist(), r.normal.tolist()
    ([-0.375], [[0.125, 0.0, 0.0]], [[0.5, 0.0, 0.0]], [[-1.0, 0.0, 0.0]])
    """
    c = _points(centre)
    rot, t = _frames(pose)
    h = 0.5 * np.asarray(size, dtype=np.float64)
    q = _to_local(c - t, rot)
    k = np.minimum(np.maximum(q, -h), h)
    v = k - q
    s = np.sqrt(_dot(v, v))
    local, inside = _unit(v, s)
    if inside is not None:
        qi = q[inside]
        gaps = h - np.abs(qi)
        axis = gaps.argmin(axis=1)
        rows = np.arange(len(axis))
        side = np.where(qi[rows, axis] >= 0.0, 1.0, -1.0)
        qi[rows, axis] = side * h[axis]
        towards_box = np.zeros_like(qi)
        towards_box[rows, axis] = -side
        k[inside] = qi
        local[inside] = towards_box
        s[inside] = -gaps[rows, axis]
    k2 = t + _to_world(k, rot)
    return _finish(c, radius, k2, 0.0, _to_world(local, rot), s)


def sphere_capsule(
    centre: npt.ArrayLike,
    radius: float,
    a: npt.ArrayLike,
    b: npt.ArrayLike,
    capsule_radius: float,
) -> SignedDistance:
    """Sphere against capsule.

    Parameters
    ----------
    centre : array_like, shape (N, 3) or (3,), world frame
        Centres of the sphere.
    radius : float
        Radius of the sphere (0 for a point).
    a, b : array_like, shape (N, 3) or (3,), world frame
        End points of the capsule's segment (see :func:`capsule_endpoints`).
    capsule_radius : float
        Radius of the capsule.

    Returns
    -------
    SignedDistance
        ``d`` ``(N,)``; ``p1``, ``p2``, ``normal`` ``(N, 3)``, world frame. A centre on the
        segment gets the segment's fixed perpendicular (see the module notes) as normal.

    Examples
    --------
    >>> r = sphere_capsule([0.0, 0.0, 0.0], 0.5, [1.0, 0.0, -1.0], [1.0, 0.0, 1.0], 0.25)
    >>> r.d.tolist(), r.p1.tolist(), r.p2.tolist()
    ([0.25], [[0.5, 0.0, 0.0]], [[0.75, 0.0, 0.0]])
    """
    c = _points(centre)
    a1 = _points(a)
    axis = _points(b) - a1
    length2 = _dot(axis, axis)
    length2 += length2 == 0.0  # a segment of length 0 has zero numerators: its parameter is 0
    ac = c - a1
    along = _dot(ac, axis) / length2
    t = np.minimum(np.maximum(along, 0.0), 1.0)
    k = a1 + t[:, None] * axis
    v = k - c
    # A foot inside the segment is square to it: drop the rounding left along the axis, which
    # would otherwise turn the normal of a centre on the axis along the axis.
    v -= ((_dot(v, axis) / length2) * (t == along))[:, None] * axis
    s2 = _dot(v, v)
    on_axis = s2 <= _NOISE * (_dot(ac, ac) + length2)
    if np.count_nonzero(on_axis):
        v[on_axis] = 0.0
        s2[on_axis] = 0.0
    s = np.sqrt(s2)
    normal, zero = _unit(v, s)
    if zero is not None:
        normal[zero] = _perpendicular(np.broadcast_to(axis, v.shape)[zero])
    return _finish(c, radius, k, capsule_radius, normal, s)


def capsule_capsule(
    a1: npt.ArrayLike,
    b1: npt.ArrayLike,
    radius1: float,
    a2: npt.ArrayLike,
    b2: npt.ArrayLike,
    radius2: float,
) -> SignedDistance:
    """Capsule against capsule.

    The closest points of the two segments are the best of five candidate pairs: each end
    point against the other segment, and the foot on segment 1 of the lines' common
    perpendicular (the middle of the overlap for exactly parallel segments) against segment 2.

    Parameters
    ----------
    a1, b1 : array_like, shape (N, 3) or (3,), world frame
        End points of capsule 1's segment (see :func:`capsule_endpoints`).
    radius1 : float
        Radius of capsule 1.
    a2, b2 : array_like, shape (N, 3) or (3,), world frame
        End points of capsule 2's segment.
    radius2 : float
        Radius of capsule 2.

    Returns
    -------
    SignedDistance
        ``d`` ``(N,)``; ``p1``, ``p2``, ``normal`` ``(N, 3)``, world frame. Segments that touch
        or cross get a normal along ``d1 x d2`` (parallel ones: the fixed perpendicular of
        ``d1``, see the module notes) and ``d = -(radius1 + radius2)``.

    Examples
    --------
    >>> r = capsule_capsule([-1.0, 0, 0], [1.0, 0, 0], 0.5, [0, -1.0, 0.1], [0, 1.0, 0.1], 0.5)
    >>> round(float(r.d[0]), 12), r.normal.tolist()
    (-0.9, [[0.0, 0.0, 1.0]])
    """
    p, q, m, n = _points(a1), _points(b1), _points(a2), _points(b2)
    if not p.shape == q.shape == m.shape == n.shape:
        p, q, m, n = np.broadcast_arrays(p, q, m, n)
    d1 = q - p
    d2 = n - m
    r0 = m - p
    aa = _dot(d1, d1)
    ee = _dot(d2, d2)
    bb = _dot(d1, d2)
    cc = _dot(r0, d1)
    ff = _dot(r0, d2)
    aa1 = aa + (aa == 0.0)  # a segment of length 0 has zero numerators: its parameter is 0
    ee1 = ee + (ee == 0.0)
    w = _cross(d1, d2)
    ww = _dot(w, w)
    parallel = ww == 0.0
    # Candidate parameters, s along segment 1 and t along segment 2. First the foot on segment
    # 1 of the lines' common perpendicular (the middle of the overlap for parallel segments)
    # and its projection on segment 2, projected back on segment 1 if that was past an end:
    # projecting, rather than solving for both, keeps the pair square to the segments where
    # they are near parallel and solved parameters drift along them. Then a1, b1 against
    # segment 2 and a2, b2 against segment 1.
    n_rows = len(p)
    S = np.empty((5, n_rows))
    T = np.empty((5, n_rows))
    foot = np.minimum(np.maximum(_dot(_cross(r0, d2), w) / (ww + parallel), 0.0), 1.0)
    if np.count_nonzero(parallel):
        ends = np.minimum(np.maximum(cc[parallel] / aa1[parallel], 0.0), 1.0)
        ends2 = np.minimum(np.maximum((cc + bb)[parallel] / aa1[parallel], 0.0), 1.0)
        foot[parallel] = 0.5 * (ends + ends2)
    t_foot = (foot * bb - ff) / ee1
    T[0] = np.minimum(np.maximum(t_foot, 0.0), 1.0)
    S[0] = np.where(T[0] == t_foot, foot, (cc + T[0] * bb) / aa1)
    S[1] = 0.0
    T[1] = -ff / ee1
    S[2] = 1.0
    T[2] = (bb - ff) / ee1
    S[3] = cc / aa1
    T[3] = 0.0
    S[4] = (cc + bb) / aa1
    T[4] = 1.0
    np.minimum(np.maximum(S, 0.0, out=S), 1.0, out=S)
    np.minimum(np.maximum(T, 0.0, out=T), 1.0, out=T)
    if n_rows <= _SMALL:
        V = r0 + T[:, :, None] * d2 - S[:, :, None] * d1
        gaps2 = np.einsum("kni,kni->kn", V, V)
    else:  # coordinate by coordinate, over contiguous rows of the five candidates
        gaps2 = np.zeros((5, n_rows))
        g = np.empty((5, n_rows))
        h = np.empty((5, n_rows))
        for e1, e2, e0 in zip(d1.T.copy(), d2.T.copy(), r0.T.copy(), strict=True):
            np.multiply(T, e2, out=g)
            g -= np.multiply(S, e1, out=h)
            g += e0
            g *= g
            gaps2 += g
    best = gaps2.argmin(axis=0)
    best *= n_rows
    best += np.arange(n_rows)
    s = S.take(best)
    t = T.take(best)
    k1 = p + s[:, None] * d1
    k2 = m + t[:, None] * d2
    v = k2 - k1
    # A closest point inside a segment makes v square to that segment: drop the rounding left
    # along segment 1 if s is inside it, else along segment 2 if t is.
    s_in = s * (1.0 - s) > 0.0
    t_in = t * (1.0 - t) > 0.0
    v -= ((_dot(v, d1) / aa1) * s_in)[:, None] * d1
    v -= ((_dot(v, d2) / ee1) * (t_in & ~s_in))[:, None] * d2
    dist2 = _dot(v, v)
    scale2 = aa + ee + _dot(r0, r0)
    meet = dist2 <= _NOISE * scale2
    if np.count_nonzero(meet):
        v[meet] = 0.0
        dist2[meet] = 0.0
    dist = np.sqrt(dist2)
    normal, zero = _unit(v, dist)
    # Inside both segments, or where they meet, the normal is along the common perpendicular
    # d1 x d2, whose direction is the more accurate one where v is short beside the inputs'
    # scale, unless the segments are so near parallel (sine below 1e-8) that their cross
    # product is mostly rounding.
    across = (
        (ww > 1e-16 * aa * ee) & (dist2 * aa * ee < scale2 * ww) & ((s_in & t_in) | (dist2 == 0.0))
    )
    if np.count_nonzero(across):
        wu = w / np.sqrt(ww + parallel)[:, None]
        along = _dot(v, wu)
        wu *= np.where(along < 0.0, -1.0, 1.0)[:, None]
        normal = np.where(across[:, None], wu, normal)
        dist = np.where(across, np.abs(along), dist)
    if zero is not None:
        rest = zero & ~across
        if np.count_nonzero(rest):
            normal[rest] = _perpendicular(np.where((aa > 0.0)[:, None], d1, d2)[rest])
    return _finish(k1, radius1, k2, radius2, normal, dist)


def sphere_cylinder(
    centre: npt.ArrayLike,
    radius: float,
    pose: npt.ArrayLike,
    cylinder_radius: float,
    length: float,
) -> SignedDistance:
    """Sphere against cylinder.

    Parameters
    ----------
    centre : array_like, shape (N, 3) or (3,), world frame
        Centres of the sphere.
    radius : float
        Radius of the sphere (0 for a point).
    pose : array_like, shape (N, 4, 4) or (4, 4)
        Cylinder frames in the world (rigid); the axis is local z.
    cylinder_radius : float
        Radius of the cylinder.
    length : float
        Full length of the cylinder along local z, centred on its origin.

    Returns
    -------
    SignedDistance
        ``d`` ``(N,)``; ``p1``, ``p2``, ``normal`` ``(N, 3)``, world frame. Outside, ``p2`` is
        the closest point of the side, a cap or the rim circle. A centre inside or on the
        surface leaves through the nearest of the side and the caps (ties: the side, then the
        cap on the centre's side, +z on the mid-plane); a centre on the axis leaving through
        the side goes along local +x.

    Examples
    --------
    >>> r = sphere_cylinder([0.1, 0.0, 0.2], 0.1, np.eye(4), 0.5, 1.0)
    >>> round(float(r.d[0]), 12), r.p2.tolist(), r.normal.tolist()
    (-0.4, [[0.1, 0.0, 0.5]], [[0.0, 0.0, -1.0]])
    """
    c = _points(centre)
    rot, t = _frames(pose)
    h = 0.5 * length
    q = _to_local(c - t, rot)
    rho = np.hypot(q[:, 0], q[:, 1])
    k = q * (cylinder_radius / np.maximum(rho, cylinder_radius))[:, None]
    k[:, 2] = np.minimum(np.maximum(q[:, 2], -h), h)
    v = k - q
    s = np.sqrt(_dot(v, v))
    local, inside = _unit(v, s)
    if inside is not None:
        qi = q[inside]
        rhoi = rho[inside]
        side_gap = cylinder_radius - rhoi
        cap_gap = h - np.abs(qi[:, 2])
        up = np.where(qi[:, 2] >= 0.0, 1.0, -1.0)
        via_side = side_gap <= cap_gap
        exit_dir = np.zeros_like(qi)
        exit_dir[:, 2] = up
        qi[:, 2] = np.where(via_side, qi[:, 2], up * h)
        if np.count_nonzero(via_side):
            radial, centred = _unit(qi[via_side] * _XY, rhoi[via_side])
            if centred is not None:
                radial[centred] = _EX
            exit_dir[via_side] = radial
            qi[via_side, :2] = cylinder_radius * radial[:, :2]
        k[inside] = qi
        local[inside] = -exit_dir
        s[inside] = -np.minimum(side_gap, cap_gap)
    k2 = t + _to_world(k, rot)
    return _finish(c, radius, k2, 0.0, _to_world(local, rot), s)


def sphere_cone(
    centre: npt.ArrayLike,
    radius: float,
    pose: npt.ArrayLike,
    cone_radius: float,
    length: float,
) -> SignedDistance:
    """Sphere against cone.

    The cone is a solid of revolution: the answer is worked out in the plane through the axis
    and the centre (radial coordinate ``rho``, axial ``z``) against the triangle (0, -h),
    (``cone_radius``, -h), (0, h), ``h = length / 2``, whose edge on the axis is no boundary.

    Parameters
    ----------
    centre : array_like, shape (N, 3) or (3,), world frame
        Centres of the sphere.
    radius : float
        Radius of the sphere (0 for a point).
    pose : array_like, shape (N, 4, 4) or (4, 4)
        Cone frames in the world (rigid); the axis is local z, the apex towards +z.
    cone_radius : float
        Radius of the cone's base.
    length : float
        Full height of the cone along local z, centred on its origin: the base disc at
        ``z = -length / 2``, the apex at ``z = +length / 2``.

    Returns
    -------
    SignedDistance
        ``d`` ``(N,)``; ``p1``, ``p2``, ``normal`` ``(N, 3)``, world frame. Outside, ``p2`` is
        the closest point of the slant side, the base, the rim circle or the apex. A centre
        inside or on the surface leaves through the nearest of the slant side and the base
        (ties: the slant side); a centre on the axis leaving through the slant side goes
        along the slant side's normal over local +x.

    Examples
    --------
    >>> r = sphere_cone([0.0, 0.0, -0.5], 0.25, np.eye(4), 1.0, 2.0)
    >>> round(float(r.d[0]), 12), r.p2.tolist(), r.normal.tolist()
    (-0.75, [[0.0, 0.0, -1.0]], [[0.0, 0.0, 1.0]])
    """
    c = _points(centre)
    rot, t = _frames(pose)
    h = 0.5 * length
    slant = float(np.hypot(cone_radius, length))
    nr, nz = length / slant, cone_radius / slant  # the slant side's outward normal (rho, z)
    q = _to_local(c - t, rot)
    rho = np.hypot(q[:, 0], q[:, 1])
    z = q[:, 2]
    radial, centred = _unit(q * _XY, rho)
    if centred is not None:
        radial[centred] = _EX
    a = rho - cone_radius  # from the rim circle
    b = z + h  # above the base's plane
    e = z - h  # above the apex
    # Signed distance to the slant side's line: the answer there, inside (minus the gap) and
    # outside alike; the foot is on the side for every centre not nearer the apex or rim.
    # Measured from the rim, it is exactly 0 there (so a centre on the rim takes the side).
    s = nr * a + nz * b
    below = b < 0.0
    rim = np.where(below, a > 0.0, a * cone_radius - length * b > 0.0)
    apex = ~rim & (rho * cone_radius - length * e < 0.0)
    base = ~rim & ~apex & (below | ((s <= 0.0) & (b < -s)))
    k_r = rho - s * nr
    k_z = z - s * nz
    n_r = np.full_like(rho, -nr)
    n_z = np.full_like(rho, -nz)
    if np.count_nonzero(base):
        k_r[base] = rho[base]
        k_z[base] = -h
        n_r[base] = 0.0
        n_z[base] = 1.0
        s[base] = -b[base]
    for corner, at_r, at_z, v_r, v_z in (
        (rim, cone_radius, -h, a, b),
        (apex, 0.0, h, rho, e),
    ):
        if np.count_nonzero(corner):
            gap = np.hypot(v_r[corner], v_z[corner])
            k_r[corner] = at_r
            k_z[corner] = at_z
            n_r[corner] = -v_r[corner] / gap
            n_z[corner] = -v_z[corner] / gap
            s[corner] = gap
    k = radial * k_r[:, None]
    k[:, 2] = k_z
    if np.count_nonzero(base):
        k[base, :2] = q[base, :2]
    local = radial * n_r[:, None]
    local[:, 2] = n_z
    k2 = t + _to_world(k, rot)
    return _finish(c, radius, k2, 0.0, _to_world(local, rot), s)


def sphere_halfspace(
    centre: npt.ArrayLike, radius: float, normal: npt.ArrayLike, offset: npt.ArrayLike
) -> SignedDistance:
    """Sphere against half-space.

    Parameters
    ----------
    centre : array_like, shape (N, 3) or (3,), world frame
        Centres of the sphere.
    radius : float
        Radius of the sphere (0 for a point).
    normal : array_like, shape (N, 3) or (3,), world frame
        Unit outward normals of the half-space ``{x : normal . x <= offset}``.
    offset : array_like, shape (N,) or scalar
        Offsets of the half-space.

    Returns
    -------
    SignedDistance
        ``d`` ``(N,)``; ``p1``, ``p2``, ``normal`` ``(N, 3)``, world frame. The normal is minus
        the half-space's; ``p2`` is ``p1``'s projection on the plane.

    Examples
    --------
    >>> r = sphere_halfspace([0.0, 0.0, 0.0625], 0.125, [0.0, 0.0, 1.0], 0.0)
    >>> r.d.tolist(), r.p1.tolist(), r.p2.tolist(), r.normal.tolist()
    ([-0.0625], [[0.0, 0.0, -0.0625]], [[0.0, 0.0, 0.0]], [[0.0, 0.0, -1.0]])
    """
    return _on_plane(_points(centre), radius, _points(normal), offset)


def capsule_halfspace(
    a: npt.ArrayLike,
    b: npt.ArrayLike,
    radius: float,
    normal: npt.ArrayLike,
    offset: npt.ArrayLike,
) -> SignedDistance:
    """Capsule against half-space.

    Parameters
    ----------
    a, b : array_like, shape (N, 3) or (3,), world frame
        End points of the capsule's segment (see :func:`capsule_endpoints`).
    radius : float
        Radius of the capsule.
    normal : array_like, shape (N, 3) or (3,), world frame
        Unit outward normals of the half-space ``{x : normal . x <= offset}``.
    offset : array_like, shape (N,) or scalar
        Offsets of the half-space.

    Returns
    -------
    SignedDistance
        ``d`` ``(N,)``; ``p1``, ``p2``, ``normal`` ``(N, 3)``, world frame. ``p1`` lies over the
        deepest end point, or over the segment's middle when the segment is parallel to the
        plane.

    Examples
    --------
    >>> r = capsule_halfspace([0.0, 0.0, 1.0], [0.0, 0.0, 3.0], 0.5, [0.0, 0.0, 1.0], 0.0)
    >>> r.d.tolist(), r.p1.tolist()
    ([0.5], [[0.0, 0.0, 0.5]])
    """
    n = _points(normal)
    p = _points(a)
    axis = _points(b) - p
    deepest = p + (0.5 - 0.5 * _sign(_dot(axis, n), np.sqrt(_dot(axis, axis))))[:, None] * axis
    return _on_plane(deepest, radius, n, offset)


def box_halfspace(
    pose: npt.ArrayLike, size: npt.ArrayLike, normal: npt.ArrayLike, offset: npt.ArrayLike
) -> SignedDistance:
    """Box against half-space.

    Parameters
    ----------
    pose : array_like, shape (N, 4, 4) or (4, 4)
        Box frames in the world (rigid).
    size : array_like, shape (3,)
        Full side lengths of the box along its local x, y, z.
    normal : array_like, shape (N, 3) or (3,), world frame
        Unit outward normals of the half-space ``{x : normal . x <= offset}``.
    offset : array_like, shape (N,) or scalar
        Offsets of the half-space.

    Returns
    -------
    SignedDistance
        ``d`` ``(N,)``; ``p1``, ``p2``, ``normal`` ``(N, 3)``, world frame. ``p1`` is the
        deepest vertex, or the centre of the deepest edge or face when one is parallel to the
        plane.

    Examples
    --------
    >>> r = box_halfspace(np.eye(4), [2.0, 2.0, 2.0], [0.0, 0.0, 1.0], -0.5)
    >>> r.d.tolist(), r.p1.tolist(), r.p2.tolist()
    ([-0.5], [[0.0, 0.0, -1.0]], [[0.0, 0.0, -0.5]])
    """
    n = _points(normal)
    rot, t = _frames(pose)
    h = 0.5 * np.asarray(size, dtype=np.float64)
    vertex = t - _to_world(h * _sign(_to_local(n, rot)), rot)
    return _on_plane(vertex, 0.0, n, offset)


def cylinder_halfspace(
    pose: npt.ArrayLike,
    radius: float,
    length: float,
    normal: npt.ArrayLike,
    offset: npt.ArrayLike,
) -> SignedDistance:
    """Cylinder against half-space.

    Parameters
    ----------
    pose : array_like, shape (N, 4, 4) or (4, 4)
        Cylinder frames in the world (rigid); the axis is local z.
    radius : float
        Radius of the cylinder.
    length : float
        Full length of the cylinder along local z, centred on its origin.
    normal : array_like, shape (N, 3) or (3,), world frame
        Unit outward normals of the half-space ``{x : normal . x <= offset}``.
    offset : array_like, shape (N,) or scalar
        Offsets of the half-space.

    Returns
    -------
    SignedDistance
        ``d`` ``(N,)``; ``p1``, ``p2``, ``normal`` ``(N, 3)``, world frame. ``p1`` is the rim
        point farthest along ``-normal``: the centre of the deepest cap when the axis is
        parallel to the half-space's normal, the middle of the deepest side line when it is
        perpendicular.

    Examples
    --------
    >>> r = cylinder_halfspace(np.eye(4), 0.5, 2.0, [0.0, 0.0, 1.0], 0.0)
    >>> r.d.tolist(), r.p1.tolist()
    ([-1.0], [[0.0, 0.0, -1.0]])
    """
    n = _points(normal)
    rot, t = _frames(pose)
    axis = rot[:, :, 2]
    along = _dot(n, axis)
    w = _cross(axis, _cross(n, axis))  # n across the axis, square to it even when tiny
    wn = np.sqrt(_dot(w, w))
    radial = w * np.where(wn > TIE, radius / np.maximum(wn, TIE), 0.0)[:, None]
    rim = t - (0.5 * length * _sign(along))[:, None] * axis - radial
    return _on_plane(rim, 0.0, n, offset)


def point_sphere(point: npt.ArrayLike, centre: npt.ArrayLike, radius: float) -> SignedDistance:
    """Point against sphere: :func:`sphere_sphere` with a radius of 0.

    Parameters
    ----------
    point : array_like, shape (N, 3) or (3,), world frame
        The points (``p1`` is the point itself).
    centre : array_like, shape (N, 3) or (3,), world frame
        Centres of the sphere.
    radius : float
        Radius of the sphere.

    Returns
    -------
    SignedDistance
        ``d`` ``(N,)`` (the sphere's signed distance at the point); ``p1``, ``p2``, ``normal``
        ``(N, 3)``, world frame.
    """
    return sphere_sphere(point, 0.0, centre, radius)


def point_box(point: npt.ArrayLike, pose: npt.ArrayLike, size: npt.ArrayLike) -> SignedDistance:
    """Point against box: :func:`sphere_box` with a radius of 0.

    Parameters
    ----------
    point : array_like, shape (N, 3) or (3,), world frame
        The points (``p1`` is the point itself).
    pose : array_like, shape (N, 4, 4) or (4, 4)
        Box frames in the world (rigid).
    size : array_like, shape (3,)
        Full side lengths of the box along its local x, y, z.

    Returns
    -------
    SignedDistance
        ``d`` ``(N,)`` (the box's signed distance at the point); ``p1``, ``p2``, ``normal``
        ``(N, 3)``, world frame.
    """
    return sphere_box(point, 0.0, pose, size)


def point_capsule(
    point: npt.ArrayLike, a: npt.ArrayLike, b: npt.ArrayLike, radius: float
) -> SignedDistance:
    """Point against capsule: :func:`sphere_capsule` with a radius of 0.

    Parameters
    ----------
    point : array_like, shape (N, 3) or (3,), world frame
        The points (``p1`` is the point itself).
    a, b : array_like, shape (N, 3) or (3,), world frame
        End points of the capsule's segment.
    radius : float
        Radius of the capsule.

    Returns
    -------
    SignedDistance
        ``d`` ``(N,)`` (the capsule's signed distance at the point); ``p1``, ``p2``,
        ``normal`` ``(N, 3)``, world frame.
    """
    return sphere_capsule(point, 0.0, a, b, radius)


def point_cylinder(
    point: npt.ArrayLike, pose: npt.ArrayLike, radius: float, length: float
) -> SignedDistance:
    """Point against cylinder: :func:`sphere_cylinder` with a radius of 0.

    Parameters
    ----------
    point : array_like, shape (N, 3) or (3,), world frame
        The points (``p1`` is the point itself).
    pose : array_like, shape (N, 4, 4) or (4, 4)
        Cylinder frames in the world (rigid); the axis is local z.
    radius : float
        Radius of the cylinder.
    length : float
        Full length of the cylinder along local z.

    Returns
    -------
    SignedDistance
        ``d`` ``(N,)`` (the cylinder's signed distance at the point); ``p1``, ``p2``,
        ``normal`` ``(N, 3)``, world frame.
    """
    return sphere_cylinder(point, 0.0, pose, radius, length)


def point_cone(
    point: npt.ArrayLike, pose: npt.ArrayLike, radius: float, length: float
) -> SignedDistance:
    """Point against cone: :func:`sphere_cone` with a radius of 0.

    Parameters
    ----------
    point : array_like, shape (N, 3) or (3,), world frame
        The points (``p1`` is the point itself).
    pose : array_like, shape (N, 4, 4) or (4, 4)
        Cone frames in the world (rigid); the axis is local z, the apex towards +z.
    radius : float
        Radius of the cone's base.
    length : float
        Full height of the cone along local z, centred on its origin.

    Returns
    -------
    SignedDistance
        ``d`` ``(N,)`` (the cone's signed distance at the point); ``p1``, ``p2``, ``normal``
        ``(N, 3)``, world frame.
    """
    return sphere_cone(point, 0.0, pose, radius, length)


def point_halfspace(
    point: npt.ArrayLike, normal: npt.ArrayLike, offset: npt.ArrayLike
) -> SignedDistance:
    """Point against half-space: :func:`sphere_halfspace` with a radius of 0.

    Parameters
    ----------
    point : array_like, shape (N, 3) or (3,), world frame
        The points (``p1`` is the point itself).
    normal : array_like, shape (N, 3) or (3,), world frame
        Unit outward normals of the half-space ``{x : normal . x <= offset}``.
    offset : array_like, shape (N,) or scalar
        Offsets of the half-space.

    Returns
    -------
    SignedDistance
        ``d`` ``(N,)`` (the half-space's signed distance at the point); ``p1``, ``p2``,
        ``normal`` ``(N, 3)``, world frame.
    """
    return sphere_halfspace(point, 0.0, normal, offset)


# ------------------------------------------------------------------- signed distance fields


def sdf_sphere(x: npt.ArrayLike, centre: npt.ArrayLike, radius: float) -> FloatArray:
    """Signed distance of points to a sphere.

    Parameters
    ----------
    x : array_like, shape (N, 3) or (3,), world frame
        Query points.
    centre : array_like, shape (N, 3) or (3,), world frame
        Centres of the sphere.
    radius : float
        Radius of the sphere.

    Returns
    -------
    ndarray, shape (N,)
        Distance to the surface, negative inside.
    """
    v = _points(x) - _points(centre)
    return np.sqrt(_dot(v, v)) - radius


def sdf_box(x: npt.ArrayLike, pose: npt.ArrayLike, size: npt.ArrayLike) -> FloatArray:
    """Signed distance of points to a box.

    Parameters
    ----------
    x : array_like, shape (N, 3) or (3,), world frame
        Query points.
    pose : array_like, shape (N, 4, 4) or (4, 4)
        Box frames in the world (rigid).
    size : array_like, shape (3,)
        Full side lengths of the box along its local x, y, z.

    Returns
    -------
    ndarray, shape (N,)
        Distance to the surface, negative inside.
    """
    rot, t = _frames(pose)
    e = np.abs(_to_local(_points(x) - t, rot)) - 0.5 * np.asarray(size, dtype=np.float64)
    out = np.maximum(e, 0.0)
    inside: FloatArray = np.minimum(e.max(axis=1), 0.0)
    return np.sqrt(_dot(out, out)) + inside


def sdf_capsule(x: npt.ArrayLike, a: npt.ArrayLike, b: npt.ArrayLike, radius: float) -> FloatArray:
    """Signed distance of points to a capsule.

    Parameters
    ----------
    x : array_like, shape (N, 3) or (3,), world frame
        Query points.
    a, b : array_like, shape (N, 3) or (3,), world frame
        End points of the capsule's segment.
    radius : float
        Radius of the capsule.

    Returns
    -------
    ndarray, shape (N,)
        Distance to the surface, negative inside.
    """
    p = _points(a)
    axis = _points(b) - p
    v = _points(x) - p
    length2 = _dot(axis, axis)
    along = np.minimum(np.maximum(_dot(v, axis) / (length2 + (length2 == 0.0)), 0.0), 1.0)
    e = v - along[:, None] * axis
    return np.sqrt(_dot(e, e)) - radius


def sdf_cylinder(x: npt.ArrayLike, pose: npt.ArrayLike, radius: float, length: float) -> FloatArray:
    """Signed distance of points to a cylinder.

    Parameters
    ----------
    x : array_like, shape (N, 3) or (3,), world frame
        Query points.
    pose : array_like, shape (N, 4, 4) or (4, 4)
        Cylinder frames in the world (rigid); the axis is local z.
    radius : float
        Radius of the cylinder.
    length : float
        Full length of the cylinder along local z, centred on its origin.

    Returns
    -------
    ndarray, shape (N,)
        Distance to the surface, negative inside.
    """
    rot, t = _frames(pose)
    q = _to_local(_points(x) - t, rot)
    e = np.stack([np.hypot(q[:, 0], q[:, 1]) - radius, np.abs(q[:, 2]) - 0.5 * length], axis=1)
    out = np.maximum(e, 0.0)
    inside: FloatArray = np.minimum(e.max(axis=1), 0.0)
    return np.hypot(out[:, 0], out[:, 1]) + inside


def sdf_cone(x: npt.ArrayLike, pose: npt.ArrayLike, radius: float, length: float) -> FloatArray:
    """Signed distance of points to a cone.

    Parameters
    ----------
    x : array_like, shape (N, 3) or (3,), world frame
        Query points.
    pose : array_like, shape (N, 4, 4) or (4, 4)
        Cone frames in the world (rigid); the axis is local z, the apex towards +z.
    radius : float
        Radius of the cone's base.
    length : float
        Full height of the cone along local z, centred on its origin: the base disc at
        ``z = -length / 2``, the apex at ``z = +length / 2``.

    Returns
    -------
    ndarray, shape (N,)
        Distance to the surface, negative inside.
    """
    rot, t = _frames(pose)
    q = _to_local(_points(x) - t, rot)
    h = 0.5 * length
    slant = float(np.hypot(radius, length))
    rho = np.hypot(q[:, 0], q[:, 1])
    a = rho - radius
    b = q[:, 2] + h
    e = q[:, 2] - h
    rim = np.where(b < 0.0, a > 0.0, a * radius - length * b > 0.0)
    apex = rho * radius - length * e < 0.0
    side = (length / slant) * a + (radius / slant) * b  # exactly 0 on the rim
    out: FloatArray = np.where(
        rim, np.hypot(a, b), np.where(apex, np.hypot(rho, e), np.maximum(side, -b))
    )
    return out


def sdf_halfspace(x: npt.ArrayLike, normal: npt.ArrayLike, offset: npt.ArrayLike) -> FloatArray:
    """Signed distance of points to a half-space.

    Parameters
    ----------
    x : array_like, shape (N, 3) or (3,), world frame
        Query points.
    normal : array_like, shape (N, 3) or (3,), world frame
        Unit outward normals of the half-space ``{x : normal . x <= offset}``.
    offset : array_like, shape (N,) or scalar
        Offsets of the half-space.

    Returns
    -------
    ndarray, shape (N,)
        ``normal . x - offset``: distance to the plane, negative inside.
    """
    return _dot(_points(x), _points(normal)) - np.asarray(offset, dtype=np.float64)


def capsule_endpoints(pose: npt.ArrayLike, length: float) -> tuple[FloatArray, FloatArray]:
    """End points of capsule segments placed by poses.

    Parameters
    ----------
    pose : array_like, shape (N, 4, 4) or (4, 4)
        Capsule frames in the world (rigid); the segment is local z in
        ``[-length / 2, length / 2]``.
    length : float
        Length of the segment (the capsule is ``length + 2 radius`` long).

    Returns
    -------
    a, b : ndarray, shape (N, 3), world frame
        The segment's ends at local ``z = -length / 2`` and ``z = +length / 2``.

    Examples
    --------
    >>> a, b = capsule_endpoints(np.eye(4), 2.0)
    >>> a.tolist(), b.tolist()
    ([[0.0, 0.0, -1.0]], [[0.0, 0.0, 1.0]])
    """
    rot, t = _frames(pose)
    half = (0.5 * length) * rot[:, :, 2]
    return t - half, t + half
