"""CollisionShapeGroup: a nested, list-like collection of shapes that behaves as one shape."""

from __future__ import annotations

from collections.abc import Iterable, MutableSequence
from typing import Any, overload

import numpy as np

from ._validate import describe
from .errors import InvalidShapeError, ShapeTypeError
from .shapes import CollisionShape

__all__ = ["CollisionShapeGroup"]


class CollisionShapeGroup(CollisionShape, MutableSequence[CollisionShape]):
    """An ordered, list-like group of shapes and nested groups that is itself a shape.

    Parameters
    ----------
    initlist : iterable of CollisionShape, optional
        The first elements.
    pose : SE3 or array_like, shape (4, 4), optional
        The group's pose in its parent's frame (or the world). Each element's ``T`` is
        relative to the group, so moving the group moves everything in it.
    name, collision, color, base
        As for :class:`CollisionShape`.

    Notes
    -----
    Queries treat the group as the union of its leaves (the shapes with ``collision=True``
    found at any depth, not below a nested group made with ``collision=False``):
    ``iscollided`` is True when any leaf collides, ``closest_point`` is the closest leaf pair's,
    ``contacts`` the union of every leaf pair's, with leaves as ``o1``/``o2``. Leaves far apart
    by their bounding spheres are skipped before Coal is called. A shape may belong to one group
    at a time; its ``scene_parent`` is that group. ``==`` is identity, like every shape.

    Examples
    --------
    >>> from spatialmath import SE3
    >>> from spatialcontact import CollisionShapeGroup, Cuboid, Sphere
    >>> group = CollisionShapeGroup()
    >>> group.append(Cuboid([1, 1, 1]))
    >>> group.append(Sphere(1, pose=SE3.Trans(3, 0, 0)))
    >>> len(group)
    2
    >>> probe = Sphere(0.5, pose=SE3.Trans(0, 0, 5))
    >>> round(group.distance(probe), 6)  # from the cube's top face at z = 0.5
    4.0
    >>> group.T = SE3.Trans(0, 0, 4)  # the cube and the sphere follow
    >>> group.iscollided(probe), group[1].world_T[:3, 3].tolist()
    (True, [3.0, 0.0, 4.0])
    """

    stype = "group"
    _is_group = True

    def __init__(
        self,
        initlist: Iterable[CollisionShape] | None = None,
        *,
        pose: Any = None,
        name: str | None = None,
        collision: bool = True,
        color: Any = None,
        base: Any = None,
    ) -> None:
        self._elements: list[CollisionShape] = []
        CollisionShape.__init__(
            self, pose=pose, name=name, collision=collision, color=color, base=base
        )
        self._world = self.T
        if initlist is not None:
            self.extend(initlist)

    # -------------------------------------------------------------- placement

    @property
    def world_T(self) -> np.ndarray:
        """ndarray, shape (4, 4), read-only: the group's pose in the world frame."""
        return self._world

    def _place(self, world: np.ndarray) -> None:
        world = np.array(world, dtype=np.float64)
        world.flags.writeable = False
        self._world = world
        for element in self._elements:
            if "_tf" in element.__dict__:  # else being unpickled: it places itself when restored
                element._place(world @ element.T)
        self._moves += 1

    def _touch(self) -> None:
        """Note that something inside this group moved or changed (for cached bounds)."""
        group: CollisionShape | None = self
        while group is not None:
            group._moves += 1
            group = group._parent

    def _rebuild(self) -> None:
        """A group has no geometry of its own: nothing to build."""

    def _build_geometry(self) -> Any:
        raise NotImplementedError(
            "CollisionShapeGroup has no single Coal geometry: queries use its leaves instead"
        )

    @property
    def geometry(self) -> Any:
        """Not available: a group has no single Coal geometry (queries use its leaves)."""
        return self._build_geometry()

    def _leaves(self) -> tuple[CollisionShape, ...]:
        leaves: list[CollisionShape] = []
        for element in self._elements:
            leaves.extend(element._leaves())
        return tuple(leaves)

    def _collision_leaves(self) -> tuple[CollisionShape, ...]:
        if not self._collision:
            return ()
        leaves: list[CollisionShape] = []
        for element in self._elements:
            leaves.extend(element._collision_leaves())
        return tuple(leaves)

    def leaves(self) -> list[CollisionShape]:
        """Every non-group shape in this group, at any depth, in order."""
        return list(self._leaves())

    # --------------------------------------------------------- list behaviour

    def _admit(self, item: Any, adding: list[CollisionShape]) -> CollisionShape:
        """Check that ``item`` may join this group (with ``adding`` joining at the same time)."""
        if not isinstance(item, CollisionShape):
            raise ShapeTypeError(
                "CollisionShapeGroup only accepts CollisionShape or CollisionShapeGroup "
                f"instances, got {type(item).__name__}: {describe(item)}"
            )
        if item._parent is not None:
            raise InvalidShapeError(
                f"{describe(item)} is already in a group ({describe(item._parent)}); remove it "
                "from that group first"
            )
        if any(item is other for other in adding):
            raise InvalidShapeError(f"{describe(item)} is given twice")
        node: CollisionShape | None = self
        while node is not None:
            if node is item:
                raise InvalidShapeError(
                    f"cannot put a group inside itself or its own descendant: {describe(item)}"
                )
            node = node._parent
        return item

    def _attach(self, item: CollisionShape) -> None:
        item._parent = self
        item._place(self._world @ item.T)

    def _detach(self, item: CollisionShape) -> None:
        item._parent = None
        item._place(item.T)

    @overload
    def __getitem__(self, index: int) -> CollisionShape: ...
    @overload
    def __getitem__(self, index: slice) -> list[CollisionShape]: ...
    def __getitem__(self, index: int | slice) -> CollisionShape | list[CollisionShape]:
        return self._elements[index]

    @overload
    def __setitem__(self, index: int, item: CollisionShape) -> None: ...
    @overload
    def __setitem__(self, index: slice, item: Iterable[CollisionShape]) -> None: ...
    def __setitem__(self, index: int | slice, item: Any) -> None:
        if isinstance(index, slice):
            old = self._elements[index]
            new = list(item)
            kept = [e for e in old if any(e is n for n in new)]
            added: list[CollisionShape] = []
            for n, element in enumerate(new):
                if any(element is other for other in new[:n]):
                    raise InvalidShapeError(f"{describe(element)} is given twice")
                if not any(element is k for k in kept):
                    added.append(self._admit(element, added))
            trial = list(self._elements)
            trial[index] = new
            for element in old:
                if not any(element is k for k in kept):
                    self._detach(element)
            self._elements = trial
            for element in added:
                self._attach(element)
        else:
            old_item = self._elements[index]
            if item is old_item:
                return
            self._admit(item, [])
            self._detach(old_item)
            self._elements[index] = item
            self._attach(item)
        self._touch()

    def __delitem__(self, index: int | slice) -> None:
        removed = self._elements[index]
        del self._elements[index]
        for element in removed if isinstance(removed, list) else [removed]:
            self._detach(element)
        self._touch()

    def __len__(self) -> int:
        return len(self._elements)

    def insert(self, index: int, item: CollisionShape) -> None:
        """Insert ``item`` before ``index``; it is placed relative to this group's pose."""
        self._admit(item, [])
        self._elements.insert(index, item)
        self._attach(item)
        self._touch()

    def append(self, item: CollisionShape) -> None:
        """Add ``item`` at the end; it is placed relative to this group's pose."""
        self.insert(len(self._elements), item)

    def extend(self, items: Iterable[CollisionShape]) -> None:
        """Add every element of ``items``; all are checked before any is added."""
        adding: list[CollisionShape] = []
        for item in items:
            adding.append(self._admit(item, adding))
        for item in adding:
            self._elements.append(item)
            self._attach(item)
        self._touch()

    def __iadd__(self, items: Iterable[CollisionShape]) -> CollisionShapeGroup:
        self.extend(items)
        return self

    def index(self, item: Any, start: int = 0, stop: int | None = None) -> int:
        """Position of ``item`` (compared by identity)."""
        end = len(self._elements) if stop is None else stop
        for i in range(start, min(end, len(self._elements))):
            if self._elements[i] is item:
                return i
        raise ValueError(f"{describe(item)} is not in this group")

    def __contains__(self, item: object) -> bool:
        return any(element is item for element in self._elements)

    def reverse(self) -> None:
        """Reverse the order of the elements in place."""
        self._elements.reverse()

    def clear(self) -> None:
        """Remove every element, clearing each one's ``scene_parent``."""
        del self[:]

    @property
    def data(self) -> list[CollisionShape]:
        """list: a copy of the elements (change the group through its list methods)."""
        return list(self._elements)

    # ------------------------------------------------------------ description

    def to_dict(self) -> dict[str, Any]:
        """Not available: a group has no single description; call it on each element."""
        raise NotImplementedError(
            "CollisionShapeGroup cannot be described by one dict: iterate it and call "
            "to_dict() on each element instead"
        )

    def __repr__(self) -> str:
        try:
            inner = ", ".join(repr(element) for element in self._elements)
            label = f", name={self.name!r}" if self.name is not None else ""
            return f"{type(self).__name__}([{inner}]{label})"
        except Exception:  # repr must never fail
            return f"<{type(self).__name__} object at {id(self):#x}>"

    def equals(self, other: object) -> bool:
        """True when ``other`` is a group with the same pose, name, flags and equal elements."""
        if type(other) is not type(self):
            return False
        assert isinstance(other, CollisionShapeGroup)
        return (
            np.array_equal(self.T, other.T)
            and (self.name, self._collision) == (other.name, other._collision)
            and len(self) == len(other)
            and all(a.equals(b) for a, b in zip(self._elements, other._elements, strict=True))
        )
