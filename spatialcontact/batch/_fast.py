"""The leaf pairs with a closed form, answered for many placements at once in numpy.

For a pair of primitive leaves and a query, :func:`closed_form` gives a function of the two
leaves' world placements (:class:`Placement`: one pose, or ``n``) built on
:mod:`spatialcontact._closed_form`:
yes/no answers for ``iscollided``, signed distances for ``distance`` (a sphere's is the signed
distance field of the other shape at its centre, minus its radius), witness points for
``closest_point``. Their answers agree with Coal's to rounding (1e-14 on distances and witness
points over random poses, overlaps included), with three exceptions:

- a sphere overlapping a cylinder or a cone: Coal ignores the cylinder's caps there (up to
  0.26 m off) and its EPA leaves a sphere in a cone up to 4e-4 m short, and the batch queries
  ask those placements of the shape queries' own code
  (:func:`spatialcontact.query._distance_leaves`, the compiled closed form), so that both give
  one answer (the yes/no answer agrees);
- a sphere apart from a cone: Coal's GJK stops at its relative tolerance (up to 3.1e-6 m
  long at 2.2 m), where the closed form, which the shape queries also use, is exact;
- a capsule and a box have a closed yes/no only (:func:`capsule_box_collides`): Coal
  solves their distance by GJK and EPA, to about 1e-6 m, so distances go to Coal.

:func:`direct_collide` answers ``iscollided`` of two spheres, or of a capsule and a box, for a
whole chunk of poses of a leaf in no group, compiled, row by row (the same answers, in one
pass over the rows, which can also check them).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple, Protocol

import numpy as np

from .. import _closed_form as cf
from .. import _native
from .._validate import MAX_COORDINATE
from ._poses import refuse_row

__all__ = [
    "POINT_SHAPES",
    "DirectCollide",
    "Fixed",
    "Form",
    "Placement",
    "capsule_box_collides",
    "closed_form",
    "direct_collide",
    "direct_pair",
    "point_form",
    "segment_box_distance",
    "turned",
]

Poses = np.ndarray
"""World poses: (4, 4) or (n, 4, 4)."""


class Placement(Protocol):
    """Where a leaf is in the world: one pose, or ``n`` poses (then every array has a first
    axis of length ``n``, or none when it is the same for all)."""

    @property
    def T(self) -> np.ndarray:
        """ndarray, shape (4, 4) or (n, 4, 4): the poses."""

    @property
    def centre(self) -> np.ndarray:
        """ndarray, shape (3,) or (n, 3): the translations."""

    @property
    def rotation(self) -> np.ndarray:
        """ndarray, shape (3, 3) or (n, 3, 3): the rotations."""


class Fixed:
    """The :class:`Placement` of a leaf at one world pose ``T`` (4, 4)."""

    __slots__ = ("T", "centre", "rotation")

    def __init__(self, T: np.ndarray) -> None:
        self.T = T
        self.centre = T[:3, 3]
        self.rotation = T[:3, :3]


class Form(NamedTuple):
    """How one leaf pair answers one query in closed form.

    Attributes
    ----------
    answer : callable
        ``answer(W1, W2)`` for the placements of the two leaves (:class:`Placement`): ndarray
        of bool (n,) for ``iscollided``, signed distances (n,) for ``distance``, a
        :class:`~spatialcontact._closed_form.SignedDistance` for ``closest_point``.
    coal_overlap : bool
        True when Coal answers overlapping placements differently (a sphere in a cylinder or
        a cone): the rows with ``d <= 0`` are then asked of the shape queries.
    """

    answer: Callable[[Placement, Placement], Any]
    coal_overlap: bool


# ------------------------------------------------------------------------------- building blocks


def turned(R: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``R @ v`` for rotations (3, 3) or (n, 3, 3), column by column (numpy is slow at many
    tiny matrix products)."""
    x, y, z = v.tolist()
    out: np.ndarray = R[..., :, 0] * x + R[..., :, 1] * y + R[..., :, 2] * z
    return out


def _ends(shape: Any, W: Placement) -> tuple[np.ndarray, np.ndarray]:
    """The end points of a capsule leaf's segment, as ``capsule_endpoints`` gives them."""
    half = (0.5 * shape.length) * W.rotation[..., :, 2]
    return W.centre - half, W.centre + half


def _plane(shape: Any, W: Placement) -> tuple[np.ndarray, np.ndarray]:
    """World normals (3,) or (n, 3) and offsets of a half-space leaf."""
    normal = turned(W.rotation, shape.normal)
    t = W.centre
    offset = normal[..., 0] * t[..., 0] + normal[..., 1] * t[..., 1] + normal[..., 2] * t[..., 2]
    return normal, shape.offset + offset


def _columns(x: np.ndarray) -> list[Any]:
    """The three coordinates of points (3,) or (n, 3): floats, or (n,) arrays."""
    if x.ndim == 1:
        values: list[Any] = x.tolist()
        return values
    return [x[:, 0], x[:, 1], x[:, 2]]


def _box_frame(
    centre: np.ndarray, half: np.ndarray, pose: Poses, size: np.ndarray
) -> tuple[list[Any], list[Any], list[float]]:
    """Segments from ``centre - half`` to ``centre + half`` in the frames of boxes: per axis,
    the start's coordinate ``p_k`` and the step ``d_k`` (floats, or (n,) arrays), and the
    box's half side ``h_k``.

    Laid out axis by axis, because numpy is slow at broadcasting a tiny last axis.
    """
    T = np.asarray(pose, dtype=np.float64)
    if T.ndim == 2:
        rot: list[list[Any]] = T[:3, :3].tolist()
        t = T[:3, 3].tolist()
    else:
        rot = [[T[:, j, k] for k in range(3)] for j in range(3)]
        t = [T[:, j, 3] for j in range(3)]
    c = [x - y for x, y in zip(_columns(centre), t, strict=True)]
    u = _columns(half)
    p, d = [], []
    for k in range(3):
        along = u[0] * rot[0][k] + u[1] * rot[1][k] + u[2] * rot[2][k]
        p.append(c[0] * rot[0][k] + c[1] * rot[1][k] + c[2] * rot[2][k] - along)
        d.append(2.0 * along)
    return p, d, (0.5 * np.asarray(size, dtype=np.float64)).tolist()


def _rows(values: list[Any], n: int) -> np.ndarray:
    """Per-axis values (floats, or (n,) arrays) as one (3, n) array."""
    out = np.empty((3, n))
    for k in range(3):
        out[k] = values[k]
    return out


def _crosses(p: list[Any], d: list[Any], h: list[float], n: int) -> np.ndarray:
    """Whether each of ``n`` segments meets the box ``|x_k| <= h_k`` (slab by slab).

    A segment parallel to a slab gets infinite crossings of the same sign when it lies
    outside it, of opposite signs inside: no special case (one exactly on a face's plane
    gets NaN, a miss: it only touches).
    """
    P, D = _rows(p, n), _rows(d, n)
    faces = np.asarray(h, dtype=np.float64)[:, None]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        s1 = np.subtract(-faces, P)
        s1 /= D
        s2 = np.subtract(faces, P, out=P)
        s2 /= D
        enter = np.minimum(s1, s2, out=D).max(axis=0)
        leave = np.maximum(s1, s2, out=s1).min(axis=0)
        np.maximum(enter, 0.0, out=enter)
        np.minimum(leave, 1.0, out=leave)
    out: np.ndarray = enter <= leave
    return out


def _distance_in_frame(p: list[Any], d: list[Any], h: list[float], n: int) -> np.ndarray:
    """Distance (n,) from segments to the box, all in its frame (see :func:`_box_frame`).

    The squared distance from the point ``p + s d`` to the box, ``f(s) = sum_k max(|p_k +
    s d_k| - h_k, 0)^2``, is convex and quadratic between the (at most six) values of ``s``
    where a coordinate crosses a face's plane; its minimum over ``[0, 1]`` is the smallest of
    the pieces' minima. (A crossing outside ``[0, 1]``, or none, counts as an end: a piece
    more or less changes no minimum.) Laid out (axis, piece, segment), few operations in all.
    """
    P, D = _rows(p, n), _rows(d, n)
    faces = np.asarray(h, dtype=np.float64)[:, None]
    knots = np.empty((8, n))
    knots[0] = 0.0
    knots[7] = 1.0
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        s = np.concatenate([faces - P, -faces - P])
        s /= np.concatenate([D, D])
    np.fmin(np.fmax(s, 0.0, out=s), 1.0, out=s)  # NaN (no crossing) becomes 0
    s.sort(axis=0)
    knots[1:7] = s
    low, high = knots[:-1], knots[1:]
    middle = low + high
    middle *= 0.5
    # On a piece, the coordinates outside the box stay outside on the same side: with the
    # excess e_k = |q_k| - h_k > 0 at its middle, f's minimiser is middle - sum(sign(q_k) e_k
    # d_k) / sum(d_k^2) over those coordinates.
    P3, D3, H3 = P[:, None], D[:, None], faces[:, None]
    q = middle * D3
    q += P3
    excess = np.abs(q)
    excess -= H3
    np.maximum(excess, 0.0, out=excess)
    slope = (np.copysign(excess, q) * D3).sum(axis=0)
    curvature = (np.sign(excess) * (D3 * D3)).sum(axis=0)
    curvature[~(curvature > 0.0)] = 1.0
    slope /= curvature
    best = np.subtract(middle, slope, out=slope)
    np.maximum(best, low, out=best)
    np.minimum(best, high, out=best)
    q = best * D3
    q += P3
    excess = np.abs(q, out=q)
    excess -= H3
    np.maximum(excess, 0.0, out=excess)
    excess *= excess
    out: np.ndarray = np.sqrt(excess.sum(axis=0).min(axis=0))
    return out


def segment_box_distance(a: np.ndarray, b: np.ndarray, pose: Poses, size: np.ndarray) -> np.ndarray:
    """Distance from segments to a solid box, 0 where they meet.

    Parameters
    ----------
    a, b : ndarray, shape (n, 3) or (3,), world frame
        End points of the segments.
    pose : ndarray, shape (n, 4, 4) or (4, 4)
        Box frames in the world (rigid).
    size : ndarray, shape (3,)
        Full side lengths of the box.

    Returns
    -------
    ndarray, shape (n,)
        The distance in metres (never negative).

    Examples
    --------
    >>> segment_box_distance(np.array([2.0, -1, 0]), np.array([2.0, 1, 0]), np.eye(4),
    ...                      np.array([2.0, 2, 2])).tolist()
    [1.0]
    """
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    T = np.asarray(pose, dtype=np.float64)
    n = max(len(a) if a.ndim > 1 else 1, len(b) if b.ndim > 1 else 1, len(T) if T.ndim > 2 else 1)
    return _distance_in_frame(*_box_frame(0.5 * (a + b), 0.5 * (b - a), T, size), n)


def capsule_box_collides(
    centre: np.ndarray,
    half: np.ndarray,
    radius: float,
    pose: Poses,
    size: np.ndarray,
    n: int,
) -> np.ndarray:
    """Whether ``n`` capsules meet a solid box.

    Parameters
    ----------
    centre : ndarray, shape (n, 3) or (3,), world frame
        Centres of the capsules' segments.
    half : ndarray, shape (n, 3) or (3,), world frame
        Half of each segment: it runs from ``centre - half`` to ``centre + half``.
    radius : float
        The capsules' radius.
    pose, size
        As for :func:`segment_box_distance`.
    n : int
        How many placements.

    Returns
    -------
    ndarray of bool, shape (n,)
        True where the segment's distance to the box is at most ``radius``. Slab tests answer
        most: a segment that misses the box grown by ``radius`` on every side misses; one
        that crosses the box, or the box grown by ``radius`` along one axis only (which lies
        within ``radius`` of the box), meets it. Only the others (near the box's edges and
        corners) are measured.
    """
    p, d, h = _box_frame(centre, half, pose, size)
    return _capsule_box_in_frame(_rows(p, n), _rows(d, n), h, radius)


_GROWN = np.vstack([np.zeros(3), np.ones(3), np.eye(3)])
"""How much of the radius each of the five boxes of :func:`_capsule_box_in_frame` is grown
by along each axis."""


def _capsule_box_in_frame(
    P: np.ndarray, D: np.ndarray, h: list[float], radius: float
) -> np.ndarray:
    """:func:`capsule_box_collides` for segments from ``P`` to ``P + D`` ((3, m), or (3, 1)
    for ``D`` the same for all) in the frame of the box of half sides ``h``.

    The five slab tests (the box; grown by ``radius`` on every side; grown along one axis
    only, for each axis) run at once, laid out (test, axis, segment).
    """
    P, D = np.ascontiguousarray(P), np.ascontiguousarray(D)  # (3, m) by rows, as below
    m = P.shape[1]
    faces = (np.array(h, dtype=np.float64) + radius * _GROWN)[:, :, None]  # (5, 3, 1)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        s1 = np.subtract(-faces, P)
        s1 /= D
        s2 = np.subtract(faces, P)
        s2 /= D
        enter = np.minimum(s1, s2).max(axis=1)
        leave = np.maximum(s1, s2, out=s1).min(axis=1)
        np.maximum(enter, 0.0, out=enter)
        np.minimum(leave, 1.0, out=leave)
    inside = enter <= leave  # (5, m): which boxes each segment crosses
    hit: np.ndarray = inside[0] | (inside[1] & (inside[2] | inside[3] | inside[4]))
    rest = np.flatnonzero(inside[1] & ~hit)
    if len(rest):
        p = list(P[:, rest])
        d = list(D[:, rest]) if D.shape[1] == m and m > 1 else D[:, 0].tolist()
        hit[rest] = _distance_in_frame(p, d, h, len(rest)) <= radius
    return hit


# ------------------------------------------------------------------------- the forms

_Of = Callable[[Any, Placement, Any, Placement], Any]

_SOLVE: dict[tuple[str, str], _Of] = {
    ("sphere", "sphere"): lambda s1, W1, s2, W2: cf.sphere_sphere(
        W1.centre, s1.radius, W2.centre, s2.radius
    ),
    ("sphere", "cuboid"): lambda s1, W1, s2, W2: cf.sphere_box(
        W1.centre, s1.radius, W2.T, s2.scale
    ),
    ("sphere", "capsule"): lambda s1, W1, s2, W2: cf.sphere_capsule(
        W1.centre, s1.radius, *_ends(s2, W2), s2.radius
    ),
    ("capsule", "capsule"): lambda s1, W1, s2, W2: cf.capsule_capsule(
        *_ends(s1, W1), s1.radius, *_ends(s2, W2), s2.radius
    ),
    ("sphere", "cylinder"): lambda s1, W1, s2, W2: cf.sphere_cylinder(
        W1.centre, s1.radius, W2.T, s2.radius, s2.length
    ),
    ("sphere", "cone"): lambda s1, W1, s2, W2: cf.sphere_cone(
        W1.centre, s1.radius, W2.T, s2.radius, s2.length
    ),
    ("sphere", "halfspace"): lambda s1, W1, s2, W2: cf.sphere_halfspace(
        W1.centre, s1.radius, *_plane(s2, W2)
    ),
    ("capsule", "halfspace"): lambda s1, W1, s2, W2: cf.capsule_halfspace(
        *_ends(s1, W1), s1.radius, *_plane(s2, W2)
    ),
    ("cuboid", "halfspace"): lambda s1, W1, s2, W2: cf.box_halfspace(
        W1.T, s1.scale, *_plane(s2, W2)
    ),
    ("cylinder", "halfspace"): lambda s1, W1, s2, W2: cf.cylinder_halfspace(
        W1.T, s1.radius, s1.length, *_plane(s2, W2)
    ),
}
"""Signed distance and witness points, by the ``stype`` of the two leaves."""

_SDF: dict[str, Callable[[Any, Placement, np.ndarray], np.ndarray]] = {
    "sphere": lambda s, W, x: cf.sdf_sphere(x, W.centre, s.radius),
    "cuboid": lambda s, W, x: cf.sdf_box(x, W.T, s.scale),
    "capsule": lambda s, W, x: cf.sdf_capsule(x, *_ends(s, W), s.radius),
    "cylinder": lambda s, W, x: cf.sdf_cylinder(x, W.T, s.radius, s.length),
    "cone": lambda s, W, x: cf.sdf_cone(x, W.T, s.radius, s.length),
    "halfspace": lambda s, W, x: cf.sdf_halfspace(x, *_plane(s, W)),
}
"""Signed distance fields of the leaves that have one, at world points ``x`` (n, 3)."""

_COAL_OVERLAP = frozenset({("sphere", "cylinder"), ("sphere", "cone")})
"""Pairs whose overlapping placements Coal answers differently from the closed form (the
shape queries answer them with their compiled closed form, which the rows then take)."""


def _distance(key: tuple[str, str]) -> _Of | None:
    """Signed distances of the pair ``key``: a sphere's from the other leaf's field."""
    if key[0] == "sphere" and key[1] in _SDF:
        field = _SDF[key[1]]
        return lambda s1, W1, s2, W2: field(s2, W2, W1.centre) - s1.radius
    solve = _SOLVE.get(key)
    if solve is None:
        return None
    return lambda s1, W1, s2, W2: solve(s1, W1, s2, W2).d


def _collide(key: tuple[str, str]) -> _Of | None:
    if key == ("capsule", "cuboid"):
        return lambda s1, W1, s2, W2: capsule_box_collides(
            W1.centre, (0.5 * s1.length) * W1.rotation[..., :, 2], s1.radius, W2.T, s2.scale,
            _count(W1, W2),
        )  # fmt: skip
    distance = _distance(key)
    if distance is None:
        return None
    return lambda s1, W1, s2, W2: distance(s1, W1, s2, W2) <= 0.0


def _count(W1: Placement, W2: Placement) -> int:
    """How many placements two leaves' placements hold together (1 when both are fixed)."""
    return max(len(W.centre) if W.centre.ndim > 1 else 1 for W in (W1, W2))


def _of(kind: str, key: tuple[str, str]) -> _Of | None:
    if kind == "iscollided":
        return _collide(key)
    if kind == "distance":
        return _distance(key)
    return _SOLVE.get(key)


def closed_form(first: Any, second: Any, kind: str) -> Form | None:
    """The closed form of the leaf pair (``first``, ``second``) for one query, or None.

    Parameters
    ----------
    first, second : CollisionShape
        Two leaf shapes with ``collision=True``, in query order.
    kind : str
        ``"iscollided"``, ``"distance"`` or ``"closest_point"``.

    Returns
    -------
    Form or None
        None when Coal answers the pair.
    """
    key = (first.stype, second.stype)
    of = _of(kind, key)
    if of is not None:
        return Form(_ordered(of, first, second), key in _COAL_OVERLAP and kind != "iscollided")
    key = key[::-1]
    of = _of(kind, key)
    if of is not None:
        swap = kind == "closest_point"
        return Form(
            _reversed(of, first, second, swap), key in _COAL_OVERLAP and kind != "iscollided"
        )
    return None


def _ordered(of: _Of, first: Any, second: Any) -> Callable[[Placement, Placement], Any]:
    return lambda W1, W2: of(first, W1, second, W2)


def _reversed(
    of: _Of, first: Any, second: Any, swap: bool
) -> Callable[[Placement, Placement], Any]:
    """The form of (``second``, ``first``) answering for (``first``, ``second``)."""
    if swap:
        return lambda W1, W2: cf.swap(of(second, W2, first, W1))
    return lambda W1, W2: of(second, W2, first, W1)


POINT_SHAPES = "spheres, boxes, capsules, cylinders, cones and half-spaces"
"""The leaves :func:`point_form` knows, in words."""


def point_form(leaf: Any) -> Callable[[Placement, np.ndarray], np.ndarray] | None:
    """The signed distance field of a leaf, ``sdf(W, x) -> (n,)`` for its placement ``W``
    (one pose) and world points ``x`` (n, 3); None for a leaf without one."""
    if leaf.stype not in _SDF:
        return None
    sdf = _SDF[leaf.stype]
    return lambda W, x: sdf(leaf, W, x)


# ------------------------------------------------------------------ two leaves, many poses

_SLACK = 1e-9
"""Relative slack of the bounding-sphere cull of :func:`direct_collide` (its rounding never
drops a pose that meets)."""


def _world(leaf: Any) -> tuple[np.ndarray, np.ndarray]:
    """A leaf's world rotation (3, 3) and translation (3,), as Coal holds them."""
    return np.array(leaf._tf.getRotation()), np.array(leaf._tf.getTranslation())


_DIRECT = {("sphere", "sphere"), ("cuboid", "capsule"), ("capsule", "cuboid")}
"""The ``stype`` pairs :func:`direct_collide` answers (``a`` first)."""


def direct_pair(a: Any, b: Any) -> bool:
    """Whether :func:`direct_collide` answers ``a`` and ``b``: two leaves of such a pair,
    both with collision on, ``b`` in no group."""
    return (
        not a._is_group
        and not b._is_group
        and b._parent is None
        and (a.stype, b.stype) in _DIRECT
        and a.collision
        and b.collision
    )


class DirectCollide:
    """``iscollided`` of two leaves for rows of poses (n, 4, 4) or translations (n, 3) of
    ``b``, compiled (:func:`spatialcontact._native.collide_rows`): one pass over the rows,
    which can also check them.

    Two spheres: ``|t - centre| - radius_b - radius_a <= 0``. A capsule and a box (either
    moving): where the bounding spheres of the two are apart, or the segment's bounding box
    misses the box grown by the radius, they are apart; where the distance from the box to
    the capsule's centre or an end is at most the radius, they meet; else the slab tests and
    the segment's distance of :func:`capsule_box_collides` decide.
    """

    __slots__ = ("kind", "params")

    def __init__(self, kind: int, params: np.ndarray) -> None:
        self.kind, self.params = kind, params

    def __call__(self, rows: np.ndarray) -> np.ndarray:
        """The answers (n,) for rows the caller checked (a bad row still raises, naming it)."""
        hit, bad = self.checked(rows, MAX_COORDINATE, False)
        if bad >= 0:
            refuse_row(rows, "poses", bad)
        return hit

    def checked(self, rows: np.ndarray, limit: float, check: bool) -> tuple[np.ndarray, int]:
        """The answers (n,) and the index of the first bad row, -1 when there is none: a pose
        that is not rigid (with ``check``; without, one Coal must never be given: non-finite
        entries, out of range, a wrong last row), a translation not finite or beyond
        ``±limit``. Answers from that row on are False."""
        hit, bad = _native.collide_rows(self.kind, self.params, rows, check, limit)
        return hit, bad


def _capsule_box_params(
    capsule: Any, box: Any, moving_capsule: bool, R_b: np.ndarray
) -> np.ndarray:
    """The parameters of :class:`DirectCollide` for a capsule and a box (see ``_native.cpp``,
    ``CapsuleBoxParam``); ``R_b`` is the moving leaf's rotation, kept for translations."""
    R_a, t_a = _world(box if moving_capsule else capsule)
    h = 0.5 * np.asarray(box.scale, dtype=np.float64)
    half_length = 0.5 * capsule.length
    radius = capsule.radius
    reach = (float(np.linalg.norm(h)) + half_length + radius) * (1.0 + _SLACK)
    far = (half_length + radius) * (1.0 + _SLACK)
    if moving_capsule:  # the capsule's half segment in the box's frame, for translations
        fixed_half = R_a.T @ (half_length * R_b[:, 2])
    else:
        fixed_half = R_b.T @ (half_length * R_a[:, 2])
    return np.concatenate(
        [
            [1.0 if moving_capsule else 0.0],
            t_a,
            R_a.ravel(),
            h,
            [half_length, radius, reach * reach, far * far],
            h + radius * (1.0 + _SLACK),
            fixed_half,
            R_b.ravel(),
        ]
    )


def direct_collide(a: Any, b: Any) -> DirectCollide:
    """``iscollided`` of the leaves ``a`` and ``b`` (a :func:`direct_pair`) for many poses
    or translations of ``b`` (in the world: ``b`` is in no group), straight from the rows.
    The answers are those of the pairs' closed forms."""
    key = (a.stype, b.stype)
    if key == ("sphere", "sphere"):
        centre = _world(a)[1]
        return DirectCollide(0, np.array([*centre.tolist(), a.radius, b.radius]))
    R_b = np.asarray(b.T, dtype=np.float64)[:3, :3]
    if key == ("cuboid", "capsule"):
        return DirectCollide(1, _capsule_box_params(b, a, True, R_b))
    return DirectCollide(1, _capsule_box_params(a, b, False, R_b))
