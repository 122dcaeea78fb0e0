"""Shared plumbing of the sensors: one step's data, leaf-to-object maps and shape checks."""

from __future__ import annotations

import operator
from functools import cached_property
from typing import Any

import numpy as np

from .._base import collision_leaves
from .._validate import describe
from ..contact import Contact, Contacts
from ._errors import SensorTypeError, SensorValueError
from .forces import ForceInput, check_forces, tangential

__all__ = ["ObjectMap", "StepData", "check_contact", "check_scene", "holds", "in_scene"]


def holds(shape: Any, leaf: Any) -> bool:
    """True when ``shape`` is ``leaf`` or a group that holds it at any depth."""
    node = leaf
    while node is not None:
        if node is shape:
            return True
        node = node._parent
    return False


_get_o1 = operator.attrgetter("o1")
_get_o2 = operator.attrgetter("o2")
_get_uid = operator.attrgetter("_uid")


_SCENE_MEMBERS = ("names", "index_of", "name_of", "__getitem__")


def check_scene(scene: Any, name: str = "scene") -> Any:
    """``scene`` if it has the members of :class:`~spatialcontact.Scene` the sensors read."""
    missing = [m for m in _SCENE_MEMBERS if not hasattr(scene, m)]
    if missing:
        raise SensorTypeError(
            f"{name} must be a spatialcontact.Scene (with names, index_of, name_of and "
            f"[name]), got {describe(scene)} without {', '.join(missing)}"
        )
    return scene


def in_scene(scene: Any, shape: Any) -> bool:
    """True when ``shape`` is an object of ``scene`` or inside one, or when one of its
    collision leaves is (a group made around a scene object after it was added, say).

    A copy of a scene object (``copy.copy``, unpickling) is a new shape, in no scene.
    """
    for item in (shape, *collision_leaves(shape)):
        try:
            scene.name_of(item)
        except (KeyError, ValueError, TypeError, LookupError):
            continue
        return True
    return False


class _LeafIndex(dict[Any, int]):
    """Leaf shape -> object index in a scene, filled on first look-up of each leaf."""

    __slots__ = ("scene",)

    def __init__(self, scene: Any) -> None:
        super().__init__()
        self.scene = scene

    def __missing__(self, leaf: Any) -> int:
        try:
            index = int(self.scene.index_of(self.scene.name_of(leaf)))
        except (KeyError, ValueError, TypeError, LookupError) as exc:
            raise SensorValueError(
                f"contact shape {describe(leaf)} is not in the scene the sensor reads ({exc})"
            ) from None
        self[leaf] = index
        return index


class ObjectMap:
    """Maps the leaves of contacts to object indices of a scene, one look-up per distinct leaf.

    The cache is emptied whenever ``scene.names`` changes (an object added or removed). A leaf
    moved from one object's group into another's while the names stay the same keeps its old
    object until then.
    """

    __slots__ = ("_cache", "_names", "_shapes", "scene")

    def __init__(self, scene: Any) -> None:
        self.scene = check_scene(scene)
        self._names: tuple[str, ...] = tuple(scene.names)
        self._cache = _LeafIndex(scene)
        self._shapes: list[Any] | None = None

    @property
    def names(self) -> tuple[str, ...]:
        """tuple of str: the scene's object names, checked against the scene on every call."""
        names = self.scene.names
        if names is not self._names and tuple(names) != self._names:
            self._names = tuple(names)
            self._cache = _LeafIndex(self.scene)
            self._shapes = None
        return self._names

    @property
    def shapes(self) -> list[Any]:
        """list: the scene's objects, by index (looked up again when the names change)."""
        names = self.names
        if self._shapes is None:
            scene = self.scene
            self._shapes = [scene[name] for name in names]
        return self._shapes

    def indices(self, leaves: tuple[Any, ...]) -> np.ndarray:
        """ndarray, shape (n,), int: the object index of each leaf."""
        self.names  # noqa: B018  (refreshes the cache when the scene changed)
        return np.fromiter(map(self._cache.__getitem__, leaves), np.intp, len(leaves))


class StepData:
    """One step's contacts and forces with the columns every sensor reads, each built once.

    Parameters
    ----------
    contacts : Contacts
    forces : ndarray, shape (n, 3), world frame, or (n,) with ``magnitudes``
        Force on ``o1`` from ``o2`` of each contact, or its normal magnitude (the force is
        then ``-m * normal``).
    valid : bool
        Whether ``forces`` is a measurement (False: zeros because no forces were given).
    magnitudes : bool
        Whether ``forces`` holds normal magnitudes.

    Notes
    -----
    A sensor that needs a few of the step's contacts reads only those (:meth:`sides`), and
    the object of each contact comes from the scene's query when the
    contacts are its own (:meth:`objects`), so feeding a sensor costs in proportion to the
    contacts it senses, not to all of the step's.
    """

    def __init__(
        self, contacts: Contacts, forces: np.ndarray, valid: bool, magnitudes: bool = False
    ) -> None:
        self.contacts = contacts
        self.valid = valid
        self._given = forces
        self._magnitudes = magnitudes
        self._per_scene: dict[tuple[str, int], Any] = {}

    @classmethod
    def build(cls, contacts: Any, forces: ForceInput = None) -> StepData:
        """Check ``contacts`` and ``forces`` (see :func:`resolve_forces`)."""
        array, magnitudes, valid = check_forces(contacts, forces)
        return cls(contacts, array, valid, magnitudes)

    @cached_property
    def forces(self) -> np.ndarray:
        """ndarray, shape (n, 3), world frame: the force on ``o1`` from ``o2`` of each contact."""
        if self._magnitudes:
            return -self._given[:, None] * self.contacts.normal
        return self._given

    def __len__(self) -> int:
        return len(self.contacts)

    @cached_property
    def items(self) -> tuple[Contact, ...]:
        """tuple of Contact: the records."""
        return tuple(self.contacts)

    @cached_property
    def o1(self) -> tuple[Any, ...]:
        """tuple: first leaf of each contact."""
        return tuple(map(_get_o1, self.items))

    @cached_property
    def o2(self) -> tuple[Any, ...]:
        """tuple: second leaf of each contact."""
        return tuple(map(_get_o2, self.items))

    @cached_property
    def o1_array(self) -> np.ndarray:
        """ndarray, shape (n,), object: first leaf of each contact."""
        return _object_array(self.o1)

    @cached_property
    def o2_array(self) -> np.ndarray:
        """ndarray, shape (n,), object: second leaf of each contact."""
        return _object_array(self.o2)

    @cached_property
    def u1(self) -> np.ndarray:
        """ndarray, shape (n,), int: creation serial of each ``o1``."""
        return np.fromiter(map(_get_uid, self.o1), np.int64, len(self.o1))

    @cached_property
    def u2(self) -> np.ndarray:
        """ndarray, shape (n,), int: creation serial of each ``o2``."""
        return np.fromiter(map(_get_uid, self.o2), np.int64, len(self.o2))

    @cached_property
    def leaf_codes(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The distinct leaf serials of the step (sorted) and each contact's position in it.

        Returns
        -------
        serials : ndarray, shape (m,), int
        code1, code2 : ndarray, shape (n,), int
            ``serials[code1[i]] == u1[i]`` and likewise for ``o2``.
        """
        n = len(self.items)
        serials, inverse = np.unique(np.concatenate([self.u1, self.u2]), return_inverse=True)
        inverse = inverse.reshape(-1)
        return serials, inverse[:n], inverse[n:]

    def touching(self, uids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Whether each contact's ``o1``, and its ``o2``, is one of the leaves ``uids``.

        Parameters
        ----------
        uids : ndarray, shape (k,), int, sorted
            Leaf serials (``_uid``).
        """
        serials, code1, code2 = self.leaf_codes
        if len(serials) == 0:
            return np.zeros(0, dtype=bool), np.zeros(0, dtype=bool)
        at = np.minimum(np.searchsorted(serials, uids), len(serials) - 1)
        table = np.zeros(len(serials), dtype=bool)
        table[at[serials[at] == uids]] = True
        return table[code1], table[code2]

    def objects(self, objects: ObjectMap) -> tuple[np.ndarray, np.ndarray]:
        """Object indices of ``o1`` and ``o2`` of each contact in the scene of ``objects``.

        Contacts of that scene's query whose objects are all still there come with them;
        others are looked up leaf by leaf.
        """
        key = ("objects", id(objects))
        value = self._per_scene.get(key)
        if value is None:
            value = _from_query(self.contacts, objects)
            if value is None:
                value = (objects.indices(self.o1), objects.indices(self.o2))
            self._per_scene[key] = value
        return value

    def sides(
        self, objects: ObjectMap, rows: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The contacts at ``rows`` seen from both sides, for accumulating per object.

        A sensor that needs a few of many contacts reads only those; once the sensors of a
        step have asked for half as many rows as there are contacts, every contact is worked
        out once and each sensor takes its rows from that.

        Parameters
        ----------
        objects : ObjectMap
        rows : ndarray, shape (k,), int
            The contacts wanted: distinct, in increasing order.

        Returns
        -------
        obj, other : ndarray, shape (2k,), int
            Object index of the side and of the other side: ``o1``'s objects then ``o2``'s.
        packed : ndarray, shape (2k, 10)
            Per row: the force on ``obj`` from ``other`` (3), its tangential part (3), the
            contact position times the force magnitude (3) and the magnitude (1).
        """
        n = len(self.contacts)
        key = ("sides", id(objects))
        every = self._per_scene.get(key)
        if every is None:
            asked = self._per_scene.get(("rows asked", id(objects)), 0) + len(rows)
            if 2 * asked <= n:
                self._per_scene[("rows asked", id(objects))] = asked
                return self._sides(objects, rows)
            every = self._per_scene[key] = self._sides(objects, np.arange(n))
        if len(rows) == n:  # rows are distinct and sorted: all of them
            return every
        both = np.concatenate([rows, rows + n])
        return every[0][both], every[1][both], every[2][both]

    def _sides(
        self, objects: ObjectMap, rows: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`sides` worked out for ``rows``."""
        i1, i2 = self.objects(objects)
        i1, i2 = i1[rows], i2[rows]
        k = len(rows)
        normal, pos = self.contacts._normals_and_positions(rows)
        if self._magnitudes:
            forces = -self._given[rows, None] * normal
        else:
            forces = self._given[rows]
        with np.errstate(over="ignore", invalid="ignore"):  # the sensor checks its sums
            magnitude = np.sqrt(np.einsum("ij,ij->i", forces, forces))
            friction = tangential(forces, normal)
            weighted = pos * magnitude[:, None]
        packed = np.empty((2 * k, 10))
        packed[:k, 0:3] = forces
        packed[k:, 0:3] = -forces
        packed[:k, 3:6] = friction
        packed[k:, 3:6] = -friction
        packed[:k, 6:9] = weighted
        packed[k:, 6:9] = weighted
        packed[:k, 9] = magnitude
        packed[k:, 9] = magnitude
        return np.concatenate([i1, i2]), np.concatenate([i2, i1]), packed

    def poses(self, objects: ObjectMap, indices: Any) -> np.ndarray:
        """ndarray, shape (k, 4, 4), world frame: poses of the objects at ``indices`` now."""
        shapes = objects.shapes
        if not len(indices):
            return np.zeros((0, 4, 4))
        return np.concatenate([shapes[i].world_T for i in indices]).reshape(-1, 4, 4)


def _from_query(contacts: Contacts, objects: ObjectMap) -> tuple[np.ndarray, np.ndarray] | None:
    """The object indices :meth:`StepData.objects` wants, as the scene's query gave them, or
    None when ``contacts`` are not a query of that scene or its objects changed since."""
    found = getattr(contacts, "_object_indices", None)
    if found is None:
        return None
    answer = found(objects.scene)
    if answer is None:
        return None
    names, first, second = answer
    current = objects.names
    if names is not current and names != current:
        return None
    return first, second


def _object_array(items: tuple[Any, ...]) -> np.ndarray:
    """A 1-D object array holding ``items`` as they are (no nesting into groups)."""
    return np.fromiter(items, dtype=object, count=len(items))


def check_contact(contact: Any, name: str = "contact") -> Contact:
    """``contact`` if it is a :class:`~spatialcontact.Contact`."""
    if not isinstance(contact, Contact):
        raise SensorTypeError(f"{name} must be a spatialcontact.Contact, got {describe(contact)}")
    return contact
