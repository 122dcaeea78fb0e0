"""Scene: many named objects, asked which pairs touch.

A :class:`Scene` holds shapes and groups under names. Moving an object is setting its ``T``
(or its group's, or a shape's inside it); the next query sees it without being told. The scene
watches each object (it is a weakly held observer of the shape): a change only notes the
object, and the next query asks the :class:`~spatialcontact.scene.broadphase.Broadphase` for
the pairs of the objects that changed. Answers for pairs of objects that did not change are
kept from the last query, as the colliding pairs of leaves of each pair of objects.

Allowed pairs (:class:`~spatialcontact.allowed.AllowedCollisions`) are applied to those pairs
of leaves when a query is answered, so allowing or disallowing a pair costs no Coal call.

Worlds
------
Objects belong to a world (``add(..., world=k)``, after :meth:`Scene.add_world`) or are global
(world -1, the default). Each world has a broadphase of its own, which holds its objects and
the global ones; a broadphase of the global objects alone finds their pairs with each other.
So no pair of leaves of two different worlds is ever given to Coal, not even to its trees. A
scene with no world added has only the global broadphase: one implicit world, as in Newton.
"""

from __future__ import annotations

import copy
import itertools
import math
import operator
import weakref
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from .._base import ShapeBase, collision_leaves
from .._coal import state as _state
from .._validate import count, describe, finite_real, flag, integer, numbers, text, vector3
from ..allowed import AllowedCollisions
from ..contact import Contact, Contacts
from ..errors import (
    CollisionDisabledError,
    InvalidArgumentError,
    NotInSceneError,
    SceneError,
    ShapeTypeError,
    UnsupportedPairError,
)
from ..pose import MAX_TRANSLATION
from .broadphase import Body, Broadphase, Leaf

if TYPE_CHECKING:
    from ..shapes import CollisionShape

__all__ = ["Scene", "WorldContacts"]

MAX_REPLICATE = 1_000_000
"""Most worlds :meth:`Scene.replicate` adds in one call; a larger ``n`` is refused at once."""

_SERIAL_BITS = 32
"""Bits of the second serial in the sort key of a pair, so that a key fits in 64 bits."""

_SERIAL_MASK = (1 << _SERIAL_BITS) - 1

_SERIAL_LIMIT = 1 << (_SERIAL_BITS - 1)
"""Serials stay below this, so that a sort key fits in a signed 64-bit integer: when as many
objects were added over a scene's life, the objects are numbered again from 0
(:meth:`Scene._renumber`)."""

_NAMES_SHOWN = 20
"""How many valid names an error message lists before it says how many more there are."""


class _Object:
    """What the scene knows of one named object."""

    __slots__ = ("body", "extra", "name", "partners", "serial", "shape", "world")

    def __init__(self, name: str, shape: CollisionShape, serial: int, world: int) -> None:
        self.name = name
        self.shape = shape
        self.serial = serial
        self.world = world
        self.body: Body[_Object]
        """Its body in its world's broadphase (the global one for a global object)."""
        self.extra: list[tuple[int, Body[_Object]]] = []
        """A global object's bodies in the broadphase of each world: ``(world, body)``."""
        self.partners: dict[_Object, _Pair] = {}

    def __repr__(self) -> str:
        return f"<scene object {self.name!r}>"


class _Pair:
    """The colliding leaf pairs of two objects (or of one, with itself), as last found.

    ``blocking`` is True when one of them is not allowed; ``contacts`` caches the contacts of
    those, per ``max_contacts_per_pair``. ``world`` is the world of the pair: that of its
    object in a world, or -1 for two global objects.
    """

    __slots__ = ("a", "b", "blocking", "contacts", "leaves", "order", "world")

    def __init__(self, a: _Object, b: _Object) -> None:
        self.a = a
        self.b = b
        self.order = (a.serial << _SERIAL_BITS) | b.serial
        """Sorts as ``(a.serial, b.serial)``; an int, since sorting by tuples allocates an
        object per pair for the garbage collector to count (it then runs over every object
        of a large scene in the middle of a query)."""
        self.world = a.world if a.world >= 0 else b.world
        self.blocking = False
        self.leaves: list[tuple[Leaf[_Object], Leaf[_Object]]] = []
        self.contacts: dict[int, tuple[Contact, ...]] = {}

    def empty(self) -> bool:
        """Forget its leaves and contacts (its objects moved); True when it was blocking."""
        self.leaves = []
        if self.contacts:
            self.contacts = {}
        blocking = self.blocking
        self.blocking = False
        return blocking


def _serial(record: _Object) -> int:
    return record.serial


_pair_order = operator.attrgetter("order")


def _leaf_order(leaves: tuple[Leaf[_Object], Leaf[_Object]]) -> tuple[int, int]:
    return (leaves[0].position, leaves[1].position)


def _depth(contact: Contact) -> float:
    return contact.penetration_depth


def _within(shape: ShapeBase, holder: ShapeBase) -> bool:
    """True when ``shape`` is ``holder`` or below it."""
    node: ShapeBase | None = shape
    while node is not None:
        if node is holder:
            return True
        node = node._parent
    return False


def _check_name(value: Any, parameter: str) -> str:
    name = text(value, parameter)
    if not name:
        raise SceneError(f"{parameter} must be a non-empty string, got ''")
    return name


def _check_shape(value: Any, parameter: str) -> CollisionShape:
    if not isinstance(value, ShapeBase):
        raise ShapeTypeError(
            f"{parameter} must be a CollisionShape or CollisionShapeGroup, got "
            f"{type(value).__name__}: {describe(value)}"
        )
    if not value._collision:
        raise CollisionDisabledError(
            f"{parameter} {describe(value)} has collision=False and cannot take part in "
            "collision queries"
        )
    return cast("CollisionShape", value)


class _ObjectTable:
    """The objects of a scene at one moment: names, serials (ascending) and worlds, by index.

    A new table is made whenever an object joins or leaves, so a query's table stays right
    for its answers whatever happens to the scene afterwards.
    """

    __slots__ = ("names", "scene", "serials", "worlds")

    def __init__(self, scene: Scene) -> None:
        records = list(scene._objects.values())
        self.scene: Callable[[], Scene | None] = weakref.ref(scene)
        self.names = scene.names
        self.serials = np.fromiter((r.serial for r in records), np.int64, len(records))
        self.worlds = np.fromiter((r.world for r in records), np.int64, len(records))

    def __getstate__(self) -> tuple[Any, ...]:
        # A weak reference does not pickle: a loaded table belongs to no scene, so the
        # contacts holding it are mapped to objects by their leaves, as any Contacts are.
        return (self.names, self.serials, self.worlds)

    def __setstate__(self, state: tuple[Any, ...]) -> None:
        self.names, self.serials, self.worlds = state
        self.scene = _no_scene


def _no_scene() -> None:
    """The scene of an unpickled :class:`_ObjectTable`: none."""


class WorldContacts(Contacts):
    """The :class:`~spatialcontact.Contacts` of a scene query, with the world of each one.

    Notes
    -----
    ``world`` (n,) int is the world of each contact's pair of objects: the world of its object
    that is in one, or -1 for two global objects (every contact, in a scene with no worlds).
    A slice or a sum of two is a plain :class:`~spatialcontact.Contacts`.
    """

    __slots__ = ("_indices", "_orders", "_table", "_world")

    _indices: tuple[np.ndarray, np.ndarray] | None
    _orders: list[int]
    _table: _ObjectTable
    _world: np.ndarray | None

    @classmethod
    def _made(
        cls, contacts: list[Contact], orders: list[int], table: _ObjectTable
    ) -> WorldContacts:
        """``contacts`` of the pairs with sort keys ``orders`` (:attr:`_Pair.order`, one per
        contact), in the scene described by ``table``."""
        out = cast("WorldContacts", cls._wrap(contacts))
        out._orders, out._table = orders, table
        out._indices = out._world = None
        return out

    def _object_indices(self, scene: Any) -> tuple[tuple[str, ...], np.ndarray, np.ndarray] | None:
        """The scene's names at the query, and the index in them of the object of each
        contact's ``o1`` and ``o2`` (n,); None when ``scene`` did not make these contacts."""
        if self._table.scene() is not scene:
            return None
        return (self._table.names, *self._indices_now())

    def _indices_now(self) -> tuple[np.ndarray, np.ndarray]:
        """The object indices of each contact's ``o1`` and ``o2`` (see :meth:`_object_indices`)."""
        if self._indices is None:
            serials = self._table.serials
            orders = np.fromiter(self._orders, np.int64, len(self._orders))
            both = np.concatenate([orders >> _SERIAL_BITS, orders & _SERIAL_MASK])
            if len(serials) and serials[-1] != len(serials) - 1:  # not just 0, 1, 2, ...
                both = np.searchsorted(serials, both)
            self._indices = (both[: len(orders)], both[len(orders) :])
        return self._indices

    @property
    def world(self) -> np.ndarray:
        """ndarray, shape (n,), int: the world of each contact (-1: two global objects)."""
        if self._world is None:
            first, second = self._indices_now()
            worlds = self._table.worlds
            # Both objects of a pair are of one world, or one of them is global (-1).
            world = np.maximum(worlds[first], worlds[second])
            world.flags.writeable = False
            self._world = world
        return self._world


class Scene:
    """Named shapes and groups, asked which pairs touch.

    Objects are added under names (:meth:`add`) and then moved by setting their pose: the next
    query sees the change. A query costs in proportion to the objects that moved since the
    last one and to what is near them; answers for pairs that did not move are reused.

    Each added object is one object of the scene: a group's leaves are not checked against
    each other unless it is added with ``self_collision=True``. :meth:`allow` skips chosen
    pairs of objects, of shapes inside them or of single leaves (an allowed-collision set, as
    MoveIt's allowed collision matrix and the ``disable_collisions`` of a robot's SRDF).

    Notes
    -----
    Results are those of the shape queries on each pair of leaves (``a.iscollided(b)``,
    ``a.contacts(b)``, ``a.closest_point(b)``); pairs of shapes Coal cannot answer raise
    :class:`~spatialcontact.errors.UnsupportedPairError` as those queries do, except in
    :meth:`contacts`, where a pair Coal has no contacts for (two half-spaces, a floor and a
    wall, say) gives none. A scene holds
    its shapes and is held by them only weakly (a scene no longer used is freed); a shape may
    be in several scenes. Leaves with ``collision=False``, or inside a group with
    ``collision=False``, are ignored; an object with ``collision=False`` cannot be added.
    Every method holds the library's lock (``spatialcontact._coal.state.LOCK``), so threads
    may share a scene. A scene pickles with its shapes and allowed pairs, and the loaded one
    gives the same answers (see :meth:`__reduce__`), so it can be sent to worker processes.

    Worlds (:meth:`add_world`, :meth:`replicate`) are copies of an environment side by side, as
    Newton's: an object added with ``world=k`` is paired only with the objects of world ``k``
    and the global objects (``world=-1``, the default), which are paired with every world.
    A scene with no world added is one implicit world: every object is global and pairs with
    every other. Queries take ``world=`` to answer for one world (see :meth:`collisions`).

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
        self._by_shape: dict[ShapeBase, _Object] = {}
        self._changed: dict[ShapeBase, bool] = {}
        """Objects changed since the last query, True for a change of their leaves."""
        self._pairs: dict[tuple[_Object, _Object], _Pair] = {}
        self._blocking = 0
        self._allowed = AllowedCollisions()
        self._allowed_revision = 0
        self._broadphase: Broadphase[_Object] = Broadphase()
        """The global objects' broadphase (every object's, in a scene without worlds)."""
        self._worlds: list[Broadphase[_Object]] = []
        """The broadphase of each world: its objects and the global ones."""
        self._serial = 0
        self._auto = 0
        self._names: tuple[str, ...] | None = None
        self._index: dict[str, int] | None = None
        self._table: _ObjectTable | None = None
        self._revision = 0

    @property
    def revision(self) -> int:
        """int: rises whenever an object is added, removed, moved or changed (a resize, a
        group's elements), so that a cache of the scene's contents (a robot's view of its
        obstacles) is still good while it reads the same number."""
        return self._revision

    # ------------------------------------------------------------------ observing

    def _shape_changed(self, shape: ShapeBase, structural: bool) -> None:
        """An object (or something inside it) moved; ``structural``: its leaves changed."""
        self._revision += 1
        if structural:
            self._changed[shape] = True
        elif shape not in self._changed:
            self._changed[shape] = False

    def _shape_admit(self, shape: ShapeBase, leaves: tuple[ShapeBase, ...]) -> None:
        """Refuse ``leaves`` joining the object ``shape`` when one is already in the scene."""
        with _state.LOCK:
            record = self._by_shape.get(shape)
            if record is not None:
                self._check_claims(leaves, record)

    # ------------------------------------------------------------------ the objects

    def add(
        self,
        obj: CollisionShape,
        name: str | None = None,
        *,
        self_collision: bool = False,
        world: int = -1,
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
            object, whose parts may touch). :meth:`allow` skips chosen pairs of them, such as
            adjacent links.
        world : int
            The world the object belongs to (made by :meth:`add_world`), or -1: a global
            object, paired with the objects of every world.

        Returns
        -------
        str
            The object's name.

        Raises
        ------
        ShapeTypeError
            ``obj`` is not a shape, ``name`` not a string, ``self_collision`` not a bool or
            ``world`` not an integer.
        InvalidArgumentError
            ``world`` is neither -1 nor the index of a world of the scene.
        CollisionDisabledError
            ``obj`` has ``collision=False``.
        SceneError
            The name is empty or taken, ``obj`` is in a group, or ``obj`` or one of its leaves
            (or a leaf sharing its Coal geometry) is already in the scene.
        """
        if not isinstance(obj, ShapeBase):
            raise ShapeTypeError(
                "obj must be a CollisionShape or CollisionShapeGroup, got "
                f"{type(obj).__name__}: {describe(obj)}"
            )
        checked = flag(self_collision, "self_collision")
        with _state.LOCK:
            where = self._check_world(world, "world")
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
                    f"obj {describe(obj)} belongs to a group ({describe(obj._parent)}): add "
                    "the group, or remove the shape from it first"
                )
            leaves = cast("tuple[CollisionShape, ...]", collision_leaves(obj))
            self._check_claims(leaves, None)
            if name is None:
                name = self._new_name()
            self._enter(obj, name, checked, where)
            return name

    def _enter(self, obj: CollisionShape, name: str, self_collision: bool, world: int) -> None:
        """Add ``obj`` (checked) under ``name`` (free) to ``world`` (-1: global)."""
        if self._serial >= _SERIAL_LIMIT:
            self._renumber()
        record = _Object(name, obj, self._serial, world)
        leaves = cast("tuple[CollisionShape, ...]", collision_leaves(obj))
        record.body = self._broadphase_of(world).add(record, leaves, self_collision)
        if world < 0:
            record.extra = [
                (k, tree.add(record, leaves, self_collision)) for k, tree in enumerate(self._worlds)
            ]
        self._serial += 1
        self._objects[name] = record
        self._by_shape[obj] = record
        self._names = self._index = self._table = None
        self._changed[obj] = False
        obj._observe(self)
        self._revision += 1

    def _renumber(self) -> None:
        """Number the objects 0, 1, ... again, in the order they were added (serials, one per
        object ever added, reached :data:`_SERIAL_LIMIT`); every order is kept."""
        for serial, record in enumerate(self._objects.values()):
            record.serial = serial
        for pair in self._pairs.values():
            pair.order = (pair.a.serial << _SERIAL_BITS) | pair.b.serial
        self._serial = len(self._objects)
        self._table = None

    def _object_table(self) -> _ObjectTable:
        """The objects as they are now (remade after an object joins or leaves)."""
        if self._table is None:
            self._table = _ObjectTable(self)
        return self._table

    def _broadphase_of(self, world: int) -> Broadphase[_Object]:
        return self._worlds[world] if world >= 0 else self._broadphase

    def _check_world(self, value: Any, parameter: str) -> int:
        """``value`` as -1 (global) or the index of a world of the scene."""
        world = integer(value, parameter, "an integer (-1 for global, or a world index)")
        if not -1 <= world < len(self._worlds):
            held = (
                f"worlds 0 to {len(self._worlds) - 1}"
                if self._worlds
                else "no worlds (add_world() makes one)"
            )
            raise InvalidArgumentError(
                f"{parameter} must be -1 (global) or the index of a world of the scene, which "
                f"has {held}; got {describe(value)}"
            )
        return world

    # ------------------------------------------------------------------ worlds

    @property
    def worlds(self) -> int:
        """int: the number of worlds added (0: the scene is one implicit world)."""
        return len(self._worlds)

    def add_world(self) -> int:
        """Add an empty world; the global objects are paired with it from now on.

        Returns
        -------
        int
            Its index: 0 for the first world, then 1, 2, ...
        """
        with _state.LOCK:
            tree: Broadphase[_Object] = Broadphase()
            world = len(self._worlds)
            self._worlds.append(tree)
            for record in self._objects.values():
                if record.world < 0:
                    leaves = cast("tuple[CollisionShape, ...]", collision_leaves(record.shape))
                    record.extra.append(
                        (world, tree.add(record, leaves, record.body.self_collision))
                    )
                    self._changed.setdefault(record.shape, False)
            self._revision += 1
            return world

    def world_of(self, name: str) -> int:
        """The world of the object called ``name``: its index, or -1 for a global object.

        Raises
        ------
        NotInSceneError
            ``name`` is not in the scene.
        """
        with _state.LOCK:
            return self._record(name, "name").world

    def replicate(self, n: int, spacing: Any = 0.0) -> list[int]:
        """Add ``n`` worlds, each holding a copy of every object of world 0.

        The copies are made with ``copy.deepcopy`` (fresh shapes, groups copied with their
        parts); world ``k``'s copy of the object ``"name"`` is called ``"name/k"`` and is
        placed ``k * spacing`` away from the original (world 0 itself stays where it is).
        Allowed pairs among the objects of world 0, or of one of them with a global object,
        are copied to the new worlds. Global objects are shared, not copied.

        Parameters
        ----------
        n : int
            How many worlds to add, from 1 to :data:`MAX_REPLICATE` (1,000,000).
        spacing : float or array_like, shape (3,), world frame
            Offset in metres between worlds: a number is a step along x. Every copy must
            stay within ``±MAX_TRANSLATION`` (1e6 m) on each axis.

        Returns
        -------
        list of int
            The indices of the new worlds.

        Raises
        ------
        ShapeTypeError
            ``n`` is not an integer or ``spacing`` not numbers.
        InvalidArgumentError
            ``n`` is below 1 or above :data:`MAX_REPLICATE`, or ``spacing`` is not finite, is
            ragged or of another shape, or puts a copy beyond ``±MAX_TRANSLATION``.
        SceneError
            World 0 does not exist or is empty, or a copy's name is already used.

        Every check runs before the first world is added: an error changes nothing.
        """
        k = count(n, "n")
        if k > MAX_REPLICATE:
            raise InvalidArgumentError(
                f"n must be at most {MAX_REPLICATE} (MAX_REPLICATE worlds at once), got "
                f"{describe(n)}"
            )
        if numbers(spacing, "spacing", "a number or 3 real numbers").ndim == 0:
            step = np.array([finite_real(spacing, "spacing", error=InvalidArgumentError), 0, 0])
        else:
            step = vector3(spacing, "spacing", error=InvalidArgumentError)
        with _state.LOCK:
            sources = [record for record in self._objects.values() if record.world == 0]
            if not sources:
                raise SceneError(
                    "replicate copies the objects of world 0, but "
                    + ("world 0 is empty" if self._worlds else "the scene has no worlds")
                    + ": add_world() and add objects with world=0 first"
                )
            first = len(self._worlds)
            for world in range(first, first + k):
                for record in sources:
                    if f"{record.name}/{world}" in self._objects:
                        raise SceneError(
                            f"replicate names world {world}'s copy of {record.name!r} "
                            f"{record.name}/{world}, which is already used in this scene"
                        )
            for world in (first, first + k - 1):  # a copy's offset is linear in its world
                for record in sources:
                    moved = record.shape.T[:3, 3] + world * step
                    if not np.all(np.abs(moved) <= MAX_TRANSLATION):
                        raise InvalidArgumentError(
                            f"spacing {describe(spacing)} puts world {world}'s copy of "
                            f"{record.name!r} at {moved.tolist()}, beyond "
                            f"±{MAX_TRANSLATION:g} m"
                        )
            allowed = [
                (a, b)
                for a, b in self._allowed.pairs
                if self._copied_pair(self._owner(a), self._owner(b))
            ]
            added = []
            for world in range(first, first + k):
                added.append(self.add_world())
                memo: dict[int, Any] = {}
                copies = copy.deepcopy([record.shape for record in sources], memo)
                shift = np.eye(4)
                shift[:3, 3] = (world * step).tolist()
                for record, shape in zip(sources, copies, strict=True):
                    shape.T = shift @ record.shape.T
                    self._enter(shape, f"{record.name}/{world}", record.body.self_collision, world)
                for a, b in allowed:
                    self._allowed.allow(memo.get(id(a), a), memo.get(id(b), b))
            return added

    @staticmethod
    def _copied_pair(a: _Object | None, b: _Object | None) -> bool:
        """Whether :meth:`replicate` copies an allowed pair of parts of ``a`` and ``b``."""
        if a is None or b is None:
            return False
        return {a.world, b.world} <= {0, -1} and 0 in (a.world, b.world)

    def _new_name(self) -> str:
        while True:
            name = f"object_{self._auto}"
            self._auto += 1
            if name not in self._objects:
                return name

    def remove(self, name: str) -> CollisionShape:
        """Remove the object called ``name`` and forget the allowed pairs it is part of.

        Allowed pairs naming the object or a shape inside it are forgotten.

        Returns
        -------
        CollisionShape or CollisionShapeGroup
            The object removed.

        Raises
        ------
        NotInSceneError
            ``name`` is not in the scene (the message lists the names that are).
        """
        with _state.LOCK:
            record = self._record(name, "name")
            shape = record.shape
            shape._unobserve(self)
            self._changed.pop(shape, None)
            self._drop_pairs(record)
            self._broadphase_of(record.world).remove(record.body)
            for world, body in record.extra:
                self._worlds[world].remove(body)
            pending = self._allowed._revision != self._allowed_revision
            self._allowed.discard(lambda part: _within(part, shape))
            if not pending:  # only the removed object's pairs (now gone) were affected
                self._allowed_revision = self._allowed._revision
            del self._objects[name]
            del self._by_shape[shape]
            self._names = self._index = self._table = None
            self._revision += 1
            return shape

    def __getitem__(self, name: str) -> CollisionShape:
        """The shape or group called ``name`` (:class:`NotInSceneError` if there is none)."""
        with _state.LOCK:
            return self._record(name, "name").shape

    def __contains__(self, item: object) -> bool:
        """True for the name of an object of the scene, or for an object itself."""
        with _state.LOCK:
            if isinstance(item, str):
                return item in self._objects
            if isinstance(item, ShapeBase):
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
        with _state.LOCK:
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
        with _state.LOCK:
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
        if not isinstance(shape, ShapeBase):
            raise ShapeTypeError(
                f"shape must be a CollisionShape, got {type(shape).__name__}: {describe(shape)}"
            )
        with _state.LOCK:
            record = self._owner(shape)
            if record is None:
                raise NotInSceneError(
                    f"shape {describe(shape)} is not in this scene; {self._valid_names()}"
                )
            return record.name

    def __repr__(self) -> str:
        names = self.names
        listed = ", ".join(repr(n) for n in names[:_NAMES_SHOWN])
        more = f", ... ({len(names) - _NAMES_SHOWN} more)" if len(names) > _NAMES_SHOWN else ""
        return f"Scene({len(names)} objects: [{listed}{more}])"

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickle the scene as what rebuilds it: its worlds, its objects (with their names,
        poses, groups, ``self_collision`` and world), its allowed pairs and its next generated
        name.

        The Coal state (geometries, the broadphase trees) is not pickled: the shapes build
        their geometries when they are loaded, and the loaded scene adds them anew, so it
        answers every query as this one does. Shapes pickled along with the scene (in one
        ``pickle.dumps`` call) stay the scene's own: a leaf of an object is still that
        object's leaf. ``copy.copy`` gives a new scene holding the same shapes;
        ``copy.deepcopy`` one holding copies of them.
        """
        with _state.LOCK:
            objects = [
                (record.name, record.shape, record.body.self_collision, record.world)
                for record in self._objects.values()
            ]
            return (_rebuilt, (objects, self._allowed.pairs, self._auto, len(self._worlds)))

    # ------------------------------------------------------------ allowed collisions

    @property
    def allowed(self) -> AllowedCollisions:
        """AllowedCollisions: the allowed pairs of shapes (changes are seen by the next query).

        :meth:`allow` and :meth:`disallow` check their arguments and take names; this set
        takes any shapes.
        """
        return self._allowed

    def allow(self, a: str | CollisionShape, b: str | CollisionShape) -> None:
        """Skip every pair of leaves of ``a`` and ``b`` in queries.

        Parameters
        ----------
        a, b : str or CollisionShape
            Names of objects, or shapes of the scene: objects, groups inside them or leaves.
            Two leaves (or groups) of one object added with ``self_collision=True`` skip
            their pair only, as the adjacent links of a robot.

        Raises
        ------
        NotInSceneError
            A name or shape is not in the scene.
        SceneError
            ``a`` and ``b`` are the same (add an object with ``self_collision=False`` to
            skip its inner pairs).

        Examples
        --------
        Three links, each overlapping the next, checked against each other; the adjacent
        pairs are allowed, as a robot's SRDF lists them:

        >>> from spatialcontact import Capsule, CollisionShapeGroup, Scene
        >>> up = [[[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0.3 * i], [0, 0, 0, 1]] for i in range(3)]
        >>> arm = CollisionShapeGroup([Capsule(0.05, 0.3, pose=T) for T in up])
        >>> scene = Scene()
        >>> scene.add(arm, "arm", self_collision=True)
        'arm'
        >>> scene.collisions()
        [('arm', 'arm')]
        >>> scene.allow(arm[0], arm[1])
        >>> scene.allow(arm[1], arm[2])
        >>> scene.collisions()
        []
        """
        with _state.LOCK:
            self._allowed.allow(*self._allowed_shapes(a, b))

    def disallow(self, a: str | CollisionShape, b: str | CollisionShape) -> None:
        """Check the pair ``a``, ``b`` again: undo :meth:`allow` of that same pair.

        Nothing happens when the pair was not allowed. Pairs allowed through other entries
        (the groups holding ``a`` or ``b``, say) stay allowed.

        Raises
        ------
        NotInSceneError
            A name or shape is not in the scene.
        SceneError
            ``a`` and ``b`` are the same.
        """
        with _state.LOCK:
            self._allowed.disallow(*self._allowed_shapes(a, b))

    def is_allowed(self, a: str | CollisionShape, b: str | CollisionShape) -> bool:
        """True when every pair of leaves of ``a`` and ``b`` is skipped: an allowed pair
        names them, or shapes holding them.

        Raises
        ------
        NotInSceneError
            A name or shape is not in the scene.
        SceneError
            ``a`` and ``b`` are the same.
        """
        with _state.LOCK:
            return self._allowed.covers(*self._allowed_shapes(a, b))

    @property
    def allowed_pairs(self) -> list[tuple[str | CollisionShape, str | CollisionShape]]:
        """list of pairs: the allowed pairs, in the order their objects were added.

        An object of the scene is given by its name, a shape inside one by the shape; the
        parts of an object come in the order of its groups (depth first).
        """
        with _state.LOCK:
            keyed = []
            for a, b in self._allowed.pairs:
                ka, kb = self._place_of(a), self._place_of(b)
                if ka is not None and kb is not None:
                    keyed.append((ka, kb, a, b) if ka <= kb else (kb, ka, b, a))
            keyed.sort(key=lambda entry: (entry[0], entry[1]))
            return [(self._label(a), self._label(b)) for _, _, a, b in keyed]

    def _place_of(self, shape: ShapeBase) -> tuple[int, ...] | None:
        """Where ``shape`` is: its object's serial, then its index in each group down to it
        (None when it is in no object of the scene)."""
        path: list[int] = []
        node = shape
        while node not in self._by_shape:
            parent = node._parent
            if parent is None:
                return None
            path.append(next(i for i, e in enumerate(parent._elements_of()) if e is node))
            node = parent
        return (self._by_shape[node].serial, *reversed(path))

    def _label(self, shape: ShapeBase) -> str | CollisionShape:
        record = self._by_shape.get(shape)
        return record.name if record is not None else cast("CollisionShape", shape)

    def _allowed_shapes(self, a: Any, b: Any) -> tuple[ShapeBase, ShapeBase]:
        sa, sb = self._scene_shape(a, "a"), self._scene_shape(b, "b")
        if sa is sb:
            what = repr(a) if isinstance(a, str) else describe(sa)
            raise SceneError(
                f"a and b are both {what}: an object's own leaves are checked only when it "
                "is added with self_collision=True, and then pairs of its parts are allowed"
            )
        return sa, sb

    def _scene_shape(self, value: Any, parameter: str) -> ShapeBase:
        """The shape named by ``value`` (a name, or a shape in the scene)."""
        if isinstance(value, ShapeBase):
            if self._owner(value) is None:
                raise NotInSceneError(
                    f"{parameter} {describe(value)} is not in this scene; {self._valid_names()}"
                )
            return value
        if not isinstance(value, str):
            raise ShapeTypeError(
                f"{parameter} must be an object's name or a shape of the scene, got "
                f"{describe(value)}"
            )
        return self._record(value, parameter).shape

    def _reallow(self) -> None:
        """Apply a change of the allowed set to the pairs found."""
        self._allowed_revision = self._allowed._revision
        blocking = 0
        for pair in self._pairs.values():
            pair.contacts.clear()
            pair.blocking = any(not self._allowed.covers(a.shape, b.shape) for a, b in pair.leaves)
            blocking += pair.blocking
        self._blocking = blocking

    # ---------------------------------------------------------------------- queries

    def in_collision(self, world: int | None = None) -> bool:
        """True when any pair of objects that is not allowed touches or overlaps.

        Parameters
        ----------
        world : int, optional
            Only the pairs of this world (its objects with each other and with the global
            objects), or with -1 the pairs of two global objects. None: every pair.

        Raises
        ------
        ShapeTypeError, InvalidArgumentError
            ``world`` is not None, -1 or the index of a world.
        """
        with _state.LOCK:
            if world is not None:
                only = self._check_world(world, "world")
                self._refresh()
                return any(p.blocking and p.world == only for p in self._pairs.values())
            if self._changed or self._allowed._revision != self._allowed_revision:
                self._refresh()
            return self._blocking > 0

    def in_collision_per_world(self) -> np.ndarray:
        """:meth:`in_collision` of every world at once.

        Returns
        -------
        ndarray, shape (worlds,), bool
            Entry ``k``: world ``k`` has a pair in collision (its objects with each other or
            with the global objects). A scene with no worlds gives one entry, the implicit
            world's (every pair). Pairs of two global objects are left out when there are
            worlds (``in_collision(world=-1)`` asks for them).
        """
        with _state.LOCK:
            self._refresh()
            if not self._worlds:
                return np.array([self._blocking > 0])
            out = np.zeros(len(self._worlds), dtype=bool)
            for pair in self._pairs.values():
                if pair.blocking and pair.world >= 0:
                    out[pair.world] = True
            return out

    def collisions(self, world: int | None = None) -> list[tuple[str, str]]:
        """Every pair of objects in collision, each once, allowed pairs left out.

        Parameters
        ----------
        world : int, optional
            Only the pairs of this world (its objects with each other and with the global
            objects), or with -1 the pairs of two global objects. None: every pair.

        Returns
        -------
        list of (str, str)
            ``(a, b)`` with ``a`` added before ``b``, sorted by the order the objects were
            added. An object added with ``self_collision=True`` whose leaves touch each other
            appears as ``(a, a)``. A pair whose touching leaves are all allowed is left out.
            Two objects of different worlds are never a pair.

        Raises
        ------
        ShapeTypeError, InvalidArgumentError
            ``world`` is not None, -1 or the index of a world.
        """
        with _state.LOCK:
            pairs = self._blocking_pairs(world)
            return [(p.a.name, p.b.name) for p in pairs]

    def collisions_per_world(self) -> list[list[tuple[str, str]]]:
        """:meth:`collisions` of every world at once: entry ``k`` is ``collisions(world=k)``.

        A scene with no worlds gives one entry, the implicit world's (every pair).
        """
        with _state.LOCK:
            if not self._worlds:
                return [self.collisions()]
            out: list[list[tuple[str, str]]] = [[] for _ in self._worlds]
            for pair in self._blocking_pairs(None):
                if pair.world >= 0:
                    out[pair.world].append((pair.a.name, pair.b.name))
            return out

    def _blocking_pairs(self, world: int | None) -> list[_Pair]:
        """The pairs in collision (of ``world`` only, unless None), in :meth:`collisions`
        order."""
        only = None if world is None else self._check_world(world, "world")
        self._refresh()
        pairs = (
            p for p in self._pairs.values() if p.blocking and (only is None or p.world == only)
        )
        return sorted(pairs, key=_pair_order)

    def contacts(
        self, max_contacts_per_pair: int = 1, *, world: int | None = None
    ) -> WorldContacts:
        """The contacts of every pair of objects in collision, allowed pairs left out.

        Parameters
        ----------
        max_contacts_per_pair : int
            Contacts kept per pair of leaves (as ``max_contacts`` of the shape queries): the
            deepest ones.
        world : int, optional
            Only the pairs of this world (its objects with each other and with the global
            objects), or with -1 the pairs of two global objects. None: every pair.

        Returns
        -------
        WorldContacts
            Grouped by pair of objects in the order of :meth:`collisions`, deepest first
            within a pair. ``o1`` is a leaf of the object added earlier and ``o2`` a leaf of
            the one added later (for a self-collision, the leaf that comes first in the
            group). :meth:`name_of` maps a leaf to its object. Its column ``world`` (n,)
            gives each contact's world (-1 for two global objects). Leaf pairs Coal has no
            contacts for (two half-spaces, two octrees) give none: :meth:`collisions` lists
            them.

        Raises
        ------
        ShapeTypeError
            ``max_contacts_per_pair`` is not an integer, or ``world`` not an integer.
        InvalidArgumentError
            ``max_contacts_per_pair`` is below 1, or ``world`` not -1 or a world's index.
        """
        k = count(max_contacts_per_pair, "max_contacts_per_pair")
        with _state.LOCK:
            covers = self._allowed.covers
            out: list[Contact] = []
            orders: list[int] = []  # each contact's pair's sort key
            for pair in self._blocking_pairs(world):
                found = pair.contacts.get(k)
                if found is None:
                    collected: list[Contact] = []
                    for ea, eb in sorted(pair.leaves, key=_leaf_order):
                        if covers(ea.shape, eb.shape):
                            continue
                        try:
                            collected.extend(ea.shape.contacts(eb.shape, max_contacts=k))
                        except UnsupportedPairError:
                            continue  # two half-spaces or two octrees: Coal has no contacts
                    collected.sort(key=_depth)
                    found = pair.contacts[k] = tuple(collected)
                out.extend(found)
                if len(found) == 1:
                    orders.append(pair.order)
                else:
                    orders.extend(itertools.repeat(pair.order, len(found)))
            return WorldContacts._made(out, orders, self._object_table())

    def collide(self, shape: CollisionShape, world: int | None = None) -> list[str]:
        """The names of the objects that ``shape`` touches.

        Parameters
        ----------
        shape : CollisionShape or CollisionShapeGroup
            Any shape. When it is an object of the scene, or part of one, that object is left
            out, and so are the pairs of leaves it is allowed to touch; an object of a world
            touches only objects of that world and global ones.
        world : int, optional
            Only the objects of this world and the global ones (-1: the global ones only).
            None: every object, or for a shape of an object of a world, that world's and the
            global ones (another world's objects are never its partners).

        Returns
        -------
        list of str
            In the order the objects were added.

        Raises
        ------
        ShapeTypeError, InvalidArgumentError
            ``world`` is not None, -1 or the index of a world.
        """
        _check_shape(shape, "shape")
        with _state.LOCK:
            own = self._owner(shape)
            trees = self._trees(world, own)
            if not trees:
                return []
            self._refresh()
            record = self._by_shape.get(shape)
            if record is not None:
                keep = self._keeps(world)
                hit = [
                    o
                    for o, p in record.partners.items()
                    if o is not record and p.blocking and keep(o)
                ]
                return [o.name for o in sorted(hit, key=_serial)]
            covers = self._allowed.covers
            probes = cast("tuple[CollisionShape, ...]", collision_leaves(shape))
            found = {
                leaf.body.owner
                for tree in trees
                for probe, leaf in tree.touching(probes)
                if leaf.body.owner is not own and not covers(probe, leaf.shape)
            }
            return [r.name for r in sorted(found, key=_serial)]

    def _trees(self, world: int | None, own: _Object | None) -> list[Broadphase[_Object]]:
        """The broadphases holding the objects a query of ``world`` reads, for a shape that is
        (in) the object ``own``, or None: an object of a world reads only that world's."""
        if world is not None:
            world = self._check_world(world, "world")
        if own is not None and own.world >= 0:
            if world is None:
                world = own.world
            elif world not in (-1, own.world):
                return []
        if world is None:
            return [self._broadphase, *self._worlds]
        return [self._broadphase_of(world)]

    def _keeps(self, world: int | None) -> Any:
        """A test of the objects a query of ``world`` (checked) reads."""
        if world is None:
            return lambda record: True
        return lambda record: record.world < 0 or record.world == world

    def distance(
        self, shape: CollisionShape, world: int | None = None
    ) -> tuple[float, str | None, np.ndarray | None, np.ndarray | None]:
        """The object nearest to ``shape``, with the signed distance and closest points.

        Parameters
        ----------
        shape : CollisionShape or CollisionShapeGroup
            Any shape. When it is an object of the scene, or part of one, that object is left
            out, and so are the pairs of leaves it is allowed to touch.
        world : int, optional
            Only the objects of this world and the global ones (-1: the global ones only).
            None: every object, or for a shape of an object of a world, that world's and the
            global ones (another world's objects are never its partners).

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

        Raises
        ------
        ShapeTypeError, InvalidArgumentError
            ``world`` is not None, -1 or the index of a world.
        """
        _check_shape(shape, "shape")
        with _state.LOCK:
            own = self._owner(shape)
            trees = self._trees(world, own)
            self._refresh()
            probes = cast("tuple[CollisionShape, ...]", collision_leaves(shape))
            covers = self._allowed.covers
            best: tuple[float, Leaf[_Object], np.ndarray, np.ndarray] | None = None
            for tree in trees:
                skip = None if own is None else self._body_in(own, tree)
                for lower, i, leaf in tree.nearest_first(probes, skip):
                    if best is not None and lower > best[0]:
                        break
                    if covers(probes[i], leaf.shape):
                        continue
                    d, p1, p2 = probes[i].closest_point(leaf.shape, inf_dist=math.inf)
                    assert d is not None and p1 is not None and p2 is not None
                    if (
                        best is None
                        or d < best[0]
                        or (d == best[0] and leaf.body.owner.serial < best[1].body.owner.serial)
                    ):
                        best = (d, leaf, p1, p2)
            if best is None:
                return math.inf, None, None, None
            return float(best[0]), best[1].body.owner.name, best[2], best[3]

    # ----------------------------------------------------------------- bookkeeping

    def _record(self, name: Any, parameter: str) -> _Object:
        if not isinstance(name, str):
            raise ShapeTypeError(f"{parameter} must be an object's name, got {describe(name)}")
        record = self._objects.get(name)
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

    def _owner(self, shape: ShapeBase) -> _Object | None:
        """The record of the object ``shape`` is, or is inside; None if there is none."""
        node: ShapeBase | None = shape
        while node is not None:
            record = self._by_shape.get(node)
            if record is not None:
                return record
            node = node._parent
        return None

    def _check_claims(self, leaves: Sequence[ShapeBase], record: _Object | None) -> None:
        """Refuse ``leaves`` joining ``record`` (None: an object being added) when one of them
        is a leaf of another object of the scene or shares a Coal geometry with one.

        Nothing is changed.
        """
        label = "the object being added" if record is None else repr(record.name)
        trees = [self._broadphase, *self._worlds]
        geometries: dict[int, ShapeBase] = {}
        for leaf in leaves:
            held = next((h for h in (t.leaf_of(leaf) for t in trees) if h is not None), None)
            owner = None if held is None else self._holder(held)
            if owner is not None and owner is not record:
                raise SceneError(
                    f"{describe(leaf)} is part of {owner.name!r} and of {label}: a shape can be "
                    "in one object of a scene only"
                )
            geometry = cast("CollisionShape", leaf)._geometry
            ident = getattr(geometry, "id", None)
            if ident is None:  # copied for Coal's trees (see broadphase): never shared
                continue
            if geometries.setdefault(int(ident()), leaf) is not leaf:
                raise SceneError(
                    f"{describe(leaf)} in {label} shares its Coal geometry with another leaf "
                    f"of {label}"
                )
            same = next(
                (h for h in (t.leaf_with_geometry(geometry) for t in trees) if h is not None),
                None,
            )
            other = None if same is None or same.shape is leaf else self._holder(same)
            if other is not None:
                raise SceneError(
                    f"{describe(leaf)} in {label} shares its Coal geometry with a leaf of "
                    f"{other.name!r}"
                )

    def _body_in(self, record: _Object, tree: Broadphase[_Object]) -> Body[_Object] | None:
        """The body of ``record`` in the broadphase ``tree`` (None if it has none there)."""
        if self._broadphase_of(record.world) is tree:
            return record.body
        return next((body for world, body in record.extra if self._worlds[world] is tree), None)

    def _holder(self, leaf: Leaf[_Object]) -> _Object | None:
        """The object ``leaf`` belongs to now, or None when it has left it since the last
        query (the broadphase learns of changes at the next query)."""
        record = leaf.body.owner
        if not self._changed.get(record.shape, False):
            return record
        current = collision_leaves(record.shape)
        return record if any(shape is leaf.shape for shape in current) else None

    def _drop_pairs(self, record: _Object) -> None:
        """Forget every collision found for ``record`` (it is going)."""
        for pair in list(record.partners.values()):
            self._forget(pair)

    def _forget(self, pair: _Pair) -> None:
        a, b = pair.a, pair.b
        del a.partners[b]
        if b is not a:
            del b.partners[a]
        del self._pairs[(a, b)]
        self._blocking -= pair.blocking

    def _drop_all_pairs(self) -> None:
        for record in self._objects.values():
            record.partners.clear()
        self._pairs.clear()
        self._blocking = 0

    def _hit(self, la: Leaf[_Object], lb: Leaf[_Object]) -> None:
        """Record that leaves ``la`` and ``lb`` touch."""
        ra, rb = la.body.owner, lb.body.owner
        if ra is rb:
            if la.position > lb.position:
                la, lb = lb, la
        elif ra.serial > rb.serial:
            ra, rb, la, lb = rb, ra, lb, la
        pair = ra.partners.get(rb)
        if pair is None:
            pair = _Pair(ra, rb)
            ra.partners[rb] = pair
            rb.partners[ra] = pair
            self._pairs[(ra, rb)] = pair
        pair.leaves.append((la, lb))
        if not pair.blocking and not self._allowed.covers(la.shape, lb.shape):
            pair.blocking = True
            self._blocking += 1

    def _refresh(self) -> None:
        """Bring the pairs found up to date with the shapes and the allowed set."""
        if self._allowed._revision != self._allowed_revision:
            self._reallow()
        changed = self._changed
        if not changed:
            return
        if len(changed) == 1 and not self._worlds:  # a planner's call: one object moved
            shape, structural = changed.popitem()
            record = self._by_shape[shape]
            if structural:
                leaves = cast("tuple[CollisionShape, ...]", collision_leaves(shape))
                self._broadphase.reshape(record.body, leaves)
            try:
                pairs, whole = self._broadphase.find((record.body,))
            except BaseException:
                changed.setdefault(shape, False)  # asked again at the next query
                raise
            if whole:
                self._drop_all_pairs()
            self._replace_pairs(record, pairs)
            return
        self._changed = {}
        records = [self._by_shape[shape] for shape in changed]
        moved: dict[int, list[Body[_Object]]] = {}  # by world, -1 for the global broadphase
        for record in records:
            if changed[record.shape]:
                leaves = cast("tuple[CollisionShape, ...]", collision_leaves(record.shape))
                self._broadphase_of(record.world).reshape(record.body, leaves)
                for world, body in record.extra:
                    self._worlds[world].reshape(body, leaves)
            moved.setdefault(record.world, []).append(record.body)
            for world, body in record.extra:
                moved.setdefault(world, []).append(body)
        found: list[tuple[int, list[tuple[Leaf[_Object], Leaf[_Object]]]]] = []
        complete: set[int] = set()
        try:
            for world, bodies in moved.items():
                pairs, whole = self._broadphase_of(world).find(bodies)
                found.append((world, pairs))
                if whole:
                    complete.add(world)
        except BaseException:
            # A pair Coal cannot answer: ask again (and raise again) at the next query rather
            # than answer from half-found pairs.
            for record in records:
                self._changed.setdefault(record.shape, False)
            raise
        reset: dict[_Pair, None] = {}
        if complete and not self._worlds:
            self._drop_all_pairs()
        else:
            if complete:
                for pair in [p for p in self._pairs.values() if p.world in complete]:
                    self._forget(pair)
            reset = self._reset_pairs(records)
        hit = self._hit
        for world, pairs in found:
            if world < 0:
                for la, lb in pairs:
                    hit(la, lb)
            else:  # two global leaves: their pair is the global broadphase's
                for la, lb in pairs:
                    if la.body.owner.world >= 0 or lb.body.owner.world >= 0:
                        hit(la, lb)
        for pair in reset:
            if not pair.leaves:
                self._forget(pair)

    def _replace_pairs(
        self, record: _Object, found: list[tuple[Leaf[_Object], Leaf[_Object]]]
    ) -> None:
        """Make ``found`` the touching leaves of the pairs of ``record``, the one object that
        moved (a planner's call): its pairs emptied, those of ``found`` recorded
        (:meth:`_hit`), and its pairs found empty twice in a row forgotten.

        A pair left empty by this query is kept (empty, not blocking) until the next one, so
        that a pair that touches every other query is not made and forgotten each time.
        """
        kept: list[_Pair] = []
        for pair in record.partners.values():
            if pair.leaves:
                self._blocking -= pair.empty()
            else:
                kept.append(pair)
        hit = self._hit
        for la, lb in found:
            hit(la, lb)
        for pair in kept:
            if not pair.leaves:
                self._forget(pair)

    def _reset_pairs(self, records: Sequence[_Object]) -> dict[_Pair, None]:
        """Empty the pairs of ``records`` (they moved): found again, or forgotten, next.

        Returns every pair of theirs, once (empty ones kept from an earlier query included).
        """
        reset: dict[_Pair, None] = {}
        for record in records:
            for pair in record.partners.values():
                if pair.leaves:  # not yet reset (a pair of two moved objects)
                    self._blocking -= pair.empty()
                reset[pair] = None
        return reset


def _rebuilt(
    objects: list[tuple[str, CollisionShape, bool, int]],
    allowed: list[tuple[ShapeBase, ShapeBase]],
    auto: int,
    worlds: int,
) -> Scene:
    """The scene that :meth:`Scene.__reduce__` describes: its worlds, the objects added in
    their order, then the allowed pairs (any shapes, as ``scene.allowed`` takes them)."""
    scene = Scene()
    for _ in range(worlds):
        scene.add_world()
    for name, shape, self_collision, world in objects:
        scene.add(shape, name, self_collision=self_collision, world=world)
    for a, b in allowed:
        scene._allowed.allow(a, b)
    scene._auto = auto
    return scene
