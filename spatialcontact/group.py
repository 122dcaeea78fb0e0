"""CollisionShapeGroup: a nested, list-like collection of shapes that behaves as one shape."""

from __future__ import annotations

import operator
from collections.abc import Iterable, MutableSequence
from typing import Any, cast, overload

import numpy as np

from . import _native
from . import pose as _pose
from ._base import ShapeBase, collision_leaves, leaves_of
from ._coal import state as _state
from ._validate import MAX_NESTING, describe, numbers
from .errors import InvalidArgumentError, InvalidPoseError, InvalidShapeError, ShapeTypeError
from .serialize import Fields, located
from .shapes import CollisionShape

__all__ = ["CollisionShapeGroup"]


_EYE4_BYTES = np.eye(4).tobytes()


class _Plan:
    """How to place every shape below a group from the group's world pose in one call.

    The world pose of node ``i`` is ``W @ relative[i]`` for the group's world pose ``W``;
    :func:`spatialcontact._native.place_all` computes them all into ``world`` and sets each
    leaf's Coal transform.

    Attributes
    ----------
    nodes : list of CollisionShape
        Every shape below the group (leaves and nested groups), depth first.
    relative : ndarray, shape (n, 4, 4)
        Their poses relative to the group.
    world : ndarray, shape (n, 4, 4)
        The buffer for their world poses.
    tfs : tuple of (Transform3s or None)
        Each node's Coal transform, None for nested groups.
    groups : list of (CollisionShapeGroup, int)
        Each nested group with its node index.
    observed : list of CollisionShape
        The nodes that have observers to tell.
    """

    __slots__ = ("groups", "nodes", "observed", "relative", "tfs", "world")

    def __init__(self, nodes: list[CollisionShape], relative: list[np.ndarray]) -> None:
        self.nodes = nodes
        self.relative = np.array(relative, dtype=np.float64).reshape(len(nodes), 4, 4)
        self.world = np.empty_like(self.relative)
        self.tfs = tuple(None if node._is_group else node._tf for node in nodes)
        self.groups: list[tuple[CollisionShapeGroup, int]] = [
            (cast(CollisionShapeGroup, node), i) for i, node in enumerate(nodes) if node._is_group
        ]
        self.observed: list[ShapeBase] = [node for node in nodes if node._observers]


def _iterable(value: Any, name: str) -> Any:
    """An iterator over ``value``, refusing what cannot be iterated with the library's error."""
    try:
        return iter(value)
    except TypeError as error:
        raise ShapeTypeError(
            f"{name} must be an iterable of CollisionShape instances, got {describe(value)} "
            f"({error})"
        ) from None


def _levels(shape: CollisionShape) -> int:
    """How many levels of groups ``shape`` holds: 0 for a leaf, 1 for a group of leaves."""
    deepest, below = 0, [(cast(ShapeBase, shape), 1)]
    while below:  # no recursion: a nesting too deep for the limit must still be measured
        node, level = below.pop()
        if node._is_group:
            deepest = max(deepest, level)
            below.extend((element, level + 1) for element in node._elements_of())
    return deepest


def _index(value: Any, name: str) -> int:
    """A list position: an int or numpy integer (not a bool), as ``list`` takes."""
    if not isinstance(value, (bool, np.bool_)):
        try:
            return operator.index(value)
        except TypeError:
            pass
    raise ShapeTypeError(f"{name} must be an integer, got {describe(value)}")


def _slice_text(index: slice) -> str:
    """``index`` as written between brackets: ``[::2]``, ``[1:5:2]``."""
    parts = ("" if x is None else str(x) for x in (index.start, index.stop, index.step))
    return "[" + ":".join(parts) + "]"


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
    _batch: Any = None  # the poses last given to set_poses, (n, 4, 4) read-only
    _identity: Any = None  # the world pose when it is the identity, else None

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
        self._identity = self._world if self._world.tobytes() == _EYE4_BYTES else None
        if initlist is not None:
            self.extend(_iterable(initlist, "initlist"))

    # -------------------------------------------------------------- placement

    @property
    def world_T(self) -> np.ndarray:
        """ndarray, shape (4, 4), read-only: the group's pose in the world frame."""
        return self._world

    def _place(self, world: np.ndarray) -> None:
        """Move the group to the world pose ``world`` (4, 4) and every shape below it with it.

        One matrix product places every leaf at any depth (see :class:`_Plan`); no recursion,
        so a deep nesting never leaves the group half-moved.
        """
        if world.flags.writeable:  # float64: checked poses or their products
            world = world.copy()
            world.setflags(write=False)
        self._world = world
        self._identity = world if world.tobytes() == _EYE4_BYTES else None
        self._revision += 1
        plan = self._plan
        if plan is None:
            plan = self._make_plan()
            if plan is None:  # being unpickled: the elements place themselves when restored
                return
        _native.place_all(plan.tfs, world, plan.relative, plan.world)
        for group, i in plan.groups:
            inner = plan.world[i].copy()
            inner.setflags(write=False)
            group._world = inner
        for node in plan.observed:
            node._notify(False)
        if self._observers:
            self._notify(False)

    def _make_plan(self) -> _Plan | None:
        """The poses of every shape below this group relative to it, cached until one moves."""
        nodes: list[CollisionShape] = []
        relative: list[np.ndarray] = []
        stack: list[tuple[CollisionShapeGroup, np.ndarray]] = [(self, np.eye(4))]
        while stack:
            group, T_self_group = stack.pop()
            for element in group._elements:
                if "_tf" not in element.__dict__:
                    return None
                T_self_element = T_self_group @ element.T
                nodes.append(element)
                relative.append(T_self_element)
                if element._is_group:
                    stack.append((cast(CollisionShapeGroup, element), T_self_element))
        plan = _Plan(nodes, relative)
        self._plan = plan
        return plan

    def _forget_plan(self) -> None:
        self._plan = None

    def set_poses(self, poses: Any, *, check: bool = True) -> None:
        """Set the pose ``T`` of every element at once, in order.

        Parameters
        ----------
        poses : array_like, shape (n, 4, 4)
            One pose per element (``n == len(self)``), each relative to this group.
        check : bool
            False skips the rigidity check: only for poses the caller computed itself as rigid
            transforms (forward kinematics, say). Shapes, wrong lengths and what Coal must
            never be given (non-finite entries, translations beyond ±1e6 m, a last row other
            than ``[0, 0, 0, 1]``) are always checked.

        Raises
        ------
        InvalidPoseError
            ``poses`` has the wrong shape, or a pose that is not rigid (without ``check``: a
            pose with non-finite entries, out of range or with a wrong last row), naming the
            first; no element moves then.
        """
        n = len(self._elements)
        P = poses
        if type(P) is not np.ndarray or P.dtype != np.float64:
            P = numbers(poses, "poses", error=InvalidPoseError)
        if P.shape != (n, 4, 4):
            raise InvalidPoseError(
                f"poses must have shape ({n}, 4, 4), one pose per element, got shape {P.shape}"
            )
        if check:
            if _native.first_not_rigid(P) >= 0:
                _pose.as_poses(P, "poses")  # raises, naming the first bad pose
        else:
            _pose.check_sound(P, "poses")
        self._place_rows(P)

    def _place_rows(self, P: np.ndarray) -> None:
        """:meth:`set_poses` of poses (n, 4, 4) float64 known to be rigid transforms, composed
        by the package itself (a robot's links, which may reach past the range of the poses
        a caller gives)."""
        buffer, batch, leaves, groups = self._slots()
        np.copyto(batch, P)  # each element's T is its row, read when asked for (ShapeBase.T)
        _native.place_all(
            leaves[0], None if self._identity is self._world else self._world, P, buffer
        )
        for element in leaves[1]:
            element._T = None
        for element in leaves[2]:
            element._notify(False)
        for element, world in groups:
            element._T = None
            element._place(world)
        self._touch(False)

    def _slots(self) -> tuple[np.ndarray, np.ndarray, tuple[Any, ...], list[Any]]:
        """Buffers (n, 4, 4) for the world poses of the elements and for their poses ``T``;
        the leaf elements as (each element's Coal transform or None for a group, the leaves,
        those with observers); per group element its row of the world buffer. Kept until the
        elements or their observers change."""
        cached = self._slot_cache
        if cached is None or cached[0] != self._contents:
            n = len(self._elements)
            buffer = np.empty((n, 4, 4))
            batch = np.empty((n, 4, 4))
            groups: list[tuple[Any, ...]] = []
            for i, element in enumerate(self._elements):
                element._slot = i
                if element._is_group:
                    groups.append((element, buffer[i]))
            leaves = [e for e in self._elements if not e._is_group]
            placement = (
                tuple(None if e._is_group else e._tf for e in self._elements),
                leaves,
                [e for e in leaves if e._observers],
            )
            cached = self._slot_cache = (self._contents, buffer, batch, placement, groups)
            self._batch = batch
        return cached[1], cached[2], cached[3], cached[4]

    def _elements_of(self) -> tuple[CollisionShape, ...]:
        return tuple(self._elements)

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

    def leaves(self) -> list[CollisionShape]:
        """Every non-group shape in this group, at any depth, in order."""
        return cast(list[CollisionShape], list(leaves_of(self)))

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
        levels = 0
        while node is not None:
            if node is item:
                raise InvalidShapeError(
                    f"cannot put a group inside itself or its own descendant: {describe(item)}"
                )
            node = node._parent
            levels += 1
        levels += _levels(item)
        if levels > MAX_NESTING:
            raise InvalidShapeError(
                f"groups nest at most {MAX_NESTING} levels deep (MAX_NESTING), and adding "
                f"{describe(item)} here makes {levels}"
            )
        return item

    def _welcome(self, added: list[CollisionShape]) -> None:
        """Let the observers of this group and of the groups above it refuse ``added``."""
        leaves = tuple(leaf for item in added for leaf in collision_leaves(item))
        if leaves:
            self._admit_leaves(leaves)

    def _attach(self, item: CollisionShape) -> None:
        item._parent = self
        item._place(self._world @ item.T)

    def _detach(self, item: CollisionShape) -> None:
        T = item.T  # read while it may still be a row of this group's set_poses batch
        item._parent = None
        item._place(T)

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
        with _state.LOCK:
            if isinstance(index, slice):
                old = self._elements[index]
                if not isinstance(item, Iterable) or isinstance(item, (str, bytes)):
                    raise ShapeTypeError(
                        f"a slice of a group takes an iterable of shapes, got {describe(item)}"
                    )
                new = list(item)
                if index.step not in (None, 1) and len(new) != len(old):
                    raise InvalidArgumentError(
                        f"the extended slice {_slice_text(index)} holds {len(old)} elements, "
                        f"got {len(new)} shapes to put in it"
                    )
                kept = [e for e in old if any(e is n for n in new)]
                added: list[CollisionShape] = []
                for n, element in enumerate(new):
                    if any(element is other for other in new[:n]):
                        raise InvalidShapeError(f"{describe(element)} is given twice")
                    if not any(element is k for k in kept):
                        added.append(self._admit(element, added))
                trial = list(self._elements)
                trial[index] = new
                self._welcome(added)
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
                self._welcome([item])
                self._detach(old_item)
                self._elements[index] = item
                self._attach(item)
            self._touch(True)

    def __delitem__(self, index: int | slice) -> None:
        with _state.LOCK:
            removed = self._elements[index]
            del self._elements[index]
            for element in removed if isinstance(removed, list) else [removed]:
                self._detach(element)
            self._touch(True)

    def __len__(self) -> int:
        return len(self._elements)

    def insert(self, index: int, item: CollisionShape) -> None:
        """Insert ``item`` before ``index``; it is placed relative to this group's pose."""
        index = _index(index, "index")
        with _state.LOCK:
            self._admit(item, [])
            self._welcome([item])
            n = len(self._elements)  # as list.insert, also for ints beyond a C ssize_t
            self._elements.insert(max(-n - 1, min(index, n)), item)
            self._attach(item)
            self._touch(True)

    def append(self, item: CollisionShape) -> None:
        """Add ``item`` at the end; it is placed relative to this group's pose."""
        self.insert(len(self._elements), item)

    def extend(self, items: Iterable[CollisionShape]) -> None:
        """Add every element of ``items``; all are checked before any is added."""
        with _state.LOCK:
            adding: list[CollisionShape] = []
            for item in _iterable(items, "items"):
                adding.append(self._admit(item, adding))
            self._welcome(adding)
            for item in adding:
                self._elements.append(item)
                self._attach(item)
            self._touch(True)

    def __iadd__(self, items: Iterable[CollisionShape]) -> CollisionShapeGroup:
        self.extend(items)
        return self

    def index(self, item: Any, start: int = 0, stop: int | None = None) -> int:
        """Position of ``item`` (compared by identity)."""
        end = len(self._elements) if stop is None else _index(stop, "stop")
        for i in range(*slice(_index(start, "start"), end).indices(len(self._elements))):
            if self._elements[i] is item:
                return i
        raise InvalidArgumentError(f"{describe(item)} is not in this group")

    def __contains__(self, item: object) -> bool:
        return any(element is item for element in self._elements)

    def reverse(self) -> None:
        """Reverse the order of the elements in place."""
        with _state.LOCK:
            self._elements.reverse()
            self._touch(True)

    def clear(self) -> None:
        """Remove every element, clearing each one's ``scene_parent``."""
        del self[:]

    @property
    def data(self) -> list[CollisionShape]:
        """list: a copy of the elements (change the group through its list methods)."""
        return list(self._elements)

    # ------------------------------------------------------------ description

    def to_dict(self, complete: bool = False) -> dict[str, Any]:
        """Describe the group and everything in it as a JSON-safe dict (see
        :meth:`CollisionShape.to_dict`); :meth:`~CollisionShape.from_dict` builds it back.

        Parameters
        ----------
        complete : bool
            Passed to every element's ``to_dict``. False: the group's world pose ``t``, ``q``
            and its elements as spatialgeometry dicts (world poses, for a renderer). True:
            also the group's ``T`` (in its parent's frame) and ``rgba``, and complete
            elements, each with its ``T`` relative to this group.

        Returns
        -------
        dict
            ``stype`` ``"group"``, ``t``, ``q``, ``v``, ``color``, ``opacity``, ``name``,
            ``collision`` and ``elements`` (a list of dicts, nested groups as dicts of this
            kind).
        """
        out = super().to_dict(complete)
        out["name"] = self._name
        out["collision"] = self._collision
        out["elements"] = [element.to_dict(complete) for element in self._elements]
        return out

    @classmethod
    def _from_fields(
        cls, fields: Fields, common: dict[str, Any], T_world_parent: np.ndarray | None
    ) -> CollisionShape:
        """The group, then its elements, each placed from its ``T`` or its world pose."""
        elements = fields.require("elements")
        if not isinstance(elements, (list, tuple)):
            raise ShapeTypeError(
                f"{fields.key('elements')} must be a list of shape dicts, got "
                f"{type(elements).__name__}: {describe(elements)}"
            )
        if fields.level > MAX_NESTING:  # refused before reading deeper: no recursion error
            top = fields.where.split("[", 1)[0]
            raise located(
                InvalidShapeError(
                    f"{top} nests groups more than {MAX_NESTING} levels deep, the most groups "
                    "can nest (MAX_NESTING)"
                )
            )
        group = cls(**common)
        W = group.T if T_world_parent is None else T_world_parent @ group.T
        where = fields.key("elements")
        items = [
            CollisionShape._kind_of(item)._build(item, W)
            for item in (
                Fields(e, f"{where}[{i}]", fields.level + 1) for i, e in enumerate(elements)
            )
        ]
        group.extend(items)
        return group

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
