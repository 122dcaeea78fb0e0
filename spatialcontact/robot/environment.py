"""The obstacles of a :class:`~spatialcontact.Scene` as a robot checks against them.

A :class:`SceneView` lists the collision leaves of every object of a scene with their world
bounding boxes (each leaf's local bounding box, posed), so that a robot can cull its
link-obstacle pairs in numpy (for one configuration or many at once) before asking Coal about
the pairs left. It reads the scene
through its public methods only (``names``, ``len(scene)``, ``scene[name]``) and is rebuilt
whenever the scene's objects, or anything inside them, changed since it was last read: each
refresh first compares the scene's :attr:`~spatialcontact.Scene.revision` (which every object
added, removed, moved or changed raises) with the one seen last, and when it differs compares
the objects and their own revision counters (so that moves of the robot's own group, when it
is in the scene, rebuild nothing). The objects are looked up by name again only when the scene's
``names`` tuple is not the one seen last (a scene builds a new one whenever its objects
change).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._base import collision_leaves
from .._validate import describe
from ..errors import ShapeTypeError
from ..scene import Scene
from ..shapes import CollisionShape

__all__ = ["SceneView", "check_scene"]


class SceneView:
    """The obstacle leaves of one scene, with their world bounding boxes.

    Attributes
    ----------
    shapes : list of CollisionShape
        Every collision leaf of the scene's objects, except the robot's own.
    owners : list of str
        The name of the object each leaf belongs to.
    rotations : ndarray, shape (B, 3, 3), world frame
        Orientation of each leaf's box (the leaf's own).
    centres : ndarray, shape (B, 3), world frame
        Centre of each box.
    half : ndarray, shape (B, 3)
        Half sides of each box along its own axes (``inf`` for a half-space, whose box is
        everything).
    worlds : ndarray, shape (B,), int
        The world of each leaf's object (-1: global).
    world : int
        The robot's world: that of its group when the group is an object of a world of the
        scene, whose leaves are then those of that world and the global objects only; else -1
        (every object's leaves).
    revision : int
        Rises by one each time the view is rebuilt.
    """

    def __init__(self) -> None:
        self._scene_revision = -1
        self._names: tuple[str, ...] | None = None
        self._objects: list[Any] = []
        self._object_worlds: list[int] = []
        self._revisions: list[int] = []
        self.shapes: list[CollisionShape] = []
        self.owners: list[str] = []
        self.rotations = np.zeros((0, 3, 3))
        self.centres = np.zeros((0, 3))
        self.half = np.zeros((0, 3))
        self.worlds = np.zeros(0, dtype=np.intp)
        self.world = -1
        self.revision = 0

    def refresh(self, scene: Any, own: frozenset[int]) -> None:
        """Bring the view up to date with ``scene`` (always the same scene for one view).

        Parameters
        ----------
        scene : Scene
            The scene to read.
        own : frozenset of int
            ``id()`` of the robot's own shapes, left out when the robot is in the scene.
        """
        revision = scene.revision
        if revision == self._scene_revision:
            return  # nothing was added, removed, moved or changed since the last refresh
        self._scene_revision = revision
        names = scene.names
        # A scene hands out a new names tuple whenever an object joins or leaves: the same
        # tuple means the same objects, which are then not looked up again one by one.
        if names is self._names and len(scene) == len(self._objects):
            objects, object_worlds = self._objects, self._object_worlds
        else:
            objects = [scene[name] for name in names]
            object_worlds = [scene.world_of(name) for name in names]
        revisions = [0 if id(obj) in own else obj._revision for obj in objects]
        if names == self._names and objects == self._objects and revisions == self._revisions:
            return
        robot = [w for obj, w in zip(objects, object_worlds, strict=True) if id(obj) in own]
        world = robot[0] if robot else -1
        shapes: list[CollisionShape] = []
        owners: list[str] = []
        worlds: list[int] = []
        for name, obj, w in zip(names, objects, object_worlds, strict=True):
            if world >= 0 and w not in (-1, world):
                continue  # another world's: never paired with the robot's
            for leaf in collision_leaves(obj):
                if id(leaf) not in own:
                    shapes.append(leaf)  # type: ignore[arg-type]
                    owners.append(name)
                    worlds.append(w)
        rotations = np.zeros((len(shapes), 3, 3))
        centres = np.zeros((len(shapes), 3))
        half = np.zeros((len(shapes), 3))
        for i, leaf in enumerate(shapes):
            rotations[i], centres[i], half[i] = _world_box(leaf)
        self._names, self._objects, self._revisions = names, objects, revisions
        self._object_worlds = object_worlds
        self.shapes, self.owners, self.world = shapes, owners, world
        self.worlds = np.array(worlds, dtype=np.intp)
        self.rotations, self.centres, self.half = rotations, centres, half
        self.revision += 1


def _world_box(leaf: CollisionShape) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A leaf's local bounding box (its Coal geometry's), posed: rotation, centre and half
    sides, in the world frame."""
    geometry = leaf._geometry
    W = leaf.world_T
    if not geometry.aabb_radius < 1e100:  # a half-space: unbounded
        return W[:3, :3], W[:3, 3], np.full(3, math.inf)
    box = geometry.aabb_local
    low, high = np.asarray(box.min_), np.asarray(box.max_)
    return W[:3, :3], W[:3, :3] @ (0.5 * (low + high)) + W[:3, 3], 0.5 * (high - low)


def check_scene(scene: Any) -> Scene:
    """``scene`` if it is a :class:`~spatialcontact.Scene`, else a ShapeTypeError."""
    if not isinstance(scene, Scene):
        raise ShapeTypeError(f"scene must be a spatialcontact Scene or None, got {describe(scene)}")
    return scene
