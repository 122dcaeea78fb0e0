"""The one place that calls Coal's collision and distance code.

Each leaf shape keeps, per partner shape, the Coal functor, request and result for that pair, so
a repeated query costs one dictionary look-up more than the Coal call itself. The functions
here become the query methods of :class:`~spatialcontact.CollisionShape`; groups go through
the same functions, which walk their leaves, culled by world bounding spheres.
"""

from __future__ import annotations

import heapq
import math
from threading import get_ident
from typing import TYPE_CHECKING, Any, cast

import coal
import numpy as np

from ._base import ShapeBase, collision_leaves
from ._coal.state import thread_entry
from ._validate import bound, coordinate, count, describe
from .contact import Contact, Contacts
from .errors import (
    CollisionDisabledError,
    InvalidArgumentError,
    ShapeTypeError,
    UnsupportedPairError,
)

if TYPE_CHECKING:
    from .shapes import CollisionShape

__all__ = [
    "ALL_CONTACTS",
    "closest_point",
    "contacts",
    "distance",
    "iscollided",
]

ALL_CONTACTS = 1 << 16
"""How many contacts Coal is asked for on a mesh or octree pair, before the deepest are kept."""

_NT = coal.NODE_TYPE
_MANY_CONTACT_TYPES = frozenset(
    {_NT.BV_AABB, _NT.BV_OBB, _NT.BV_RSS, _NT.BV_kIOS, _NT.BV_OBBRSS, _NT.BV_KDOP16,
     _NT.BV_KDOP18, _NT.BV_KDOP24, _NT.GEOM_OCTREE}
)  # fmt: skip
_NO_COLLIDE = frozenset(
    {(_NT.GEOM_ELLIPSOID, _NT.GEOM_OCTREE), (_NT.GEOM_OCTREE, _NT.GEOM_ELLIPSOID)}
)
_NO_DISTANCE = _NO_COLLIDE | {(_NT.GEOM_HALFSPACE, _NT.GEOM_HALFSPACE)}
_NO_CONTACT = _NO_DISTANCE | {(_NT.GEOM_OCTREE, _NT.GEOM_OCTREE)}
"""Coal 3.0.3's octree-octree contacts carry no geometry (NaN normal, depth 1.8e308)."""


# ------------------------------------------------------------------------- checks and pairs


def _check_shape(value: Any, name: str) -> CollisionShape:
    if not isinstance(value, ShapeBase):
        raise ShapeTypeError(
            f"{name} must be a CollisionShape or CollisionShapeGroup, got "
            f"{type(value).__name__}: {describe(value)}"
        )
    if not value._collision:
        raise CollisionDisabledError(
            f"{name} {describe(value)} has collision=False and cannot be used as a collision object"
        )
    return cast("CollisionShape", value)


def _geometries(
    a: CollisionShape, b: CollisionShape, unsupported: frozenset[Any]
) -> tuple[Any, Any]:
    ga, gb = a._geometry, b._geometry
    if (ga.getNodeType(), gb.getNodeType()) in unsupported:
        raise UnsupportedPairError(
            f"Coal cannot answer this query between a {type(a).__name__} and a "
            f"{type(b).__name__} ({describe(a)} and {describe(b)})"
        )
    return ga, gb


def _sphere(leaf: CollisionShape) -> tuple[np.ndarray, float]:
    """World bounding sphere (centre (3,), radius) of a leaf; infinite for a half-space."""
    g = leaf._geometry
    radius = g.aabb_radius
    if not radius < 1e100:
        return np.zeros(3), math.inf
    return leaf._tf.transform(g.aabb_center), radius


def _bounds(shape: CollisionShape) -> tuple[tuple[Any, ...], np.ndarray, np.ndarray]:
    """The collision leaves of ``shape`` with their world bounding spheres.

    Returns ``(leaves, centres (n, 3), radii (n,))``. A group caches them until anything in the
    tree it belongs to moves or changes (the revision of the tree's root changes).
    """
    if not shape._is_group:
        centre, radius = _sphere(shape)
        return (shape,), centre.reshape(1, 3), np.array((radius,))
    root = shape
    while root._parent is not None:
        root = root._parent
    cached = shape._bounds_cache
    if cached is not None and cached[0] is root and cached[1] == root._revision:
        return cached[2]
    leaves = collision_leaves(shape)
    spheres = [_sphere(cast("CollisionShape", leaf)) for leaf in leaves]
    centres = np.array([c for c, _ in spheres], dtype=np.float64).reshape(-1, 3)
    radii = np.array([r for _, r in spheres], dtype=np.float64)
    bounds = (leaves, centres, radii)
    shape._bounds_cache = (root, root._revision, bounds)
    return bounds


def _gaps(
    a: CollisionShape, b: CollisionShape
) -> tuple[np.ndarray, tuple[Any, ...], tuple[Any, ...]]:
    """Lower bounds on the distance between every leaf of ``a`` and every leaf of ``b``.

    Returns ``(gap (na, nb), leaves_a, leaves_b)``: the gaps between the leaves' world bounding
    spheres (``-inf`` where either is unbounded).
    """
    leaves_a, ca, ra = _bounds(a)
    leaves_b, cb, rb = _bounds(b)
    diff = ca[:, None, :] - cb[None, :, :]
    # Centres are finite, so an unbounded leaf (radius inf) gives -inf, never NaN.
    gap = np.sqrt(np.einsum("ijk,ijk->ij", diff, diff)) - ra[:, None] - rb[None, :]
    return gap, leaves_a, leaves_b


def _leaf_pairs(a: CollisionShape, b: CollisionShape, cutoff: float) -> list[tuple[Any, Any]]:
    """Leaf pairs of ``a`` and ``b`` whose bounding spheres are within ``cutoff``."""
    gap, leaves_a, leaves_b = _gaps(a, b)
    ii, jj = np.nonzero(gap <= cutoff)
    return [(leaves_a[i], leaves_b[j]) for i, j in zip(ii.tolist(), jj.tolist(), strict=True)]


# -------------------------------------------------------------------------------- collide


_HALFSPACE_OCTREE = frozenset(
    {(_NT.GEOM_HALFSPACE, _NT.GEOM_OCTREE), (_NT.GEOM_OCTREE, _NT.GEOM_HALFSPACE)}
)
_IDENTITY = coal.Transform3s()


def _world_halfspace(g: Any, tf: Any) -> Any:
    """The Coal half-space ``g`` placed by ``tf``, written in the world frame."""
    n = tf.getRotation() @ g.n
    return coal.Halfspace(n, g.d + float(n @ tf.getTranslation()))


def _collider(ga: Any, gb: Any) -> Any:
    """Coal's collision functor for two geometries: ``functor(tf_a, tf_b, request, result)``.

    Coal 3.0.3 collides a rotated half-space with an octree wrongly (no collision where the
    signed distance is negative), while the same half-space written in the world frame and
    placed at the identity is answered right: that pair goes through a small wrapper. Two
    octrees are answered from their signed distance (:func:`_collide_by_distance`).
    """
    if ga.getNodeType() == gb.getNodeType() == _NT.GEOM_OCTREE:
        return _collide_by_distance(ga, gb)
    if (ga.getNodeType(), gb.getNodeType()) not in _HALFSPACE_OCTREE:
        return coal.ComputeCollision(ga, gb)
    halfspace_first = ga.getNodeType() == _NT.GEOM_HALFSPACE

    def collide(tf_a: Any, tf_b: Any, request: Any, result: Any) -> int:
        if halfspace_first:
            n = coal.collide(_world_halfspace(ga, tf_a), _IDENTITY, gb, tf_b, request, result)
        else:
            n = coal.collide(ga, tf_a, _world_halfspace(gb, tf_b), _IDENTITY, request, result)
        return int(n)

    return collide


_OCT = _NT.GEOM_OCTREE
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

_CONFIRM_BELOW = 1e-4
"""A yes/no "no collision" whose distance lower bound is below this (metres) is asked again."""


def _collide_by_distance(ga: Any, gb: Any) -> Any:
    """A collision functor that answers from Coal's signed distance (1 when it is <= 0).

    Coal 3.0.3 collides two octrees wrongly both ways (misses overlaps with contacts off,
    reports overlaps that are not there with contacts on, in about 3% and 20% of random
    poses), while their signed distance agrees with a cell-by-cell check.
    """
    functor = coal.ComputeDistance(ga, gb)
    request = coal.DistanceRequest()
    found = coal.DistanceResult()

    def collide(tf_a: Any, tf_b: Any, _request: Any, _result: Any) -> int:
        found.clear()
        functor(tf_a, tf_b, request, found)
        return int(found.min_distance <= 0.0)

    return collide


def _collide_entry(a: CollisionShape, b: CollisionShape) -> tuple[Any, ...]:
    ga, gb = _geometries(a, b, _NO_COLLIDE)
    fast = coal.CollisionRequest()
    fast.enable_contact = False
    fast.distance_upper_bound = 0.0
    # Coal 3.0.3's yes/no request (enable_contact=False) misses about 1% of deep overlaps of
    # shapes in symmetric poses (a box and a capsule turned 180° about z, say), each time
    # with a distance lower bound of at most about 1e-6: such answers are asked again with
    # contacts on. Pairs Coal solves in closed form never miss (none in 120,000 poses tried),
    # and two octrees are answered from their distance (see _collider): no second look.
    types = (ga.getNodeType(), gb.getNodeType())
    if types in _EXACT_COLLIDE or _NT.GEOM_HALFSPACE in types or types[0] == types[1] == _OCT:
        confirm = None
    else:
        confirm = coal.CollisionRequest()
        confirm.distance_upper_bound = 0.0
    return (_collider(ga, gb), b._tf, fast, coal.CollisionResult(), confirm, (ga, gb), get_ident())


def _confirm(entry: tuple[Any, ...], tf1: Any) -> bool:
    """The second look of :func:`iscollided` at a close "no collision" (see _collide_entry)."""
    functor, tf2, _, result, confirm, _, _ = entry
    if confirm is None or not result.distance_lower_bound < _CONFIRM_BELOW:
        return False
    result.clear()
    return functor(tf1, tf2, confirm, result) > 0


def iscollided(self: CollisionShape, other: CollisionShape) -> bool:
    """True when this shape and ``other`` touch or overlap.

    Parameters
    ----------
    other : CollisionShape or CollisionShapeGroup
        The shape to test against, of any type, in either order.

    Returns
    -------
    bool
        For a group, True when any of its leaves collides. A :class:`Mesh` is a hollow
        surface: a shape wholly inside a closed mesh does not collide with it.
    """
    try:
        entry = self._collide_pairs[id(other)]
    except KeyError:
        return _iscollided_slow(self, other)
    functor, tf2, request, result, confirm, _, thread = entry
    if thread != get_ident():
        return _iscollided_slow(self, other)
    result.clear()
    if functor(self._tf, tf2, request, result):
        return True
    return confirm is not None and _confirm(entry, self._tf)


def _collide_leaves(a: CollisionShape, b: CollisionShape) -> bool:
    entry = thread_entry(a, b, "_collide_pairs", _collide_entry)
    result = entry[3]
    result.clear()
    if entry[0](a._tf, entry[1], entry[2], result):
        return True
    return _confirm(entry, a._tf)


def _iscollided_slow(a: CollisionShape, b: Any) -> bool:
    _check_shape(a, "self")
    _check_shape(b, "other")
    if not (a._is_group or b._is_group):
        return _collide_leaves(a, b)
    return any(_collide_leaves(la, lb) for la, lb in _leaf_pairs(a, b, 0.0))


# ------------------------------------------------------------------------------- distance


def _distance_entry(a: CollisionShape, b: CollisionShape) -> tuple[Any, ...]:
    ga, gb = _geometries(a, b, _NO_DISTANCE)
    request = coal.DistanceRequest()
    request.enable_signed_distance = True
    functor = coal.ComputeDistance(ga, gb)
    return (functor, b._tf, request, coal.DistanceResult(), (ga, gb), get_ident())


def _distance_leaves(a: CollisionShape, b: CollisionShape) -> tuple[Any, bool]:
    """Run Coal's distance on two leaves.

    Returns the filled ``DistanceResult`` and whether its witness points are in ``(b, a)``
    order: Coal 3.0.3 gives a (shape, octree) pair's points octree first, so that pair is asked
    octree first (and cached on the octree only, out of reach of closest_point's fast path).
    """
    if b.stype == "octree" and a.stype != "octree":
        return _distance_leaves(b, a)[0], True
    functor, tf2, request, result, _, _ = thread_entry(a, b, "_distance_pairs", _distance_entry)
    result.clear()
    functor(a._tf, tf2, request, result)
    return result, False


def _witnesses(result: Any, swapped: bool) -> tuple[np.ndarray, np.ndarray]:
    """The witness points of a ``DistanceResult`` from :func:`_distance_leaves`, in query order."""
    if swapped:
        return result.getNearestPoint2(), result.getNearestPoint1()
    return result.getNearestPoint1(), result.getNearestPoint2()


def _check_inf_dist(value: Any) -> float:
    return bound(value, "inf_dist")


def _nearest(a: CollisionShape, b: CollisionShape, limit: float) -> Any:
    """The closest leaf pair of ``a`` and ``b``: ``(d, p1, p2)`` or None past ``limit``.

    Leaf pairs are visited in order of their bounding-sphere gap, stopping once that lower
    bound exceeds the best distance found.
    """
    if not (a._is_group or b._is_group):
        result, swapped = _distance_leaves(a, b)
        d = result.min_distance
        if d > limit:
            return None
        return (d, *_witnesses(result, swapped))
    gap, leaves_a, leaves_b = _gaps(a, b)
    if gap.size == 0:
        return None
    flat = gap.ravel()
    width = gap.shape[1]

    def measure(k: int) -> tuple[float, np.ndarray, np.ndarray]:
        result, swapped = _distance_leaves(leaves_a[k // width], leaves_b[k % width])
        return (result.min_distance, *_witnesses(result, swapped))

    # The pair with the smallest gap first: its distance bounds which other pairs can win.
    first = int(np.argmin(flat))
    if flat[first] > limit:
        return None
    best = measure(first)
    candidates = np.flatnonzero(flat <= min(limit, best[0]))
    for k in candidates[np.argsort(flat[candidates], kind="stable")].tolist():
        if flat[k] > best[0]:
            break
        if k != first:
            found = measure(k)
            if found[0] < best[0]:
                best = found
    return best if best[0] <= limit else None


def closest_point(
    self: CollisionShape, other: CollisionShape, inf_dist: float = 1.0
) -> tuple[float, np.ndarray, np.ndarray] | tuple[None, None, None]:
    """Signed distance and closest points between this shape and ``other``.

    Parameters
    ----------
    other : CollisionShape or CollisionShapeGroup
        The shape to measure to.
    inf_dist : float
        Cut-off: when the distance is greater than ``inf_dist``, ``(None, None, None)`` is
        returned (a distance equal to it is returned).

    Returns
    -------
    d : float or None
        Signed distance in metres, negative when solid shapes overlap (a :class:`Mesh` is a
        hollow surface, so overlap with it is measured per triangle).
    p1 : ndarray, shape (3,), world frame, or None
        Point on this shape.
    p2 : ndarray, shape (3,), world frame, or None
        Point on ``other``.

    Examples
    --------
    >>> from spatialmath import SE3
    >>> from spatialcontact import Sphere
    >>> a, b = Sphere(1.0), Sphere(1.0, pose=SE3.Trans(3.0, 0.0, 0.0))
    >>> d, p1, p2 = a.closest_point(b)
    >>> float(d), p1.tolist(), p2.tolist()
    (1.0, [1.0, 0.0, 0.0], [2.0, 0.0, 0.0])
    >>> a.closest_point(b, inf_dist=0.5)
    (None, None, None)
    """
    try:
        functor, tf2, request, result, _, thread = self._distance_pairs[id(other)]
    except KeyError:
        return _closest_point_slow(self, other, inf_dist)
    if thread != get_ident():
        return _closest_point_slow(self, other, inf_dist)
    if inf_dist.__class__ is not float:
        inf_dist = _check_inf_dist(inf_dist)
    elif inf_dist != inf_dist:
        _check_inf_dist(inf_dist)
    result.clear()
    functor(self._tf, tf2, request, result)
    d = result.min_distance
    if d > inf_dist:
        return None, None, None
    return d, result.getNearestPoint1(), result.getNearestPoint2()


def _closest_point_slow(
    a: CollisionShape, b: Any, inf_dist: Any
) -> tuple[float, np.ndarray, np.ndarray] | tuple[None, None, None]:
    _check_shape(a, "self")
    _check_shape(b, "other")
    best = _nearest(a, b, _check_inf_dist(inf_dist))
    if best is None:
        return None, None, None
    return best


def distance(self: CollisionShape, other: CollisionShape) -> float:
    """Signed distance in metres to ``other`` (negative on overlap), with no cut-off.

    ``inf`` when either side is a group with no collision leaves (an empty group, say).
    """
    _check_shape(self, "self")
    _check_shape(other, "other")
    best = _nearest(self, other, math.inf)
    return math.inf if best is None else float(best[0])


# ------------------------------------------------------------------------------- contacts


def _contact_entry(a: CollisionShape, b: CollisionShape) -> tuple[Any, ...]:
    ga, gb = _geometries(a, b, _NO_CONTACT)
    many = ga.getNodeType() in _MANY_CONTACT_TYPES or gb.getNodeType() in _MANY_CONTACT_TYPES
    request = coal.CollisionRequest()
    request.num_max_contacts = ALL_CONTACTS if many else 1
    return (_collider(ga, gb), b._tf, request, coal.CollisionResult(), many, (ga, gb), get_ident())


def _contacts_leaves(
    a: CollisionShape, b: CollisionShape, max_contacts: int, margin: float, out: list[Contact]
) -> None:
    if b.stype == "octree" and a.stype != "octree":
        # Coal 3.0.3 gives (shape, octree) and (mesh, octree) contacts octree first (normal,
        # witness rows and primitive ids): ask octree first (cached on the octree only, out of
        # reach of contacts' fast path) and swap back.
        swapped: list[Contact] = []
        _contacts_leaves(b, a, max_contacts, margin, swapped)
        out.extend(c._swapped() for c in swapped)
        return
    entry = thread_entry(a, b, "_contact_pairs", _contact_entry)
    _run_contacts(entry, a, b, max_contacts, margin, out)


def _run_contacts(
    entry: tuple[Any, ...],
    a: CollisionShape,
    b: CollisionShape,
    max_contacts: int,
    margin: float,
    out: list[Contact],
) -> None:
    """Collide one cached leaf pair and append its ``max_contacts`` deepest contacts."""
    functor, tf2, request, result, many, _, _ = entry
    request.security_margin = margin
    result.clear()
    n = functor(a._tf, tf2, request, result)
    if n == 0:
        return
    get = result.getContact
    if not many:
        c = get(0)
        if _is_unit(c.normal):
            out.append(Contact._from_coal(c, a, b))
        else:
            out.extend(_nudged(functor, a, b, tf2, request, result, 1))
        return
    found = [get(i) for i in range(n)]
    if n > max_contacts:
        found = heapq.nsmallest(max_contacts, found, key=lambda c: c.penetration_depth)
    else:
        found.sort(key=lambda c: c.penetration_depth)
    if not all(_is_unit(c.normal) for c in found):
        out.extend(_nudged(functor, a, b, tf2, request, result, max_contacts))
    elif a.stype == "octree":
        # Coal 3.0.3 gives an octree contact a node-pointer offset (or -1) as its cell: name the
        # cell holding the witness point instead (the octree is always o1 here).
        out.extend(Contact._from_coal(c, a, b, b1=_cell(a, c.getNearestPoint1())) for c in found)
    else:
        out.extend(Contact._from_coal(c, a, b) for c in found)


def _cell(octree: CollisionShape, point: np.ndarray) -> int:
    """The cell of the OcTree ``octree`` holding the world point ``point``."""
    return int(cast(Any, octree)._cell_at(point))


def _is_unit(normal: np.ndarray) -> bool:
    x, y, z = normal.tolist()
    return abs(x * x + y * y + z * z - 1.0) <= 1e-6


_NUDGES = (np.array([1e-7, 0.0, 0.0]), np.array([0.0, 1e-7, 0.0]), np.array([0.0, 0.0, 1e-7]))


def _nudged(
    functor: Any,
    a: CollisionShape,
    b: CollisionShape,
    tf2: Any,
    request: Any,
    result: Any,
    max_contacts: int,
) -> list[Contact]:
    """The contacts of a pair for which Coal gave an undefined (zero) normal.

    Coal 3.0.3 returns a zero normal when two shapes are exactly concentric (a sphere at a
    cylinder's centre, two identical capsules, a sphere centred on a mesh triangle). The pair
    is collided again with ``b`` moved by 0.1 µm along x, y and z; the move whose deepest
    contact is least deep gives the normals (the direction of least penetration among the
    axes), and its depths are moved back by the nudge (to first order), with the ``b``-side
    witness point ``p1 + depth * normal``.
    Empty when every move still leaves a normal undefined.
    """
    best: list[Any] = []
    best_step = _NUDGES[0]
    for step in _NUDGES:
        moved = coal.Transform3s(tf2)
        moved.setTranslation(tf2.getTranslation() + step)
        result.clear()
        n = functor(a._tf, moved, request, result)
        found = sorted((result.getContact(i) for i in range(n)), key=lambda c: c.penetration_depth)
        if found and all(_is_unit(c.normal) for c in found):
            if not best or found[0].penetration_depth > best[0].penetration_depth:
                best, best_step = found, step
    records = []
    for c in best[:max_contacts]:
        normal = c.normal
        p1 = c.getNearestPoint1()
        depth = c.penetration_depth - float(best_step @ normal)
        p2 = p1 + depth * normal
        b1 = _cell(a, p1) if a.stype == "octree" else c.b1
        records.append(Contact(a, b, b1, c.b2, normal, (p1, p2), 0.5 * (p1 + p2), depth))
    return records


def _check_max_contacts(value: Any) -> int:
    return count(value, "max_contacts")


def contacts(
    self: CollisionShape,
    other: CollisionShape,
    max_contacts: int = 1,
    security_margin: float = 0.0,
) -> Contacts:
    """Contact records between this shape and ``other``, deepest first.

    Parameters
    ----------
    other : CollisionShape or CollisionShapeGroup
        The shape to test against.
    max_contacts : int
        How many contacts to keep per pair of leaf shapes: the ``max_contacts`` deepest. A mesh
        or octree gives one contact per touching triangle or cell; the deepest is always found.
    security_margin : float
        Report shapes closer than this too (their ``penetration_depth`` is then positive). A
        negative margin keeps only the contacts deeper than its magnitude.

    Returns
    -------
    Contacts
        Empty when nothing touches. ``o1`` is a leaf of this shape, ``o2`` a leaf of ``other``.

    Examples
    --------
    >>> from spatialmath import SE3
    >>> from spatialcontact import Sphere
    >>> a, b = Sphere(1.0), Sphere(1.0, pose=SE3.Trans(1.5, 0.0, 0.0))
    >>> (c,) = a.contacts(b)
    >>> c.normal.tolist(), float(c.penetration_depth), c.pos.tolist()
    ([1.0, 0.0, 0.0], -0.5, [0.75, 0.0, 0.0])
    >>> c.nearest_points.tolist()  # on a, then on b
    [[1.0, 0.0, 0.0], [0.5, 0.0, 0.0]]
    >>> r = c.report(b)  # b's side: pushed along +x, 0.5 deep
    >>> r.normal.tolist(), float(r.depth)
    ([1.0, 0.0, 0.0], 0.5)
    """
    if max_contacts.__class__ is not int or max_contacts < 1:
        max_contacts = _check_max_contacts(max_contacts)
    if security_margin.__class__ is not float or security_margin - security_margin != 0.0:
        security_margin = coordinate(security_margin, "security_margin", error=InvalidArgumentError)
    if security_margin < 0.0:
        # Coal refuses a negative margin on a mesh (with a C++ message): ask with none, and
        # keep the contacts deeper than the margin, which is what a negative margin means.
        every = contacts(self, other, max_contacts, 0.0)
        return Contacts._wrap([c for c in every if c.penetration_depth <= security_margin])
    try:
        entry = self._contact_pairs[id(other)]
    except KeyError:
        return _contacts_slow(self, other, max_contacts, security_margin)
    if entry[-1] != get_ident():
        return _contacts_slow(self, other, max_contacts, security_margin)
    found: list[Contact] = []
    _run_contacts(entry, self, other, max_contacts, security_margin, found)
    return Contacts._wrap(found)


def _contacts_slow(a: CollisionShape, b: Any, k: int, margin: float) -> Contacts:
    _check_shape(a, "self")
    _check_shape(b, "other")
    found: list[Contact] = []
    if not (a._is_group or b._is_group):
        _contacts_leaves(a, b, k, margin, found)
    else:
        for la, lb in _leaf_pairs(a, b, max(margin, 0.0)):
            _contacts_leaves(la, lb, k, margin, found)
        found.sort(key=Contact._depth_key)
    return Contacts._wrap(found)
