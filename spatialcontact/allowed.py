"""AllowedCollisions: pairs of shapes allowed to touch, as MoveIt's allowed collision matrix.

An entry is an unordered pair of shapes (leaves or groups, compared by identity). It allows
every pair of leaves ``(a, b)`` with ``a`` at or below one of its shapes and ``b`` at or below
the other: allowing a robot's group against a table skips every link against the table, and
allowing two adjacent links (two leaves of one group) skips that pair only, as the
``disable_collisions`` entries of a robot's SRDF do.

"Below" follows the groups that hold a shape (``scene_parent``), at the time of the query:
a leaf moved into an allowed group is allowed with it from then on.

Changes hold the library's lock (``spatialcontact._coal.state.LOCK``), as scene queries do,
so one thread may allow pairs while another queries a scene.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from ._base import ShapeBase
from ._coal import state as _state
from ._validate import describe
from .errors import SceneError, ShapeTypeError

__all__ = ["AllowedCollisions"]


def _chain(shape: ShapeBase) -> Iterator[ShapeBase]:
    """``shape`` and every group above it, nearest first."""
    node: ShapeBase | None = shape
    while node is not None:
        yield node
        node = node._parent


class AllowedCollisions:
    """A set of pairs of shapes whose leaves may touch without counting as a collision.

    The order of the two shapes of a pair does not matter. A :class:`~spatialcontact.Scene`
    keeps one as ``scene.allowed`` and reads it at every query.

    Examples
    --------
    >>> from spatialcontact import CollisionShapeGroup, Cuboid, Sphere
    >>> from spatialcontact.allowed import AllowedCollisions
    >>> arm = CollisionShapeGroup([Sphere(0.1), Sphere(0.1), Sphere(0.1)])
    >>> table = Cuboid([1.0, 1.0, 0.1])
    >>> allowed = AllowedCollisions()
    >>> allowed.allow(arm[0], arm[1])  # two adjacent links
    >>> allowed.allow(arm, table)
    >>> allowed.covers(arm[1], arm[0]), allowed.covers(arm[0], arm[2])
    (True, False)
    >>> allowed.covers(table, arm[2])  # a leaf of the arm, through the arm
    True
    >>> len(allowed)
    2
    """

    def __init__(self) -> None:
        self._entries: dict[frozenset[ShapeBase], tuple[ShapeBase, ShapeBase]] = {}
        self._partners: dict[ShapeBase, set[ShapeBase]] = {}
        self._revision = 0

    @staticmethod
    def _pair(a: object, b: object) -> tuple[ShapeBase, ShapeBase]:
        for value, name in ((a, "a"), (b, "b")):
            if not isinstance(value, ShapeBase):
                raise ShapeTypeError(
                    f"{name} must be a CollisionShape or CollisionShapeGroup, got "
                    f"{type(value).__name__}: {describe(value)}"
                )
        assert isinstance(a, ShapeBase) and isinstance(b, ShapeBase)
        if a is b:
            raise SceneError(f"a and b are the same shape ({describe(a)}): a pair needs two")
        return a, b

    def allow(self, a: ShapeBase, b: ShapeBase) -> None:
        """Allow every leaf at or below ``a`` to touch every leaf at or below ``b``.

        Raises
        ------
        ShapeTypeError
            ``a`` or ``b`` is not a shape.
        SceneError
            ``a`` and ``b`` are the same shape.
        """
        a, b = self._pair(a, b)
        key = frozenset((a, b))
        with _state.LOCK:
            if key in self._entries:
                return
            self._entries[key] = (a, b)
            self._partners.setdefault(a, set()).add(b)
            self._partners.setdefault(b, set()).add(a)
            self._revision += 1

    def disallow(self, a: ShapeBase, b: ShapeBase) -> None:
        """Take the entry ``(a, b)`` out (nothing when there is none).

        Only that entry goes: leaves of ``a`` and ``b`` stay allowed through other entries
        that cover them (the groups holding them, say).

        Raises
        ------
        ShapeTypeError
            ``a`` or ``b`` is not a shape.
        SceneError
            ``a`` and ``b`` are the same shape.
        """
        a, b = self._pair(a, b)
        with _state.LOCK:
            if self._entries.pop(frozenset((a, b)), None) is None:
                return
            for one, other in ((a, b), (b, a)):
                partners = self._partners[one]
                partners.discard(other)
                if not partners:
                    del self._partners[one]
            self._revision += 1

    def covers(self, a: ShapeBase, b: ShapeBase) -> bool:
        """True when an entry pairs ``a`` or a group above it with ``b`` or a group above it.

        For two leaves: whether the pair is allowed.
        """
        partners = self._partners
        if not partners:
            return False
        for x in _chain(a):
            others = partners.get(x)
            if others is not None:
                for y in _chain(b):
                    if y in others:
                        return True
        return False

    def discard(self, predicate: Callable[[ShapeBase], bool]) -> None:
        """Take out every entry with a shape for which ``predicate`` is true."""
        with _state.LOCK:
            doomed = [(a, b) for a, b in self._entries.values() if predicate(a) or predicate(b)]
            for a, b in doomed:
                self.disallow(a, b)

    def clear(self) -> None:
        """Take out every entry."""
        with _state.LOCK:
            if self._entries:
                self._entries.clear()
                self._partners.clear()
                self._revision += 1

    @property
    def pairs(self) -> list[tuple[ShapeBase, ShapeBase]]:
        """list of (shape, shape): the entries, in the order they were allowed."""
        with _state.LOCK:
            return list(self._entries.values())

    def __contains__(self, pair: object) -> bool:
        """True for a pair ``(a, b)`` (either order) that is an entry."""
        if not isinstance(pair, tuple) or len(pair) != 2:
            return False
        if not all(isinstance(shape, ShapeBase) for shape in pair):
            return False
        return frozenset(pair) in self._entries

    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self) -> Iterator[tuple[ShapeBase, ShapeBase]]:
        return iter(self.pairs)

    def __repr__(self) -> str:
        return f"AllowedCollisions({len(self)} pairs)"
