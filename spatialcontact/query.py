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

from . import _closed_form_scalar, _native
from ._base import ShapeBase, collision_leaves
from ._coal import quirks
from ._coal.state import pair_call, thread_entry
from ._validate import MAX_COORDINATE, a_or_an, bound, coordinate, count, describe
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
_TOUCH = 1e-9
"""A mesh's or an octree's overlap reads 0 in Coal's distance, or a rounding above it (2.4e-16
for two meshes 7.6 mm into each other): ``d < _TOUCH`` is asked of the contact query, which
finds nothing for a pair truly that close and leaves Coal's answer."""


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
            f"Coal cannot answer this query between {a_or_an(type(a).__name__)} and "
            f"{a_or_an(type(b).__name__)} ({describe(a)} and {describe(b)})"
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


def _leaf_pairs(a: CollisionShape, b: CollisionShape, cutoff: float) -> list[tuple[Any, Any]]:
    """Leaf pairs of ``a`` and ``b`` whose bounding spheres' gap is at most ``cutoff``, in row
    order (see :func:`spatialcontact._native.near_spheres`; an unbounded leaf is near all)."""
    leaves_a, ca, ra = _bounds(a)
    leaves_b, cb, rb = _bounds(b)
    return [(leaves_a[i], leaves_b[j]) for i, j in _native.near_spheres(ca, ra, cb, rb, cutoff)]


# -------------------------------------------------------------------------------- collide


def _collide_entry(a: CollisionShape, b: CollisionShape) -> tuple[Any, ...]:
    ga, gb = _geometries(a, b, quirks.NO_COLLIDE)
    fast = coal.CollisionRequest()
    fast.enable_contact = False
    fast.distance_upper_bound = 0.0
    confirm = quirks.confirm_request(ga, gb)  # a second look at close misses (quirks E)
    parallel = quirks.parallel_test(ga, gb)
    if parallel is not None:  # quirks M
        form = _closed_form_scalar.pair_form(a, b)
        confirm = _Parallel(form, quirks.capsule_overshoot(ga, gb), parallel)
    keep = (ga, gb, *quirks.answer_guard(ga, gb))
    functor = quirks.collider(ga, gb)
    result = coal.CollisionResult()
    call = pair_call(functor, a._tf, b._tf, fast, result)
    return (call, functor, b._tf, result, confirm, keep, get_ident())


class _Parallel:
    """The second look of :func:`iscollided` at a "no collision" of two capsules whose
    segments Coal may take as parallel, overshooting their distance by up to ``overshoot``
    (quirks M): the closed form decides."""

    __slots__ = ("form", "overshoot", "parallel")

    def __init__(self, form: Any, overshoot: float, parallel: Any) -> None:
        self.form, self.overshoot, self.parallel = form, overshoot, parallel

    def collides(self, d: float, tf1: Any, tf2: Any) -> bool:
        """Whether the pair Coal found ``d`` apart touches or overlaps."""
        return d <= self.overshoot and self.parallel(tf1, tf2) and self.form(tf1, tf2)[0] <= 0.0


def _confirm(entry: tuple[Any, ...], tf1: Any) -> bool:
    """The second look of :func:`iscollided` at a close "no collision" (see _collide_entry)."""
    _, functor, tf2, result, confirm, keep, _ = entry
    if confirm.__class__ is _Parallel:
        return confirm.collides(result.distance_lower_bound, tf1, tf2)
    if confirm is None or not result.distance_lower_bound < quirks.CONFIRM_BELOW:
        return False
    result.clear()
    if functor(tf1, tf2, confirm, result) == 0:
        return False
    d = result.getContact(0).penetration_depth
    ga, gb, floor, shallow, zero, ceiling = keep
    if not floor < d or shallow <= d <= zero or d <= ceiling:
        # Garbage depths within 1 µm of touching (quirks A).
        answer = quirks.recheck(ga, tf1, gb, tf2, d, keep[2:])
        return answer is None or answer[0] <= 0.0
    return True


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
        entry = self._collide_pairs[other._uid]
    except (KeyError, AttributeError):
        return _iscollided_slow(self, other)
    if entry[6] != get_ident():
        return _iscollided_slow(self, other)
    if entry[0]():
        return True
    return entry[4] is not None and _confirm(entry, self._tf)


def _collide_leaves(a: CollisionShape, b: CollisionShape) -> bool:
    entry = thread_entry(a, b, "_collide_pairs", _collide_entry)
    if entry[0]():
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
    """The cached distance query of a leaf pair: ``(call, tf2, request, result, keep, below,
    fix, thread)`` (``call()`` runs Coal's functor, see :func:`_overlap_rule`), or for the
    pairs whose overlaps Coal gets wrong (quirks J) ``(None, tf2, form, ...)``: their closed
    form answers every placement, faster than Coal's call."""
    ga, gb = _geometries(a, b, quirks.NO_DISTANCE)
    if frozenset((ga.getNodeType(), gb.getNodeType())) in quirks.FORM_ON_OVERLAP:
        form = _closed_form_scalar.pair_form(a, b)
        if form is not None:
            return (None, b._tf, form, None, None, None, None, get_ident())
    request = coal.DistanceRequest()
    request.enable_signed_distance = True
    quirks.epa_budget(ga, gb, request)
    result = coal.DistanceResult()
    call = pair_call(coal.ComputeDistance(ga, gb), a._tf, b._tf, request, result)
    keep = (ga, gb, *quirks.answer_guard(ga, gb))
    below, fix = _overlap_rule(a, b, ga, gb)
    return (call, b._tf, request, result, keep, below, fix, get_ident())


def _overlap_rule(a: CollisionShape, b: CollisionShape, ga: Any, gb: Any) -> tuple[float, Any]:
    """``(below, fix)``: a Coal distance ``d < below`` of this pair is overlap that Coal's
    distance query does not measure as the package defines it, and ``fix(a, b, result)``
    gives the answer instead (a :class:`quirks.DistanceAnswer`). ``below`` is ``-inf`` (never)
    for the pairs whose Coal answer is kept.

    - a mesh or an octree on either side, on ``d < _TOUCH`` (a hollow mesh's overlap reads 0,
      or a rounding above it), and a half-space against anything with no closed form, on
      ``d < 0``: the deepest contact of the contact query (quirks K), which measures every
      triangle or cell;
    - the other convex pairs with a curved shape, solved by GJK/EPA, on ``d < 0``: the witness
      identity is checked and broken answers repaired (:func:`_checked_overlap`, quirks L);
      two polytopes (boxes, hulls) keep Coal's answer.
    """
    kinds = frozenset((a.stype, b.stype))
    types = (ga.getNodeType(), gb.getNodeType())
    if types[0] == types[1] == _NT.GEOM_OCTREE:
        return -math.inf, None  # no contacts (quirks C); the distance agrees with the cells
    if types[0] in _MANY_CONTACT_TYPES or types[1] in _MANY_CONTACT_TYPES:
        return _TOUCH, _from_contact
    if _NT.GEOM_HALFSPACE in types:
        if _closed_form_scalar.pair_form(a, b) is not None:
            return -math.inf, None  # Coal's closed form is right (quirks J)
        return 0.0, _from_contact
    if _NT.GEOM_PLANE in types or kinds <= {"sphere", "cuboid"}:
        return -math.inf, None  # Coal's closed forms: sphere/sphere, sphere/box
    if frozenset(types) <= quirks.POLYTOPES:
        return -math.inf, None  # EPA on two polytopes: never seen breaking the identity
    return 0.0, _checked_overlap


class _Formed:
    """A closed-form answer read like a ``coal.DistanceResult`` (the fields the package reads);
    its arrays are new, made for one query."""

    __slots__ = ("_answer", "min_distance")

    def __init__(self, answer: _closed_form_scalar.Answer) -> None:
        self._answer = answer
        self.min_distance = answer[0]

    @property
    def normal(self) -> np.ndarray:
        return self._answer[3]

    def getNearestPoint1(self) -> np.ndarray:
        return self._answer[1]

    def getNearestPoint2(self) -> np.ndarray:
        return self._answer[2]


def _deepest_contact(a: CollisionShape, b: CollisionShape) -> Any:
    """The deepest contact of the pair as a distance answer, or None when there is none."""
    found: list[Contact] = []
    _contacts_leaves(a, b, 1, 0.0, found)
    if not found:
        return None
    c = found[0]
    p1, p2 = c.nearest_points
    return quirks.DistanceAnswer((c.penetration_depth, p1.copy(), p2.copy(), c.normal.copy()))


def _from_contact(a: CollisionShape, b: CollisionShape, result: Any) -> Any:
    """The deepest contact of the pair as a distance answer; ``result`` when there is none
    (its witness points then made to meet when it reads 0, quirks K)."""
    deepest = _deepest_contact(a, b)
    if deepest is not None:
        return deepest
    if result.min_distance == 0.0:
        p1, p2 = result.getNearestPoint1(), result.getNearestPoint2()
        middle = 0.5 * (p1 + p2)
        return quirks.DistanceAnswer((0.0, middle, middle.copy(), np.array(result.normal)))
    return result


def _checked_overlap(a: CollisionShape, b: CollisionShape, result: Any) -> Any:
    """Coal's GJK/EPA answer on overlap, repaired when it breaks ``p2 - p1 == d * normal``
    (quirks L): asked again in the other argument order, and else from the contact query."""
    d = result.min_distance
    if quirks.witness_identity(
        d, result.getNearestPoint1(), result.getNearestPoint2(), result.normal
    ):
        return result
    other = thread_entry(b, a, "_distance_pairs", _distance_entry)
    swapped = other[3]
    other[0]()
    q2, q1 = swapped.getNearestPoint1(), swapped.getNearestPoint2()
    normal = -np.asarray(swapped.normal, dtype=np.float64)
    if quirks.witness_identity(swapped.min_distance, q1, q2, normal) and swapped.min_distance < 0:
        return quirks.DistanceAnswer((swapped.min_distance, q1, q2, normal))
    return _from_contact(a, b, result)


def _distance_leaves(a: CollisionShape, b: CollisionShape) -> tuple[Any, bool]:
    """Run Coal's distance on two leaves.

    Returns the filled ``DistanceResult`` and whether its witness points are in ``(b, a)``
    order: a (shape, octree) pair is asked octree first (quirks.OCTREE_FIRST) and cached on the
    octree only, out of reach of closest_point's fast path.
    """
    if quirks.OCTREE_FIRST and b.stype == "octree" and a.stype != "octree":
        return _distance_leaves(b, a)[0], True
    entry = thread_entry(a, b, "_distance_pairs", _distance_entry)
    call, tf2, request, result, keep, below, fix, _ = entry
    if call is None:  # a closed form (quirks J): the request is the form
        return _Formed(request(a._tf, tf2)), False
    return _repaired(a, b, keep, below, fix, result, call()), False


def _repaired(
    a: CollisionShape, b: CollisionShape, keep: Any, below: float, fix: Any, result: Any, d: float
) -> Any:
    """The answer of a cached distance entry (see :func:`_distance_entry`) once Coal has put
    ``d`` in ``result``: ``result``, or what replaces it (read the same way)."""
    # quirks.is_suspect inlined; a positive d never is, NaN always is (quirks A). Overlapping
    # boxes (the ceiling) are rechecked only when aligned: recheck keeps Coal's answer else.
    if not d > 0.0 and (
        not keep[2] < d
        or keep[3] <= d <= keep[4]
        or (d <= keep[5] and _native.axis_map(a._tf, b._tf, 1e-10) is not None)
    ):
        if fix is _from_contact and keep[2] < d:
            # A mesh's or an octree's undecided 0 is also how it reads any overlap (quirks K):
            # the contact query measures that, where the rechecks' small moves, made for
            # pairs within GJK's tolerance of touching, can read a gap (+1e-5 for a 0.4 mm
            # mesh 4.4e-5 into an octree).
            deepest = _deepest_contact(a, b)
            if deepest is not None:
                return deepest
        result = _rechecked(keep, a._tf, b._tf, result)
        d = result.min_distance
    if d < below:  # overlap Coal's distance does not measure as defined here
        return fix(a, b, result)
    return result


def _rechecked(keep: tuple[Any, ...], tf1: Any, tf2: Any, result: Any) -> Any:
    """``result``, or a stand-in read the same way when quirks.recheck replaces its answer."""
    answer = quirks.recheck(keep[0], tf1, keep[1], tf2, result.min_distance, keep[2:])
    return result if answer is None else quirks.DistanceAnswer(answer)


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
    leaves_a, ca, ra = _bounds(a)
    leaves_b, cb, rb = _bounds(b)
    # The pair with the smallest bounding-sphere gap first: its distance bounds which other
    # pairs can win (a gap is a lower bound of the distance); then those, in order of their
    # gaps, until a gap exceeds the best distance.
    first = _native.nearest_pair(ca, ra, cb, rb, limit)
    if first is None:
        return None

    def measure(i: int, j: int) -> tuple[float, np.ndarray, np.ndarray]:
        result, swapped = _distance_leaves(leaves_a[i], leaves_b[j])
        return (result.min_distance, *_witnesses(result, swapped))

    best = measure(*first)
    gaps, rows, columns = _native.nearest_order(ca, ra, cb, rb, min(limit, best[0]))
    for k in range(len(gaps)):  # arrays: most pairs are never visited
        if gaps[k] > best[0]:
            break
        i, j = int(rows[k]), int(columns[k])
        if (i, j) != first:
            found = measure(i, j)
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
        returned (a distance equal to it is returned). A negative value asks for an overlap
        at least that deep, as in spatialgeometry; ``-inf`` never answers, ``inf`` always does.

    Returns
    -------
    d : float or None
        Signed distance in metres. On overlap it is minus the penetration depth (the shortest
        translation that separates the shapes; a :class:`Mesh` is a hollow surface, measured
        by its deepest triangle contact), the same number as :func:`distance` and the first
        of :func:`contacts` (docs/conventions-distance.md).
    p1 : ndarray, shape (3,), world frame, or None
        Point on this shape (apart: the closest; on overlap: the deepest into ``other``).
    p2 : ndarray, shape (3,), world frame, or None
        Point on ``other``; ``|p2 - p1| == |d|``.

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
        call, tf2, request, result, keep, below, fix, thread = self._distance_pairs[other._uid]
    except (KeyError, AttributeError):
        return _closest_point_slow(self, other, inf_dist)
    if thread != get_ident():
        return _closest_point_slow(self, other, inf_dist)
    if inf_dist.__class__ is not float:
        inf_dist = _check_inf_dist(inf_dist)
    elif inf_dist != inf_dist:
        _check_inf_dist(inf_dist)
    if call is None:  # a closed form (quirks J): the request is the form
        d, p1, p2, _ = request(self._tf, tf2)
        if d > inf_dist:
            return None, None, None
        return d, p1, p2
    d = call()
    answer = result
    if not (d > 0.0 and d >= below):  # else Coal's answer stands (quirks A checks d <= 0)
        answer = _repaired(self, other, keep, below, fix, result, d)
        d = answer.min_distance
    if d > inf_dist:
        return None, None, None
    if answer is result:
        return d, *call.points()
    return d, answer.getNearestPoint1(), answer.getNearestPoint2()


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
    """Signed distance in metres to ``other`` (on overlap minus the penetration depth, as
    :func:`closest_point` gives it), with no cut-off.

    ``inf`` when either side is a group with no collision leaves (an empty group, say).
    """
    try:
        call, tf2, request, result, keep, below, fix, thread = self._distance_pairs[other._uid]
    except (KeyError, AttributeError):
        return _distance_slow(self, other)
    if thread != get_ident():
        return _distance_slow(self, other)
    if call is None:  # a closed form (quirks J): the request is the form
        return float(request(self._tf, tf2)[0])
    d = call()
    if d > 0.0 and d >= below:  # Coal's answer stands (quirks A checks d <= 0)
        return d
    return float(_repaired(self, other, keep, below, fix, result, d).min_distance)


def _distance_slow(a: CollisionShape, b: Any) -> float:
    _check_shape(a, "self")
    _check_shape(b, "other")
    best = _nearest(a, b, math.inf)
    return math.inf if best is None else float(best[0])


# ------------------------------------------------------------------------------- contacts


def _contact_entry(a: CollisionShape, b: CollisionShape) -> tuple[Any, ...]:
    ga, gb = _geometries(a, b, quirks.NO_CONTACT)
    many = ga.getNodeType() in _MANY_CONTACT_TYPES or gb.getNodeType() in _MANY_CONTACT_TYPES
    request = coal.CollisionRequest()
    request.num_max_contacts = ALL_CONTACTS if many else 1
    quirks.epa_budget(ga, gb, request)
    keep = (ga, gb, *quirks.answer_guard(ga, gb))
    functor = quirks.collider(ga, gb)
    form = None
    if frozenset((ga.getNodeType(), gb.getNodeType())) in quirks.FORM_ON_OVERLAP:
        form = _closed_form_scalar.pair_form(a, b)
    # quirks M: contacts asked within the overshoot, then checked (None: not needed)
    parallel = None if form is None else quirks.parallel_test(ga, gb)
    overshoot = 0.0 if parallel is None else quirks.capsule_overshoot(ga, gb)
    triangles = quirks.triangle_meshes(ga, gb)
    result = coal.CollisionResult()
    call = pair_call(functor, a._tf, b._tf, request, result)
    return (
        call, functor, b._tf, request, result, many, keep, form, (overshoot, parallel),
        triangles, get_ident(),
    )  # fmt: skip


def _contacts_leaves(
    a: CollisionShape, b: CollisionShape, max_contacts: int, margin: float, out: list[Contact]
) -> None:
    if quirks.OCTREE_FIRST and b.stype == "octree" and a.stype != "octree":
        # Asked octree first (quirks.OCTREE_FIRST), cached on the octree only, out of reach of
        # contacts' fast path, and swapped back.
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
    """Collide one cached leaf pair and append its ``max_contacts`` deepest contacts (two
    meshes: :func:`_triangle_contacts`)."""
    call, functor, tf2, request, result, many, keep, form, (overshoot, parallel), triangles, _ = (
        entry
    )
    if triangles:
        _triangle_contacts(a, b, keep[0], keep[1], max_contacts, margin, out)
        return
    request.security_margin = margin + overshoot
    n = call()
    if n == 0:
        return
    ga, gb, floor, shallow, zero, ceiling = keep
    get = result.getContact
    if not many:
        c = get(0)
        d = c.penetration_depth
        if form is not None and (
            d < 0.0  # Coal is wrong on these overlaps (quirks J)
            or (parallel is not None and parallel(a._tf, tf2))  # quirks M
        ):
            d, p1, p2, normal = form(a._tf, tf2)
            if d <= margin:
                out.append(Contact._from_answer(a, b, d, p1, p2, normal))
            return
        if overshoot and d > margin:  # found within the overshoot only (Coal is right here)
            return
        if not floor < d or shallow <= d <= zero or d <= ceiling:
            # Garbage depths within 1 µm of touching (quirks A).
            answer = quirks.recheck(ga, a._tf, gb, tf2, d, keep[2:])
            if answer is not None:
                d, p1, p2, normal = answer
                if d <= margin:
                    out.append(Contact._from_answer(a, b, d, p1, p2, normal))
                return
        if _is_unit(c.normal):
            out.append(Contact._from_coal(c, a, b))
        else:
            out.extend(_repaired_normals(functor, a, b, tf2, request, result, n, keep, 1))
        return
    found = [get(i) for i in range(n)]
    if n > max_contacts:
        found = heapq.nsmallest(max_contacts, found, key=lambda c: c.penetration_depth)
    else:
        found.sort(key=lambda c: c.penetration_depth)
    d = found[0].penetration_depth
    if not floor < d or shallow <= d <= zero:
        # Every contact within GJK's tolerance of touching (or impossible): are they apart?
        answer = quirks.recheck(ga, a._tf, gb, tf2, d, keep[2:])
        if answer is not None and answer[0] > margin:
            return
    if not all(_is_unit(c.normal) for c in found):
        out.extend(_repaired_normals(functor, a, b, tf2, request, result, n, keep, max_contacts))
    elif a.stype == "octree":
        # The cell from the witness point (quirks.octree_cell; the octree is always o1 here).
        out.extend(Contact._from_coal(c, a, b, b1=_cell(a, c.getNearestPoint1())) for c in found)
    else:
        out.extend(Contact._from_coal(c, a, b) for c in found)


def _triangle_contacts(
    a: CollisionShape,
    b: CollisionShape,
    ga: Any,
    gb: Any,
    max_contacts: int,
    margin: float,
    out: list[Contact],
) -> None:
    """The ``max_contacts`` deepest contacts of two meshes, one per pair of triangles within
    ``margin``, with exact depths (quirks L): deepest first, the triangles' indices as
    ``b1`` and ``b2``."""
    triangles, depth, normal, p1, p2 = _native.mesh_contacts(
        ga, a._tf, gb, b._tf, margin, max_contacts
    )
    for (b1, b2), d, n, q1, q2 in zip(
        triangles.tolist(), depth.tolist(), normal, p1, p2, strict=True
    ):
        out.append(Contact._from_answer(a, b, d, q1, q2, n, b1, b2))


def _cell(octree: CollisionShape, point: np.ndarray) -> int:
    """The cell of the OcTree ``octree`` holding the world point ``point``."""
    return quirks.octree_cell(cast(Any, octree).cells, octree._tf, point)


def _is_unit(normal: np.ndarray) -> bool:
    x, y, z = normal.tolist()
    return abs(x * x + y * y + z * z - 1.0) <= 1e-6


def _repaired_normals(
    functor: Any,
    a: CollisionShape,
    b: CollisionShape,
    tf2: Any,
    request: Any,
    result: Any,
    n: int,
    keep: tuple[Any, ...],
    max_contacts: int,
) -> list[Contact]:
    """The contacts of a pair for which Coal gave some undefined (NaN or zero) normals
    (see quirks.repair_normals): never empty when Coal found ``n > 0`` contacts."""
    records = []
    fixed = quirks.repair_normals(functor, keep[0], a._tf, keep[1], tf2, request, result, n)
    for normal, p1, p2, depth, b1, b2 in fixed[:max_contacts]:
        if a.stype == "octree":
            b1 = _cell(a, p1)
        records.append(Contact(a, b, b1, b2, normal, (p1, p2), 0.5 * (p1 + p2), depth))
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
    if (
        security_margin.__class__ is not float
        or not -MAX_COORDINATE <= security_margin <= MAX_COORDINATE
    ):
        security_margin = coordinate(security_margin, "security_margin", error=InvalidArgumentError)
    if security_margin < 0.0:
        # Coal refuses a negative margin on a mesh (with a C++ message): ask with none, and
        # keep the contacts deeper than the margin, which is what a negative margin means.
        every = contacts(self, other, max_contacts, 0.0)
        return Contacts._wrap([c for c in every if c.penetration_depth <= security_margin])
    try:
        entry = self._contact_pairs[other._uid]
    except (KeyError, AttributeError):
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
