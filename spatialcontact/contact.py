"""Contact records: :class:`Contact` (hpp-fcl's fields), :class:`Contacts`, :class:`ContactReport`.

Conventions (the same as Coal and hpp-fcl):

- ``normal`` is a unit vector in the world frame pointing from ``o1`` to ``o2``;
- ``penetration_depth`` is a signed distance: negative when the shapes overlap, positive for
  separated shapes reported because of a security margin;
- ``nearest_points[1] - nearest_points[0] == penetration_depth * normal``.

A :class:`ContactReport` turns this around for one side: its ``normal`` points from the other
shape into this one (the direction a contact force pushes this shape) and its ``depth`` is
positive when the shapes overlap.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, overload

import numpy as np

from . import _native
from ._base import ShapeBase
from ._coal import quirks
from ._validate import describe, finite_real, integer, numbers
from .errors import InvalidShapeError, ShapeTypeError

if TYPE_CHECKING:
    from .shapes import CollisionShape

__all__ = ["Contact", "ContactReport", "Contacts"]

_new = object.__new__
_set = object.__setattr__


def _frozen(array: np.ndarray) -> np.ndarray:
    array.flags.writeable = False
    return array


def _check_array(value: Any, shape: tuple[int, ...], name: str) -> np.ndarray:
    out = numbers(value, name, f"numbers of shape {shape}", error=InvalidShapeError)
    if out.shape != shape or not np.all(np.isfinite(out)):
        raise InvalidShapeError(
            f"{name} must be finite numbers of shape {shape}, got {describe(value)}"
        )
    return _frozen(out)


class _Record:
    """Immutable slotted record: attributes are set once, in the constructor."""

    __slots__ = ()

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable; cannot set {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable; cannot delete {name!r}")

    def __getstate__(self) -> tuple[Any, ...]:
        names: tuple[str, ...] = self.__slots__
        return tuple(getattr(self, name) for name in names)

    def __setstate__(self, state: tuple[Any, ...]) -> None:
        names: tuple[str, ...] = self.__slots__
        for name, value in zip(names, state, strict=True):
            if isinstance(value, np.ndarray):
                value.flags.writeable = False
            _set(self, name, value)


class Contact(_Record):
    """One contact between two leaf shapes, with hpp-fcl's field names.

    Parameters
    ----------
    o1, o2 : CollisionShape
        The leaf shapes in query order.
    b1, b2 : int
        Primitive on each side: triangle index of a :class:`Mesh`, cell of an :class:`OcTree`,
        :attr:`NONE` (-1) for other shapes.
    normal : array_like, shape (3,), world frame
        Unit vector pointing from ``o1`` to ``o2``.
    nearest_points : array_like, shape (2, 3), world frame
        Witness points, row 0 on ``o1`` and row 1 on ``o2``.
    pos : array_like, shape (3,), world frame
        Contact position.
    penetration_depth : float
        Signed distance: negative when the shapes overlap.

    Notes
    -----
    ``==`` compares every field (shapes by identity); ``<`` orders by ``o1``, ``o2``, ``b1``,
    ``b2`` (shapes in order of creation), so a list of contacts sorts the same way every run.
    """

    __slots__ = ("_arrays", "_coal", "b1", "b2", "o1", "o2", "penetration_depth")

    NONE = -1
    """Primitive index of a shape that has no primitives (anything but a mesh or an octree)."""

    o1: CollisionShape
    """The first leaf shape (the one the query was called on)."""
    o2: CollisionShape
    """The second leaf shape."""
    b1: int
    """Primitive of ``o1``: triangle index, octree cell, or ``NONE`` (-1)."""
    b2: int
    """Primitive of ``o2``: triangle index, octree cell, or ``NONE`` (-1)."""
    penetration_depth: float
    """float, metres: signed distance, negative when the shapes overlap (-0.1 means 0.1 m deep),
    positive for shapes reported only because they are within the security margin."""

    # The arrays of a record made by a query are copied out of Coal's own contact (an
    # independent copy) the first time one is read: most readers need only a few records.
    _arrays: tuple[np.ndarray, np.ndarray, np.ndarray] | None
    _coal: Any

    def __init__(
        self,
        o1: CollisionShape,
        o2: CollisionShape,
        b1: int,
        b2: int,
        normal: Any,
        nearest_points: Any,
        pos: Any,
        penetration_depth: float,
    ) -> None:
        for name, shape in (("o1", o1), ("o2", o2)):
            if not isinstance(shape, ShapeBase):
                raise ShapeTypeError(f"{name} must be a CollisionShape, got {describe(shape)}")
        for name, b in (("b1", b1), ("b2", b2)):
            if integer(b, name, "an integer >= -1") < -1:
                raise InvalidShapeError(f"{name} must be an integer >= -1, got {describe(b)}")
        n = _check_array(normal, (3,), "normal")
        if abs(float(np.linalg.norm(n)) - 1.0) > 1e-6:
            raise InvalidShapeError(f"normal must be a unit vector, got {describe(normal)}")
        arrays = (
            n,
            _check_array(nearest_points, (2, 3), "nearest_points"),
            _check_array(pos, (3,), "pos"),
        )
        depth = finite_real(penetration_depth, "penetration_depth")
        _set(self, "o1", o1)
        _set(self, "o2", o2)
        _set(self, "b1", int(b1))
        _set(self, "b2", int(b2))
        _set(self, "penetration_depth", depth)
        _set(self, "_arrays", arrays)

    @classmethod
    def _from_answer(
        cls,
        o1: CollisionShape,
        o2: CollisionShape,
        depth: float,
        p1: Sequence[float] | np.ndarray,
        p2: Sequence[float] | np.ndarray,
        normal: Sequence[float] | np.ndarray,
        b1: int = -1,
        b2: int = -1,
    ) -> Contact:
        """A record of a contact computed here (a closed form, two meshes' triangles, or a
        repair of Coal's answer from :mod:`spatialcontact._coal.quirks`): ``p1`` on ``o1``,
        ``p2`` on ``o2``, ``normal`` unit from ``o1`` to ``o2``, world frame, not checked;
        ``pos`` is their midpoint."""
        self = _new(cls)
        _set(self, "o1", o1)
        _set(self, "o2", o2)
        _set(self, "b1", b1)
        _set(self, "b2", b2)
        _set(self, "penetration_depth", float(depth))
        _set(self, "_coal", (normal, p1, p2))  # made into arrays when first read (_load)
        _set(self, "_arrays", None)
        return self

    @classmethod
    def _from_coal(
        cls, c: Any, o1: CollisionShape, o2: CollisionShape, b1: int | None = None
    ) -> Contact:
        """A record of a Coal ``Contact`` (world frame) returned by ``getContact``; ``b1``
        replaces Coal's primitive index on ``o1`` when given."""
        self = _new(cls)
        _set(self, "o1", o1)
        _set(self, "o2", o2)
        _set(self, "b1", c.b1 if b1 is None else b1)
        _set(self, "b2", c.b2)
        _set(self, "penetration_depth", c.penetration_depth)
        _set(self, "_coal", c)
        _set(self, "_arrays", None)
        return self

    def _load(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        arrays = self._arrays
        if arrays is None:
            c = self._coal
            # One read-only buffer [normal, p1, p2, pos]; the fields are views of it.
            if c.__class__ is tuple:  # an answer of _from_answer: pos is the midpoint
                data = np.empty(12)
                data[0:3], data[3:6], data[6:9] = c
                data[9:12] = 0.5 * (data[3:6] + data[6:9])
            else:
                data = np.concatenate((c.normal, c.getNearestPoint1(), c.getNearestPoint2(), c.pos))
            if self.b1 != -1 or self.b2 != -1:
                quirks.mend_witnesses(data, self.penetration_depth)
            data.setflags(write=False)
            arrays = (data[0:3], data[3:9].reshape(2, 3), data[9:12])
            _set(self, "_arrays", arrays)
        return arrays

    @property
    def normal(self) -> np.ndarray:
        """ndarray, shape (3,), world frame, read-only: unit vector from ``o1`` to ``o2``."""
        return self._load()[0]

    @property
    def nearest_points(self) -> np.ndarray:
        """ndarray, shape (2, 3), world frame, read-only: witness point on ``o1`` then on
        ``o2``."""
        return self._load()[1]

    @property
    def pos(self) -> np.ndarray:
        """ndarray, shape (3,), world frame, read-only: the contact position."""
        return self._load()[2]

    def __getstate__(self) -> tuple[Any, ...]:
        return (self.o1, self.o2, self.b1, self.b2, self.penetration_depth, self._load())

    def __setstate__(self, state: tuple[Any, ...]) -> None:
        o1, o2, b1, b2, depth, arrays = state
        for array in arrays:
            array.setflags(write=False)
        for name, value in zip(
            ("o1", "o2", "b1", "b2", "penetration_depth", "_arrays"),
            (o1, o2, b1, b2, depth, arrays),
            strict=True,
        ):
            _set(self, name, value)

    def _swapped(self) -> Contact:
        """The same contact with its sides exchanged: ``o2``'s view becomes ``o1``'s."""
        normal, points, pos = self._load()
        other = _new(Contact)
        _set(other, "o1", self.o2)
        _set(other, "o2", self.o1)
        _set(other, "b1", self.b2)
        _set(other, "b2", self.b1)
        _set(other, "penetration_depth", self.penetration_depth)
        _set(other, "_arrays", (_frozen(-normal), _frozen(points[::-1].copy()), pos))
        return other

    @staticmethod
    def _depth_key(contact: Contact) -> float:
        return contact.penetration_depth

    def distance_to_collision(self, security_margin: float = 0.0) -> float:
        """``penetration_depth - security_margin``, as hpp-fcl's ``getDistanceToCollision``."""
        return self.penetration_depth - finite_real(security_margin, "security_margin")

    def report(self, shape: CollisionShape) -> ContactReport:
        """This contact seen from ``shape``'s side (``o1``, ``o2`` or a group holding one).

        Raises
        ------
        ValueError
            If ``shape`` is neither side of this contact nor a group containing one.
        """
        if _holds(shape, self.o1):
            self_b, other, other_b, sign = self.b1, self.o2, self.b2, -1.0
        elif _holds(shape, self.o2):
            self_b, other, other_b, sign = self.b2, self.o1, self.b1, 1.0
        else:
            raise InvalidShapeError(
                f"shape {describe(shape)} is not in this contact (o1={describe(self.o1)}, "
                f"o2={describe(self.o2)})"
            )
        return ContactReport(
            shape=shape,
            other=other,
            point=self.pos,
            normal=_frozen(sign * self.normal),
            depth=-self.penetration_depth,
            b_self=self_b,
            b_other=other_b,
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Contact):
            return NotImplemented
        return (
            self.o1 is other.o1
            and self.o2 is other.o2
            and self.b1 == other.b1
            and self.b2 == other.b2
            and self.penetration_depth == other.penetration_depth
            and np.array_equal(self.normal, other.normal)
            and np.array_equal(self.nearest_points, other.nearest_points)
            and np.array_equal(self.pos, other.pos)
        )

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    def __hash__(self) -> int:
        return hash((id(self.o1), id(self.o2), self.b1, self.b2, self.penetration_depth))

    def _order_key(self) -> tuple[int, int, int, int]:
        return (self.o1._uid, self.o2._uid, self.b1, self.b2)

    def __lt__(self, other: Contact) -> bool:
        if not isinstance(other, Contact):
            return NotImplemented
        return self._order_key() < other._order_key()

    def __repr__(self) -> str:
        return (
            f"Contact(o1={type(self.o1).__name__}, o2={type(self.o2).__name__}, b1={self.b1}, "
            f"b2={self.b2}, normal={np.round(self.normal, 6).tolist()}, "
            f"pos={np.round(self.pos, 6).tolist()}, "
            f"penetration_depth={self.penetration_depth:.6g})"
        )


def _holds(shape: Any, leaf: CollisionShape) -> bool:
    """True when ``shape`` is ``leaf`` or a group that holds it at any depth."""
    node: Any = leaf
    while node is not None:
        if node is shape:
            return True
        node = node._parent
    return False


class ContactReport(_Record):
    """A contact seen from one shape's side, as contact sensors read it.

    Attributes
    ----------
    shape : CollisionShape
        The shape the report is for.
    other : CollisionShape
        The leaf shape on the other side.
    point : ndarray, shape (3,), world frame
        The contact position.
    normal : ndarray, shape (3,), world frame
        Unit vector from ``other`` into ``shape``: the direction a contact force pushes
        ``shape``.
    depth : float
        Overlap in metres, positive when the shapes overlap (the negated penetration depth).
    b_self, b_other : int
        Primitive indices on ``shape``'s side and on ``other``'s (-1 for none).
    """

    __slots__ = ("b_other", "b_self", "depth", "normal", "other", "point", "shape")

    shape: CollisionShape
    other: CollisionShape
    point: np.ndarray
    normal: np.ndarray
    depth: float
    b_self: int
    b_other: int

    def __init__(
        self,
        *,
        shape: CollisionShape,
        other: CollisionShape,
        point: np.ndarray,
        normal: np.ndarray,
        depth: float,
        b_self: int,
        b_other: int,
    ) -> None:
        for name, value in (
            ("shape", shape),
            ("other", other),
            ("point", point),
            ("normal", normal),
            ("depth", depth),
            ("b_self", b_self),
            ("b_other", b_other),
        ):
            _set(self, name, value)

    def __repr__(self) -> str:
        return (
            f"ContactReport(shape={type(self.shape).__name__}, other={type(self.other).__name__}, "
            f"point={np.round(self.point, 6).tolist()}, "
            f"normal={np.round(self.normal, 6).tolist()}, depth={self.depth:.6g})"
        )


class Contacts(Sequence[Contact]):
    """An immutable sequence of :class:`Contact` with column views as numpy arrays.

    Parameters
    ----------
    contacts : iterable of Contact
        The records, kept in the order given (queries give them deepest first).

    Notes
    -----
    The columns are read-only arrays built on first access: ``normal`` (n, 3), ``pos``
    (n, 3), ``nearest_points`` (n, 2, 3), ``penetration_depth`` (n,), ``b1`` and ``b2`` (n,)
    int; ``o1`` and ``o2`` are tuples of shapes. All are world frame and have length 0 when
    nothing touches.
    """

    __slots__ = ("_columns", "_items")

    def __init__(self, contacts: Iterable[Contact] = ()) -> None:
        try:
            items = tuple(contacts)
        except TypeError:
            raise ShapeTypeError(
                f"contacts must be an iterable of Contact records, got {describe(contacts)}"
            ) from None
        for item in items:
            if not isinstance(item, Contact):
                raise ShapeTypeError(
                    f"contacts must hold Contact records only, got {describe(item)}"
                )
        self._items = items
        self._columns: dict[str, Any] = {}

    @classmethod
    def _wrap(cls, contacts: list[Contact]) -> Contacts:
        """Contacts of records a query made (already checked)."""
        self = _new(cls)
        self._items = tuple(contacts)
        self._columns = {}
        return self

    @overload
    def __getitem__(self, index: int) -> Contact: ...
    @overload
    def __getitem__(self, index: slice) -> Contacts: ...
    def __getitem__(self, index: int | slice) -> Contact | Contacts:
        if isinstance(index, slice):
            return Contacts(self._items[index])
        return self._items[index]

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator[Contact]:
        return iter(self._items)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Contacts):
            return self._items == other._items
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._items)

    def __add__(self, other: Contacts) -> Contacts:
        if not isinstance(other, Contacts):
            return NotImplemented
        return Contacts(self._items + other._items)

    def __repr__(self) -> str:
        return f"Contacts({len(self._items)} contacts)"

    def _column(self, name: str, shape: tuple[int, ...], dtype: Any = np.float64) -> Any:
        column = self._columns.get(name)
        if column is None:
            column = np.array([getattr(c, name) for c in self._items], dtype=dtype)
            column = _frozen(column.reshape((len(self._items), *shape)))
            self._columns[name] = column
        return column

    def _normals_and_positions(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``normal[rows]`` and ``pos[rows]`` (k, 3), reading only those records unless the
        columns were built (a sensor needing a few of many contacts)."""
        normal, pos = self._columns.get("normal"), self._columns.get("pos")
        if normal is not None and pos is not None:
            return normal[rows], pos[rows]
        # Coal's own records are read in compiled code (mending moves witness points only);
        # the others (closed-form answers, records made by hand) from their arrays.
        items = self._items
        rows_list = rows.tolist()
        coals = [getattr(items[r], "_coal", None) for r in rows_list]
        both = np.empty((len(rows_list), 2, 3))
        for k in _native.contact_normals_positions(coals, both):
            arrays = items[rows_list[k]]._load()
            both[k, 0] = arrays[0]
            both[k, 1] = arrays[2]
        return both[:, 0], both[:, 1]

    @property
    def normal(self) -> np.ndarray:
        """ndarray, shape (n, 3), world frame: unit normals from ``o1`` to ``o2``."""
        return self._column("normal", (3,))

    @property
    def pos(self) -> np.ndarray:
        """ndarray, shape (n, 3), world frame: contact positions."""
        return self._column("pos", (3,))

    @property
    def nearest_points(self) -> np.ndarray:
        """ndarray, shape (n, 2, 3), world frame: witness points on ``o1`` then ``o2``."""
        return self._column("nearest_points", (2, 3))

    @property
    def penetration_depth(self) -> np.ndarray:
        """ndarray, shape (n,): signed depths, negative on overlap."""
        return self._column("penetration_depth", ())

    @property
    def b1(self) -> np.ndarray:
        """ndarray, shape (n,), int: primitive indices on ``o1`` (-1 for none)."""
        return self._column("b1", (), np.int64)

    @property
    def b2(self) -> np.ndarray:
        """ndarray, shape (n,), int: primitive indices on ``o2`` (-1 for none)."""
        return self._column("b2", (), np.int64)

    @property
    def o1(self) -> tuple[CollisionShape, ...]:
        """tuple of the first leaf shape of each contact."""
        return tuple(c.o1 for c in self._items)

    @property
    def o2(self) -> tuple[CollisionShape, ...]:
        """tuple of the second leaf shape of each contact."""
        return tuple(c.o2 for c in self._items)

    def reports(self, shape: CollisionShape) -> list[ContactReport]:
        """The contacts involving ``shape`` (or a leaf of the group ``shape``), from its side."""
        if not isinstance(shape, ShapeBase):
            raise ShapeTypeError(f"shape must be a CollisionShape, got {describe(shape)}")
        return [c.report(shape) for c in self._items if _holds(shape, c.o1) or _holds(shape, c.o2)]
