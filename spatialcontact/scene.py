"""Scene: many named objects on Coal's broadphase, asked which pairs touch.

A :class:`Scene` holds shapes and groups under names. Moving an object is setting its ``T``
(or its group's, or a shape's inside it); the next query sees it without being told. Queries
cost in proportion to what moved and what is near it: answers for pairs of objects that did
not move are kept from the last query, and only moved objects are refreshed in Coal's
broadphase.

How it works
------------
Every leaf shape of every object gets a Coal ``CollisionObject`` built on the leaf's own
geometry. Two ``DynamicAABBTreeCollisionManager`` hold them: *rest* holds the objects that did
not move at the last query, *moving* those that did. A query first moves the objects that have
stopped into *rest* and those that moved into *moving*, then asks Coal for *moving* against
*rest* (and *moving* against itself when two objects or more moved), with Coal's own
narrow phase run on every pair whose boxes overlap. The colliding leaf pairs are kept per pair
of objects until either object moves again.

Shapes keep no list of observers, but every move, resize or change of a group's contents adds
to the top-level object's ``_moves`` counter. The scene replaces that counter by an ``int``
subclass that reports the first addition to the scene (and turns back into a plain ``int``),
so noticing a move costs nothing per object that did not move.

Octrees are kept out of Coal's managers: Coal 3.0.3 has no octree-ellipsoid collision and
answers a rotated half-space against an octree wrongly, which the shape queries work around.
Pairs with an octree go through those shape queries instead, found by bounding boxes.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import coal
import numpy as np

from ._validate import describe
from .contact import Contact, Contacts
from .errors import (
    CollisionDisabledError,
    InvalidShapeError,
    NotInSceneError,
    SceneError,
    ShapeTypeError,
)
from .shapes import CollisionShape

__all__ = ["Scene"]

_OCTREE = coal.NODE_TYPE.GEOM_OCTREE
_NO_CONTACT_LIMIT = 1 << 30
"""Contacts Coal may gather in one broadphase call: it stops early once it has this many."""
_NAMES_SHOWN = 20
"""How many valid names an error message lists before it says how many more there are."""
_REBALANCE_AT = 64
"""Leaves moved into the *rest* manager at once above which (and above a quarter of its size)
its tree is rebalanced."""
_UNBOUNDED = 1e100
"""A leaf's bounding radius beyond this is taken as infinite (a half-space)."""
_CLAMP = 1e300
"""Bound given to the world box of a half-space in Coal's trees."""


# ------------------------------------------------------------------------ move tracking


class _MoveCounter(int):
    """A shape's ``_moves`` counter that tells the scenes holding the shape about the next change.

    ``watchers`` are the scene records of the shape. The next addition (``shape._moves += 1``)
    flags each of them and gives back a plain ``int``, so the shape is reported once per query
    however often it moves; the scene installs a new counter when it has caught up.
    """

    watchers: tuple[_Object, ...]

    def __add__(self, other: int) -> int:
        value = int.__add__(self, other)
        if value is not NotImplemented:
            for record in self.watchers:
                record.flag()
        return value

    __radd__ = __add__

    def __reduce__(self) -> tuple[Any, ...]:
        # A pickled or copied shape gets a plain number, not the scene's records.
        return (int, (int(self),))


def _arm(record: _Object) -> None:
    """Make the next change of ``record``'s shape flag the record."""
    shape = record.shape
    moves = shape._moves
    if type(moves) is _MoveCounter:
        if record in moves.watchers:
            return
        watchers = (*moves.watchers, record)
    else:
        watchers = (record,)
    counter = _MoveCounter(moves)
    counter.watchers = watchers
    shape._moves = counter


def _disarm(record: _Object) -> None:
    """Stop ``record``'s shape from flagging ``record``."""
    shape = record.shape
    moves = shape._moves
    if type(moves) is not _MoveCounter or record not in moves.watchers:
        return
    watchers = tuple(w for w in moves.watchers if w is not record)
    if not watchers:
        shape._moves = int(moves)
        return
    counter = _MoveCounter(moves)
    counter.watchers = watchers
    shape._moves = counter


# ------------------------------------------------------------------------------ records


_tags = itertools.count(1)


def _gid(geometry: Any) -> int:
    """The key of a Coal geometry met in a contact: its ``id()``, or the tag of a copy."""
    ident = getattr(geometry, "id", None)
    return int(ident()) if ident is not None else int(geometry.cost_density)


def _coal_object(geometry: Any, tf: Any) -> tuple[Any, int]:
    """A Coal ``CollisionObject`` for ``geometry`` placed by ``tf``, and its key (:func:`_gid`).

    Coal's Python binding of convex shapes has no ``id()``: such a geometry is copied and the
    copy tagged with a unique negative number in ``cost_density`` (a field only cost-aware
    queries read), so that the shape's own geometry is left as it is.
    """
    if getattr(geometry, "id", None) is None:
        geometry = geometry.clone()
        geometry.cost_density = float(-next(_tags))
        geometry.computeLocalAABB()
    co = coal.CollisionObject(geometry, tf, False)
    co.computeAABB()
    if _unbounded(geometry):
        _clamp(co)
    return co, _gid(geometry)


def _unbounded(geometry: Any) -> bool:
    """True for a geometry without a finite bounding box (a half-space)."""
    return not float(geometry.aabb_radius) < _UNBOUNDED


def _clamp(co: Any) -> None:
    """Bring the world box of a half-space's Coal object within +-1e300.

    Coal's tree tests two boxes with infinite or near-``DBL_MAX`` bounds as disjoint
    (their extents overflow), so two half-spaces would never be paired.
    """
    aabb = co.getAABB()  # a reference into the object: assigning to it updates the object
    aabb.min_ = np.clip(aabb.min_, -_CLAMP, _CLAMP)
    aabb.max_ = np.clip(aabb.max_, -_CLAMP, _CLAMP)


class _Leaf:
    """One collision leaf of an object, with the Coal object that stands for it."""

    __slots__ = (
        "co",
        "geometry",
        "gid",
        "leaf",
        "managed",
        "position",
        "record",
        "row",
        "unbounded",
    )

    def __init__(self, leaf: CollisionShape, record: _Object, position: int) -> None:
        self.leaf = leaf
        self.record = record
        self.position = position
        self.geometry = leaf._geometry
        self.managed = self.geometry.getNodeType() != _OCTREE
        self.unbounded = _unbounded(self.geometry)
        if self.managed:
            self.co, self.gid = _coal_object(self.geometry, leaf._tf)
        else:  # an octree only needs its bounding box
            self.co = coal.CollisionObject(self.geometry, leaf._tf, False)
            self.co.computeAABB()
            self.gid = 0
        self.row = -1


class _Pair:
    """The colliding leaf pairs of two objects (or of one, with itself), as last found."""

    __slots__ = ("a", "allowed", "b", "contacts", "leaves")

    def __init__(self, a: _Object, b: _Object, allowed: bool) -> None:
        self.a = a
        self.b = b
        self.allowed = allowed
        self.leaves: list[tuple[_Leaf, _Leaf]] = []
        self.contacts: dict[int, tuple[Contact, ...]] = {}


_REST, _MOVING = 1, 2


class _Object:
    """What the scene knows of one named object."""

    __slots__ = (
        "alive",
        "dirty",
        "entries",
        "leaves",
        "name",
        "partners",
        "self_collision",
        "serial",
        "shape",
        "where",
    )

    def __init__(
        self,
        name: str,
        shape: CollisionShape,
        serial: int,
        self_collision: bool,
        dirty: set[_Object],
    ) -> None:
        self.name = name
        self.shape = shape
        self.serial = serial
        self.self_collision = self_collision
        self.dirty = dirty
        self.alive = True
        self.where = 0
        self.leaves: tuple[CollisionShape, ...] = ()
        self.entries: list[_Leaf] = []
        self.partners: dict[_Object, _Pair] = {}

    def flag(self) -> None:
        """Note that the shape changed since the last query."""
        if self.alive:
            self.dirty.add(self)

    def __repr__(self) -> str:
        return f"<scene object {self.name!r}>"


def _serial(record: _Object) -> int:
    return record.serial


def _key(a: _Object, b: _Object) -> tuple[_Object, _Object]:
    return (a, b) if a.serial <= b.serial else (b, a)


def _pair_order(pair: _Pair) -> tuple[int, int]:
    return (pair.a.serial, pair.b.serial)


def _leaf_order(leaves: tuple[_Leaf, _Leaf]) -> tuple[int, int]:
    return (leaves[0].position, leaves[1].position)


def _geometry_pairs(result: Any) -> list[tuple[int, int]]:
    """The pairs of geometry ids ``(o1, o2)`` that have contacts in a Coal ``CollisionResult``.

    A broadphase call appends the contacts of each pair of objects together, and a mesh pair
    may give thousands: the end of each run is found by doubling steps and bisection rather
    than by reading every contact (reading one costs about a microsecond).
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


def _world_sphere(geometry: Any, tf: Any) -> tuple[np.ndarray, float]:
    """World bounding sphere (centre (3,), radius) of a geometry placed by the Coal ``tf``.

    A half-space has an infinite radius (and the origin as centre).
    """
    if _unbounded(geometry):
        return np.zeros(3), math.inf
    return tf.transform(geometry.aabb_center), float(geometry.aabb_radius)


def _depth(contact: Contact) -> float:
    return contact.penetration_depth


def _check_name(value: Any, parameter: str) -> str:
    if not isinstance(value, str):
        raise ShapeTypeError(f"{parameter} must be a string, got {describe(value)}")
    if not value:
        raise SceneError(f"{parameter} must be a non-empty string, got ''")
    return value


def _check_shape(value: Any, parameter: str) -> CollisionShape:
    if not isinstance(value, CollisionShape):
        raise ShapeTypeError(
            f"{parameter} must be a CollisionShape or CollisionShapeGroup, got "
            f"{type(value).__name__}: {describe(value)}"
        )
    if not value._collision:
        raise CollisionDisabledError(
            f"{parameter} {describe(value)} has collision=False and cannot take part in "
            "collision queries"
        )
    return value


def _collision_leaves(shape: CollisionShape) -> list[CollisionShape]:
    return [leaf for leaf in shape._leaves() if leaf._collision]


# -------------------------------------------------------------------------------- Scene


class Scene:
    """Named shapes and groups, asked which pairs touch, on Coal's broadphase.

    Objects are added under names (:meth:`add`) and then moved by setting their pose: the next
    query sees the change. A query costs in proportion to the objects that moved since the
    last one and to what is near them; answers for pairs that did not move are reused.

    Each added object is one object of the scene: a group's leaves are not checked against
    each other unless it is added with ``self_collision=True``. :meth:`allow` skips chosen
    pairs of objects (an allowed-collision set, as MoveIt's allowed collision matrix).

    Notes
    -----
    Results are those of the shape queries on each pair of leaves (``a.iscollided(b)``,
    ``a.contacts(b)``, ``a.closest_point(b)``); pairs of shapes Coal cannot answer raise
    :class:`~spatialcontact.errors.UnsupportedPairError` as those queries do. A scene holds
    its shapes; a shape may be in several scenes. Leaves with ``collision=False`` inside a
    group are ignored; an object with ``collision=False`` cannot be added.

    Examples
    --------
    >>> from spatialcontact import Cuboid, Scene, Sphere
    >>> scene = Scene()
    >>> scene.add(Cuboid([1.0, 1.0, 0.1]), "table")
    'table'
    >>> ball = Sphere(0.1, pose=[[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0.12], [0, 0, 0, 1]])
    >>> scene.add(ball)
    'object_0'
    >>> scene.in_collision()
    True
    >>> scene.collisions()
    [('table', 'object_0')]
    >>> ball.T = [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0.5], [0, 0, 0, 1]]
    >>> scene.in_collision()
    False
    """

    def __init__(self) -> None:
        self._objects: dict[str, _Object] = {}
        self._by_shape: dict[CollisionShape, _Object] = {}
        self._by_leaf: dict[CollisionShape, _Leaf] = {}
        self._by_gid: dict[int, _Leaf] = {}
        self._octrees: list[_Leaf] = []
        self._dirty: set[_Object] = set()
        self._in_moving: set[_Object] = set()
        self._pairs: dict[tuple[_Object, _Object], _Pair] = {}
        self._allowed: set[tuple[_Object, _Object]] = set()
        self._blocking = 0
        self._serial = 0
        self._auto = 0
        self._names: tuple[str, ...] | None = None
        self._index: dict[str, int] | None = None
        self._rest = coal.DynamicAABBTreeCollisionManager()
        self._moving = coal.DynamicAABBTreeCollisionManager()
        self._rest_count = 0
        self._moving_count = 0
        self._callback = coal.CollisionCallBackDefault()
        self._data = self._callback.data
        self._result = self._data.result
        request = self._data.request
        # The request of the shape queries (query._collide_entry): Coal 3.0.3 misses some deep
        # overlaps with enable_contact=False. Octree pairs, the exception there, never get here.
        request.num_max_contacts = _NO_CONTACT_LIMIT
        request.enable_contact = True
        request.distance_upper_bound = 0.0
        # Bounding spheres of every leaf for distance(), rebuilt lazily.
        self._spheres: tuple[list[_Leaf], np.ndarray, np.ndarray] | None = None
        self._sphere_stale: set[_Object] = set()

    # ------------------------------------------------------------------ the objects

    def add(
        self, obj: CollisionShape, name: str | None = None, *, self_collision: bool = False
    ) -> str:
        """Add a shape or group under a name.

        Parameters
        ----------
        obj : CollisionShape or CollisionShapeGroup
            The object. It must not be in a group (add the group) nor already in this scene,
            and must have ``collision=True``.
        name : str, optional
            A non-empty name not yet used in this scene. By default the next of
            ``"object_0"``, ``"object_1"``, ... that is free (a generated name is not given
            twice by one scene, even after its object is removed).
        self_collision : bool
            Check the leaves of a group against each other too (by default a group is one
            object, whose parts may touch).

        Returns
        -------
        str
            The object's name.

        Raises
        ------
        ShapeTypeError
            ``obj`` is not a shape, ``name`` not a string or ``self_collision`` not a bool.
        CollisionDisabledError
            ``obj`` has ``collision=False``.
        SceneError
            The name is empty or taken, ``obj`` is in a group, or ``obj`` or one of its leaves
            is already in the scene.
        """
        if not isinstance(obj, CollisionShape):
            raise ShapeTypeError(
                "obj must be a CollisionShape or CollisionShapeGroup, got "
                f"{type(obj).__name__}: {describe(obj)}"
            )
        if not isinstance(self_collision, (bool, np.bool_)):
            raise ShapeTypeError(
                f"self_collision must be True or False, got {describe(self_collision)}"
            )
        if name is not None:
            name = _check_name(name, "name")
            if name in self._objects:
                raise SceneError(f"name {name!r} is already used in this scene")
        if not obj._collision:
            raise CollisionDisabledError(
                f"obj {describe(obj)} has collision=False: a scene only holds shapes that "
                "take part in collision queries"
            )
        held = self._by_shape.get(obj)
        if held is not None:
            raise SceneError(f"obj {describe(obj)} is already in this scene as {held.name!r}")
        if obj._parent is not None:
            raise SceneError(
                f"obj {describe(obj)} belongs to a group ({describe(obj._parent)}): add the "
                "group, or remove the shape from it first"
            )
        leaves = obj._leaves()
        self._check_claims([(None, leaves)])
        if name is None:
            name = self._new_name()
        record = _Object(name, obj, self._serial, bool(self_collision), self._dirty)
        self._build(record, leaves)
        self._serial += 1
        self._objects[name] = record
        self._by_shape[obj] = record
        self._names = self._index = None
        _arm(record)
        self._dirty.add(record)
        return name

    def _new_name(self) -> str:
        while True:
            name = f"object_{self._auto}"
            self._auto += 1
            if name not in self._objects:
                return name

    def remove(self, name: str) -> CollisionShape:
        """Remove the object called ``name`` and forget the allowed pairs it is part of.

        Returns
        -------
        CollisionShape or CollisionShapeGroup
            The object removed.

        Raises
        ------
        NotInSceneError
            ``name`` is not in the scene (the message lists the names that are).
        """
        record = self._record(name, "name")
        self._drop_pairs(record)
        self._forget_entries(record)
        record.alive = False
        _disarm(record)
        self._dirty.discard(record)
        self._in_moving.discard(record)
        self._sphere_stale.discard(record)
        self._allowed = {k for k in self._allowed if record not in k}
        del self._objects[name]
        del self._by_shape[record.shape]
        self._names = self._index = None
        self._spheres = None
        return record.shape

    def __getitem__(self, name: str) -> CollisionShape:
        """The shape or group called ``name`` (:class:`NotInSceneError` if there is none)."""
        return self._record(name, "name").shape

    def __contains__(self, item: object) -> bool:
        """True for the name of an object of the scene, or for an object itself."""
        if isinstance(item, str):
            return item in self._objects
        if isinstance(item, CollisionShape):
            return item in self._by_shape
        return False

    def __len__(self) -> int:
        return len(self._objects)

    def __iter__(self) -> Iterator[str]:
        """The names, in the order the objects were added."""
        return iter(self.names)

    @property
    def names(self) -> tuple[str, ...]:
        """tuple of str: the names in the order the objects were added.

        An object's position in it is its index (:meth:`index_of`); removing an object moves
        the later ones down by one.
        """
        if self._names is None:
            self._names = tuple(self._objects)
        return self._names

    def index_of(self, name: str) -> int:
        """The position of ``name`` in :attr:`names`.

        Raises
        ------
        NotInSceneError
            ``name`` is not in the scene.
        """
        record = self._record(name, "name")
        if self._index is None:
            self._index = {n: i for i, n in enumerate(self.names)}
        return self._index[record.name]

    def name_of(self, shape: CollisionShape) -> str:
        """The name of the object that ``shape`` is, or is part of (a leaf of a group, say).

        Parameters
        ----------
        shape : CollisionShape
            Typically a contact's ``o1`` or ``o2``.

        Raises
        ------
        ShapeTypeError
            ``shape`` is not a shape.
        NotInSceneError
            ``shape`` is neither an object of the scene nor inside one.
        """
        if not isinstance(shape, CollisionShape):
            raise ShapeTypeError(
                f"shape must be a CollisionShape, got {type(shape).__name__}: {describe(shape)}"
            )
        record = self._owner(shape)
        if record is None:
            raise NotInSceneError(
                f"shape {describe(shape)} is not in this scene; {self._valid_names()}"
            )
        return record.name

    def __repr__(self) -> str:
        names = ", ".join(repr(n) for n in self.names[:_NAMES_SHOWN])
        more = f", ... ({len(self) - _NAMES_SHOWN} more)" if len(self) > _NAMES_SHOWN else ""
        return f"Scene({len(self)} objects: [{names}{more}])"

    def __reduce__(self) -> tuple[Any, ...]:
        raise TypeError("a Scene cannot be pickled or copied: pickle its shapes and add them anew")

    # ------------------------------------------------------------ allowed collisions

    def allow(self, a: str, b: str) -> None:
        """Skip the pair of objects ``a`` and ``b`` (every pair of their leaves) in queries.

        Raises
        ------
        NotInSceneError
            A name is not in the scene.
        SceneError
            ``a`` and ``b`` are the same name (add the object with ``self_collision=False``
            to skip its inner pairs).
        """
        self._set_allowed(a, b, True)

    def disallow(self, a: str, b: str) -> None:
        """Check the pair ``a``, ``b`` again (undo :meth:`allow`; nothing if not allowed).

        Raises
        ------
        NotInSceneError
            A name is not in the scene.
        SceneError
            ``a`` and ``b`` are the same name.
        """
        self._set_allowed(a, b, False)

    def _set_allowed(self, a: str, b: str, allowed: bool) -> None:
        """Add the pair to the allowed set (or take it out), updating its cached pair."""
        key = self._allowed_key(a, b)
        if (key in self._allowed) == allowed:
            return
        if allowed:
            self._allowed.add(key)
        else:
            self._allowed.discard(key)
        pair = self._pairs.get(key)
        if pair is not None and pair.allowed != allowed:
            pair.allowed = allowed
            self._blocking += -1 if allowed else 1

    def is_allowed(self, a: str, b: str) -> bool:
        """True when the pair ``a``, ``b`` is skipped by :meth:`allow`."""
        return self._allowed_key(a, b) in self._allowed

    @property
    def allowed_pairs(self) -> list[tuple[str, str]]:
        """list of (str, str): the allowed pairs, each in the order the objects were added."""
        return [(a.name, b.name) for a, b in sorted(self._allowed, key=self._key_order)]

    @staticmethod
    def _key_order(key: tuple[_Object, _Object]) -> tuple[int, int]:
        return (key[0].serial, key[1].serial)

    def _allowed_key(self, a: str, b: str) -> tuple[_Object, _Object]:
        ra = self._record(a, "a")
        rb = self._record(b, "b")
        if ra is rb:
            raise SceneError(
                f"a and b are both {a!r}: an object's own leaves are checked only when it is "
                "added with self_collision=True"
            )
        return _key(ra, rb)

    # ---------------------------------------------------------------------- queries

    def in_collision(self) -> bool:
        """True when any pair of objects that is not allowed touches or overlaps."""
        self._refresh()
        return self._blocking > 0

    def collisions(self) -> list[tuple[str, str]]:
        """Every pair of objects in collision, each once, allowed pairs left out.

        Returns
        -------
        list of (str, str)
            ``(a, b)`` with ``a`` added before ``b``, sorted by the order the objects were
            added. An object added with ``self_collision=True`` whose leaves touch each other
            appears as ``(a, a)``.
        """
        self._refresh()
        pairs = sorted((p for p in self._pairs.values() if not p.allowed), key=_pair_order)
        return [(p.a.name, p.b.name) for p in pairs]

    def contacts(self, max_contacts_per_pair: int = 1) -> Contacts:
        """The contacts of every pair of objects in collision, allowed pairs left out.

        Parameters
        ----------
        max_contacts_per_pair : int
            Contacts kept per pair of leaves (as ``max_contacts`` of the shape queries): the
            deepest ones.

        Returns
        -------
        Contacts
            Grouped by pair of objects in the order of :meth:`collisions`, deepest first
            within a pair. ``o1`` is a leaf of the object added earlier and ``o2`` a leaf of
            the one added later (for a self-collision, the leaf that comes first in the
            group). :meth:`name_of` maps a leaf to its object.
        """
        if isinstance(max_contacts_per_pair, bool) or not isinstance(
            max_contacts_per_pair, (int, np.integer)
        ):
            raise ShapeTypeError(
                "max_contacts_per_pair must be an integer >= 1, got "
                f"{describe(max_contacts_per_pair)}"
            )
        k = int(max_contacts_per_pair)
        if k < 1:
            raise InvalidShapeError(f"max_contacts_per_pair must be an integer >= 1, got {k}")
        self._refresh()
        out: list[Contact] = []
        for pair in sorted((p for p in self._pairs.values() if not p.allowed), key=_pair_order):
            found = pair.contacts.get(k)
            if found is None:
                collected: list[Contact] = []
                for ea, eb in sorted(pair.leaves, key=_leaf_order):
                    collected.extend(ea.leaf.contacts(eb.leaf, max_contacts=k))
                collected.sort(key=_depth)
                found = pair.contacts[k] = tuple(collected)
            out.extend(found)
        return Contacts(out)

    def collide(self, shape: CollisionShape) -> list[str]:
        """The names of the objects that ``shape`` touches.

        Parameters
        ----------
        shape : CollisionShape or CollisionShapeGroup
            Any shape. When it is an object of the scene, or part of one, that object is left
            out, and so are the objects it is allowed to touch.

        Returns
        -------
        list of str
            In the order the objects were added.
        """
        _check_shape(shape, "shape")
        self._refresh()
        record = self._by_shape.get(shape)
        if record is not None:
            hit = [o for o, p in record.partners.items() if o is not record and not p.allowed]
            return [o.name for o in sorted(hit, key=_serial)]
        own = self._owner(shape)
        found: set[_Object] = set()
        for leaf in _collision_leaves(shape):
            geometry = leaf._geometry
            if geometry.getNodeType() == _OCTREE:
                co = coal.CollisionObject(geometry, leaf._tf, False)
                co.computeAABB()
                for entry in self._touching_box(co):
                    if entry.record not in found and leaf.iscollided(entry.leaf):
                        found.add(entry.record)
            else:
                co, gid = _coal_object(geometry, leaf._tf)
                for entry in self._probe(co, gid):
                    found.add(entry.record)
            aabb = co.getAABB()
            for entry in self._octrees:
                if (
                    entry.record not in found
                    and aabb.overlap(entry.co.getAABB())
                    and leaf.iscollided(entry.leaf)
                ):
                    found.add(entry.record)
        return [r.name for r in sorted(self._skip_own(found, own), key=_serial)]

    def distance(
        self, shape: CollisionShape
    ) -> tuple[float, str | None, np.ndarray | None, np.ndarray | None]:
        """The object nearest to ``shape``, with the signed distance and closest points.

        Parameters
        ----------
        shape : CollisionShape or CollisionShapeGroup
            Any shape. When it is an object of the scene, or part of one, that object is left
            out, and so are the objects it is allowed to touch.

        Returns
        -------
        d : float
            Signed distance in metres (negative on overlap), as ``closest_point`` of the
            shapes; ``inf`` when the scene holds no other object.
        name : str or None
            The nearest object (the first added among equally near ones).
        p1 : ndarray, shape (3,), world frame, or None
            Closest point on ``shape``.
        p2 : ndarray, shape (3,), world frame, or None
            Closest point on the object.
        """
        _check_shape(shape, "shape")
        self._refresh()
        entries, centres, radii = self._sphere_arrays()
        probes = _collision_leaves(shape)
        if not entries or not probes:
            return math.inf, None, None, None
        own = self._owner(shape)
        keep = np.ones(len(entries), dtype=bool)
        if own is not None:
            skipped = {own} | {b if a is own else a for a, b in self._allowed if own in (a, b)}
            keep[[e.row for record in skipped for e in record.entries]] = False
        spheres = [_world_sphere(leaf._geometry, leaf._tf) for leaf in probes]
        pc = np.array([c for c, _ in spheres], dtype=np.float64).reshape(-1, 3)
        pr = np.array([r for _, r in spheres], dtype=np.float64)
        diff = pc[:, None, :] - centres[None, :, :]
        with np.errstate(invalid="ignore"):
            gap = np.sqrt(np.einsum("ijk,ijk->ij", diff, diff)) - pr[:, None] - radii[None, :]
        gap[np.isnan(gap)] = -math.inf
        gap[:, ~keep] = math.inf
        flat = gap.ravel()
        order = np.argsort(flat, kind="stable")
        best: tuple[float, _Leaf, np.ndarray, np.ndarray] | None = None
        for k in order.tolist():
            lower = flat[k]
            if lower == math.inf or (best is not None and lower > best[0]):
                break
            i, j = divmod(k, len(entries))
            entry = entries[j]
            d, p1, p2 = probes[i].closest_point(entry.leaf, inf_dist=math.inf)
            assert d is not None and p1 is not None and p2 is not None
            if (
                best is None
                or d < best[0]
                or (d == best[0] and entry.record.serial < best[1].record.serial)
            ):
                best = (d, entry, p1, p2)
        if best is None:
            return math.inf, None, None, None
        return float(best[0]), best[1].record.name, best[2], best[3]

    # ----------------------------------------------------------------- bookkeeping

    def _record(self, name: Any, parameter: str) -> _Object:
        record = self._objects.get(name) if isinstance(name, str) else None
        if record is None:
            raise NotInSceneError(
                f"{parameter} {describe(name)} is not in this scene; {self._valid_names()}"
            )
        return record

    def _valid_names(self) -> str:
        names = self.names
        if not names:
            return "the scene is empty"
        shown = ", ".join(repr(n) for n in names[:_NAMES_SHOWN])
        if len(names) > _NAMES_SHOWN:
            shown += f", ... ({len(names) - _NAMES_SHOWN} more)"
        return f"valid names: {shown}"

    def _owner(self, shape: CollisionShape) -> _Object | None:
        """The record of the object ``shape`` is, or is inside; None if there is none."""
        node: CollisionShape | None = shape
        while node is not None:
            record = self._by_shape.get(node)
            if record is not None:
                return record
            node = node._parent
        return None

    def _skip_own(self, found: Iterable[_Object], own: _Object | None) -> list[_Object]:
        if own is None:
            return list(found)
        return [r for r in found if r is not own and _key(own, r) not in self._allowed]

    def _check_claims(
        self, changes: Sequence[tuple[_Object | None, tuple[CollisionShape, ...]]]
    ) -> None:
        """Refuse leaves that would belong to two objects of the scene.

        ``changes`` pairs records (None for an object being added) with their new leaves;
        every other object keeps the leaves it has. Nothing is changed.
        """
        changing = {record for record, _ in changes if record is not None}
        claimed: dict[CollisionShape, str] = {}
        geometries: dict[int, str] = {}
        for record, leaves in changes:
            label = "the object being added" if record is None else repr(record.name)
            for leaf in leaves:
                if not leaf._collision:
                    continue
                owner = self._owner_of_leaf(leaf)
                if owner is not None and owner is not record and owner not in changing:
                    claimed.setdefault(leaf, repr(owner.name))
                first = claimed.get(leaf)
                if first is not None:
                    raise SceneError(
                        f"{describe(leaf)} is part of {first} and of {label}: a shape can be in "
                        "one object of a scene only"
                    )
                claimed[leaf] = label
                ident = getattr(leaf._geometry, "id", None)
                if ident is None:  # copied for the broadphase (see _coal_object): never shared
                    continue
                gid = int(ident())
                entry = self._by_gid.get(gid)
                if entry is not None and entry.leaf is not leaf and entry.record not in changing:
                    raise SceneError(
                        f"{describe(leaf)} in {label} shares its Coal geometry with a leaf of "
                        f"{entry.record.name!r}"
                    )
                if geometries.setdefault(gid, label) != label:
                    raise SceneError(
                        f"{describe(leaf)} in {label} shares its Coal geometry with a leaf of "
                        f"{geometries[gid]}"
                    )

    def _build(self, record: _Object, leaves: tuple[CollisionShape, ...]) -> None:
        """Make the Coal objects of ``record``'s leaves (registered in no manager yet)."""
        entries = [
            _Leaf(leaf, record, position)
            for position, leaf in enumerate(leaf for leaf in leaves if leaf._collision)
        ]
        for entry in entries:
            self._by_leaf[entry.leaf] = entry
            if entry.managed:
                self._by_gid[entry.gid] = entry
            else:
                self._octrees.append(entry)
        record.leaves = leaves
        record.entries = entries
        self._spheres = None

    def _owner_of_leaf(self, leaf: CollisionShape) -> _Object | None:
        """The record holding ``leaf`` as one of its collision leaves, or None."""
        entry = self._by_leaf.get(leaf)
        return entry.record if entry is not None else None

    def _forget_entries(self, record: _Object) -> None:
        """Take ``record``'s leaves out of the managers and the look-up tables."""
        self._unregister(record)
        for entry in record.entries:
            if self._by_leaf.get(entry.leaf) is entry:
                del self._by_leaf[entry.leaf]
            if entry.managed and self._by_gid.get(entry.gid) is entry:
                del self._by_gid[entry.gid]
        if any(not entry.managed for entry in record.entries):
            self._octrees = [e for e in self._octrees if e.record is not record]
        record.entries = []
        self._spheres = None

    def _unregister(self, record: _Object) -> None:
        """Take ``record``'s Coal objects out of the manager holding them."""
        if record.where == _REST:
            for entry in record.entries:
                if entry.managed:
                    self._rest.unregisterObject(entry.co)
                    self._rest_count -= 1
        elif record.where == _MOVING:
            for entry in record.entries:
                if entry.managed:
                    self._moving.unregisterObject(entry.co)
                    self._moving_count -= 1
        record.where = 0

    def _drop_pairs(self, record: _Object) -> None:
        """Forget every collision found for ``record`` (it moved, or is going)."""
        partners = record.partners
        if not partners:
            return
        pairs = self._pairs
        for other, pair in partners.items():
            if other is not record:
                del other.partners[record]
            del pairs[(pair.a, pair.b)]
            if not pair.allowed:
                self._blocking -= 1
        partners.clear()

    def _hit(self, ea: _Leaf, eb: _Leaf) -> None:
        """Record that leaves ``ea`` and ``eb`` collide (skipped inside one plain object)."""
        ra, rb = ea.record, eb.record
        if ra is rb:
            if not ra.self_collision:
                return
            if ea.position > eb.position:
                ea, eb = eb, ea
        elif ra.serial > rb.serial:
            ra, rb, ea, eb = rb, ra, eb, ea
        pair = ra.partners.get(rb)
        if pair is None:
            allowed = ra is not rb and (ra, rb) in self._allowed
            pair = _Pair(ra, rb, allowed)
            ra.partners[rb] = pair
            rb.partners[ra] = pair
            self._pairs[(ra, rb)] = pair
            if not allowed:
                self._blocking += 1
        pair.leaves.append((ea, eb))

    # ------------------------------------------------------------------- refreshing

    def _refresh(self) -> None:
        """Bring the managers and the collisions found up to date with the shapes."""
        dirty = self._dirty
        if not dirty:
            if self._in_moving:
                self._settle(list(self._in_moving))
                self._in_moving = set()
            return
        moved = sorted(dirty, key=_serial) if len(dirty) > 1 else list(dirty)
        changes = []
        for record in moved:
            leaves = record.shape._leaves()
            if leaves != record.leaves:
                changes.append((record, leaves))
        changed: dict[_Object, tuple[CollisionShape, ...]] = {}
        if changes:
            self._check_claims(changes)  # raises before anything changes
            changed = dict(changes)
        moved_set = set(dirty)
        dirty.clear()
        if not self._in_moving <= moved_set:
            self._settle([r for r in self._in_moving if r not in moved_set])
        for record in moved:
            _arm(record)
            self._drop_pairs(record)
            self._sync(record, changed.get(record))
        self._in_moving = moved_set
        self._sphere_stale.update(moved)
        self._moving.update()
        try:
            self._narrow(moved)
        except BaseException:
            # A pair Coal cannot answer: forget the half-found collisions and try again (and
            # raise again) at the next query rather than answer from them.
            for record in moved:
                self._drop_pairs(record)
            dirty.update(moved)
            raise

    def _settle(self, records: list[_Object]) -> None:
        """Move objects that stopped from the *moving* manager to *rest*."""
        count = 0
        for record in records:
            for entry in record.entries:
                if entry.managed:
                    self._moving.unregisterObject(entry.co)
                    self._rest.registerObject(entry.co)
                    count += 1
            record.where = _REST
        self._moving_count -= count
        self._rest_count += count
        if count > _REBALANCE_AT and 4 * count > self._rest_count:
            self._rest.update()  # rebalance the tree after many insertions

    def _sync(self, record: _Object, leaves: tuple[CollisionShape, ...] | None) -> None:
        """Update ``record``'s Coal objects to its shape and put them in *moving*.

        ``leaves`` are the shape's new leaves when they changed, else None.
        """
        if leaves is None:
            for entry in record.entries:
                leaf = entry.leaf
                if leaf._geometry is not entry.geometry:  # resized: a new geometry
                    leaves = record.leaves
                    break
                co = entry.co
                co.setTransform(leaf._tf)
                co.computeAABB()
                if entry.unbounded:
                    _clamp(co)
        if leaves is not None:
            self._forget_entries(record)
            self._build(record, leaves)
        elif record.where == _MOVING:
            return
        elif record.where == _REST:
            for entry in record.entries:
                if entry.managed:
                    self._rest.unregisterObject(entry.co)
                    self._rest_count -= 1
        for entry in record.entries:
            if entry.managed:
                self._moving.registerObject(entry.co)
                self._moving_count += 1
        record.where = _MOVING

    def _narrow(self, moved: list[_Object]) -> None:
        """Find the collisions of the moved objects (their old ones are already dropped)."""
        data, by_gid, hit = self._data, self._by_gid, self._hit
        if self._moving_count:
            if self._rest_count:
                data.clear()
                self._moving.collide(self._rest, self._callback)
                for g1, g2 in _geometry_pairs(self._result):
                    hit(by_gid[g1], by_gid[g2])
            if len(moved) > 1 or moved[0].self_collision:
                data.clear()
                self._moving.collide(self._callback)
                for g1, g2 in _geometry_pairs(self._result):
                    hit(by_gid[g1], by_gid[g2])
        if self._octrees:
            self._narrow_octrees(moved)

    def _narrow_octrees(self, moved: list[_Object]) -> None:
        """Collisions with octree leaves, found by bounding boxes and the shape queries."""
        moved_set = set(moved)
        octrees = self._octrees
        for k, oe in enumerate(octrees):
            aabb = oe.co.getAABB()
            if oe.record in moved_set:
                candidates = self._touching_box(oe.co)
                candidates += [
                    other
                    for j, other in enumerate(octrees)
                    if j != k
                    and (j > k or other.record not in moved_set)
                    and aabb.overlap(other.co.getAABB())
                ]
            else:
                candidates = [
                    e
                    for record in moved
                    for e in record.entries
                    if e.managed and aabb.overlap(e.co.getAABB())
                ]
            for entry in candidates:
                if entry.record is oe.record and not oe.record.self_collision:
                    continue
                if oe.leaf.iscollided(entry.leaf):
                    self._hit(oe, entry)

    def _probe(self, co: Any, gid: int) -> list[_Leaf]:
        """The managed leaves that the outside Coal object ``co`` (geometry key ``gid``) hits."""
        found: list[_Leaf] = []
        data, by_gid = self._data, self._by_gid
        for manager, count in ((self._rest, self._rest_count), (self._moving, self._moving_count)):
            if not count:
                continue
            data.clear()
            manager.collide(co, self._callback)
            for g1, g2 in _geometry_pairs(self._result):
                found.append(by_gid[g2 if g1 == gid else g1])
        return found

    def _touching_box(self, co: Any) -> list[_Leaf]:
        """The managed leaves that touch the world bounding box of the Coal object ``co``."""
        aabb = co.getAABB()
        lo, hi = aabb.min_, aabb.max_
        pad = 1e-9 * (1.0 + float(np.abs(np.concatenate([lo, hi])).max()))
        size = hi - lo + 2.0 * pad
        box = coal.CollisionObject(
            coal.Box(float(size[0]), float(size[1]), float(size[2])),
            coal.Transform3s(np.eye(3), 0.5 * (lo + hi)),
        )
        box.computeAABB()
        return self._probe(box, _gid(box.collisionGeometry()))

    def _sphere_arrays(self) -> tuple[list[_Leaf], np.ndarray, np.ndarray]:
        """Every leaf of the scene with its world bounding sphere: (entries, (n, 3), (n,))."""
        spheres = self._spheres
        if spheres is None:
            entries = [e for record in self._objects.values() for e in record.entries]
            centres = np.zeros((len(entries), 3))
            radii = np.zeros(len(entries))
            for row, entry in enumerate(entries):
                entry.row = row
                centres[row], radii[row] = _world_sphere(entry.geometry, entry.leaf._tf)
            self._spheres = spheres = (entries, centres, radii)
        else:
            _, centres, radii = spheres
            for record in self._sphere_stale:
                for entry in record.entries:
                    centres[entry.row], radii[entry.row] = _world_sphere(
                        entry.geometry, entry.leaf._tf
                    )
        self._sphere_stale.clear()
        return spheres
