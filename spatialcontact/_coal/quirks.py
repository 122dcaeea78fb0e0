"""Every workaround for Coal 3.0.3, keyed by what it works around.

A Coal upgrade touches this file: each section names the Coal behaviour it answers, with the
measured failure, and everything else in the package calls the functions below instead of
knowing about it. The tests in ``tests/test_coal_answers.py`` reproduce each behaviour.

===  ==============================================================  ==========================
     Coal 3.0.3 does                                                 here
===  ==============================================================  ==========================
A    GJK/EPA give impossible or undecided distances within 1 µm of    :func:`answer_guard`,
     touching (-DBL_MAX, -20 for 10 m cubes 0.5 µm apart, 0.0)        :func:`recheck`
B    closed-form contacts have NaN or zero normals for a centre on a  :func:`repair_normals`
     surface, concentric shapes give zero normals
C    no function for ellipsoid/octree, half-space/half-space          :data:`NO_COLLIDE`,
     distance, octree/octree contacts                                 :data:`NO_DISTANCE`,
                                                                      :data:`NO_CONTACT`
D    rotated half-space vs octree and octree vs octree collide wrong  :func:`collider`
E    yes/no requests miss ~1% of deep overlaps in symmetric poses     :func:`confirm_request`
F    (shape, octree) answers come octree first; octree contact ids    :data:`OCTREE_FIRST`,
     are node-pointer offsets                                         :func:`octree_cell`
G    overlapping triangles get one point as both witness points       :func:`mend_witnesses`
H    a zero-area triangle makes a mesh overlap every sphere           :func:`has_area`
I    the binding keeps every registered object alive; trees mishandle :func:`unregister`,
     infinite and flat boxes, octree pairs                            :func:`fix_box`,
                                                                      :data:`TREE_EXCLUDED`
J    deep sphere/cylinder overlaps ignore the caps; concentric        :data:`FORM_ON_OVERLAP`
     capsules and spheres on a capsule's axis get wrong witnesses;    (closed forms)
     sphere/cone EPA depths up to 4.3e-4 short
K    mesh, octree and half-space overlap distances come from the      ``query._from_contact``
     first triangle or cell found (hollow meshes: 0)
L    EPA witness points that break ``p2 - p1 == d * normal``;         :func:`witness_identity`,
     triangle/triangle EPA depends on the argument order and          :func:`triangle_meshes`,
     overshoots (a crossing pair 0.0017 deep read 0.055)              :data:`POLYTOPES`
M    capsule/capsule distance takes short segments as parallel at     :func:`capsule_overshoot`,
     any angle and overshoots (by up to 5.6x for 1e-5 m capsules)     :func:`parallel_test`
N    EPA's 64 iterations leave deep ellipsoid overlaps up to 4.6e-2   :func:`epa_budget`
     off (the two argument orders up to 9.8e-3 apart)
===  ==============================================================  ==========================

**A. Impossible signed distances near touching.** GJK stops with "collision" as soon as the
point of its simplex nearest the origin is closer than ``gjk_tolerance`` (1e-6 by default,
absolute), even when the shapes are in fact apart by less than that. EPA then starts from a
simplex that does not enclose the origin and, on flat or exactly aligned features, returns
garbage: the ``-DBL_MAX`` of its failure branch, the far side of the Minkowski difference
(-20.0000005 for two 10 m cubes 0.5 µm apart: the sum of their widths), or exactly 0.0 (its
depth clamped at zero). The same happens when a sphere's centre (GJK's core of a sphere is a
point) lies within the tolerance of a convex hull's vertex or edge, and for meshes and octrees,
whose triangles and cells go through the same GJK/EPA. The collision request with contacts on
runs the same code, so ``contacts`` and the second look of ``iscollided`` inherit it; the
yes/no request (no EPA) does not.

**B. Contacts with no normal.** Coal's closed-form sphere/box and sphere/triangle contacts have
an undefined normal (NaN or zero) when the sphere's centre lies exactly on the box surface or on
the triangle. On a vertex or edge shared by several triangles or octree cells, moving one shape
by 0.1 µm along one axis leaves the centre on some of them, so a repair that wants every normal
defined after one axis move finds none, and a move along ``+axis`` of the second shape goes
outward in one argument order and inward in the other.

Use from the query code (each cached pair keeps ``guard = answer_guard(ga, gb)``)::

    floor, shallow, zero, ceiling = guard
    d = result.min_distance                      # or a contact's penetration_depth
    if not floor < d or shallow <= d <= zero or d <= ceiling:
        answer = recheck(ga, tf_a, gb, tf_b, d, guard)   # (d, p1, p2, normal) or None
        # None: Coal's answer stands; else use answer (robust_distance, aligned_boxes)
    # contacts whose normal is not a unit vector: repair_normals(...)

Everything here takes Coal objects and numpy arrays and returns plain values; it imports only
Coal, numpy and the standard library.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import coal
import numpy as np

from .. import _native

__all__ = [
    "BOX_LIMIT",
    "CAPSULE_TOLERANCE",
    "CONFIRM_BELOW",
    "FLOOR_UNBOUNDED",
    "FORM_ON_OVERLAP",
    "NO_COLLIDE",
    "NO_CONTACT",
    "NO_DISTANCE",
    "OCTREE_FIRST",
    "POLYTOPES",
    "SPARE",
    "TREE_EXCLUDED",
    "Answer",
    "ContactTuple",
    "DistanceAnswer",
    "Guard",
    "aligned_boxes",
    "answer_guard",
    "capsule_overshoot",
    "collider",
    "confirm_request",
    "distance_floor",
    "epa_budget",
    "fix_box",
    "has_area",
    "is_canonical",
    "is_suspect",
    "mend_witnesses",
    "octree_cell",
    "parallel_test",
    "recheck",
    "repair_normals",
    "robust_collided",
    "robust_contact",
    "robust_distance",
    "robust_result",
    "triangle_meshes",
    "unregister",
    "witness_identity",
]

_NT = coal.NODE_TYPE
_OCT = _NT.GEOM_OCTREE

FLOOR_UNBOUNDED = -1e300
"""The floor of a pair whose penetration has no bound (a half-space): it still catches
Coal's ``-DBL_MAX`` (-1.797e308) and NaN."""

_BVH_TYPES = frozenset(
    {_NT.BV_AABB, _NT.BV_OBB, _NT.BV_RSS, _NT.BV_kIOS, _NT.BV_OBBRSS, _NT.BV_KDOP16,
     _NT.BV_KDOP18, _NT.BV_KDOP24}
)  # fmt: skip
_CONVEX_TYPES = frozenset(
    {_NT.GEOM_BOX, _NT.GEOM_SPHERE, _NT.GEOM_CAPSULE, _NT.GEOM_CONE, _NT.GEOM_CYLINDER,
     _NT.GEOM_CONVEX, _NT.GEOM_ELLIPSOID, _NT.GEOM_TRIANGLE}
)  # fmt: skip
_CLOSED_FORM = frozenset(
    frozenset(pair)
    for pair in (
        (_NT.GEOM_SPHERE, _NT.GEOM_SPHERE),
        (_NT.GEOM_SPHERE, _NT.GEOM_BOX),
        (_NT.GEOM_SPHERE, _NT.GEOM_CAPSULE),
        (_NT.GEOM_SPHERE, _NT.GEOM_CYLINDER),
        (_NT.GEOM_CAPSULE, _NT.GEOM_CAPSULE),
        (_NT.GEOM_SPHERE, _NT.GEOM_TRIANGLE),
        (_NT.GEOM_TRIANGLE, _NT.GEOM_TRIANGLE),
    )
)
"""Convex pairs Coal 3.0.3 answers in closed form (no GJK/EPA), from its
``shape_shape_func.h`` table: an exact 0.0 from them is a real touch."""


# ----------------------------------------------------------------------------- detection


def _radius_and_half_width(g: Any) -> tuple[float, float]:
    """``(r, m)`` of one geometry: every point of it lies within ``r`` of one centre (so no
    width exceeds ``2 r``), and ``m`` bounds half its smallest width from above (0 for a
    triangle mesh: each of its triangles is flat)."""
    t = g.getNodeType()
    swept = float(g.getSweptSphereRadius()) if hasattr(g, "getSweptSphereRadius") else 0.0
    if t == _NT.GEOM_BOX:
        half = np.abs(np.asarray(g.halfSide, dtype=np.float64))
        r, m = float(np.linalg.norm(half)), float(half.min())
    elif t == _NT.GEOM_SPHERE:
        r = m = float(g.radius)
    elif t == _NT.GEOM_CAPSULE:
        r, m = float(g.radius + g.halfLength), float(g.radius)
    elif t in (_NT.GEOM_CYLINDER, _NT.GEOM_CONE):
        r, m = math.hypot(g.radius, g.halfLength), float(min(g.radius, g.halfLength))
    elif t == _NT.GEOM_ELLIPSOID:
        radii = np.abs(np.asarray(g.radii, dtype=np.float64))
        r, m = float(radii.max()), float(radii.min())
    elif t == _NT.GEOM_CONVEX:
        points = np.asarray(g.points(), dtype=np.float64).reshape(-1, 3)
        r = float(np.linalg.norm(points - points.mean(axis=0), axis=1).max())
        normals = np.asarray(g.normals(), dtype=np.float64).reshape(-1, 3)
        offsets = np.asarray(g.offsets(), dtype=np.float64).reshape(-1)
        # Coal's hull planes are normal . x + offset <= 0: width along a face normal.
        widths = -offsets - (points @ normals.T).min(axis=0)
        m = 0.5 * float(widths.min()) if widths.size else r
    elif t in (_NT.GEOM_HALFSPACE,):
        return math.inf, math.inf
    elif t == _NT.GEOM_PLANE:
        return math.inf, 0.0
    else:  # meshes, height fields, octrees: the bounding box of the whole geometry
        if not g.aabb_radius >= 0.0:
            g.computeLocalAABB()
        r = float(g.aabb_radius)
        m = 0.0 if t in _BVH_TYPES else r
    return r + swept, m + swept


def distance_floor(g1: Any, g2: Any) -> float:
    """The lowest signed distance the pair ``(g1, g2)`` can have in any placement.

    For convex solids the penetration depth is at most the overlap of their extents along any
    direction, at most ``(w1(n) + w2(n)) / 2``; taking ``n`` along either shape's thinnest
    direction gives ``min(m1 + r2, m2 + r1)`` (``m``: half the smallest width, ``r``: bounding
    radius). A triangle of a mesh has ``m = 0`` and lies in the mesh's bounding sphere, so the
    same formula bounds Coal's per-triangle depths on meshes. Half-spaces are unbounded.

    Parameters
    ----------
    g1, g2 : coal.CollisionGeometry
        The two geometries, in either order (the floor is symmetric).

    Returns
    -------
    float
        A negative number, the bound widened by 1e-6 relative and 1e-9 absolute for EPA's
        tolerance; :data:`FLOOR_UNBOUNDED` when the pair has no bound. A Coal answer at or
        below it (or NaN) cannot be right.

    Notes
    -----
    "Minus the smaller shape's bounding radius" is not a valid floor: a 0.1 m sphere at the
    centre of a 10 m box is legitimately at -5.1 m.
    """
    r1, m1 = _radius_and_half_width(g1)
    r2, m2 = _radius_and_half_width(g2)
    bound = min(m1 + r2, m2 + r1)
    if not bound < 1e299:
        return FLOOR_UNBOUNDED
    # The bound is reached (a sphere at a box's centre): leave room for EPA's tolerance.
    return -(bound * (1.0 + 1e-6) + 1e-9)


Guard = tuple[float, float, float, float]
"""``(floor, shallow, zero, ceiling)``: the per-pair values of :func:`is_suspect`."""


def _solved_by_gjk(t1: Any, t2: Any) -> bool:
    """Whether Coal 3.0.3 answers this pair (or, for a mesh or octree, its triangle or cell
    pairs) with GJK/EPA rather than in closed form."""
    inner = []
    for t in (t1, t2):
        if t in _CONVEX_TYPES:
            inner.append(t)
        elif t in _BVH_TYPES:
            inner.append(_NT.GEOM_TRIANGLE)
        elif t == _NT.GEOM_OCTREE:
            inner.append(_NT.GEOM_BOX)  # occupied cells are boxes
        else:
            return False  # half-spaces, planes, height fields
    return frozenset(inner) not in _CLOSED_FORM


def answer_guard(g1: Any, g2: Any, boxes: bool = True) -> Guard:
    """The per-pair values :func:`is_suspect` compares a Coal distance or depth with.

    Parameters
    ----------
    g1, g2 : coal.CollisionGeometry
        The pair, in either order (the values are symmetric).
    boxes : bool
        Whether overlapping box pairs are re-examined (``ceiling`` below).

    Returns
    -------
    floor : float
        :func:`distance_floor` of the pair: anything at or below it is impossible
        (:data:`FLOOR_UNBOUNDED` for two meshes, see the note in the code).
    shallow : float
        ``-1e-9 * max(1, r1 + r2)`` for a pair Coal solves with GJK/EPA (convex shapes, and
        meshes or octrees against shapes other than spheres, half-spaces and meshes), else
        ``inf``. GJK stops with "collision" within its tolerance (1e-6) of touching, and EPA
        then returns 0.0 (its depth clamped at zero) or, on boxes, the ``-1e-10 * halfSide``
        of Coal's inflated box support: answers in ``[shallow, 0]`` are the undecided ones.
    zero : float
        ``0.0`` with a finite ``shallow``, else NaN (so ``shallow <= d <= zero`` is never true):
        closed-form pairs give exact answers, and two overlapping meshes have distance 0.
    ceiling : float
        ``0.0`` for a box/box pair when ``boxes`` is true, else ``-inf``. On exactly aligned
        boxes within 1 µm of touching and thin along the contact axis, EPA can return a
        plausible depth: -1.0000000001 for boxes 0.8 µm apart whose floor is -1.52 (7 of 2,400
        aligned placements, both orders; only aligned box pairs were seen doing it). With the
        ceiling, every overlapping box pair is checked for alignment (:func:`recheck` keeps
        Coal's answer for boxes that are not aligned) and aligned ones get the exact closed
        form. Measured through ``closest_point`` on a loaded 2-core machine: +3.5 µs (1.9x) on
        an overlapping rotated box pair, +33 µs (9x; ``contacts`` 13x) on an overlapping
        aligned one, nothing on separated pairs or other shapes. ``boxes=False`` skips it.

    Compute it once per pair (it reads the shapes' sizes, 5-50 µs) and keep it with the
    pair's cached functor.
    """
    t1, t2 = g1.getNodeType(), g2.getNodeType()
    if t1 in _BVH_TYPES and t2 in _BVH_TYPES:
        # Coal 3.0.3's triangle/triangle contacts come from an EPA that overshoots: depths up
        # to 0.38 where two crossing triangles of a 0.4 x 0.3 x 0.2 box mesh allow 0.25 (25 of
        # 1,481 colliding random poses). The README lists that limitation; flagging it here
        # would only send 1.7% of mesh/mesh contacts through a repair that changes nothing.
        floor = FLOOR_UNBOUNDED
    else:
        floor = distance_floor(g1, g2)
    ceiling = 0.0 if boxes and t1 == t2 == _NT.GEOM_BOX else -math.inf
    if not _solved_by_gjk(t1, t2):
        return floor, math.inf, math.nan, ceiling
    return floor, -1e-9 * _scale(g1, g2), 0.0, ceiling


def is_suspect(
    d: float, floor: float, shallow: float, zero: float, ceiling: float = -math.inf
) -> bool:
    """True when the Coal distance or depth ``d`` must go through :func:`recheck`.

    This is the hot-path test: inline it as
    ``if not floor < d or shallow <= d <= zero or d <= ceiling:`` with the values of
    :func:`answer_guard`. A separated pair's answer costs three float comparisons, an
    overlapping one four. It is True for NaN, for ``-DBL_MAX``, at or below the pair's floor,
    in ``[shallow, 0]`` for GJK pairs, and for any overlap of a box pair with a ceiling.
    """
    return not floor < d or shallow <= d <= zero or d <= ceiling


def _impossible(d: float, guard: Guard) -> bool:
    """:func:`is_suspect` without the box ceiling: the answer itself is wrong."""
    floor, shallow, zero = guard[0], guard[1], guard[2]
    return not floor < d or shallow <= d <= zero


# ------------------------------------------------------------------------------- helpers

Answer = tuple[float, np.ndarray, np.ndarray, np.ndarray]
"""``(d, p1, p2, normal)``: signed distance, witness point on the first geometry, on the
second, and the unit normal from the first to the second (world frame, ``p2 - p1 == d * n``)."""

ContactTuple = tuple[np.ndarray, np.ndarray, np.ndarray, float, int, int]
"""``(normal, p1, p2, depth, b1, b2)`` of one contact, in Coal's conventions (world frame,
``p2 - p1 == depth * normal``, ``b1``/``b2`` Coal's primitive ids)."""


def _request(tolerance: float) -> Any:
    request = coal.DistanceRequest()
    request.enable_signed_distance = True
    request.gjk_tolerance = tolerance
    return request


_FINE = _request(1e-9)
"""The request of the repair queries: GJK to 1e-9 instead of 1e-6 (only ever read by Coal)."""

_FINER = _request(1e-12)

_SKEW = np.array([1.0, math.sqrt(2.0), math.sqrt(3.0)]) / math.sqrt(6.0)
"""A unit direction in no plane spanned by two world axes, for the moves of
:func:`repair_normals`: a move along one axis keeps a point in the two axis planes through it."""

_NUDGE = 1e-5
"""Step of :func:`robust_distance`'s moves, times ``max(1, r1 + r2)``: ten times GJK's default
tolerance, far enough apart for GJK to prove the gap without EPA."""

_NORMAL_NUDGE = 1e-7
"""Step of :func:`repair_normals`'s moves, times ``max(1, r1 + r2)``."""


def _key(g: Any, tf: Any) -> tuple[bool, int, tuple[float, ...]]:
    # Coal 3.0.3's Python ``id()`` is missing on the ConvexBase that Convex.convexHull returns.
    ident = int(g.id()) if hasattr(g, "id") else id(g)
    return (g.getNodeType() != _NT.GEOM_OCTREE, ident, tuple(tf.getTranslation().tolist()))


def is_canonical(g1: Any, tf1: Any, g2: Any, tf2: Any) -> bool:
    """True when ``(g1, g2)`` is the pair's canonical order (an octree first, as Coal 3.0.3
    wants it, then by geometry ``id()``, then by translation).

    The repairs compute in this order and swap their answers back, so both argument orders
    of a query get the same answer.
    """
    return _key(g1, tf1) <= _key(g2, tf2)


# Plain floats below: on 3-vectors they are several times faster than numpy calls.


def _centre(g: Any, tf: Any) -> list[float]:
    radius = g.aabb_radius
    if radius >= 0.0 and radius < 1e299:
        return [float(v) for v in tf.transform(g.aabb_center)]
    return [float(v) for v in tf.getTranslation()]


def _radius(g: Any) -> float:
    """A bounding radius of ``g``: Coal's (from its bounding box) when computed."""
    radius = float(g.aabb_radius)
    if not radius >= 0.0:
        radius = _radius_and_half_width(g)[0]
    return radius if radius < 1e299 else 0.0


def _scale(g1: Any, g2: Any) -> float:
    return max(1.0, _radius(g1) + _radius(g2))


def _direction(g1: Any, tf1: Any, g2: Any, tf2: Any) -> list[float]:
    """Unit vector from the first geometry's centre to the second's (``_SKEW`` if they meet)."""
    c1, c2 = _centre(g1, tf1), _centre(g2, tf2)
    u = [c2[0] - c1[0], c2[1] - c1[1], c2[2] - c1[2]]
    norm = math.sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2])
    if norm > 0.0 and math.isfinite(norm):
        return [u[0] / norm, u[1] / norm, u[2] / norm]
    return _SKEW.tolist()


def _is_unit(normal: Any) -> bool:
    x, y, z = (float(v) for v in normal)
    return abs(x * x + y * y + z * z - 1.0) <= 1e-6


def _finite(values: list[float]) -> bool:
    return math.isfinite(values[0]) and math.isfinite(values[1]) and math.isfinite(values[2])


def _coal_answer(
    g1: Any, tf1: Any, g2: Any, tf2: Any, request: Any, guard: Guard
) -> tuple[float, list[float], list[float]] | None:
    """Coal's signed distance with ``request`` as ``(d, p1, normal)``, or None when it fails
    the checks."""
    result = coal.DistanceResult()
    coal.distance(g1, tf1, g2, tf2, request, result)
    d = float(result.min_distance)
    if _impossible(d, guard) or not math.isfinite(d):
        return None
    p1 = result.getNearestPoint1().tolist()
    normal = [float(v) for v in result.normal]
    if not (_finite(p1) and _finite(normal) and _is_unit(normal)):
        return None
    return d, p1, normal


def _answer(d: float, p1: list[float], normal: list[float]) -> Answer:
    """``(d, p1, p1 + d * normal, normal)`` as arrays."""
    q1 = np.array(p1, dtype=np.float64)
    n = np.array(normal, dtype=np.float64)
    return d, q1, q1 + d * n, n


# ----------------------------------------------------------------------- A: distances


def aligned_boxes(g1: Any, tf1: Any, g2: Any, tf2: Any, tolerance: float = 1e-10) -> Answer | None:
    """The exact signed distance of two boxes whose axes are parallel, or None.

    Coal 3.0.3 solves box/box with GJK/EPA, which fails on exactly aligned boxes within GJK's
    tolerance of touching (see the module notes), and its box support function inflates the
    negative faces by ``1e-10 * halfSide`` for the rest of the process once its first call
    met a direction with a zero component (a ``static const`` in ``getShapeSupport``), so even
    its good answers are 5e-11 m off per metre of box. This closed form has neither problem.

    Parameters
    ----------
    g1, g2 : coal.Box
        The two boxes (anything else gives None).
    tf1, tf2 : coal.Transform3s
        Their world placements.
    tolerance : float
        How far ``R1.T @ R2`` may be from a signed permutation matrix.

    Returns
    -------
    (d, p1, p2, normal) or None
        None unless both are boxes with parallel axes. Overlap is measured along the axis of
        least overlap (the first such axis of ``g1`` on a tie); witness points sit in the
        middle of the faces' common part, so the answer does not depend on which box comes
        first (up to the tie rule, see :func:`robust_distance`).
    """
    if g1.getNodeType() != _NT.GEOM_BOX or g2.getNodeType() != _NT.GEOM_BOX:
        return None
    axis = _native.axis_map(tf1, tf2, tolerance)
    if axis is None:
        return None
    return _box_answer(g1, tf1, g2, tf2, tf1.getRotation().tolist(), axis)


def _box_answer(
    g1: Any, tf1: Any, g2: Any, tf2: Any, r1: list[list[float]], axis: Sequence[int]
) -> Answer:
    """:func:`aligned_boxes` once the axes are known to be parallel (``axis`` from
    :func:`spatialcontact._native.axis_map`, ``r1`` the first box's rotation)."""
    t1 = tf1.getTranslation().tolist()
    t2 = tf2.getTranslation().tolist()
    half1 = [abs(float(v)) for v in g1.halfSide]
    half2 = [abs(float(v)) for v in g2.halfSide]
    delta = [t2[0] - t1[0], t2[1] - t1[1], t2[2] - t1[2]]
    c = [r1[0][i] * delta[0] + r1[1][i] * delta[1] + r1[2][i] * delta[2] for i in range(3)]
    h2 = [half2[axis[i]] for i in range(3)]
    gap = [abs(c[i]) - half1[i] - h2[i] for i in range(3)]
    side = [-1.0 if c[i] < 0.0 else 1.0 for i in range(3)]
    p1 = [0.5 * (max(-half1[i], c[i] - h2[i]) + min(half1[i], c[i] + h2[i])) for i in range(3)]
    p2 = list(p1)
    normal = [0.0, 0.0, 0.0]
    if max(gap) > 0.0:
        for i in range(3):
            if gap[i] > 0.0:
                p1[i] = side[i] * half1[i]
                p2[i] = c[i] - side[i] * h2[i]
        d = math.sqrt(sum(g * g for g in gap if g > 0.0))
        normal = [(p2[i] - p1[i]) / d for i in range(3)]
    else:
        k = 0 if gap[0] >= gap[1] else 1
        k = k if gap[k] >= gap[2] else 2  # the first axis of least overlap
        d = gap[k]
        p1[k] = side[k] * half1[k]
        p2[k] = c[k] - side[k] * h2[k]
        normal[k] = side[k]
    (x0, x1, x2), (y0, y1, y2), (z0, z1, z2) = r1

    def world(v: list[float], o: list[float]) -> np.ndarray:
        return np.array(
            [
                x0 * v[0] + x1 * v[1] + x2 * v[2] + o[0],
                y0 * v[0] + y1 * v[1] + y2 * v[2] + o[1],
                z0 * v[0] + z1 * v[1] + z2 * v[2] + o[2],
            ]
        )

    zero = [0.0, 0.0, 0.0]
    return d, world(p1, t1), world(p2, t1), world(normal, zero)


def _nudged_distance(
    g1: Any, tf1: Any, g2: Any, tf2: Any, guard: Guard, sign: float
) -> Answer | None:
    """Coal's answer with ``g2`` moved ``sign * step`` along the centre line, then along the
    normal found, each corrected back by ``step * (u . n)``; None when Coal fails again."""
    u = _direction(g1, tf1, g2, tf2)
    u = [sign * u[0], sign * u[1], sign * u[2]]
    step = _NUDGE * _scale(g1, g2)
    x, y, z = (float(v) for v in tf2.getTranslation())
    moved = coal.Transform3s(tf2)
    best: Answer | None = None
    for _ in range(2):
        moved.setTranslation(np.array([x + step * u[0], y + step * u[1], z + step * u[2]]))
        found = _coal_answer(g1, tf1, g2, moved, _FINE, guard)
        if found is None:
            break
        d, p1, normal = found
        along = u[0] * normal[0] + u[1] * normal[1] + u[2] * normal[2]
        best = _answer(d - step * along, p1, normal)
        if along > 1.0 - 1e-12:
            break
        u = normal  # along the normal, a convex pair's distance changes by exactly the step
    return best


def robust_distance(g1: Any, tf1: Any, g2: Any, tf2: Any, guard: Guard | None = None) -> Answer:
    """The signed distance of a pair whose Coal answer :func:`is_suspect` flagged.

    Works around Coal 3.0.3's GJK declaring "collision" within ``gjk_tolerance`` (1e-6) of
    touching and EPA then returning ``-DBL_MAX``, the far side of the Minkowski difference
    (-20 for 10 m cubes 0.5 µm apart) or exactly 0.0 (see the module notes). Measured on
    random placements within 1 µm of touching, both argument orders: Coal's answer is exactly
    0.0 in 25-60% of them (true distance up to 1e-6 away) and below the floor in about 2% of
    exactly aligned box pairs and 0.1% of spheres on hull vertices; swapping the arguments
    fixes almost none (7 of 429), a finer ``gjk_tolerance`` (1e-12) 93%, and the move used
    here all of them.

    The pair is taken in its canonical order (:func:`is_canonical`) and answered by, in turn:

    1. :func:`aligned_boxes`, exact, for two boxes with parallel axes;
    2. Coal with ``gjk_tolerance=1e-9`` after moving the second geometry apart by
       ``1e-5 * max(1, r1 + r2)`` along the centre line, then along the normal found, the
       distance corrected back by the step (moving a convex shape along its contact normal
       changes the distance by exactly the step);
    3. Coal with ``gjk_tolerance=1e-12``; 4. the move towards each other;
    5. if all fail (never seen): 0.0 at the midpoint of the centres.

    Accuracy, measured against exact references (closed forms, feature-by-feature polytope
    distances, or placements built at a known gap) over 6,600 repaired placements, both
    orders, errors per metre of scale: aligned boxes 3e-15; rotated boxes and box/hull pairs
    3.3e-10 (Coal's own box bias, see :func:`aligned_boxes`); hulls 4e-15; cylinders, cones,
    ellipsoids and capsules on faces, and meshes against them, 2e-8; a sphere centred within
    1e-5 of a hull vertex 5e-8 (bounded by that offset). Cost: 13-35 times the Coal call it
    replaces (the closed form, a move, a move on a 12-triangle mesh).

    Parameters
    ----------
    g1, g2 : coal.CollisionGeometry
        The pair, in query order (a shape/octree pair must be given octree first, as the
        package does, since Coal 3.0.3 returns those witness points octree first).
    tf1, tf2 : coal.Transform3s
        Their world placements.
    guard : Guard, optional
        ``answer_guard(g1, g2)``, if already at hand (its ceiling is not used here).

    Returns
    -------
    (d, p1, p2, normal)
        Signed distance, witness point on ``g1``, on ``g2``, unit normal from ``g1`` to
        ``g2``, world frame, with ``p2 - p1 == d * normal``. The same (swapped) for either
        argument order.
    """
    if not is_canonical(g1, tf1, g2, tf2):
        d, q2, q1, normal = robust_distance(g2, tf2, g1, tf1, guard)
        return d, q1, q2, -normal
    closed = aligned_boxes(g1, tf1, g2, tf2)
    if closed is not None:
        return closed
    if guard is None:
        guard = answer_guard(g1, g2)
    found = _nudged_distance(g1, tf1, g2, tf2, guard, 1.0)
    if found is None:
        fine = _coal_answer(g1, tf1, g2, tf2, _FINER, guard)
        if fine is not None:
            found = _answer(*fine)
    if found is None:
        found = _nudged_distance(g1, tf1, g2, tf2, guard, -1.0)
    if found is None:
        c1, c2 = _centre(g1, tf1), _centre(g2, tf2)
        middle = [0.5 * (c1[i] + c2[i]) for i in range(3)]
        found = _answer(0.0, middle, _direction(g1, tf1, g2, tf2))
    return found


def _aligned_depth(
    g1: Any, tf1: Any, g2: Any, tf2: Any, r1: list[list[float]], axis: Sequence[int]
) -> float:
    """The signed distance of :func:`_box_answer`, without its witness points (symmetric in
    the two boxes): the cheap test of whether Coal's answer for aligned boxes is right."""
    t1 = tf1.getTranslation().tolist()
    t2 = tf2.getTranslation().tolist()
    half1, half2 = g1.halfSide.tolist(), g2.halfSide.tolist()
    delta = [t2[0] - t1[0], t2[1] - t1[1], t2[2] - t1[2]]
    gap = [
        abs(r1[0][i] * delta[0] + r1[1][i] * delta[1] + r1[2][i] * delta[2])
        - abs(half1[i])
        - abs(half2[axis[i]])
        for i in range(3)
    ]
    if max(gap) > 0.0:
        return math.sqrt(sum(g * g for g in gap if g > 0.0))
    return max(gap)


def _aligned_canonical(g1: Any, tf1: Any, g2: Any, tf2: Any) -> Answer | None:
    """:func:`aligned_boxes` of two boxes in their canonical order; None, after only the
    rotation test (usually its first row), when they are not aligned."""
    axis = _native.axis_map(tf1, tf2, 1e-10)
    if axis is None:
        return None
    r1, r2 = tf1.getRotation().tolist(), tf2.getRotation().tolist()
    if is_canonical(g1, tf1, g2, tf2):
        return _box_answer(g1, tf1, g2, tf2, r1, axis)
    back = [0, 0, 0]
    for i, j in enumerate(axis):
        back[j] = i  # the axis of g1 along each axis of g2
    d, q2, q1, normal = _box_answer(g2, tf2, g1, tf1, r2, back)
    return d, q1, q2, -normal


def recheck(g1: Any, tf1: Any, g2: Any, tf2: Any, d: float, guard: Guard) -> Answer | None:
    """What to answer instead of a Coal distance or depth ``d`` that :func:`is_suspect` flagged.

    Parameters
    ----------
    g1, g2 : coal.CollisionGeometry
        The pair, in the order Coal was asked (octree first for a shape/octree pair).
    tf1, tf2 : coal.Transform3s
        Their placements.
    d : float
        Coal's distance (``DistanceResult.min_distance``) or contact depth (the deepest
        ``Contact.penetration_depth``).
    guard : Guard
        ``answer_guard(g1, g2)``, as used by the check.

    Returns
    -------
    (d, p1, p2, normal) or None
        :func:`robust_distance` when ``d`` itself is impossible or undecided; for an
        overlapping box pair caught only by the ceiling, :func:`aligned_boxes` (exact) when
        the boxes are aligned and Coal's ``d`` is more than ``1e-9`` (per metre of depth) off,
        and None (keep Coal's answer, witness points included) otherwise. Both argument
        orders get the same repaired answer, swapped.
    """
    if _impossible(d, guard):
        return robust_distance(g1, tf1, g2, tf2, guard)
    axis = _native.axis_map(tf1, tf2, 1e-10)
    if axis is None:
        return None  # not aligned: Coal's answer stands
    r1 = tf1.getRotation().tolist()
    if abs(_aligned_depth(g1, tf1, g2, tf2, r1, axis) - d) <= 1e-9 * max(1.0, abs(d)):
        return None  # Coal is right: keep its witness points (ties have several)
    return _aligned_canonical(g1, tf1, g2, tf2)


class DistanceAnswer:
    """A repaired distance that reads like the ``coal.DistanceResult`` it replaces.

    It has the fields and methods the package reads from a result (``min_distance``,
    ``normal``, ``getNearestPoint1()``, ``getNearestPoint2()``), so code that takes a filled
    result can take this instead. Made by :func:`robust_result`.
    """

    __slots__ = ("_p1", "_p2", "min_distance", "normal")

    def __init__(self, answer: Answer) -> None:
        d, p1, p2, normal = answer
        self.min_distance = float(d)
        self.normal = normal
        self._p1 = p1
        self._p2 = p2

    def getNearestPoint1(self) -> np.ndarray:
        """The witness point on the first geometry (a copy, as Coal's)."""
        return self._p1.copy()

    def getNearestPoint2(self) -> np.ndarray:
        """The witness point on the second geometry (a copy, as Coal's)."""
        return self._p2.copy()


def robust_result(
    g1: Any, tf1: Any, g2: Any, tf2: Any, guard: Guard | None = None
) -> DistanceAnswer:
    """:func:`robust_distance` as a :class:`DistanceAnswer`, to stand in for Coal's result."""
    return DistanceAnswer(robust_distance(g1, tf1, g2, tf2, guard))


def robust_contact(
    g1: Any,
    tf1: Any,
    g2: Any,
    tf2: Any,
    security_margin: float = 0.0,
    guard: Guard | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, float] | None:
    """The contact of a primitive pair whose Coal contact depth :func:`is_suspect` flagged.

    Coal 3.0.3's collision request runs the same GJK/EPA as its distance request, so a pair
    within 1 µm of touching gets a contact of depth -20, -DBL_MAX or 0.0 although it is apart
    (10 m cubes 0.5 µm apart: one contact of depth -20.0000005 in both orders).

    Returns
    -------
    (normal, p1, p2, depth) or None
        From :func:`robust_distance`: None when the repaired distance exceeds
        ``security_margin`` (no contact), else the contact, ``p2 - p1 == depth * normal``.
    """
    d, p1, p2, normal = robust_distance(g1, tf1, g2, tf2, guard)
    if d > security_margin:
        return None
    return normal, p1, p2, d


def robust_collided(
    g1: Any,
    tf1: Any,
    g2: Any,
    tf2: Any,
    security_margin: float = 0.0,
    guard: Guard | None = None,
) -> bool:
    """Whether a pair collides, when the contact of Coal's second look (the request with
    contacts on) has a depth :func:`is_suspect` flags.

    Coal 3.0.3's yes/no request (``enable_contact=False``) answers such pairs right: GJK alone
    sees the gap (its distance lower bound is the gap, 5e-7 for the 10 m cubes). The request
    with contacts on runs EPA and reports a contact of garbage depth, so ``iscollided`` said
    True in one argument order and False in the other. True when the repaired distance is at
    most ``security_margin``.
    """
    return robust_distance(g1, tf1, g2, tf2, guard)[0] <= security_margin


# -------------------------------------------------------------------------- B: normals


def _read_contacts(result: Any, n: int) -> list[ContactTuple]:
    out: list[ContactTuple] = []
    for i in range(n):
        c = result.getContact(i)
        out.append(
            (
                np.array(c.normal, dtype=np.float64),
                np.array(c.getNearestPoint1(), dtype=np.float64),
                np.array(c.getNearestPoint2(), dtype=np.float64),
                float(c.penetration_depth),
                int(c.b1),
                int(c.b2),
            )
        )
    return out


def _with_normal(contact: ContactTuple, normal: np.ndarray, fallback: ContactTuple) -> ContactTuple:
    """``contact`` with ``normal``, its depth and first witness point kept when finite (else
    taken from ``fallback``), and the second witness point placed ``depth`` along the normal."""
    _, p1, _, depth, b1, b2 = contact
    if not math.isfinite(depth):
        depth = fallback[3] if math.isfinite(fallback[3]) else 0.0
    if not np.all(np.isfinite(p1)):
        p1 = fallback[1] if np.all(np.isfinite(fallback[1])) else np.zeros(3)
    return normal, p1, p1 + depth * normal, depth, b1, b2


def repair_normals(
    collide: Callable[[Any, Any, Any, Any], int],
    g1: Any,
    tf1: Any,
    g2: Any,
    tf2: Any,
    request: Any,
    result: Any,
    n: int,
) -> list[ContactTuple]:
    """Every contact of a pair, with the undefined normals Coal gave repaired.

    Coal 3.0.3's closed-form sphere/box and sphere/triangle contacts have a NaN or zero normal
    when the sphere's centre lies exactly on the box surface or on the triangle, and GJK/EPA
    gives a zero normal to exactly concentric shapes (two identical capsules, a sphere at a
    cylinder's centre). Moving the second shape by 0.1 µm along x, y or z does not help for a
    centre on a vertex or edge of a mesh or of octree cells: the centre stays in the two axis
    planes through it, so some triangle or cell still contains it. Measured: a sphere centred
    on the corner of a cube mesh had 5 contacts, all normals zero, and each axis move left 2
    undefined; on an octree placed by a translation, a sphere on a cell corner had 4 NaN
    normals of 8. A repair that keeps a move only when every normal is defined then returns
    no contact while ``iscollided`` is True (25 of 300 random octree-corner placements), and
    ``+axis`` on the second shape is outward in one argument order and inward in the other
    (1 contact against 0 on a cube mesh's corner).

    Here the second geometry moves by ``s * 1e-7 * max(1, r1 + r2)`` along a fixed direction
    lying in no axis plane (``(1, √2, √3) / √6``), with ``s = +1`` in the pair's canonical
    order (:func:`is_canonical`) and ``-1`` otherwise, so both argument orders see the same
    relative move; if that move leaves a normal undefined, the opposite move is tried. When
    the moved pair has the same contacts (same count and primitive ids), only the undefined
    normals are taken from it and each contact keeps Coal's own depth (``-radius`` for a
    centre on the surface, which is right); otherwise the moved pair's contacts are used, their
    depths corrected back by the move to first order. If no move defines every normal, each
    undefined one is replaced by the direction between the two centres. The list is never
    empty when ``n > 0``, so ``contacts`` agrees with ``iscollided``. Measured on spheres
    centred on vertices, edges and faces of cube and icosphere meshes (400 placements, 286
    with undefined normals), on corners of octree cells (400, 167) and on concentric
    primitives (300, 20): every list non-empty with unit normals, the same count in both
    argument orders and opposite normals where a repair was involved.

    Parameters
    ----------
    collide : callable
        The pair's collision functor, ``collide(tf1, tf2, request, result) -> int`` (a cached
        ``coal.ComputeCollision(g1, g2)`` or the package's wrappers).
    g1, g2 : coal.CollisionGeometry
        The geometries the functor was made for, in that order.
    tf1, tf2 : coal.Transform3s
        Their placements (not modified).
    request, result : coal.CollisionRequest, coal.CollisionResult
        The request the contacts were found with, and the result holding them. ``result`` is
        reused for the moved queries: read nothing from it afterwards.
    n : int
        How many contacts ``result`` holds.

    Returns
    -------
    list of (normal, p1, p2, depth, b1, b2)
        All the pair's contacts, deepest first, every normal a unit vector from ``g1`` to
        ``g2``, ``p2 - p1 == depth * normal``. ``b1``/``b2`` are Coal's ids (an octree cell's
        must still be found from ``p1``, as the package does).
    """
    original = _read_contacts(result, n)
    bad = [i for i, c in enumerate(original) if not _is_unit(c[0])]
    if not bad:
        return sorted(original, key=lambda c: c[3])
    sign = 1.0 if is_canonical(g1, tf1, g2, tf2) else -1.0
    step = _NORMAL_NUDGE * _scale(g1, g2)
    t2 = np.asarray(tf2.getTranslation(), dtype=np.float64)
    moved = coal.Transform3s(tf2)
    repaired: list[ContactTuple] | None = None
    for s in (sign, -sign):
        move = s * step * _SKEW
        moved.setTranslation(t2 + move)
        result.clear()
        m = int(collide(tf1, moved, request, result))
        found = _read_contacts(result, m)
        if m == 0 or not all(_is_unit(c[0]) for c in found):
            continue
        if m == n and all(
            (f[4], f[5]) == (o[4], o[5]) for f, o in zip(found, original, strict=True)
        ):
            repaired = list(original)
            for i in bad:
                repaired[i] = _with_normal(original[i], found[i][0], found[i])
        else:
            repaired = []
            for normal, p1, _, depth, b1, b2 in found:
                d0 = depth - float(move @ normal)
                repaired.append((normal, p1, p1 + d0 * normal, d0, b1, b2))
        break
    if repaired is None:
        direction = np.array(_direction(g1, tf1, g2, tf2))
        repaired = list(original)
        for i in bad:
            repaired[i] = _with_normal(original[i], direction, original[i])
    result.clear()
    return sorted(repaired, key=lambda c: c[3])


# ------------------------------------------------------- C: pairs Coal cannot answer

NO_COLLIDE = frozenset(
    {(_NT.GEOM_ELLIPSOID, _NT.GEOM_OCTREE), (_NT.GEOM_OCTREE, _NT.GEOM_ELLIPSOID)}
)
"""Type pairs Coal 3.0.3 has no collision function for (it raises a C++ error)."""

NO_DISTANCE = NO_COLLIDE | {(_NT.GEOM_HALFSPACE, _NT.GEOM_HALFSPACE)}
"""Type pairs Coal 3.0.3 has no distance function for."""

NO_CONTACT = NO_DISTANCE | {(_NT.GEOM_OCTREE, _NT.GEOM_OCTREE)}
"""Type pairs whose contacts Coal 3.0.3 cannot give: octree/octree contacts carry no geometry
(NaN normal, depth 1.8e308)."""


# --------------------------------------------------- D: half-space/octree, octree/octree

_HALFSPACE_OCTREE = frozenset(
    {(_NT.GEOM_HALFSPACE, _NT.GEOM_OCTREE), (_NT.GEOM_OCTREE, _NT.GEOM_HALFSPACE)}
)
_IDENTITY = coal.Transform3s()


def _world_halfspace(g: Any, tf: Any) -> Any:
    """The Coal half-space ``g`` placed by ``tf``, written in the world frame."""
    n = tf.getRotation() @ g.n
    return coal.Halfspace(n, g.d + float(n @ tf.getTranslation()))


def _collide_by_distance(ga: Any, gb: Any) -> Callable[[Any, Any, Any, Any], int]:
    """A collision functor that answers from Coal's signed distance (1 when it is <= 0)."""
    functor = coal.ComputeDistance(ga, gb)
    request = coal.DistanceRequest()
    found = coal.DistanceResult()

    def collide(tf_a: Any, tf_b: Any, _request: Any, _result: Any) -> int:
        found.clear()
        functor(tf_a, tf_b, request, found)
        return int(found.min_distance <= 0.0)

    return collide


def collider(ga: Any, gb: Any) -> Any:
    """Coal's collision functor for two geometries: ``functor(tf_a, tf_b, request, result)``.

    Two pairs need another path in Coal 3.0.3:

    - a rotated half-space against an octree is collided wrongly (no collision where the
      signed distance is negative), while the same half-space written in the world frame and
      placed at the identity is answered right: that pair goes through a small wrapper;
    - two octrees are collided wrongly both ways (overlaps missed with contacts off, overlaps
      that are not there reported with contacts on, in about 3% and 20% of random poses),
      while their signed distance agrees with a cell-by-cell check: they are answered from it
      (1 when the distance is at most 0; the result is left empty).

    Every other pair gets ``coal.ComputeCollision(ga, gb)``.
    """
    types = (ga.getNodeType(), gb.getNodeType())
    if types[0] == types[1] == _NT.GEOM_OCTREE:
        return _collide_by_distance(ga, gb)
    if types not in _HALFSPACE_OCTREE:
        return coal.ComputeCollision(ga, gb)
    halfspace_first = types[0] == _NT.GEOM_HALFSPACE

    def collide(tf_a: Any, tf_b: Any, request: Any, result: Any) -> int:
        if halfspace_first:
            n = coal.collide(_world_halfspace(ga, tf_a), _IDENTITY, gb, tf_b, request, result)
        else:
            n = coal.collide(ga, tf_a, _world_halfspace(gb, tf_b), _IDENTITY, request, result)
        return int(n)

    return collide


# --------------------------------------------------------- E: yes/no misses deep overlaps

_EXACT_COLLIDE = frozenset(
    (a, b)
    for a, b in (
        (_NT.GEOM_SPHERE, _NT.GEOM_SPHERE),
        (_NT.GEOM_SPHERE, _NT.GEOM_CAPSULE),
        (_NT.GEOM_CAPSULE, _NT.GEOM_CAPSULE),
        (_NT.GEOM_SPHERE, _NT.GEOM_BOX),
        (_NT.GEOM_SPHERE, _NT.GEOM_CYLINDER),
    )
    for a, b in ((a, b), (b, a))
)
"""Primitive pairs whose yes/no collision Coal computes in closed form (no GJK)."""

CONFIRM_BELOW = 1e-4
"""A yes/no "no collision" whose ``distance_lower_bound`` is below this (metres) is asked
again with :func:`confirm_request`."""


def confirm_request(ga: Any, gb: Any) -> Any:
    """The request of the second look at a close yes/no "no collision", or None.

    Coal 3.0.3's yes/no request (``enable_contact=False``) misses about 1% of deep overlaps of
    shapes in symmetric poses (a box and a capsule turned 180° about z, say), each time with a
    distance lower bound of at most about 1e-6: such answers are asked again with contacts on.
    Pairs Coal solves in closed form never miss (none in 120,000 poses tried), half-spaces
    neither, and two octrees are answered from their distance (:func:`collider`): None for
    those.
    """
    types = (ga.getNodeType(), gb.getNodeType())
    if types in _EXACT_COLLIDE or _NT.GEOM_HALFSPACE in types or types[0] == types[1] == _OCT:
        return None
    confirm = coal.CollisionRequest()
    confirm.distance_upper_bound = 0.0
    return confirm


# --------------------------------------------------------------- F: octree contacts

OCTREE_FIRST = True
"""Whether (shape, octree) pairs are asked octree first and their answers swapped back.

Coal 3.0.3 gives a (shape, octree) pair's witness points, contact normals and primitive ids in
octree-first order whichever order it was asked in.
"""


def octree_cell(cells: np.ndarray, tf: Any, point: np.ndarray) -> int:
    """The row of ``cells`` (``[x, y, z, side]``, octree frame) holding the world ``point``.

    Coal 3.0.3 gives an octree contact a node-pointer offset (or -1) as its primitive id
    ``b1``; the cell is found from the contact's witness point instead (the nearest cell when a
    point on a shared face or rounding leaves it in none). ``tf`` places the octree.
    """
    local = tf.inverse().transform(point)
    excess = np.abs(cells[:, :3] - local).max(axis=1) - 0.5 * cells[:, 3]
    return int(np.argmin(excess))


# --------------------------------------------------------------- G: triangle witnesses


def mend_witnesses(data: np.ndarray, depth: float) -> None:
    """Make the witness points of one contact satisfy ``p2 - p1 == depth * normal``.

    Coal 3.0.3 gives two overlapping triangles a single point as both witness points. ``data``
    is the contact's ``[normal, p1, p2, pos]``, shape (12,), changed in place: when the
    identity fails, the points are placed half the depth either side of ``pos`` along the
    normal.
    """
    nx, ny, nz, x1, y1, z1, x2, y2, z2 = data[:9].tolist()
    tolerance = 1e-9 + 1e-6 * abs(depth)
    if (
        abs(x2 - x1 - depth * nx) > tolerance
        or abs(y2 - y1 - depth * ny) > tolerance
        or abs(z2 - z1 - depth * nz) > tolerance
    ):
        half = 0.5 * depth * data[0:3]
        data[3:6] = data[9:12] - half
        data[6:9] = data[9:12] + half


# ------------------------------------------------------------- H: zero-area triangles


def has_area(vertices: np.ndarray, faces: np.ndarray) -> np.ndarray:
    """``(n_faces,)`` bool: which triangles of a mesh have a non-zero area.

    Coal 3.0.3 measures a sphere against a mesh holding even one triangle of zero area
    (repeated or collinear vertices) as overlapping by the sphere's whole radius, wherever the
    sphere is: such triangles carry no surface and must be left out of the model.
    """
    v = vertices[faces]
    doubled = np.linalg.norm(np.cross(v[:, 1] - v[:, 0], v[:, 2] - v[:, 0]), axis=1)
    return np.asarray(doubled > 0.0)


# ------------------------------------------------------ I: broadphase trees and references

SPARE = coal.Sphere(1e-3)
"""A tiny geometry for a Coal object leaving a tree (see :func:`unregister`)."""
SPARE.computeLocalAABB()

TREE_EXCLUDED = frozenset({_OCT})
"""Node types kept out of Coal's broadphase trees: a tree collides its pairs with Coal's plain
functions, so it would miss the repairs of :func:`collider` (half-space/octree, octree/octree)
and raise on octree/ellipsoid (:data:`NO_COLLIDE`)."""

BOX_LIMIT = 1e300
"""Bound given to a world box in Coal's trees (see :func:`fix_box`)."""


def fix_box(co: Any) -> None:
    """Keep the world box of the ``coal.CollisionObject`` ``co`` finite and of positive volume.

    Coal 3.0.3's trees test two boxes with infinite or near-``DBL_MAX`` bounds (a half-space's)
    as disjoint, their extents overflowing, and its ``update()`` refuses a box of zero volume (a
    flat mesh): the bounds are clipped to :data:`BOX_LIMIT` and thin sides padded by 1e-9
    (relative).
    """
    aabb = co.getAABB()  # a reference into the object: assigning to it updates the object
    lo = np.clip(aabb.min_, -BOX_LIMIT, BOX_LIMIT)
    hi = np.clip(aabb.max_, -BOX_LIMIT, BOX_LIMIT)
    pad = 1e-9 * (1.0 + np.maximum(np.abs(lo), np.abs(hi)))
    thin = hi - lo < pad
    aabb.min_ = np.where(thin, lo - pad, lo)
    aabb.max_ = np.where(thin, hi + pad, hi)


def unregister(manager: Any, co: Any) -> None:
    """Take ``co`` out of a Coal broadphase ``manager`` and let its geometry go.

    Coal 3.0.3's Python binding keeps a reference to the object passed to ``registerObject``
    (and ``update(object)``, ``setCollisionGeometry``) that only the end of the manager gives
    back, however often the call is repeated. So a removed 200k-triangle mesh stayed alive as
    long as its scene. Its geometry is swapped for :data:`SPARE` (the manager still holds the
    object, now tiny); the caller rebuilds the manager once such leftovers add up.
    """
    manager.unregisterObject(co)
    co.setCollisionGeometry(SPARE, False)


# ------------------------------------------------- J, K, L: overlap answers of the distance

# J. Measured through the package on 1,000 random placements per pair and order (offsets of
#    0.3 m, unit-sized shapes; ``benchmarks`` and ``tests/test_penetration.py`` reproduce it):
#    sphere/cylinder overlap distances up to 0.27 m and witness points up to 0.56 m from the
#    closed form (a centre inside the cylinder is measured to the side only); capsule/capsule
#    with nearly concentric axes gives d = -0.29 with equal witness points; a sphere centred
#    on a capsule's segment gets witness points off the surfaces. Every other closed-form pair
#    (sphere/sphere, sphere/box, the half-space pairs) agreed with the closed form to 1e-12.
#    The query code answers the three pairs' overlaps with the closed forms. Measured on
#    Coal's own distance over 2,000 overlapping placements per pair, random and degenerate
#    (nearly concentric, a centre on the segment): capsule/capsule and sphere/capsule depths
#    right to 1e-6, but witness points up to 0.30 m off the surfaces (377 and 1,497 of them),
#    none caught by the witness identity; sphere/cylinder depths up to 0.21 m off (1,135).
#    Sphere/cone: EPA is inexact on the curved cone, its depths short by more than 1e-6 in 112
#    of 5,335 overlapping placements (sizes 0.2-1 m), by up to 2.2e-4 times the size in nearly
#    concentric ones (-0.9467825 for -(0.5 + 1/sqrt 5) = -0.9472136: a sphere of 0.5 at the
#    centre of a cone of radius 1, length 2), so that moving by |d| along its normal leaves an
#    overlap; GJK's separated distances are long by up to 3.1e-6 m at 2.2 m (its relative
#    tolerance). Its closed form answers every placement too.

FORM_ON_OVERLAP = frozenset(
    frozenset(pair)
    for pair in (
        (_NT.GEOM_SPHERE, _NT.GEOM_CYLINDER),
        (_NT.GEOM_SPHERE, _NT.GEOM_CONE),
        (_NT.GEOM_SPHERE, _NT.GEOM_CAPSULE),
        (_NT.GEOM_CAPSULE, _NT.GEOM_CAPSULE),
    )
)
"""Type pairs whose overlaps are answered by the package's closed forms instead of Coal (J).
Their distances are the compiled closed forms at every placement (faster than Coal's call,
and right for the capsule pairs Coal takes as parallel, M); their contacts are Coal's where it
is right (apart, within the margin) and the closed form's on overlap."""
#
# K. A distance query on a mesh or an octree measures the first penetrating triangle or cell
#    it meets, not the deepest (sphere vs mesh: -0.185 where the deepest contact is -0.317),
#    and two overlapping hollow meshes read 0.0 with witness points centimetres apart. The
#    contact query with all contacts requested finds the deepest; the query code takes a
#    mesh's, an octree's or a half-space's overlap from it.
#
# L. EPA's answers depend on the argument order: two crossing triangles get -1.0 in one order
#    where -0.1 is right, random crossing icosphere meshes deepest contacts up to 2.8e-2 apart,
#    nearly concentric cylinders and cones up to 3.3e-3 (their witness points up to 4.3e-3 off
#    the surface), and it overshoots on triangle pairs (two crossing triangles of icosphere
#    meshes 0.0017 deep read 0.055 in one order and 0.039 in the other). Mesh pairs are
#    answered by the package's own triangle contacts (:func:`triangle_meshes`); the convex
#    pairs keep Coal's answer (see docs/conventions-distance.md), checked with
#    :func:`witness_identity`. Measured on Coal's own distance over 8,033 overlapping
#    placements of the convex primitives (random and nearly concentric): broken in 27, all
#    sphere/cylinder (answered by its closed form), in none of the pairs the check guards.


POLYTOPES = frozenset({_NT.GEOM_BOX, _NT.GEOM_CONVEX})
"""Node types whose overlaps skip the witness check (L): on two polytopes it costs as much as
the query (2x on an overlapping box pair) and never found a broken answer."""


def triangle_meshes(g1: Any, g2: Any) -> bool:
    """Whether a pair's contacts are the package's own, triangle pair by triangle pair
    (:func:`spatialcontact._native.mesh_contacts`, exact depths), not Coal's (L): two meshes,
    whose triangle/triangle EPA depends on the order and overshoots (-1.0 in one order where
    -0.1 is right for two crossing triangles; 0.055 and 0.039 in the two orders for two
    crossing icosphere triangles 0.0017 deep)."""
    return bool(g1.getNodeType() == g2.getNodeType() == _NT.BV_OBBRSS)


def witness_identity(d: float, p1: Any, p2: Any, normal: Any) -> bool:
    """True when Coal's witness points satisfy ``p2 - p1 == d * normal`` (L).

    Coal 3.0.3's EPA returns, on some deep overlaps of curved shapes, witness points whose
    difference is not the depth along the normal (equal points with d = -0.29 for two nearly
    concentric capsules). The tolerance is ``1e-6 * max(1, |d|)``, EPA's own.

    Parameters
    ----------
    d : float
        Signed distance.
    p1, p2 : ndarray, shape (3,), world frame
        Witness points on the first and second geometry.
    normal : ndarray, shape (3,), world frame
        Unit normal from the first geometry to the second.
    """
    x1, y1, z1 = p1.tolist()
    x2, y2, z2 = p2.tolist()
    nx, ny, nz = (float(v) for v in normal)
    tolerance = 1e-6 * max(1.0, abs(d))
    return (
        abs(nx * nx + ny * ny + nz * nz - 1.0) <= 1e-6
        and abs(x2 - x1 - d * nx) <= tolerance
        and abs(y2 - y1 - d * ny) <= tolerance
        and abs(z2 - z1 - d * nz) <= tolerance
    )


# ---------------------------------------------------------- M: capsule/capsule distance

_PARALLEL = 100.0 * float(np.finfo(np.float64).eps)
"""Coal 3.0.3's bound on ``L1^2 L2^2 sin^2(angle)`` below which it takes the segments of two
capsules as parallel (``std::numeric_limits<double>::epsilon() * 100``, absolute)."""

_ROUNDING = 8.0 * float(np.finfo(np.float64).eps)
"""Relative rounding of ``L1^2 L2^2 sin^2(angle)`` as Coal computes it (``a e - b^2``)."""

CAPSULE_TOLERANCE = 1e-6
"""Metres: capsule pairs whose distances Coal can overshoot by more than this are checked
(:func:`capsule_overshoot`); below it, the error is that of GJK on any other pair."""


def _lengths(g1: Any, g2: Any) -> tuple[float, float] | None:
    if g1.getNodeType() != _NT.GEOM_CAPSULE or g2.getNodeType() != _NT.GEOM_CAPSULE:
        return None
    return 2.0 * float(g1.halfLength), 2.0 * float(g2.halfLength)


def capsule_overshoot(g1: Any, g2: Any) -> float:
    """How far Coal 3.0.3's distance of two capsules can exceed the true one (M); 0 for any
    other pair.

    Coal measures two capsules by the distance between their segments (lengths ``L1``,
    ``L2``, at an angle ``θ``), in closed form, but takes the segments as parallel when
    ``(L1 L2 sin θ)^2`` is at most an absolute 2.2e-14, and then measures from an end of one
    segment: the answer is too large by up to ``max(L1, L2) sin θ``. Short segments are
    taken as parallel at any angle. Measured over 400 random separated placements: capsules
    of 1e-5 m and 1e-3 m (radius = length) were off in 18% of them, by up to 5.6 times the
    distance; 3e-5 m and 3e-3 m in 14%, by up to 11%; two of 1e-3 m in 0.3%; none for 0.1 m.
    Collisions are computed from the same distance, so a pair that overlaps by less than the
    overshoot reads apart.
    """
    lengths = _lengths(g1, g2)
    if lengths is None:
        return 0.0
    l1, l2 = lengths
    ae = (l1 * l2) ** 2
    return max(l1, l2) * math.sqrt((4.0 * _PARALLEL + _ROUNDING * ae) / ae)


def parallel_test(g1: Any, g2: Any) -> Callable[[Any, Any], bool] | None:
    """For two capsules whose distance Coal 3.0.3 can overshoot by more than
    :data:`CAPSULE_TOLERANCE` (:func:`capsule_overshoot`), a test ``parallel(tf1, tf2)`` of
    whether Coal may take their segments as parallel at placements ``tf1`` and ``tf2`` (M):
    there its answer may be wrong, and the closed form answers instead. None for any other
    pair. The test is a superset of Coal's own (four times its bound, plus rounding)."""
    if capsule_overshoot(g1, g2) <= CAPSULE_TOLERANCE:
        return None
    lengths = _lengths(g1, g2)
    assert lengths is not None
    ae = (lengths[0] * lengths[1]) ** 2
    # ae (1 - cos^2) <= bound, as a bound on cos^2 (at most 0: every angle).
    limit = 1.0 - (4.0 * _PARALLEL + _ROUNDING * ae) / ae

    def parallel(tf1: Any, tf2: Any) -> bool:
        (_, _, x1), (_, _, y1), (_, _, z1) = tf1.getRotation().tolist()
        (_, _, x2), (_, _, y2), (_, _, z2) = tf2.getRotation().tolist()
        c = x1 * x2 + y1 * y2 + z1 * z2
        return c * c >= limit

    return parallel


# ------------------------------------------------------------------ N: EPA's iterations

EPA_ITERATIONS = 512
"""EPA iterations given to the queries of a pair with an ellipsoid (Coal's default: 64)."""


def epa_budget(g1: Any, g2: Any, request: Any) -> None:
    """Give ``request`` (a distance or collision request) enough EPA iterations for the pair
    (N).

    EPA approximates the Minkowski difference of the two shapes by a polytope, one face more
    per iteration, and Coal 3.0.3 stops it after 64. A smooth ellipsoid needs more: for two
    ellipsoids (radii 0.3 to 1 m) overlapping with nearly the same centre, the depth came out
    up to 4.6e-2 m short of a 3,000-iteration EPA (median 5.7e-6 over 120 overlaps), and the
    two argument orders up to 9.8e-3 m apart; an ellipsoid and a cylinder up to 1.1e-2. With 512 it
    was within 1.1e-6 (EPA's tolerance) in every placement, and the fuzzer's case (the same
    centre, 1.2535 m deep) within 3e-6 of the minimum of the two support functions. EPA stops
    once it converges, so a query costs more only where the default cut it short: the mean
    over those overlaps went from 26 to 53 µs. Other pairs keep the default.
    """
    if _NT.GEOM_ELLIPSOID in (g1.getNodeType(), g2.getNodeType()):
        request.epa_max_iterations = EPA_ITERATIONS
