"""Broadphase: which leaves of a scene touch, kept up to date as its bodies move.

A *body* is the collision leaves of one scene object. :meth:`Broadphase.find` answers which
leaves of the bodies that changed touch which others (and each other, inside a body that asks
for it); :meth:`Broadphase.touching` which leaves an outside shape touches. Every answer is
that of the leaves' shape queries (``a.iscollided(b)``), or of Coal's own narrow phase with
the request the shape queries fall back on.

How moves are followed
----------------------
Each leaf Coal can put in a tree has a *rest* ``CollisionObject``, registered once, when the
leaf joins, in one ``DynamicAABBTreeCollisionManager``: the rest tree. A body that moves
joins the *moving tier*: its rest objects are *parked* (given a transform far away, where
they touch nothing; the tree is not told), and its leaves are placed by *probe* objects, one
per leaf, registered once in a small tree of the body's own when it has several. A query
asks Coal for each moved body's probes against the rest tree, which answers for every body
at rest, and compares the moved body with the other bodies of the tier leaf by leaf:
bounding spheres in plain floats, then the leaves' cached pair queries. Moving a body again
only places its probes (``setTransform``, ``computeAABB``) and refits its own small tree.

A parked object keeps its box in the rest tree until the tree is next refitted
(``update()``, linear in its size), so that Coal runs a useless narrow phase whenever a
probe meets its own body's old box (a robot's base link does, always). The tree is refitted,
the parked boxes sent far away with their objects, as soon as a parked body moves a second
time in a row; and when bodies that stopped go back to rest, which they do together, once
enough of them have (their rest objects are placed again). When many bodies move at once,
every rest object is placed, the tree refitted and asked for all its pairs in one call.
Scenes of a few leaves keep every body in the tier: comparing a moved leaf with a handful of
others costs less than one tree call. When one body moves, a compiled copy of the tier
(:class:`spatialcontact._native.SphereTier`) compares its leaves with those of the rest of the
tier and asks their pair queries in one call.

Coal's references
-----------------
Coal 3.0.3's Python binding keeps a reference to the object passed to ``registerObject``,
``update(object)`` and ``setCollisionGeometry`` that only the end of the manager (or of the
object) gives back, however often the call is repeated (``update()``, ``setTransform``,
``computeAABB`` and ``collide`` keep none). So nothing here is registered again while bodies
move or stop, ``update(object)`` is never called, and a leaf that leaves is unregistered with
its rest object's geometry swapped for a tiny shared sphere (``quirks.unregister``; a large
mesh is freed at once):
the rest tree is rebuilt from the objects it still holds when such leftovers are as many as
they are. A body's own tree is made anew when its leaves change and dropped with the body,
which gives back its references.

Octrees are kept out of Coal's trees (``quirks.TREE_EXCLUDED``): their pairs are found by
bounding spheres, or a box probe of the rest tree, and the pair queries. Two capsules that
Coal's narrow phase may measure wrongly (short ones, ``quirks.capsule_overshoot``) and that
the trees found apart are asked again by their pair query when their spheres meet.
"""

from __future__ import annotations

import itertools
import math
import operator
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import coal
import numpy as np

from .. import _native
from .._base import ShapeBase
from .._coal import quirks

if TYPE_CHECKING:
    from ..shapes import CollisionShape

__all__ = ["Body", "Broadphase", "Leaf"]

Owner = TypeVar("Owner")
"""What a body stands for (a scene's record of an object)."""

_HALFSPACE = coal.NODE_TYPE.GEOM_HALFSPACE
_CAPSULE = coal.NODE_TYPE.GEOM_CAPSULE
_NO_CONTACT_LIMIT = 1 << 30
"""Contacts Coal may gather in one tree call: it stops early once it has this many."""
SMALL = 16
"""Rest objects at or below which no body is put to rest (every pair is compared directly)."""
TIER_LIMIT = 16
"""Bodies moved at once above which the whole rest tree is refitted and asked for all pairs;
also the size of the moving tier above which the bodies that stopped go back to rest."""
SETTLE_SHARE = 16
"""Bodies that stopped go back to rest when their leaves, times this, reach the rest tree's."""
LEFTOVERS = 64
"""Unregistered objects the rest tree may hold (and more while it holds more live ones)."""
_FAR = 1.0e6
"""Distance, in metres, at which a parked rest object is placed."""
_UNBOUNDED = 1e100
"""A leaf's bounding radius beyond this is taken as infinite (a half-space)."""
_THIN = 1e-6
"""A leaf whose local box is thinner than this (metres) gets its world box padded."""
_SLACK = 1.0 + 1e-9
"""Relative slack of the bounding-sphere test, so that touching shapes are never culled."""

_tags = itertools.count(1)


# ------------------------------------------------------------------------ Coal objects


def _gid(geometry: Any) -> int:
    """The key of a Coal geometry met in a contact: its ``id()``, or the tag of a copy."""
    ident = getattr(geometry, "id", None)
    return int(ident()) if ident is not None else int(geometry.cost_density)


def _tree_geometry(geometry: Any) -> Any:
    """``geometry``, or a tagged copy when Coal's binding gives it no ``id()``.

    Coal's Python binding of convex shapes has no ``id()``: such a geometry is copied and the
    copy tagged with a unique negative number in ``cost_density`` (a field only cost-aware
    queries read), so that the shape's own geometry is left as it is.
    """
    if getattr(geometry, "id", None) is not None:
        return geometry
    copy = geometry.clone()
    copy.cost_density = float(-next(_tags))
    copy.computeLocalAABB()
    return copy


def _geometry_pairs(result: Any) -> list[tuple[int, int]]:
    """The pairs of geometry keys ``(o1, o2)`` that have contacts in a Coal ``CollisionResult``.

    A tree call appends the contacts of each pair of objects together, and a mesh pair may
    give thousands: the end of each run is found by doubling steps and bisection rather than
    by reading every contact (reading one costs about a microsecond).
    """
    n = result.numContacts()
    if n == 0:
        return []
    get = result.getContact
    ids: list[tuple[int, int] | None] = [None] * n  # the pairs read so far, by index
    pairs: list[tuple[int, int]] = []
    i = 0
    while i < n:
        pair = ids[i] or _contact_pair(get(i))
        pairs.append(pair)
        same, step, end = i, 1, n  # contact `same` is of `pair`; `end` is not (or is n)
        while same + step < n:
            j = same + step
            other = ids[j] = ids[j] or _contact_pair(get(j))
            if other != pair:
                end = j
                break
            same = j
            step *= 2
        while end - same > 1:
            mid = (same + end) // 2
            other = ids[mid] = ids[mid] or _contact_pair(get(mid))
            if other == pair:
                same = mid
            else:
                end = mid
        i = end
    return pairs


def _contact_pair(contact: Any) -> tuple[int, int]:
    """The keys (:func:`_gid`) of the two geometries of a Coal contact."""
    try:
        return (contact.o1.id(), contact.o2.id())
    except AttributeError:  # a convex shape (rare): no id(), read its tag
        return (_gid(contact.o1), _gid(contact.o2))


# ------------------------------------------------------------------------ leaves, bodies


class _Bounds:
    """A leaf shape's world bounding sphere, in plain floats (infinite for a half-space)."""

    __slots__ = ("geometry", "local", "r", "shape", "x", "y", "z")

    def __init__(self, shape: CollisionShape) -> None:
        self.shape = shape
        geometry = self.geometry = shape._geometry
        radius = float(geometry.aabb_radius)
        self.local: np.ndarray | None = None
        if radius < _UNBOUNDED:
            self.r = radius
            centre = np.array(geometry.aabb_center, dtype=np.float64)
            if centre.any():
                self.local = centre
        else:
            self.r = math.inf
        self.x = self.y = self.z = 0.0

    def measure(self) -> None:
        """Set ``x``, ``y``, ``z``: the world centre of the bounding sphere, where it is now."""
        if self.r != math.inf:
            self.x, self.y, self.z = _native.world_point(self.shape._tf, self.local)

    def near(self, other: _Bounds) -> bool:
        """True unless the bounding spheres of the two (both up to date) are apart."""
        dx = self.x - other.x
        dy = self.y - other.y
        dz = self.z - other.z
        reach = (self.r + other.r) * _SLACK
        return dx * dx + dy * dy + dz * dz <= reach * reach


class _Placed(_Bounds):
    """A leaf shape with a Coal ``CollisionObject`` of its own (not registered here)."""

    __slots__ = ("co", "fix", "gid", "managed", "tree_geometry")

    def __init__(self, shape: CollisionShape) -> None:
        super().__init__(shape)
        geometry = self.geometry
        self.managed = geometry.getNodeType() not in quirks.TREE_EXCLUDED
        self.tree_geometry = _tree_geometry(geometry) if self.managed else geometry
        self.gid = _gid(self.tree_geometry) if self.managed else 0
        aabb = geometry.aabb_local
        self.fix = self.r == math.inf or bool(np.min(aabb.max_ - aabb.min_) < _THIN)
        self.co = coal.CollisionObject(self.tree_geometry, shape._tf, False)

    def place(self, co: Any, tf: Any) -> None:
        """Give ``co`` (a Coal object of this leaf) the transform ``tf`` and its world box."""
        co.setTransform(tf)
        co.computeAABB()
        if self.fix:
            quirks.fix_box(co)


class Leaf(_Placed, Generic[Owner]):
    """One collision leaf of a body, with the Coal objects that stand for it.

    Attributes
    ----------
    shape : CollisionShape
        The leaf shape.
    body : Body
        The body it belongs to.
    position : int
        Its place among the body's leaves.
    co : coal.CollisionObject
        Its rest object (registered in the rest tree unless the leaf is an octree).
    """

    __slots__ = ("body", "park_tf", "parked", "position", "probe", "row")

    def __init__(self, shape: CollisionShape, body: Body[Owner]) -> None:
        super().__init__(shape)
        self.body = body
        self.position = 0
        self.park_tf = _park_transform(self.geometry)
        self.parked = False
        self.probe: Any = None
        self.row = -1

    def __repr__(self) -> str:
        return f"<leaf {self.position} of {self.body!r}>"


_PARKED = coal.Transform3s(np.eye(3), np.full(3, _FAR))


def _park_transform(geometry: Any) -> Any:
    """Where a parked rest object goes: far away, out of reach of shapes near the origin.

    A half-space {n . x <= d} is moved along its normal, to {n . x <= d - far}.
    """
    if geometry.getNodeType() == _HALFSPACE:
        return coal.Transform3s(np.eye(3), -_FAR * np.asarray(geometry.n, dtype=np.float64))
    return _PARKED


class Body(Generic[Owner]):
    """The collision leaves of one scene object, as the broadphase holds them.

    Attributes
    ----------
    owner : object
        What the body stands for (given to :meth:`Broadphase.add`).
    leaves : tuple of Leaf
        Its leaves, in the object's order.
    self_collision : bool
        Whether its leaves are checked against each other.
    """

    __slots__ = (
        "epoch",
        "leaves",
        "managed",
        "measured",
        "moving",
        "octrees",
        "owner",
        "placed",
        "placing",
        "self_collision",
        "serial",
        "tree",
    )

    def __init__(self, owner: Owner, self_collision: bool, serial: int) -> None:
        self.owner = owner
        self.self_collision = self_collision
        self.serial = serial
        self.leaves: tuple[Leaf[Owner], ...] = ()
        self.managed: tuple[Leaf[Owner], ...] = ()
        self.octrees: tuple[Leaf[Owner], ...] = ()
        self.moving = True
        self.tree: Any = None
        self.epoch = 0
        """Counts the moves of the body seen by :meth:`Broadphase.find`: its leaves' spheres
        and probes are placed again when it changes."""
        self.measured = -1
        """The epoch its leaves' bounding spheres were measured at."""
        self.placed = -1
        """The epoch its leaves' probes were placed at."""
        self.placing: tuple[tuple[Any, ...], tuple[Any, ...], tuple[Any, ...]] | None = None
        """Its managed leaves' probes, their shapes' Coal transforms and the probes whose boxes
        need :func:`quirks.fix_box`, made when first placed (None: not yet, or leaves changed)."""

    def measure(self) -> None:
        """Bring the bounding spheres of the leaves up to date (once per move)."""
        if self.measured != self.epoch:
            self.measured = self.epoch
            for leaf in self.leaves:
                leaf.measure()

    def __repr__(self) -> str:
        return f"<body of {self.owner!r}>"


# ---------------------------------------------------------------------------- Broadphase


class Broadphase(Generic[Owner]):
    """The bodies of a scene on Coal's trees: which of their leaves touch (see the module).

    Not thread-safe: the scene calls it under its lock.
    """

    def __init__(self) -> None:
        self._rest = coal.DynamicAABBTreeCollisionManager()
        self._registered = 0
        """Live rest objects in the rest tree."""
        self._parked = 0
        """Of those, how many are parked."""
        self._leftovers = 0
        """Unregistered objects the rest tree still holds a reference to."""
        self._bodies: dict[Body[Owner], None] = {}
        self._serials = itertools.count()
        self._tier: dict[Body[Owner], None] = {}
        self._by_gid: dict[int, Leaf[Owner]] = {}
        self._by_shape: dict[ShapeBase, Leaf[Owner]] = {}
        self._octrees: list[Leaf[Owner]] = []
        self._capsules: list[Leaf[Owner]] = []
        """The capsule leaves in the trees (see :meth:`_capsule_misses`)."""
        self._callback = coal.CollisionCallBackDefault()
        self._data = self._callback.data
        self._result = self._data.result
        request = self._data.request
        # The request of the shape queries' second look (query._collide_entry): Coal 3.0.3
        # misses some deep overlaps with enable_contact=False. Octree pairs, the exception
        # there, never get here.
        request.num_max_contacts = _NO_CONTACT_LIMIT
        request.enable_contact = True
        request.distance_upper_bound = 0.0
        self._spheres: tuple[list[Leaf[Owner]], np.ndarray, np.ndarray] | None = None
        self._compiled: tuple[Any, dict[Body[Owner], int]] | None = None
        """The tier in compiled code (:meth:`_compile_tier`); None until a query needs it, and
        again whenever the tier or its leaves change."""
        self._sphere_stale: set[Body[Owner]] = set()
        self._stale: set[Body[Owner]] = set()
        """Bodies with parked objects whose boxes are still where they were (see _park)."""

    # ------------------------------------------------------------------------ contents

    def add(
        self, owner: Owner, shapes: Iterable[CollisionShape], self_collision: bool
    ) -> Body[Owner]:
        """A new body for ``owner`` with the leaves ``shapes`` (moving until its first query)."""
        body: Body[Owner] = Body(owner, self_collision, next(self._serials))
        self._bodies[body] = None
        self._tier[body] = None
        self._set_leaves(body, [Leaf(shape, body) for shape in shapes])
        return body

    def remove(self, body: Body[Owner]) -> None:
        """Take ``body`` and its leaves out."""
        for leaf in body.leaves:
            self._drop(leaf)
        body.leaves = body.managed = body.octrees = ()
        body.tree = body.placing = None
        del self._bodies[body]
        self._tier.pop(body, None)
        self._sphere_stale.discard(body)
        self._stale.discard(body)
        self._spheres = self._compiled = None
        self._tidy()

    def reshape(self, body: Body[Owner], shapes: Sequence[CollisionShape]) -> None:
        """Give ``body`` the leaves ``shapes``: leaves kept, added, removed or resized."""
        old = {leaf.shape: leaf for leaf in body.leaves}
        leaves: list[Leaf[Owner]] = []
        for shape in shapes:
            leaf = old.get(shape)
            if leaf is not None and leaf.geometry is shape._geometry:
                del old[shape]
            else:
                leaf = Leaf(shape, body)
            leaves.append(leaf)
        for leaf in old.values():
            self._drop(leaf)
        body.tree = None
        self._set_leaves(body, leaves)
        self._tidy()

    def _set_leaves(self, body: Body[Owner], leaves: list[Leaf[Owner]]) -> None:
        """Make ``leaves`` the leaves of ``body``, registering (parked) the new ones."""
        for position, leaf in enumerate(leaves):
            leaf.position = position
            if self._by_shape.get(leaf.shape) is leaf:
                continue
            self._by_shape[leaf.shape] = leaf
            if leaf.managed:
                self._by_gid[leaf.gid] = leaf
                leaf.place(leaf.co, leaf.shape._tf)  # its box where it is: a tree in order
                self._park(leaf)
                self._rest.registerObject(leaf.co)
                self._registered += 1
                if leaf.geometry.getNodeType() == _CAPSULE:
                    self._capsules.append(leaf)
            else:
                self._octrees.append(leaf)
        body.leaves = tuple(leaves)
        body.managed = tuple(leaf for leaf in leaves if leaf.managed)
        body.octrees = tuple(leaf for leaf in leaves if not leaf.managed)
        body.measured = body.placed = -1
        body.placing = None
        self._spheres = self._compiled = None

    def _drop(self, leaf: Leaf[Owner]) -> None:
        """Take ``leaf`` out of the look-up tables and the rest tree."""
        if self._by_shape.get(leaf.shape) is leaf:
            del self._by_shape[leaf.shape]
        if not leaf.managed:
            self._octrees.remove(leaf)
            return
        if leaf.geometry.getNodeType() == _CAPSULE:
            self._capsules.remove(leaf)
        if self._by_gid.get(leaf.gid) is leaf:  # not when the shape joined another body
            del self._by_gid[leaf.gid]
        quirks.unregister(self._rest, leaf.co)
        self._registered -= 1
        if leaf.parked:
            self._parked -= 1
        self._leftovers += 1

    def _tidy(self) -> None:
        """Rebuild the rest tree once it holds as many leftovers as live objects."""
        if self._leftovers <= max(LEFTOVERS, self._registered):
            return
        rest = coal.DynamicAABBTreeCollisionManager()
        for body in self._bodies:
            for leaf in body.managed:
                rest.registerObject(leaf.co)
        self._rest = rest
        self._leftovers = 0

    def leaf_of(self, shape: ShapeBase) -> Leaf[Owner] | None:
        """The leaf standing for ``shape``, or None."""
        return self._by_shape.get(shape)

    def leaf_with_geometry(self, geometry: Any) -> Leaf[Owner] | None:
        """The leaf whose Coal geometry is ``geometry`` (None for one without ``id()``)."""
        ident = getattr(geometry, "id", None)
        return None if ident is None else self._by_gid.get(int(ident()))

    # ---------------------------------------------------------------- parking, resting

    def _park(self, leaf: Leaf[Owner]) -> None:
        """Send the rest object of ``leaf`` far away: it touches nothing there. Its box (and
        its node in the tree) stays where it was until the next refit (:meth:`_refit`)."""
        leaf.co.setTransform(leaf.park_tf)
        leaf.parked = True
        self._parked += 1
        self._stale.add(leaf.body)

    def _refit(self) -> None:
        """Refit the rest tree to its objects' boxes, the parked ones' moved far away first.

        Until then a parked object keeps its last box, where its own body's probes often
        are (a robot's base link, say): Coal then runs a narrow phase for nothing.
        """
        for body in self._stale:
            for leaf in body.managed:
                if leaf.parked:
                    co = leaf.co
                    co.computeAABB()
                    if leaf.fix:
                        quirks.fix_box(co)
        self._stale.clear()
        self._rest.update()

    def _unpark(self, leaf: Leaf[Owner]) -> None:
        leaf.place(leaf.co, leaf.shape._tf)
        leaf.parked = False
        self._parked -= 1

    def _start_moving(self, body: Body[Owner]) -> None:
        """Put a body that moved (at rest until now) in the tier, its rest objects parked."""
        body.moving = True
        self._tier[body] = None
        self._compiled = None
        for leaf in body.managed:
            if not leaf.parked:
                self._park(leaf)

    def _settle(self, moved: set[Body[Owner]]) -> None:
        """Put the bodies of the tier that did not move back to rest, when enough did."""
        tier = self._tier
        stopped = [body for body in tier if body not in moved]
        if not stopped:
            return
        leaves = sum(len(body.managed) for body in stopped)
        if len(tier) <= TIER_LIMIT and leaves * SETTLE_SHARE < self._registered:
            return
        self._compiled = None
        for body in stopped:
            body.moving = False
            del tier[body]
            for leaf in body.managed:
                self._unpark(leaf)
        if leaves:
            self._refit()

    # ------------------------------------------------------------------------- queries

    def find(
        self, moved: Sequence[Body[Owner]]
    ) -> tuple[list[tuple[Leaf[Owner], Leaf[Owner]]], bool]:
        """The touching pairs of leaves with a leaf in a body of ``moved``.

        ``moved`` are the bodies that moved or changed since the last call. Pairs inside one
        body are given only for a body with ``self_collision``; each pair once, in either
        order.

        Returns
        -------
        pairs : list of (Leaf, Leaf)
        complete : bool
            True when ``pairs`` are every touching pair of the scene (all of it was asked
            again): the pairs found before are all to be forgotten, not only the moved ones'.
        """
        if len(moved) == 1 and self._registered == self._parked <= SMALL:
            body = moved[0]  # a planner's call in a small scene: nothing at rest to probe
            if body.moving and body not in self._stale:
                body.epoch += 1
                self._sphere_stale.add(body)
                if not self._octrees:  # _compare_tier's one-body path, without its call
                    compiled, number = self._compiled or self._compile_tier()
                    if body not in number:
                        return [], False
                    return compiled.touching(number[body], body.self_collision), False
                found: list[tuple[Leaf[Owner], Leaf[Owner]]] = []
                self._compare_tier(moved, found)
                return found, False
        if len(moved) > TIER_LIMIT:
            for body in moved:
                body.epoch += 1
            self._sphere_stale.update(moved)
            return self._all_pairs(moved), True
        if self._registered > SMALL and len(self._tier) > len(moved):
            self._settle(set(moved))
        refit = False
        stale = self._sphere_stale
        for body in moved:
            body.epoch += 1
            stale.add(body)
            if not body.moving:
                self._start_moving(body)
            elif body in self._stale:  # moving on: its parked boxes are worth moving away
                refit = True
        if refit:
            self._refit()
        pairs: list[tuple[Leaf[Owner], Leaf[Owner]]] = []
        if self._registered > self._parked:
            for body in moved:
                self._probe_rest(body, pairs)
            if len(self._capsules) > 1:
                resting = [c for c in self._capsules if not c.body.moving]
                if resting:
                    self._capsule_misses(
                        [c for c in self._capsules if c.body.moving], resting, pairs
                    )
        self._compare_tier(moved, pairs)
        return pairs, False

    def _compile_tier(self) -> tuple[Any, dict[Body[Owner], int]]:
        """The leaves of the tier in compiled code (:class:`spatialcontact._native.
        SphereTier`), bodies in the order they were added (so that a pair of leaves is asked
        by the earlier body's, as :func:`_touch` does), and the number of each body with
        leaves in it."""
        bodies = sorted(self._tier, key=operator.attrgetter("serial"))
        leaves = [leaf for body in bodies for leaf in body.leaves]
        number: dict[Body[Owner], int] = {}
        for leaf in leaves:
            number.setdefault(leaf.body, len(number))
        centres = np.zeros((len(leaves), 3))
        for row, leaf in enumerate(leaves):
            if leaf.local is not None and leaf.r != math.inf:
                centres[row] = leaf.local
        tier = _native.SphereTier(
            tuple(leaf.shape._tf for leaf in leaves),
            centres,
            np.array([leaf.r for leaf in leaves], dtype=np.float64),
            tuple(number[leaf.body] for leaf in leaves),
            tuple(leaf.shape for leaf in leaves),
            tuple(leaves),
        )
        self._compiled = (tier, number)
        return self._compiled

    def _all_pairs(self, moved: Sequence[Body[Owner]]) -> list[tuple[Leaf[Owner], Leaf[Owner]]]:
        """Every touching pair of the scene, each body back at rest."""
        for body in dict.fromkeys(itertools.chain(self._tier, moved)):
            body.moving = False
            for leaf in body.managed:
                if leaf.parked:
                    self._unpark(leaf)
                else:
                    leaf.place(leaf.co, leaf.shape._tf)
        self._tier.clear()
        self._compiled = None
        pairs: list[tuple[Leaf[Owner], Leaf[Owner]]] = []
        by_gid = self._by_gid
        if self._registered:
            self._refit()
            self._data.clear()
            self._rest.collide(self._callback)
            for g1, g2 in _geometry_pairs(self._result):
                a, b = by_gid[g1], by_gid[g2]
                if a.body is not b.body or a.body.self_collision:
                    pairs.append((a, b))
            if len(self._capsules) > 1:
                self._capsule_misses(self._capsules, self._capsules, pairs)
        octrees = self._octrees
        for octree in octrees:
            octree.body.measure()
        for k, octree in enumerate(octrees):
            candidates = self._in_box(octree)
            for other in octrees[k + 1 :]:
                if octree.near(other):
                    candidates.append(other)
            for other in candidates:
                if octree.body is other.body and not octree.body.self_collision:
                    continue
                if _touch(octree, other):
                    pairs.append((octree, other))
        return pairs

    def _probe_rest(self, body: Body[Owner], pairs: list[tuple[Leaf[Owner], Leaf[Owner]]]) -> None:
        """Add the pairs of ``body`` (moving) with the bodies at rest."""
        managed = body.managed
        if managed:
            tree = body.tree
            if body.placed != body.epoch:  # place the probes where the leaves are
                body.placed = body.epoch
                placing = body.placing
                if placing is None:
                    for leaf in managed:
                        if leaf.probe is None:
                            leaf.probe = coal.CollisionObject(leaf.tree_geometry, _PARKED, False)
                    placing = body.placing = (
                        tuple(leaf.probe for leaf in managed),
                        tuple(leaf.shape._tf for leaf in managed),
                        tuple(leaf.probe for leaf in managed if leaf.fix),
                    )
                _native.place_objects(placing[0], placing[1])  # the hot loop of a moving robot
                for probe in placing[2]:
                    quirks.fix_box(probe)
                if tree is not None:
                    tree.update()
            self._data.clear()
            if len(managed) == 1:
                self._rest.collide(managed[0].probe, self._callback)
            else:
                if tree is None:
                    tree = body.tree = coal.DynamicAABBTreeCollisionManager()
                    for leaf in managed:
                        tree.registerObject(leaf.probe)
                tree.collide(self._rest, self._callback)
            by_gid = self._by_gid
            for g1, g2 in _geometry_pairs(self._result):
                a, b = by_gid.get(g1), by_gid.get(g2)
                if a is None or b is None or a.body.moving is b.body.moving:
                    continue  # a spare geometry, or two moving leaves (a parked one)
                pairs.append((a, b) if a.body.moving else (b, a))
        for octree in body.octrees:
            for other in self._in_box(octree):
                if _touch(octree, other):
                    pairs.append((octree, other))

    def _capsule_partners(
        self, capsule: _Placed, found: Sequence[Leaf[Owner]]
    ) -> list[Leaf[Owner]]:
        """The capsule leaves at rest, not in ``found``, whose spheres meet ``capsule``'s and
        whose distance to it Coal may overshoot (quirks M): the trees may have missed them."""
        known = {id(leaf) for leaf in found}
        out = []
        for leaf in self._capsules:
            if leaf.body.moving or id(leaf) in known:
                continue
            leaf.body.measure()
            if capsule.near(leaf) and _overshoots(capsule, leaf):
                out.append(leaf)
        return out

    def _capsule_misses(
        self,
        movers: Sequence[Leaf[Owner]],
        others: Sequence[Leaf[Owner]],
        pairs: list[tuple[Leaf[Owner], Leaf[Owner]]],
    ) -> None:
        """Add the pairs of capsule leaves ``movers`` and ``others`` that touch but that Coal's
        trees may have found apart (quirks M: Coal's distance of two short capsules can
        overshoot): those whose spheres meet are asked by their pair query. Pairs inside one
        body only for a body with ``self_collision``; each pair once."""
        candidates = []
        for a in movers:
            a.body.measure()
            for b in others:
                if a is b or (a.body is b.body and not a.body.self_collision):
                    continue
                if movers is others and id(b) < id(a):
                    continue  # every pair once when both lists are the same
                b.body.measure()
                if a.near(b) and _overshoots(a, b):
                    candidates.append((a, b))
        if not candidates:
            return
        reported = {(id(a), id(b)) for a, b in pairs} | {(id(b), id(a)) for a, b in pairs}
        for a, b in candidates:
            if (id(a), id(b)) not in reported and _touch(a, b):
                pairs.append((a, b))

    def _in_box(self, octree: _Placed) -> list[Leaf[Owner]]:
        """The leaves at rest that touch the world bounding box of an octree leaf."""
        if self._registered == self._parked:
            return []
        co = octree.co
        octree.place(co, octree.shape._tf)
        aabb = co.getAABB()
        lo, hi = aabb.min_, aabb.max_
        pad = 1e-9 * (1.0 + float(np.abs(np.concatenate([lo, hi])).max()))
        size = hi - lo + 2.0 * pad
        box = coal.CollisionObject(
            coal.Box(float(size[0]), float(size[1]), float(size[2])),
            coal.Transform3s(np.eye(3), 0.5 * (lo + hi)),
        )
        box.computeAABB()
        return self._resting_hits(box, _gid(box.collisionGeometry()))

    def _resting_hits(self, co: Any, gid: int) -> list[Leaf[Owner]]:
        """The leaves at rest that the outside object ``co`` (geometry key ``gid``) touches."""
        self._data.clear()
        self._rest.collide(co, self._callback)
        found = []
        by_gid = self._by_gid
        for g1, g2 in _geometry_pairs(self._result):
            leaf = by_gid.get(g2 if g1 == gid else g1)
            if leaf is not None and not leaf.body.moving:
                found.append(leaf)
        return found

    def _compare_tier(
        self, moved: Sequence[Body[Owner]], pairs: list[tuple[Leaf[Owner], Leaf[Owner]]]
    ) -> None:
        """Add the pairs of the moved bodies with the tier, with octrees at rest and inside
        themselves, by bounding spheres and pair queries."""
        tier = self._tier
        if len(moved) == 1 and not self._octrees:  # a planner's call: one body moved
            compiled, number = self._compiled or self._compile_tier()
            body = moved[0]
            if body in number:  # a body with leaves
                pairs += compiled.touching(number[body], body.self_collision)
            return
        resting_octrees: Sequence[Leaf[Owner]] = ()
        if self._octrees:
            resting_octrees = [octree for octree in self._octrees if not octree.body.moving]
            for octree in resting_octrees:
                octree.body.measure()
        done: set[Body[Owner]] = set()  # moved bodies already compared with the whole tier
        for body in moved:
            leaves = body.leaves
            measured = False
            for other in tier:
                if other is not body and other not in done and other.leaves:
                    if not measured:
                        body.measure()
                        measured = True
                    other.measure()
                    _touching_pairs(leaves, other.leaves, pairs)
            done.add(body)
            if resting_octrees or body.self_collision:
                body.measure()
                if resting_octrees:
                    _touching_pairs(leaves, resting_octrees, pairs)
                if body.self_collision:
                    for i, a in enumerate(leaves):
                        _touching_pairs((a,), leaves[i + 1 :], pairs)

    def touching(
        self, probes: Iterable[CollisionShape]
    ) -> list[tuple[CollisionShape, Leaf[Owner]]]:
        """The pairs ``(probe, leaf)`` of an outside shape's leaves with the leaves they touch.

        A probe that is itself a leaf of the broadphase is never paired with itself.
        """
        found: list[tuple[CollisionShape, Leaf[Owner]]] = []
        resting = self._registered > self._parked
        candidates = [leaf for body in self._tier for leaf in body.leaves]
        candidates += [octree for octree in self._octrees if not octree.body.moving]
        for leaf in candidates:
            leaf.body.measure()
        for shape in probes:
            probe = _Placed(shape)
            probe.measure()
            if resting:
                if probe.managed:
                    probe.place(probe.co, shape._tf)
                    hits = self._resting_hits(probe.co, probe.gid)
                    found += [(shape, leaf) for leaf in hits if leaf.shape is not shape]
                    if self._capsules and probe.geometry.getNodeType() == _CAPSULE:
                        found += [
                            (shape, leaf)
                            for leaf in self._capsule_partners(probe, hits)
                            if leaf.shape is not shape and shape.iscollided(leaf.shape)
                        ]
                else:
                    found += [
                        (shape, leaf)
                        for leaf in self._in_box(probe)
                        if shape.iscollided(leaf.shape)
                    ]
            for leaf in candidates:
                if leaf.shape is not shape and probe.near(leaf) and shape.iscollided(leaf.shape):
                    found.append((shape, leaf))
        return found

    def spheres(self) -> tuple[list[Leaf[Owner]], np.ndarray, np.ndarray]:
        """Every leaf with its world bounding sphere: ``(leaves, centres (n, 3), radii (n,))``.

        ``leaf.row`` is the leaf's row. A half-space has an infinite radius.
        """
        spheres = self._spheres
        if spheres is None:
            leaves = [leaf for body in self._bodies for leaf in body.leaves]
            centres = np.zeros((len(leaves), 3))
            radii = np.zeros(len(leaves))
            for body in self._bodies:
                body.measure()
            for row, leaf in enumerate(leaves):
                leaf.row = row
                centres[row] = (leaf.x, leaf.y, leaf.z)
                radii[row] = leaf.r
            self._spheres = spheres = (leaves, centres, radii)
        else:
            _, centres, _ = spheres
            for body in self._sphere_stale:
                body.measure()
                for leaf in body.leaves:
                    centres[leaf.row] = (leaf.x, leaf.y, leaf.z)
        self._sphere_stale.clear()
        return spheres

    def nearest_first(
        self, probes: Sequence[CollisionShape], skip: Body[Owner] | None
    ) -> Iterator[tuple[float, int, Leaf[Owner]]]:
        """Pairs of a probe and a leaf (not of ``skip``), by increasing gap between their
        bounding spheres: ``(gap, index of the probe, leaf)``.

        The gap is a lower bound on the signed distance of the pair (``-inf`` for a
        half-space).
        """
        leaves, centres, radii = self.spheres()
        if not leaves or not probes:
            return
        bounds = [_Bounds(shape) for shape in probes]
        for b in bounds:
            b.measure()
        pc = np.array([(b.x, b.y, b.z) for b in bounds], dtype=np.float64)
        pr = np.array([b.r for b in bounds], dtype=np.float64)
        diff = pc[:, None, :] - centres[None, :, :]
        with np.errstate(invalid="ignore"):
            gap = np.sqrt(np.einsum("ijk,ijk->ij", diff, diff)) - pr[:, None] - radii[None, :]
        gap[np.isnan(gap)] = -math.inf  # inf - inf: two half-spaces
        if skip is not None:
            gap[:, [leaf.row for leaf in skip.leaves]] = math.inf
        flat = gap.ravel()
        width = len(leaves)
        for k in np.argsort(flat, kind="stable").tolist():
            lower = float(flat[k])
            if lower == math.inf:
                return
            i, j = divmod(k, width)
            yield lower, i, leaves[j]


def _touching_pairs(
    leaves: Sequence[Leaf[Owner]],
    others: Sequence[Leaf[Owner]],
    pairs: list[tuple[Leaf[Owner], Leaf[Owner]]],
) -> None:
    """Add each pair of ``leaves`` and ``others`` (spheres up to date) that touches.

    The bounding-sphere test of :meth:`_Bounds.near`, written out: it runs for every pair.
    """
    for a in leaves:
        ax, ay, az, ar = a.x, a.y, a.z, a.r
        for b in others:
            dx = ax - b.x
            dy = ay - b.y
            dz = az - b.z
            reach = (ar + b.r) * _SLACK
            if dx * dx + dy * dy + dz * dz <= reach * reach and _touch(a, b):
                pairs.append((a, b))


def _overshoots(a: _Bounds, b: _Bounds) -> bool:
    """Whether Coal may measure the two capsules' distance wrongly (quirks M)."""
    return quirks.capsule_overshoot(a.geometry, b.geometry) > quirks.CAPSULE_TOLERANCE


def _touch(a: Leaf[Owner], b: Leaf[Owner]) -> bool:
    """The pair query ``iscollided`` of two leaves, the one of the earlier body first (so a
    pair has one cached query, whichever of its leaves moved)."""
    first, second = a.body, b.body
    if first.serial > second.serial or (first is second and a.position > b.position):
        a, b = b, a
    return a.shape.iscollided(b.shape)
