"""Scene: many named objects, asked which pairs touch.

A :class:`Scene` holds shapes and groups under names. Moving an object is setting its ``T``
(or its group's, or a shape's inside it); the next query sees it without being told. The scene
watches each object (it is a weakly held observer of the shape): a change only notes the
object, and the next query asks the :class:`~spatialcontact.scene.broadphase.Broadphase` for
the pairs of the objects that changed. Answers for pairs of objects that did not change are
kept from the last query, as the colliding pairs of leaves of each pair of objects.

Allowed pairs (:class:`~spatialcontact.allowed.AllowedCollisions`) are applied to those pairs
of leaves when a query is answered, so allowing or disallowing a pair costs no Coal call.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from .._base import ShapeBase, collision_leaves
from .._coal import state as _state
from .._validate import count, describe, flag, text
from ..allowed import AllowedCollisions
from ..contact import Contact, Contacts
from ..errors import (
    CollisionDisabledError,
    NotInSceneError,
    SceneError,
    ShapeTypeError,
)
from .broadphase import Body, Broadphase, Leaf

if TYPE_CHECKING:
    from ..shapes import CollisionShape

__all__ = ["Scene"]

_NAMES_SHOWN = 20
"""How many valid names an error message lists before it says how many more there are."""


class _Object:
    """What the scene knows of one named object."""

    __slots__ = ("body", "name", "partners", "serial", "shape")

    def __init__(self, name: str, shape: CollisionShape, serial: int) -> None:
        self.name = name
        self.shape = shape
        self.serial = serial
        self.body: Body[_Object]
        self.partners: dict[_Object, _Pair] = {}

    def __repr__(self) -> str:
        return f"<scene object {self.name!r}>"


class _Pair:
    """The colliding leaf pairs of two objects (or of one, with itself), as last found.

    ``blocking`` is True when one of them is not allowed; ``contacts`` caches the contacts of
    those, per ``max_contacts_per_pair``.
    """

    __slots__ = ("a", "b", "blocking", "contacts", "leaves")

    def __init__(self, a: _Object, b: _Object) -> None:
        self.a = a
        self.b = b
        self.blocking = False
        self.leaves: list[tuple[Leaf[_Object], Leaf[_Object]]] = []
        self.contacts: dict[int, tuple[Contact, ...]] = {}


def _serial(record: _Object) -> int:
    return record.serial


def _pair_order(pair: _Pair) -> tuple[int, int]:
    return (pair.a.serial, pair.b.serial)


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
    :class:`~spatialcontact.errors.UnsupportedPairError` as those queries do. A scene holds
    its shapes and is held by them only weakly (a scene no longer used is freed); a shape may
    be in several scenes. Leaves with ``collision=False``, or inside a group with
    ``collision=False``, are ignored; an object with ``collision=False`` cannot be added.
    Every method holds the library's lock (``spatialcontact._coal.state.LOCK``), so threads
    may share a scene.

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
        self._serial = 0
        self._auto = 0
        self._names: tuple[str, ...] | None = None
        self._index: dict[str, int] | None = None

    # ------------------------------------------------------------------ observing

    def _shape_changed(self, shape: ShapeBase, structural: bool) -> None:
        """An object (or something inside it) moved; ``structural``: its leaves changed."""
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
            object, whose parts may touch). :meth:`allow` skips chosen pairs of them, such as
            adjacent links.

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
            (or a leaf sharing its Coal geometry) is already in the scene.
        """
        if not isinstance(obj, ShapeBase):
            raise ShapeTypeError(
                "obj must be a CollisionShape or CollisionShapeGroup, got "
                f"{type(obj).__name__}: {describe(obj)}"
            )
        checked = flag(self_collision, "self_collision")
        with _state.LOCK:
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
            record = _Object(name, obj, self._serial)
            record.body = self._broadphase.add(record, leaves, checked)
            self._serial += 1
            self._objects[name] = record
            self._by_shape[obj] = record
            self._names = self._index = None
            self._changed[obj] = False
            obj._observe(self)
            return name

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
            self._broadphase.remove(record.body)
            pending = self._allowed._revision != self._allowed_revision
            self._allowed.discard(lambda part: _within(part, shape))
            if not pending:  # only the removed object's pairs (now gone) were affected
                self._allowed_revision = self._allowed._revision
            del self._objects[name]
            del self._by_shape[shape]
            self._names = self._index = None
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
        raise TypeError("a Scene cannot be pickled or copied: pickle its shapes and add them anew")

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

    def in_collision(self) -> bool:
        """True when any pair of objects that is not allowed touches or overlaps."""
        with _state.LOCK:
            if self._changed or self._allowed._revision != self._allowed_revision:
                self._refresh()
            return self._blocking > 0

    def collisions(self) -> list[tuple[str, str]]:
        """Every pair of objects in collision, each once, allowed pairs left out.

        Returns
        -------
        list of (str, str)
            ``(a, b)`` with ``a`` added before ``b``, sorted by the order the objects were
            added. An object added with ``self_collision=True`` whose leaves touch each other
            appears as ``(a, a)``. A pair whose touching leaves are all allowed is left out.
        """
        with _state.LOCK:
            self._refresh()
            pairs = sorted((p for p in self._pairs.values() if p.blocking), key=_pair_order)
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

        Raises
        ------
        ShapeTypeError
            ``max_contacts_per_pair`` is not an integer.
        InvalidArgumentError
            ``max_contacts_per_pair`` is below 1.
        """
        k = count(max_contacts_per_pair, "max_contacts_per_pair")
        with _state.LOCK:
            self._refresh()
            covers = self._allowed.covers
            out: list[Contact] = []
            for pair in sorted((p for p in self._pairs.values() if p.blocking), key=_pair_order):
                found = pair.contacts.get(k)
                if found is None:
                    collected: list[Contact] = []
                    for ea, eb in sorted(pair.leaves, key=_leaf_order):
                        if not covers(ea.shape, eb.shape):
                            collected.extend(ea.shape.contacts(eb.shape, max_contacts=k))
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
            out, and so are the pairs of leaves it is allowed to touch.

        Returns
        -------
        list of str
            In the order the objects were added.
        """
        _check_shape(shape, "shape")
        with _state.LOCK:
            self._refresh()
            record = self._by_shape.get(shape)
            if record is not None:
                hit = [o for o, p in record.partners.items() if o is not record and p.blocking]
                return [o.name for o in sorted(hit, key=_serial)]
            own = self._owner(shape)
            covers = self._allowed.covers
            found = {
                leaf.body.owner
                for probe, leaf in self._broadphase.touching(
                    cast("tuple[CollisionShape, ...]", collision_leaves(shape))
                )
                if leaf.body.owner is not own and not covers(probe, leaf.shape)
            }
            return [r.name for r in sorted(found, key=_serial)]

    def distance(
        self, shape: CollisionShape
    ) -> tuple[float, str | None, np.ndarray | None, np.ndarray | None]:
        """The object nearest to ``shape``, with the signed distance and closest points.

        Parameters
        ----------
        shape : CollisionShape or CollisionShapeGroup
            Any shape. When it is an object of the scene, or part of one, that object is left
            out, and so are the pairs of leaves it is allowed to touch.

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
        with _state.LOCK:
            self._refresh()
            probes = cast("tuple[CollisionShape, ...]", collision_leaves(shape))
            own = self._owner(shape)
            covers = self._allowed.covers
            best: tuple[float, Leaf[_Object], np.ndarray, np.ndarray] | None = None
            for lower, i, leaf in self._broadphase.nearest_first(
                probes, None if own is None else own.body
            ):
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
        broadphase = self._broadphase
        geometries: dict[int, ShapeBase] = {}
        for leaf in leaves:
            held = broadphase.leaf_of(leaf)
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
            same = broadphase.leaf_with_geometry(geometry)
            other = None if same is None or same.shape is leaf else self._holder(same)
            if other is not None:
                raise SceneError(
                    f"{describe(leaf)} in {label} shares its Coal geometry with a leaf of "
                    f"{other.name!r}"
                )

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
        self._changed = {}
        records = [self._by_shape[shape] for shape in changed]
        broadphase = self._broadphase
        for record in records:
            if changed[record.shape]:
                broadphase.reshape(
                    record.body,
                    cast("tuple[CollisionShape, ...]", collision_leaves(record.shape)),
                )
        try:
            pairs, complete = broadphase.find([record.body for record in records])
        except BaseException:
            # A pair Coal cannot answer: ask again (and raise again) at the next query rather
            # than answer from half-found pairs.
            for record in records:
                self._changed.setdefault(record.shape, False)
            raise
        if complete:
            self._drop_all_pairs()
            reset = []
        else:
            reset = self._reset_pairs(records)
        hit = self._hit
        for la, lb in pairs:
            hit(la, lb)
        for pair in reset:
            if not pair.leaves:
                self._forget(pair)

    def _reset_pairs(self, records: list[_Object]) -> list[_Pair]:
        """Empty the pairs of ``records`` (they moved): found again, or forgotten, next."""
        reset = []
        for record in records:
            for pair in record.partners.values():
                if pair.leaves:  # not yet reset (a pair of two moved objects)
                    pair.leaves = []
                    pair.contacts = {}
                    if pair.blocking:
                        pair.blocking = False
                        self._blocking -= 1
                    reset.append(pair)
        return reset
