"""The protocol every shape and group shares: identity, placement, revisions and observers.

:class:`ShapeBase` is what the query, contact and scene modules know of a shape, so none of
them imports :mod:`spatialcontact.shapes` (which imports the queries to offer them as methods).

Placement
    ``T`` is a shape's pose in its parent group's frame (the world when it has none). Setting
    it moves the shape's Coal transform at once; a group moves every leaf below it, without
    recursion, through a cached *plan* of the leaves' poses relative to the group.
Revisions
    ``_revision`` counts every change of a shape or of anything inside it (a move, a resize, an
    element added or removed); ``_contents`` counts only the changes of what it is made of
    (resizes, elements added or removed). Both rise along the parent chain, so comparing a
    stored number with the current one tells whether cached answers still hold.
Observers
    A scene (or anything else) watches a shape through :meth:`ShapeBase._observe`: it is held
    by a weak reference, told of each change with ``_shape_changed(shape, structural)`` and may
    refuse new leaves before they join with ``_shape_admit(shape, leaves)``.
"""

from __future__ import annotations

import itertools
import weakref
from collections.abc import Iterable
from typing import Any, ClassVar, Protocol

import numpy as np

from . import _native
from ._coal import state as _state
from .pose import as_pose, pose_values

__all__ = ["Observer", "ShapeBase", "collision_leaves", "is_shape", "leaves_of"]

_serial = itertools.count()
_NDARRAY = np.ndarray


class Observer(Protocol):
    """What watches a shape (a scene): told of changes, asked before new leaves join."""

    def _shape_changed(self, shape: ShapeBase, structural: bool) -> None:
        """``shape`` (or something inside it) moved; ``structural`` when it was resized or
        its elements changed."""

    def _shape_admit(self, shape: ShapeBase, leaves: tuple[ShapeBase, ...]) -> None:
        """``leaves`` are about to join ``shape``: raise to refuse them (nothing changes)."""


class ShapeBase:
    """Identity, pose, parent, revisions and observers of a shape or group (see the module)."""

    _is_group: ClassVar[bool] = False
    _plan: Any = None  # a group's cached placement (see group._Plan)
    _slot_cache: Any = None  # a group's cached set_poses buffers (see group._slots)
    _leaf_cache: Any = None  # a group's cached collision leaves, with its _contents
    _collision: bool
    _uid: int
    _parent: Any
    _T: np.ndarray | None  # T, or the leaf's _buffer holding it, or None: a row of _batch
    _slot: int  # position in the parent group, for its set_poses batch
    _revision: int
    _contents: int
    _observers: list[weakref.ref[Any]]
    # Coal state and caches (see _coal.state.init_state; never pickled).
    _tf: Any
    _geometry: Any
    _buffer: np.ndarray
    _collide_pairs: dict[int, tuple[Any, ...]]
    _distance_pairs: dict[int, tuple[Any, ...]]
    _contact_pairs: dict[int, tuple[Any, ...]]
    _thread_pairs: dict[tuple[str, int, int], tuple[Any, ...]]
    _cached_by: weakref.WeakSet[Any]
    _bounds_cache: Any

    def _init_base(self, pose: Any, pose_name: str) -> None:
        """Set the pose (checked), a fresh identity and no parent, observers or Coal state."""
        self._T = as_pose(pose, pose_name)
        self._uid = next(_serial)
        self._parent = None
        self._revision = 0
        self._contents = 0
        self._observers = []
        _state.init_state(self)

    # ------------------------------------------------------------------ pose

    @property
    def T(self) -> np.ndarray:
        """ndarray, shape (4, 4), read-only: the pose in the parent group's frame (or world).

        Set it with an ``SE3`` or a 4x4 array-like; the value is checked to be a rigid
        transform and copied.
        """
        T = self._T
        if T is None:  # placed by its group's set_poses: a row of that batch
            T = np.array(self._parent._batch[self._slot])
            T.setflags(write=False)
            self._T = T
        elif T is self._buffer:  # set by the setter below: copied when first read
            T = self._T = np.array(T)
            T.setflags(write=False)
        return T

    @T.setter
    def T(self, value: Any) -> None:
        # The hot path of a planner: a leaf's float64 4x4 array is checked, copied into the
        # leaf's buffer and written into its Coal transform by one compiled call.
        parent = self._parent
        if self._is_group:
            if type(value) is not _NDARRAY or not _native.is_rigid(value):
                value = pose_values(value, "T")[0]  # raises, naming the parameter
            value = value.copy()
            value.setflags(write=False)
            self._T = value
            if parent is not None:
                value = parent._world @ value
            self._place(value)
            if parent is not None:
                parent._touch(False)
            return
        world = None if parent is None else parent._world
        if type(value) is not _NDARRAY or not _native.place(self._tf, value, self._buffer, world):
            M = pose_values(value, "T")[0]  # raises, naming the parameter, when not a pose
            _native.place(self._tf, M, self._buffer, world)
        self._T = self._buffer
        self._revision += 1
        if self._observers:
            self._notify(False)
        if parent is not None:
            parent._touch(False)

    @property
    def world_T(self) -> np.ndarray:
        """ndarray, shape (4, 4): the pose in the world frame (parent's ``world_T @ T``)."""
        if self._parent is None:
            return self.T
        return self._parent._world @ self.T

    @property
    def scene_parent(self) -> Any:
        """The group holding this shape, or None. Set by the group, read-only here."""
        return self._parent

    def _place(self, world: np.ndarray) -> None:
        """Move this leaf's Coal transform to the world pose ``world`` (4, 4)."""
        self._tf.setTransform(world[:3, :3], world[:3, 3])
        self._revision += 1
        if self._observers:
            self._notify(False)

    def _place_product(self, A: np.ndarray | None, B: np.ndarray, C: np.ndarray | None) -> None:
        """:meth:`_place` at the world pose ``A @ B @ C`` (rigid (4, 4) poses the package
        computed, not checked; None for the identity), composed in compiled code."""
        _native.place_product(self._tf, A, B, C)
        self._revision += 1
        if self._observers:
            self._notify(False)

    def _set_local(self, T: np.ndarray) -> None:
        """Take ``T`` (a read-only (4, 4) array, not checked) as this shape's pose ``T``."""
        self._T = T

    # ------------------------------------------------------- changes and observers

    def _touch(self, structural: bool) -> None:
        """Note a change of this shape or of something inside it, up the parent chain."""
        node: ShapeBase | None = self
        while node is not None:
            node._revision += 1
            if structural:
                node._contents += 1
            if node._is_group:
                node._forget_plan()
            if node._observers:
                node._notify(structural)
            node = node._parent

    def _forget_plan(self) -> None:
        """Drop cached placement data (groups keep some)."""

    def _notify(self, structural: bool) -> None:
        """Tell each live observer of a change; forget the ones that are gone."""
        if len(self._observers) == 1:  # the common case: one scene
            observer = self._observers[0]()
            if observer is not None:
                observer._shape_changed(self, structural)
            else:
                self._observers = []
            return
        alive = False
        for ref in self._observers:
            observer = ref()
            if observer is None:
                continue
            alive = True
            observer._shape_changed(self, structural)
        if not alive or len(self._observers) > 1:
            self._observers = [ref for ref in self._observers if ref() is not None]

    def _observe(self, observer: Observer) -> None:
        """Start telling ``observer`` (held weakly) of this shape's changes."""
        if all(ref() is not observer for ref in self._observers):
            self._observers = [*self._observers, weakref.ref(observer)]
            self._observed_changed()

    def _unobserve(self, observer: Observer) -> None:
        """Stop telling ``observer`` of this shape's changes."""
        kept = [ref for ref in self._observers if ref() is not None and ref() is not observer]
        if len(kept) != len(self._observers):
            self._observers = kept
            self._observed_changed()

    def _observed_changed(self) -> None:
        """The set of observers here changed: groups above cache who to tell, so they forget."""
        node = self._parent
        while node is not None:
            node._forget_plan()
            node._slot_cache = None
            node = node._parent

    def _admit_leaves(self, leaves: tuple[ShapeBase, ...]) -> None:
        """Ask the observers of this shape and of every group above it whether ``leaves`` may
        join; any of them may raise, before anything changes."""
        node: ShapeBase | None = self
        while node is not None:
            for ref in node._observers:
                observer = ref()
                if observer is not None:
                    observer._shape_admit(node, leaves)
            node = node._parent

    # --------------------------------------------------------------- leaves

    def _elements_of(self) -> tuple[ShapeBase, ...]:
        """The direct elements of a group; a leaf has none."""
        return ()


def is_shape(value: object) -> bool:
    """True for a spatialcontact shape or group."""
    return isinstance(value, ShapeBase)


def leaves_of(shape: ShapeBase) -> tuple[ShapeBase, ...]:
    """Every leaf (non-group) shape at or below ``shape``, depth first, in order."""
    if not shape._is_group:
        return (shape,)
    out: list[ShapeBase] = []
    stack: list[Iterable[ShapeBase]] = [iter(shape._elements_of())]
    while stack:
        for node in stack[-1]:
            if node._is_group:
                stack.append(iter(node._elements_of()))
                break
            out.append(node)
        else:
            stack.pop()
    return tuple(out)


def collision_leaves(shape: ShapeBase) -> tuple[ShapeBase, ...]:
    """The leaves that take part in queries: the one definition used by queries and scenes.

    A leaf takes part when it and every group above it, up to and including ``shape``, have
    ``collision=True``. Groups cache the answer until their contents change.
    """
    if not shape._is_group:
        return (shape,) if shape._collision else ()
    cached = shape._leaf_cache
    if cached is not None and cached[0] == shape._contents:
        return cached[1]
    out: list[ShapeBase] = []
    if shape._collision:
        stack: list[Iterable[ShapeBase]] = [iter(shape._elements_of())]
        while stack:
            for node in stack[-1]:
                if not node._collision:
                    continue
                if node._is_group:
                    stack.append(iter(node._elements_of()))
                    break
                out.append(node)
            else:
                stack.pop()
    leaves = tuple(out)
    shape._leaf_cache = (shape._contents, leaves)
    return leaves
