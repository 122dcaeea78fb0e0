"""RobotModel: a robot arm's collision model, checked for self-collision and against scenes.

The model is a :class:`~spatialcontact.CollisionShapeGroup` (``robot.group``) holding one shape
per URDF ``<collision>`` element and one per attached object, placed by forward kinematics
(plain Python floats for one configuration, numpy for many). Every query culls the pairs it
could answer with bounding volumes (spheres for the robot's elements, boxes for obstacles) and
asks Coal, through the shapes' cached pair functors, only about the pairs left; the culling
never changes an answer. An element fixed to the root link has the same answer against an
obstacle at every configuration: Coal is asked once per placement of the scene and robot.

Frames: ``world`` is the frame ``robot.group`` lives in (its ``world_T`` is the pose of the
robot's root link, the identity unless you move the group); ``base`` is the root link's frame;
``body`` is the frame of a rigid body (see :mod:`spatialcontact.robot.kinematics`).
"""

from __future__ import annotations

import concurrent.futures
import copy
import functools
import importlib.util
import math
import threading
import weakref
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from itertools import chain
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, TypeVar, cast

import numpy as np

from .._validate import count, describe, finite_real, flag, numbers
from ..errors import (
    InvalidArgumentError,
    InvalidMeshError,
    InvalidShapeError,
    RobotModelError,
    ShapeTypeError,
)
from ..group import CollisionShapeGroup
from ..mesh import ConvexHull, Mesh
from ..pose import as_pose
from ..shapes import CollisionShape, Cuboid, Cylinder, Sphere
from .culling import (
    CULL_SLACK,
    BoxGrid,
    Spheres,
    bounding_sphere,
    box_frames,
    sphere_box_gaps,
    spheres_near_boxes,
    spheres_near_gathered_boxes,
)
from .environment import SceneView, check_scene
from .kinematics import Kinematics, Pose12
from .motion import MotionModel, check_motions
from .urdf import (
    LIMIT_TOLERANCE,
    GeometrySpec,
    RobotSpec,
    SemanticSpec,
    read_srdf,
    read_urdf,
)

if TYPE_CHECKING:
    from ..scene import Scene
    from ..spheres import CoverageReport, SphereModel

__all__ = ["Attachment", "RobotDistance", "RobotModel"]

MAX_SAMPLES = 100_000_000
"""Most configurations :meth:`RobotModel.sample` draws in one call (a larger ``n`` is refused
before anything is allocated)."""

_GRID_AFTER = 8
"""Single configurations culled in numpy against unchanged obstacles before they are put in a
grid (a scene that changes at every call never pays for building one)."""

_CHUNK = 2048
"""Configurations culled together against a scene by :meth:`RobotModel.check`."""


class RobotDistance(NamedTuple):
    """The nearest pair found by :meth:`RobotModel.distance`.

    Attributes
    ----------
    distance : float
        Signed distance in metres, negative on overlap (meshes are hollow: two overlapping
        meshes give minus the depth of their deepest triangle contact, see
        docs/conventions-distance.md); ``inf`` when there is nothing to measure to.
    part : str or None
        The robot's link (or attached object) of the pair.
    other : str or None
        The scene object's name, or for a self distance the other link (or attached object).
    point_part : ndarray, shape (3,), world frame, or None
        The closest point on ``part``.
    point_other : ndarray, shape (3,), world frame, or None
        The closest point on ``other``.
    """

    distance: float
    part: str | None
    other: str | None
    point_part: np.ndarray | None
    point_other: np.ndarray | None


@dataclass(frozen=True)
class Attachment:
    """An object attached to a link with :meth:`RobotModel.attach`.

    Attributes
    ----------
    shape : CollisionShape
        The object (a shape or a group), an element of ``robot.group`` while attached.
    link : str
        The link it moves with.
    T_link_object : ndarray, shape (4, 4)
        Its pose in the link's frame.
    allowed : frozenset of str
        The links it may touch: the link it is attached to, the links fixed to that link, and
        those given to ``attach``.
    """

    shape: CollisionShape
    link: str
    T_link_object: np.ndarray
    allowed: frozenset[str]


class _Obstacles:
    """A scene view's obstacle boxes in the robot's base frame, with what the culls need.

    Attributes
    ----------
    view, revision, W, allowed_revision
        What it was made from: the view and its revision, the group's world pose and the
        robot's allowed-pair revision.
    rotations : ndarray, shape (B, 3, 3), base frame
    centres : ndarray, shape (B, 3), base frame
    answers : dict of int to bool
        Collision answers of root-link elements (fixed in the base frame), by pair key.
    near : ndarray of int, shape (b,)
        The obstacles within the robot's reach.
    frames, half_near
        :func:`box_frames` and half sides of the ``near`` obstacles.
    allowed : ndarray of bool, shape (E, B), or None
        The element-obstacle pairs allowed by :meth:`RobotModel.allow` (None: none are).
    free_near : ndarray of bool, shape (E, b), or None
        The pairs with the ``near`` obstacles that are not allowed.
    uses, grid
        How many single configurations were culled against these boxes, and once there were
        more than :data:`_GRID_AFTER`, the boxes in a :class:`BoxGrid` (culling one
        configuration in plain floats, whatever the number of boxes).
    """

    def __init__(self, robot: RobotModel, view: SceneView, W: np.ndarray) -> None:
        self.view, self.revision, self.W = view, view.revision, W
        self.allowed_revision = robot._allowed_revision
        R_world_base = W[:3, :3]
        self.rotations = np.einsum("ji,bjk->bik", R_world_base, view.rotations)  # R^T R_box
        self.centres = (view.centres - W[:3, 3]) @ R_world_base  # R^T (c - t), row by row
        self.answers: dict[int, bool] = {}
        # The obstacles the robot can reach at all: within its reach of the root's origin.
        origin = sphere_box_gaps(
            np.zeros((1, 3)),
            np.array([robot._reach]),
            box_frames(self.rotations, self.centres),
            view.half,
        )[0]
        self.near = np.flatnonzero(origin <= CULL_SLACK)
        self.rotations_near = self.rotations[self.near]
        self.frames = box_frames(self.rotations_near, self.centres[self.near])
        self.half_near = view.half[self.near]
        self.allowed: np.ndarray | None = None
        self.free_near: np.ndarray | None = None
        self.uses = 0
        self.grid: BoxGrid | None = None
        self._by_world: tuple[np.ndarray, np.ndarray] | None = None
        pairs = robot._scene_allowed
        if pairs:
            allowed = np.zeros((len(robot._parts), len(view.shapes)), dtype=bool)
            owners = np.array(view.owners, dtype=object)
            parts = np.array(robot._parts, dtype=object)
            for part, name in pairs:
                allowed[np.ix_(parts == part, owners == name)] = True
            if allowed.any():
                self.allowed = allowed
                self.free_near = ~allowed[:, self.near]

    def by_world(self, count: int) -> tuple[np.ndarray, np.ndarray]:
        """The ``near`` obstacles of each of ``count`` worlds, with the global ones.

        Returns
        -------
        table : ndarray of int, shape (count, M)
            Row ``w``: positions in ``near`` of world ``w``'s obstacles and the global ones,
            padded with 0 to the largest count ``M``.
        valid : ndarray of bool, shape (count, M)
            Which entries of ``table`` are obstacles (not padding).
        """
        if self._by_world is None or len(self._by_world[0]) != count:
            worlds = self.view.worlds[self.near]
            members = [np.flatnonzero((worlds == -1) | (worlds == w)) for w in range(count)]
            width = max((len(m) for m in members), default=0)
            table = np.zeros((count, width), dtype=np.intp)
            valid = np.zeros((count, width), dtype=bool)
            for w, m in enumerate(members):
                table[w, : len(m)] = m
                valid[w, : len(m)] = True
            self._by_world = (table, valid)
        return self._by_world


_Method = TypeVar("_Method", bound=Callable[..., Any])


def _exclusive(method: _Method) -> _Method:
    """Run a query of a robot with its lock held: the queries move the robot's private copies
    of its shapes, so two threads sharing a robot take turns (each answers as alone)."""

    @functools.wraps(method)
    def run(self: RobotModel, *args: Any, **kwargs: Any) -> Any:
        with self._lock:
            return method(self, *args, **kwargs)

    return cast("_Method", run)


def _listing(names: Iterable[str]) -> str:
    shown = list(names)
    text = ", ".join(repr(n) for n in shown[:20])
    return text + (f", ... ({len(shown) - 20} more)" if len(shown) > 20 else "")


class RobotModel:
    """A robot's collision model: self-collision, scene and motion checks for planners.

    Make one with :meth:`from_urdf`. A configuration ``q`` is an array of :attr:`dof` joint
    values (radians or metres) in the order of :attr:`joint_names`; mimic joints follow the
    joint they mimic and are not part of ``q``.

    Which pairs are checked
        Self-collision checks every pair of links except the pairs of links fixed to each
        other (one rigid body), the SRDF's ``disable_collisions`` pairs when an SRDF is given,
        and otherwise the adjacent links (a link and its parent through one moving joint).
        These are the pairs pinocchio checks after ``addAllCollisionPairs`` and
        ``removeCollisionPairs`` with the same SRDF. Attached objects are checked against
        every link except their :attr:`Attachment.allowed` links, and against each other
        unless they move with the same body. Scene checks test every link and attached object
        against every object of the scene, except the pairs :meth:`allow` skips.

    Geometry
        ``geometry="mesh"`` uses the URDF's meshes as they are: hollow triangle surfaces, the
        same answers as pinocchio or any other Coal user gets. A link wholly inside an
        obstacle's mesh does not collide with it. ``geometry="convex"`` replaces each mesh
        with its convex hull: a solid, so overlaps are always found and distances are signed,
        and queries are faster; but the hull fills the link's concave parts, so
        configurations where links nest closely may read as colliding. Boxes, cylinders and
        spheres are the same in both.

    Placement
        :meth:`set_q` places :attr:`group` at a configuration, and only :meth:`set_q` moves
        it (:attr:`q` tells where it is): the queries check private copies of the elements,
        which they move only as far as Coal is asked about them. Call :meth:`set_q` before
        using :attr:`group` yourself (contacts for a picture, a scene holding the robot).

    Attributes
    ----------
    group : CollisionShapeGroup
        The links' shapes (one per URDF ``<collision>`` element, named after the link, or
        ``link/i`` for a link of several) and the attached objects, in that order. Each
        element's ``T`` is its pose in the root link's frame; the group's own ``T`` is the
        root link's pose in the world (set it to move the whole robot). Use it in any other
        query (``robot.group.iscollided(shape)``, a scene) after :meth:`set_q`; change its
        elements only through :meth:`attach` and :meth:`detach`.

    Notes
    -----
    Robots pickle (attached objects and allowed scene pairs included): the copy holds copies
    of the shapes and gives the same answers, so :meth:`check` and :meth:`check_motions` can
    run on worker processes (``executor=``). A robot may be shared between threads: its
    queries move its private copies of the shapes, under a lock of the robot's own, so they
    take turns; give threads that check at the same time a copy each (docs/threads.md).
    Queries never modify a scene; a scene holding the robot's own group is checked without
    it. The robot's view of a scene is refreshed whenever the scene's ``revision`` moves (an
    object added, removed, moved or resized).
    """

    def __init__(
        self,
        spec: RobotSpec,
        semantic: SemanticSpec | None,
        geometry: Literal["mesh", "convex", "spheres"],
    ) -> None:
        self._spec = spec
        self._semantic = semantic
        self._geometry_kind = geometry
        self._kin = Kinematics(spec)
        kin = self._kin
        self._link_index = {name: i for i, name in enumerate(kin.link_names)}
        self._out_of_limits = "raise"
        limits = np.stack([kin.lower, kin.upper], axis=1)
        limits.flags.writeable = False
        self._limits = limits
        self._lower_ok = kin.lower - LIMIT_TOLERANCE
        self._upper_ok = kin.upper + LIMIT_TOLERANCE
        self._bounds_ok = list(zip(self._lower_ok.tolist(), self._upper_ok.tolist(), strict=True))
        shapes: list[CollisionShape] = []
        parts: list[str] = []
        T_body_elements: list[np.ndarray] = []
        counts: dict[str, int] = {}
        for g in spec.geometries:
            counts[g.link] = counts.get(g.link, 0) + 1
        for g in spec.geometries:
            label = g.link if counts[g.link] == 1 else f"{g.link}/{g.index}"
            shapes.append(self._make_shape(g, label))
            parts.append(g.link)
            link = self._link_index[g.link]
            T_body_elements.append(kin.T_body_link[link] @ g.T_link_geometry)
        self._link_parts = len(shapes)
        self.group = CollisionShapeGroup(shapes, name=spec.name)
        self._shapes = shapes
        self._parts = parts
        self._element_body = np.array(
            [kin.link_body[self._link_index[p]] for p in parts], dtype=np.intp
        )
        self._T_body_element = np.array(T_body_elements).reshape(-1, 4, 4)
        self._attachments: dict[str, Attachment] = {}
        self._disabled = self._disabled_link_pairs()
        self._views: weakref.WeakKeyDictionary[Any, SceneView] = weakref.WeakKeyDictionary()
        self._lock = threading.RLock()
        """Held by every query (see :func:`_exclusive`)."""
        self._twin_cache: dict[int, tuple[CollisionShape, int, CollisionShape]] = {}
        self._scene_allowed: set[tuple[str, str]] = set()
        self._allowed_revision = 0
        self._prefilter: Any = None  # a SphereRobotModel (see set_motion_prefilter)
        self._prefilter_at: np.ndarray | None = None  # the group pose it was placed at
        self._refresh_structure()
        self.set_q(self.neutral)

    # ------------------------------------------------------------------ loading

    @classmethod
    def from_urdf(
        cls,
        path: Any,
        srdf: Any = None,
        package_dirs: Any = None,
        geometry: Literal["mesh", "convex", "spheres"] = "mesh",
        spheres: Any = None,
    ) -> RobotModel:
        """Load a robot from a URDF file, and optionally the link pairs an SRDF disables.

        Parameters
        ----------
        path : str or os.PathLike
            The URDF file, read with yourdfpy. Supported: revolute, continuous, prismatic,
            fixed and mimic joints; ``<collision>`` elements with a ``<mesh>`` (with
            ``scale``), ``<box>``, ``<cylinder>`` or ``<sphere>`` and an ``<origin>``
            (yourdfpy does not read ``<capsule>``).
        srdf : str or os.PathLike, optional
            An SRDF file: its ``<disable_collisions>`` pairs are skipped in self-collision and
            its ``<group_state>`` entries become :attr:`states`. Without one, adjacent links
            are skipped.
        package_dirs : str, os.PathLike or sequence of them, optional
            Folders where ``package://name/...`` meshes are looked for, as
            ``<dir>/name/...`` (or ``<dir>/...`` for a folder called ``name``); the URDF's
            folder and the one above it are searched after these. Relative mesh paths are
            relative to the URDF's folder.
        geometry : {"mesh", "convex", "spheres"}
            ``"mesh"``: the meshes as hollow surfaces (pinocchio's answers); ``"convex"``:
            each mesh's solid convex hull (faster, conservative). See the class notes.
            ``"spheres"``: each link's spheres (a
            :class:`~spatialcontact.spheres.SphereRobotModel`, checked in a compiled kernel).
        spheres : SphereModel, optional
            With ``geometry="spheres"``: the spheres (from :meth:`spheres` or
            :func:`~spatialcontact.spheres.load_curobo`); None fits covering spheres.

        Returns
        -------
        RobotModel
            Placed at :attr:`neutral`.

        Raises
        ------
        RobotModelError
            A missing or malformed URDF or SRDF, an unsupported joint type, links that are
            not one tree, or an SRDF naming links or joints the robot lacks.
        MeshFileNotFoundError
            A mesh file is missing (the message names the link and the paths tried).
        MeshFileError, InvalidMeshError
            A mesh file cannot be read or holds no usable triangles.
        InvalidArgumentError
            ``geometry`` is not ``"mesh"``, ``"convex"`` or ``"spheres"``, or ``spheres``
            is given without ``geometry="spheres"`` or is not a SphereModel.
        """
        if geometry not in ("mesh", "convex", "spheres"):
            raise InvalidArgumentError(
                f"geometry must be 'mesh', 'convex' or 'spheres', got {describe(geometry)}"
            )
        if spheres is not None and geometry != "spheres":
            raise InvalidArgumentError(
                f"spheres is for geometry='spheres', got geometry={geometry!r}"
            )
        spec = read_urdf(path, package_dirs)
        semantic = None
        if srdf is not None:
            dofs = Kinematics(spec).dof_names
            semantic = read_srdf(srdf, spec, dofs)
        if geometry == "spheres":  # the sphere model (spatialcontact.spheres)
            from ..spheres.model import sphere_robot

            return sphere_robot(spec, semantic, spheres)
        return cls(spec, semantic, geometry)

    def _make_shape(self, g: GeometrySpec, label: str) -> CollisionShape:
        if g.kind == "mesh":
            mesh = Mesh(g.filename, scale=g.size, name=label)
            if self._geometry_kind == "convex":
                try:
                    return ConvexHull(mesh.vertices, name=label)
                except InvalidMeshError:  # a flat mesh (a plate): its hull has no volume
                    return mesh
            return mesh
        if g.kind == "box":
            return Cuboid(g.size, name=label)
        if g.kind == "cylinder":
            return Cylinder(g.size[0], g.size[1], name=label)
        return Sphere(g.size[0], name=label)

    def _disabled_link_pairs(self) -> set[frozenset[str]]:
        """Link pairs skipped in self-collision: SRDF pairs, or adjacent bodies' links."""
        kin = self._kin
        if self._semantic is not None:
            return {frozenset(pair) for pair in self._semantic.disabled}
        out = set()
        for a, body_a in zip(kin.link_names, kin.link_body.tolist(), strict=True):
            for b, body_b in zip(kin.link_names, kin.link_body.tolist(), strict=True):
                if kin.parent[body_b] == body_a and body_b != 0:
                    out.add(frozenset((a, b)))
        return out

    # --------------------------------------------------------------- description

    @property
    def name(self) -> str:
        """str: the URDF's robot name."""
        return self._spec.name

    @property
    def geometry(self) -> str:
        """str: ``"mesh"``, ``"convex"`` or ``"spheres"``, as given to :meth:`from_urdf`."""
        return self._geometry_kind

    @property
    def dof(self) -> int:
        """int: the number of joint values in a configuration ``q``."""
        return len(self._kin.dof_names)

    @property
    def joint_names(self) -> tuple[str, ...]:
        """tuple of str: the joints of ``q``, in order (moving joints that mimic none)."""
        return self._kin.dof_names

    @property
    def link_names(self) -> tuple[str, ...]:
        """tuple of str: every link, the root first, each after its parent (the rows of
        :meth:`fk_many`)."""
        return self._kin.link_names

    @property
    def limits(self) -> np.ndarray:
        """ndarray, shape (dof, 2), read-only: lower and upper limit of each joint of ``q``
        (``-inf``, ``inf`` for continuous joints)."""
        return self._limits

    @property
    def neutral(self) -> np.ndarray:
        """ndarray, shape (dof,): zero for every joint, moved into its limits."""
        return np.clip(np.zeros(self.dof), self._kin.lower, self._kin.upper)

    @property
    def states(self) -> dict[str, np.ndarray]:
        """dict of str to ndarray (dof,): the SRDF's named states (``group_state``), joints
        a state does not set at :attr:`neutral`; empty without an SRDF."""
        out = {}
        if self._semantic is not None:
            index = {name: i for i, name in enumerate(self.joint_names)}
            for name, values in self._semantic.states.items():
                q = self.neutral
                for joint, value in values.items():
                    q[index[joint]] = value
                out[name] = q
        return out

    @property
    def collision_pairs(self) -> tuple[tuple[str, str], ...]:
        """tuple of (str, str): the pairs of links and attached objects that self-collision
        checks (each once, a link of several ``<collision>`` elements counted once)."""
        seen: dict[tuple[str, str], None] = {}
        for a, b in zip(self._pair_a.tolist(), self._pair_b.tolist(), strict=True):
            seen[(self._parts[a], self._parts[b])] = None
        return tuple(seen)

    @property
    def out_of_limits(self) -> str:
        """str: what a ``q`` outside the limits does: ``"raise"`` (the default) raises
        :class:`~spatialcontact.errors.InvalidArgumentError`, ``"clip"`` moves each value to
        its nearest limit."""
        return self._out_of_limits

    @out_of_limits.setter
    def out_of_limits(self, value: str) -> None:
        if value not in ("raise", "clip"):
            raise InvalidArgumentError(
                f"out_of_limits must be 'raise' or 'clip', got {describe(value)}"
            )
        self._out_of_limits = value

    @property
    def attachments(self) -> dict[str, Attachment]:
        """dict of str to Attachment: the attached objects by name (a copy)."""
        return dict(self._attachments)

    def shapes_of(self, part: str) -> list[CollisionShape]:
        """The shapes of a link (one per ``<collision>`` element) or an attached object.

        Raises
        ------
        RobotModelError
            ``part`` is neither a link nor an attached object.
        """
        if part not in self._link_index and part not in self._attachments:
            self._unknown(part, "part")
        return [s for s, p in zip(self._shapes, self._parts, strict=True) if p == part]

    def part_of(self, shape: CollisionShape) -> str:
        """The link or attached object a shape of :attr:`group` belongs to (a contact's
        ``o1``, say).

        Raises
        ------
        RobotModelError
            ``shape`` is not part of this robot.
        """
        for element, part in zip(self._shapes, self._parts, strict=True):
            if shape is element or (
                isinstance(element, CollisionShapeGroup)
                and any(shape is leaf for leaf in element.leaves())
            ):
                return part
        raise RobotModelError(f"{describe(shape)} is not a shape of robot {self.name!r}")

    def _unknown(self, name: Any, what: str) -> None:
        valid = list(self._kin.link_names)
        kind = "a link"
        if what == "part":
            valid += list(self._attachments)
            kind = "a link or attached object"
        raise RobotModelError(
            f"{what} {describe(name)} is not {kind} of robot {self.name!r}; valid: "
            f"{_listing(valid)}"
        )

    def __repr__(self) -> str:
        return (
            f"RobotModel({self.name!r}, dof={self.dof}, links={len(self.link_names)}, "
            f"geometry={self._geometry_kind!r}, attached={list(self._attachments)!r})"
        )

    # ------------------------------------------------------------------ checks

    def _check_q(self, q: Any, name: str = "q") -> list[float]:
        """``q`` as a list of :attr:`dof` floats, checked for length, NaN and limits (errors
        call it ``name``)."""
        if not (type(q) is np.ndarray and q.dtype == np.float64):  # a subclass may be masked
            q = numbers(q, name, f"{self.dof} joint values")
        if q.shape != (self.dof,):
            raise InvalidArgumentError(
                f"{name} must have {self.dof} joint values ({', '.join(self.joint_names)}), "
                f"got an array of shape {q.shape}"
            )
        values: list[float] = q.tolist()
        for v, (lo, hi) in zip(values, self._bounds_ok, strict=True):
            if not lo <= v <= hi:  # also NaN
                clipped: list[float] = self._limited(q.reshape(1, -1), name)[0].tolist()
                return clipped
        return values

    def _check_Q(self, Q: Any, name: str) -> np.ndarray:
        """``Q`` as a float64 array (N, dof), each row checked as :meth:`_check_q` does."""
        checked: np.ndarray = numbers(Q, name, f"configurations of {self.dof} joint values")
        if checked.ndim != 2 or checked.shape[1] != self.dof:
            raise InvalidArgumentError(
                f"{name} must have shape (N, {self.dof}), one row of joint values "
                f"({', '.join(self.joint_names)}) per configuration, got shape {checked.shape}"
            )
        if ((checked >= self._lower_ok) & (checked <= self._upper_ok)).all():
            return checked
        return self._limited(checked, name)

    def _limited(self, Q: np.ndarray, name: str) -> np.ndarray:
        """``Q`` (N, dof) with a value outside the limits or not finite: raise, or clip."""
        bad = ~np.isfinite(Q)
        if bad.any():
            n, i = (int(k) for k in np.argwhere(bad)[0])
            raise InvalidArgumentError(
                f"{_row(name, n)} must hold finite joint values, got {float(Q[n, i])} for "
                f"joint {self.joint_names[i]!r}: {Q[n].tolist()}"
            )
        if self._out_of_limits == "clip":
            clipped: np.ndarray = np.clip(Q, self._kin.lower, self._kin.upper)
            return clipped
        outside = (Q < self._lower_ok) | (Q > self._upper_ok)
        n, i = (int(k) for k in np.argwhere(outside)[0])
        lo, hi = self._limits[i]
        raise InvalidArgumentError(
            f"{_row(name, n)}: joint {self.joint_names[i]!r} = {float(Q[n, i])!r} is outside "
            f"its limits [{lo}, {hi}] (set robot.out_of_limits = 'clip' to clip instead)"
        )

    # ---------------------------------------------------------------- structure

    def _refresh_structure(self) -> None:
        """Recompute the bounding spheres and self pairs after the elements or their sizes
        changed (construction, attach, detach, a resize)."""
        pa, pb = [], []
        body = self._element_body.tolist()
        for i in range(len(self._shapes)):
            for j in range(i + 1, len(self._shapes)):
                if self._checks(i, j, body):
                    pa.append(i)
                    pb.append(j)
        self._pair_a = np.array(pa, dtype=np.intp)
        self._pair_b = np.array(pb, dtype=np.intp)
        self._spheres = Spheres(
            self._shapes, body, self._T_body_element, self._pair_a, self._pair_b
        )
        self._radius = self._spheres.radius
        self._c_body = self._spheres.centre
        self._poses = np.zeros((len(body), 4, 4))  # a buffer for _place
        self._poses[:, 3, 3] = 1.0
        # The queries move private copies of the elements (never robot.group).
        live = {id(shape) for shape in self._shapes}
        self._twin_cache = {k: v for k, v in self._twin_cache.items() if k in live}
        self._twins = [self._twin_of(shape) for shape in self._shapes]
        self._twin_tf = [None if t._is_group else t._tf for t in self._twins]
        self._twin_query = [0] * len(body)
        self._query = 0
        self._source: list[Pose12] | np.ndarray = []
        self._W_seen: np.ndarray | None = None
        self._W_moved: np.ndarray | None = None
        self._body_list = body
        self._pair_a_list = self._pair_a.tolist()
        self._pair_b_list = self._pair_b.tolist()
        self._contents = self.group._contents
        self._own = frozenset(id(s) for s in self.group.leaves()) | {id(self.group)}
        self._fixed = [b == 0 for b in body]  # elements that move with no joint
        self._cull_reach = ((self._radius + CULL_SLACK) ** 2)[:, None]
        self._radius_list = self._radius.tolist()
        # How far from the root's origin any element can reach, in every configuration.
        self._reach = float(
            (
                self._kin.origin_reach[self._element_body]
                + np.linalg.norm(self._c_body, axis=1)
                + self._radius
            ).max(initial=0.0)
        )
        self._obstacles_for: _Obstacles | None = None
        self._motion_model: MotionModel | None = None

    def _checks(self, i: int, j: int, body: list[int]) -> bool:
        """Whether self-collision checks elements ``i`` and ``j``."""
        links = self._link_parts
        a, b = self._parts[i], self._parts[j]
        if i < links and j < links:
            return body[i] != body[j] and frozenset((a, b)) not in self._disabled
        if i >= links and j >= links:
            return body[i] != body[j]
        attached, link = (a, b) if i >= links else (b, a)
        return link not in self._attachments[attached].allowed

    def _guard(self) -> None:
        """Follow a resize of one of the robot's shapes; refuse elements changed by hand."""
        if self.group._contents == self._contents:
            return
        if len(self.group) != len(self._shapes) or any(
            a is not b for a, b in zip(self.group, self._shapes, strict=True)
        ):
            raise RobotModelError(
                f"the elements of robot {self.name!r}'s group were changed directly: add and "
                "remove objects with attach() and detach()"
            )
        self._refresh_structure()

    # ---------------------------------------------------------------- kinematics

    @_exclusive
    def fk(self, q: Any) -> dict[str, np.ndarray]:
        """Forward kinematics: every link's pose in the world frame.

        Parameters
        ----------
        q : array_like, shape (dof,)

        Returns
        -------
        dict of str to ndarray (4, 4)
            ``T_world_link`` by link name, in :attr:`link_names` order.
        """
        q_checked = np.array([self._check_q(q)])
        T_world_link = self._link_poses(self._kin.body_poses_many(q_checked))[0]
        return dict(zip(self._kin.link_names, T_world_link, strict=True))

    @_exclusive
    def fk_many(self, Q: Any) -> np.ndarray:
        """Forward kinematics of many configurations at once.

        Parameters
        ----------
        Q : array_like, shape (N, dof)

        Returns
        -------
        ndarray, shape (N, links, 4, 4)
            ``T_world_link`` of each configuration and link, links in :attr:`link_names`
            order.
        """
        return self._link_poses(self._kin.body_poses_many(self._check_Q(Q, "Q")))

    def _link_poses(self, T_base_body: np.ndarray) -> np.ndarray:
        kin = self._kin
        T_base_link = T_base_body[:, kin.link_body] @ kin.T_body_link
        T_world_link: np.ndarray = self.group.world_T @ T_base_link
        return T_world_link

    def sample(self, n: int, rng: np.random.Generator | int | None = None) -> np.ndarray:
        """Configurations drawn uniformly within the limits (continuous joints in
        [-pi, pi]).

        Parameters
        ----------
        n : int
            How many, from 0 to :data:`MAX_SAMPLES` (1e8).
        rng : numpy Generator, int seed >= 0 or None

        Returns
        -------
        ndarray, shape (n, dof)

        Raises
        ------
        ShapeTypeError
            ``n`` is not an integer (a bool or a float, even a whole one), or ``rng`` is none
            of a Generator, an integer and None.
        InvalidArgumentError
            ``n`` is negative or above :data:`MAX_SAMPLES`, or the seed ``rng`` is negative.
        """
        if not (rng is None or isinstance(rng, np.random.Generator)):
            rng = count(rng, "rng (a numpy Generator, None or a seed)", 0)
        n = count(n, "n", 0)
        if n > MAX_SAMPLES:
            raise InvalidArgumentError(
                f"n must be at most {MAX_SAMPLES} (MAX_SAMPLES) configurations, got {describe(n)}"
            )
        generator = np.random.default_rng(rng)
        lower = np.where(np.isfinite(self._kin.lower), self._kin.lower, -math.pi)
        upper = np.where(np.isfinite(self._kin.upper), self._kin.upper, math.pi)
        return generator.uniform(lower, upper, size=(n, self.dof))

    @_exclusive
    def set_q(self, q: Any) -> None:
        """Place :attr:`group` (every link and attached object) at configuration ``q``.

        Parameters
        ----------
        q : array_like, shape (dof,)
        """
        self._guard()
        q = self._check_q(q)
        self._place(self._kin.body_poses(q), q)

    @property
    def q(self) -> np.ndarray:
        """ndarray, shape (dof,): the configuration :attr:`group` is placed at, by the last
        :meth:`set_q` (the queries never move it; see the class notes)."""
        return np.array(self._q)

    def _place(self, T_base_body: list[Pose12], q: list[float]) -> None:
        """Place :attr:`group` at one configuration, given ``T_base_body`` of its bodies."""
        flat = np.fromiter(chain.from_iterable(T_base_body), float, 12 * len(T_base_body))
        P = self._poses
        P[:, :3] = flat.reshape(-1, 3, 4)[self._element_body] @ self._T_body_element
        self._place_poses(P, q)

    def _place_poses(self, T_base_element: np.ndarray, q: Any) -> None:
        """Place :attr:`group`'s elements at ``T_base_element`` (E, 4, 4), configuration ``q``."""
        self.group._place_rows(T_base_element)  # composed here from checked poses
        self._q = q

    # ------------------------------------------------------------ the private copies

    def _twin_of(self, shape: CollisionShape) -> CollisionShape:
        """The private copy of an element that the queries move (one per element, remade
        when the element is resized or its contents change)."""
        cached = self._twin_cache.get(id(shape))
        if cached is None or cached[0] is not shape or cached[1] != shape._contents:
            twin = copy.copy(shape)
            cached = self._twin_cache[id(shape)] = (shape, shape._contents, twin)
        return cached[2]

    def _begin(self, source: list[Pose12] | np.ndarray) -> None:
        """Start placing the private copies for one configuration: ``source`` is
        ``T_base_body`` of the bodies (plain floats), or the world poses of the elements
        (E, 4, 4); each copy is moved when a query first needs it (:meth:`_twin`)."""
        self._query += 1
        self._source = source
        W = self.group.world_T
        if W is not self._W_seen:
            self._W_seen = W
            self._W_moved = None if np.array_equal(W, np.eye(4)) else W

    def _twin(self, e: int) -> CollisionShape:
        """Element ``e``'s private copy, placed at the configuration of :meth:`_begin`."""
        twin = self._twins[e]
        if self._twin_query[e] == self._query:
            return twin
        self._twin_query[e] = self._query
        source = self._source
        if isinstance(source, np.ndarray):
            world = source[e]
        else:
            world = np.array(source[self._body_list[e]]).reshape(3, 4) @ self._T_body_element[e]
            W = self._W_moved
            if W is not None:
                world = W[:3, :3] @ world
                world[:, 3] += W[:3, 3]
        tf = self._twin_tf[e]
        if tf is None:  # a group (an attached object): placed as a whole
            twin.T = np.vstack([world[:3], [0.0, 0.0, 0.0, 1.0]])
        else:
            tf.setTransform(world[:3, :3], world[:3, 3])
        return twin

    def _begin_many(self, T_base_element: np.ndarray) -> np.ndarray:
        """World poses (..., E, 4, 4) of elements at ``T_base_element`` (..., E, 4, 4)."""
        W = self.group.world_T
        if np.array_equal(W, np.eye(4)):
            return T_base_element
        out: np.ndarray = W @ T_base_element
        return out

    def _configuration(
        self, q: Any
    ) -> tuple[list[float], list[Pose12], list[tuple[float, float, float]]]:
        """For a ``q`` to check: the checked values, ``T_base_body`` of every body, and every
        element's bounding-sphere centre in the base frame."""
        self._guard()
        values = self._check_q(q)
        T_base_body = self._kin.body_poses(values)
        return values, T_base_body, self._spheres.centres(T_base_body)

    # ---------------------------------------------------------------- scenes

    def _view(self, scene: Any) -> SceneView:
        scene = check_scene(scene)
        view = self._views.get(scene)
        if view is None:
            view = self._views[scene] = SceneView()
        view.refresh(scene, self._own)
        return view

    def _obstacle_cache(self, view: SceneView) -> _Obstacles:
        """The view's boxes in the base frame, rebuilt when the view or the robot's group
        moved, or the allowed pairs changed."""
        W = self.group.world_T
        cached = self._obstacles_for
        if (
            cached is None
            or cached.view is not view
            or cached.revision != view.revision
            or cached.W is not W
            or cached.allowed_revision != self._allowed_revision
        ):
            cached = self._obstacles_for = _Obstacles(self, view, W)
        return cached

    def _scene_gaps(self, centres: np.ndarray, view: SceneView) -> np.ndarray:
        """Sphere-to-box gaps (..., E, B) between the elements (centres (..., E, 3), base
        frame) and all of the view's obstacles; ``inf`` for the allowed pairs."""
        cached = self._obstacle_cache(view)
        frames = box_frames(cached.rotations, cached.centres)
        gaps = sphere_box_gaps(centres, self._radius, frames, view.half)
        if cached.allowed is not None:
            gaps[..., cached.allowed] = math.inf
        return gaps

    def _near(self, centres: np.ndarray, view: SceneView) -> tuple[np.ndarray, np.ndarray]:
        """Which elements (centres (..., E, 3)) come near which of the ``b`` obstacles within
        the robot's reach (allowed pairs never do): a bool array (..., E, b), and those
        obstacles' indices (b,)."""
        cached = self._obstacle_cache(view)
        touching = spheres_near_boxes(centres, self._cull_reach, cached.frames, cached.half_near)
        if cached.free_near is not None:
            touching &= cached.free_near
        return touching, cached.near

    def _scene_candidates(
        self, centres: list[tuple[float, float, float]], view: SceneView | None
    ) -> list[int]:
        """Element-obstacle pairs whose bounding volumes touch at one configuration, as
        ``element * B + obstacle``."""
        if view is None or not view.shapes:
            return []
        cached = self._obstacle_cache(view)
        count = len(view.shapes)
        if cached.grid is None:
            cached.uses += 1
            if cached.uses > _GRID_AFTER:
                cached.grid = BoxGrid(
                    cached.rotations[cached.near],
                    cached.centres[cached.near],
                    cached.half_near,
                    cached.near,
                    float(self._radius.max(initial=0.0)),
                )
        if cached.grid is not None:
            allowed = cached.allowed
            return sorted(
                e * count + j
                for e, j in cached.grid.near(centres, self._radius_list)
                if allowed is None or not allowed[e, j]
            )
        touching, near = self._near(np.array(centres), view)
        element, obstacle = np.nonzero(touching)
        found: list[int] = (element * count + near[obstacle]).tolist()
        return found

    def _self_hits(self, candidates: list[int], first: bool) -> list[int]:
        """The candidate self pairs that collide (the first one only, if asked), at the
        configuration of :meth:`_begin`."""
        twin, pa, pb = self._twin, self._pair_a_list, self._pair_b_list
        hits = []
        for k in candidates:
            if twin(pa[k]).iscollided(twin(pb[k])):
                hits.append(k)
                if first:
                    break
        return hits

    def _split_static(
        self, candidates: list[int], view: SceneView | None
    ) -> tuple[list[int], list[int]]:
        """Split candidate element-obstacle pairs into those of elements fixed to the root
        link that collide, and those whose elements move with ``q``.

        A root-link element's pair with an obstacle has the same answer at every ``q``: it is
        asked of Coal once per placement of the scene and of the robot's group, then kept.
        """
        if not candidates:
            return [], []
        assert view is not None and self._obstacles_for is not None
        answers = self._obstacles_for.answers
        obstacles, count, fixed = view.shapes, len(view.shapes), self._fixed
        hits, moving = [], []
        for k in candidates:
            e = k // count
            if not fixed[e]:
                moving.append(k)
                continue
            hit = answers.get(k)
            if hit is None:
                hit = answers[k] = self._twin(e).iscollided(obstacles[k % count])
            if hit:
                hits.append(k)
        return hits, moving

    def _scene_hits(self, candidates: list[int], view: SceneView | None, first: bool) -> list[int]:
        """The candidate element-obstacle pairs that collide (the first one only, if asked)."""
        if not candidates:
            return []
        assert view is not None
        twin, obstacles, count = self._twin, view.shapes, len(view.shapes)
        hits = []
        for k in candidates:
            if twin(k // count).iscollided(obstacles[k % count]):
                hits.append(k)
                if first:
                    break
        return hits

    # ---------------------------------------------------------------- queries

    @_exclusive
    def self_collision(self, q: Any) -> bool:
        """Whether configuration ``q`` is in self-collision (see the class notes for the
        pairs checked).

        Parameters
        ----------
        q : array_like, shape (dof,)

        Returns
        -------
        bool
            True when any checked pair touches or overlaps.

        Raises
        ------
        InvalidArgumentError
            ``q`` has the wrong length, holds NaN or infinity, or (with
            :attr:`out_of_limits` ``"raise"``) a value outside the limits.
        """
        return self.in_collision(q)

    @_exclusive
    def in_collision(self, q: Any, scene: Scene | None = None) -> bool:
        """Whether configuration ``q`` is in self-collision or touches an object of ``scene``.

        Parameters
        ----------
        q : array_like, shape (dof,)
        scene : Scene, optional
            The obstacles; None checks self-collision only (as :meth:`self_collision`).

        Returns
        -------
        bool

        Raises
        ------
        InvalidArgumentError
            A bad ``q`` (see :meth:`self_collision`).
        ShapeTypeError
            ``scene`` is not a Scene.
        """
        _, T_base_body, centres = self._configuration(q)
        own = self._spheres.self_candidates(centres)
        view = None if scene is None else self._view(scene)
        self._begin(T_base_body)
        fixed, other = self._split_static(self._scene_candidates(centres, view), view)
        if fixed:
            return True
        if not (own or other):
            return False
        return bool(self._self_hits(own, True) or self._scene_hits(other, view, True))

    @_exclusive
    def colliding_pairs(self, q: Any, scene: Scene | None = None) -> list[tuple[str, str]]:
        """Every colliding pair at configuration ``q``.

        Parameters
        ----------
        q : array_like, shape (dof,)
        scene : Scene, optional

        Returns
        -------
        list of (str, str)
            Self pairs first, as ``(link, link)`` in :attr:`collision_pairs` order, then
            scene pairs as ``(link, object name)`` in link order; attached objects appear
            under their names. Each pair once.
        """
        _, T_base_body, centres = self._configuration(q)
        view = None if scene is None else self._view(scene)
        self._begin(T_base_body)
        own = self._self_hits(self._spheres.self_candidates(centres), False)
        fixed, moving = self._split_static(self._scene_candidates(centres, view), view)
        other = sorted(fixed + self._scene_hits(moving, view, False))
        found: dict[tuple[str, str], None] = {}
        for k in own:
            found[(self._parts[self._pair_a[k]], self._parts[self._pair_b[k]])] = None
        if view is not None:
            count = len(view.shapes)
            for k in other:
                found[(self._parts[k // count], view.owners[k % count])] = None
        return list(found)

    @_exclusive
    def distance(self, q: Any, scene: Scene | None = None) -> RobotDistance:
        """The nearest pair at configuration ``q``: to the scene, or between links.

        Parameters
        ----------
        q : array_like, shape (dof,)
        scene : Scene, optional
            With a scene, the nearest object of the scene to any link or attached object
            (the robot's clearance). Without one, the nearest pair among those self-collision
            checks.

        Returns
        -------
        RobotDistance
            ``(distance, part, other, point_part, point_other)``, points in the world frame.
            ``distance`` is ``inf`` (and the rest None) when there is no pair to measure.
        """
        _, T_base_body, listed = self._configuration(q)
        centres, radius = np.array(listed).reshape(-1, 3), self._radius
        if scene is None:
            a, b = self._pair_a, self._pair_b
            others: list[Any] = self._shapes
            names = self._parts
            gaps = np.linalg.norm(centres[a] - centres[b], axis=1) - radius[a] - radius[b]
        else:
            view = self._view(scene)
            count = len(view.shapes)
            a, b = np.divmod(np.arange(len(self._shapes) * count), count)
            others, names = view.shapes, view.owners
            gaps = self._scene_gaps(centres, view).reshape(-1)
        best = RobotDistance(math.inf, None, None, None, None)
        self._begin(T_base_body)
        for k in np.argsort(gaps, kind="stable").tolist():
            # A gap bounds a separation from below, not a depth: once an overlap is found,
            # every pair whose bounding volumes touch may overlap more deeply.
            if gaps[k] > max(best.distance, 0.0):
                break
            i, j = int(a[k]), int(b[k])
            other = self._twin(j) if scene is None else others[j]
            found, p1, p2 = self._twin(i).closest_point(other, inf_dist=math.inf)
            if found is not None and found < best.distance:
                best = RobotDistance(float(found), self._parts[i], names[j], p1, p2)
        return best

    @_exclusive
    def check(
        self,
        Q: Any,
        scene: Scene | None = None,
        *,
        worlds: Any = None,
        executor: concurrent.futures.Executor | None = None,
        progress: bool = False,
        chunk_size: int | None = None,
    ) -> np.ndarray:
        """:meth:`in_collision` for many configurations at once.

        Forward kinematics and the bounding-sphere culls run in numpy over all
        configurations; Coal is asked only about the pairs left, stopping at each
        configuration's first collision.

        Parameters
        ----------
        Q : array_like, shape (N, dof)
        scene : Scene, optional
        worlds : int or array_like of int, shape (N,), optional
            The world of ``scene`` (:meth:`~spatialcontact.Scene.add_world`) each configuration
            is checked in: row ``n`` against the objects of world ``worlds[n]`` and the global
            ones only (-1: every object), the robot at its group's pose in every world, as one
            model placed at N configurations, one per world. A single int applies to every
            row. None: every object, or when the robot's group is an object of a world of
            ``scene``, that world's and the global ones (as every query of the robot).
        executor : concurrent.futures.Executor, optional
            Where the work runs, in chunks of configurations: a ``ProcessPoolExecutor``, a
            Dask ``client.get_executor()``, ... The robot and the scene are pickled once and
            sent to each worker once (see :func:`spatialcontact.batch.map_chunks`). None
            runs here.
        progress : bool
            Show a ``tqdm`` progress bar.
        chunk_size : int, optional
            Configurations per chunk (the default of :func:`~spatialcontact.batch.map_chunks`).

        Returns
        -------
        ndarray of bool, shape (N,)
            True where the configuration collides (with itself or the scene), exactly as
            ``in_collision(Q[n], scene)``.

        Raises
        ------
        InvalidArgumentError
            ``Q`` is not (N, dof), or a row holds NaN or (with :attr:`out_of_limits`
            ``"raise"``) a value outside the limits; the message names the row. ``worlds``
            is not one int or N of them, names no world of ``scene``, comes without a scene,
            or is given while the robot's group is an object of a world. Nothing runs.
        ShapeTypeError
            ``scene`` is not a Scene, ``worlds`` not integers, ``executor`` not an Executor,
            or ``progress`` not True or False.
        BatchError
            A chunk failed in a worker (the message names the configuration).
        """
        self._guard()
        Q = self._check_Q(Q, "Q")
        progress = flag(progress, "progress")
        if scene is not None:
            check_scene(scene)
        if worlds is not None:
            # The world of each row rides along as a last column, chunked with its row.
            Q = np.column_stack([Q, self._check_worlds(worlds, len(Q), scene)])
        if executor is None and not progress and chunk_size is None:
            return _check_chunk((self, scene), Q)
        from ..batch import map_chunks

        parts = map_chunks(
            _check_chunk,
            (self, scene),
            Q,
            chunk_size=chunk_size,
            executor=executor,
            progress=progress,
            unit="configuration",
        )
        return np.concatenate(parts) if parts else np.zeros(0, dtype=bool)

    @_exclusive
    def in_collision_many(
        self,
        Q: Any,
        scene: Scene | None = None,
        *,
        worlds: Any = None,
        executor: concurrent.futures.Executor | None = None,
        progress: bool = False,
        chunk_size: int | None = None,
    ) -> np.ndarray:
        """The former name of :meth:`check`, kept working: the same call and answers."""
        return self.check(
            Q, scene, worlds=worlds, executor=executor, progress=progress, chunk_size=chunk_size
        )

    def _check_worlds(self, worlds: Any, n: int, scene: Scene | None) -> np.ndarray:
        """``worlds`` of :meth:`check` for ``n`` configurations, as an (n,) float array."""
        if scene is None:
            raise InvalidArgumentError(
                f"worlds={describe(worlds)} needs a scene with worlds; scene is None"
            )
        array = np.asarray(worlds) if not isinstance(worlds, np.ndarray) else worlds
        if array.dtype == bool or not np.issubdtype(array.dtype, np.integer):
            raise ShapeTypeError(
                f"worlds must be an int or integers, one per configuration, got {describe(worlds)}"
            )
        if array.shape == ():
            array = np.full(n, int(array))
        if array.shape != (n,):
            raise InvalidArgumentError(
                f"worlds must be one int or {n} of them (one per row of Q), got an array of "
                f"shape {array.shape}"
            )
        bad = np.flatnonzero((array < -1) | (array >= scene.worlds))
        if len(bad):
            k = int(bad[0])
            raise InvalidArgumentError(
                f"worlds[{k}] = {int(array[k])} is neither -1 (every object) nor a world of the "
                f"scene, which has {scene.worlds} (0 to {scene.worlds - 1})"
            )
        view = self._view(scene)
        if view.world >= 0:
            raise InvalidArgumentError(
                f"worlds={describe(worlds)} places robot {self.name!r} in chosen worlds, but its "
                f"group is an object of world {view.world} of the scene, which is the only "
                "world it is checked in: leave worlds out, or take the group out of the scene"
            )
        return array.astype(np.float64)

    def _check_rows(self, Q: np.ndarray, scene: Scene | None) -> np.ndarray:
        """:meth:`check` of checked configurations ``Q`` (N, dof), here."""
        return self._checked_rows(Q, scene, None)

    def _checked_rows(
        self, Q: np.ndarray, scene: Scene | None, worlds: np.ndarray | None
    ) -> np.ndarray:
        """:meth:`check` of checked configurations ``Q`` (N, dof), here; with ``worlds``
        (N,), row ``n`` in world ``worlds[n]`` of ``scene`` (-1: every object)."""
        self._guard()
        view = None if scene is None else self._view(scene)
        out = np.zeros(len(Q), dtype=bool)
        self._begin(self._kin.body_poses([0.0] * self.dof))  # places the root's elements
        for start in range(0, len(Q), _CHUNK):
            T_base_body = self._kin.body_poses_many(Q[start : start + _CHUNK])
            centres = self._spheres.centres_many(T_base_body)
            own = _by_row(*np.nonzero(self._spheres.self_candidates_many(centres)))
            if worlds is None or view is None or scene is None:
                found = self._scene_candidates_many(centres, view)
            else:
                found = self._world_candidates_many(
                    centres, view, worlds[start : start + _CHUNK], scene.worlds
                )
            other = {}
            for n, candidates in found.items():
                fixed, moving = self._split_static(candidates, view)
                if fixed:
                    out[start + n] = True
                    own.pop(n, None)
                elif moving:
                    other[n] = moving
            todo = sorted(own.keys() | other.keys())
            if not todo:
                continue
            rows = np.array(todo)
            P = T_base_body[rows[:, None], self._element_body] @ self._T_body_element
            for n, poses in zip(todo, self._begin_many(P), strict=True):
                self._begin(poses)
                out[start + n] = bool(
                    self._self_hits(own.get(n, []), True)
                    or self._scene_hits(other.get(n, []), view, True)
                )
        return out

    def _world_candidates_many(
        self, centres: np.ndarray, view: SceneView, worlds: np.ndarray, count: int
    ) -> dict[int, list[int]]:
        """:meth:`_scene_candidates_many` with row ``n`` among the obstacles of world
        ``worlds[n]`` (of ``count``) and the global ones only (-1: all of them)."""
        if not view.shapes:
            return {}
        everywhere = np.flatnonzero(worlds < 0)
        rows_found, keys_found = [], []
        if len(everywhere):
            touching, near = self._near(centres[everywhere], view)
            r, element, obstacle = np.nonzero(touching)
            rows_found.append(everywhere[r])
            keys_found.append(element * len(view.shapes) + near[obstacle])
        placed = np.flatnonzero(worlds >= 0)
        if len(placed):
            cached = self._obstacle_cache(view)
            table, valid = cached.by_world(count)
            index = table[worlds[placed]]  # (k, M) positions in near
            touching = spheres_near_gathered_boxes(
                centres[placed],
                self._cull_reach,
                cached.rotations_near[index],
                cached.frames[1][index],
                cached.half_near[index],
            )
            touching &= valid[worlds[placed]][:, None, :]
            if cached.free_near is not None:
                touching &= cached.free_near[:, index].transpose(1, 0, 2)
            r, element, m = np.nonzero(touching)
            rows_found.append(placed[r])
            keys_found.append(element * len(view.shapes) + cached.near[index[r, m]])
        rows = np.concatenate(rows_found)
        order = np.argsort(rows, kind="stable")
        return _by_row(rows[order], np.concatenate(keys_found)[order])

    def _scene_candidates_many(
        self, centres: np.ndarray, view: SceneView | None
    ) -> dict[int, list[int]]:
        """Element-obstacle pairs whose bounding volumes touch, by configuration, as
        ``element * B + obstacle``, from element centres (N, E, 3)."""
        if view is None or not view.shapes:
            return {}
        touching, near = self._near(centres, view)
        rows, element, obstacle = np.nonzero(touching)
        return _by_row(rows, element * len(view.shapes) + near[obstacle])

    # ---------------------------------------------------------------- attached objects

    @_exclusive
    def attach(
        self,
        shape: CollisionShape,
        link: str,
        pose: Any = None,
        *,
        name: str | None = None,
        allowed: Iterable[str] = (),
    ) -> str:
        """Attach an object (a grasped part, a tool) to a link: it moves with the link.

        The object joins :attr:`group` and is checked against the scene, against every link
        except its allowed ones, and against other attached objects that move with another
        body.

        Parameters
        ----------
        shape : CollisionShape or CollisionShapeGroup
            The object; it must be in no group. Its own ``T`` is replaced by its placement.
        link : str
            The link it moves with.
        pose : SE3 or array_like (4, 4), optional
            ``T_link_object``, its pose in the link's frame; the identity by default.
        name : str, optional
            Its name in results (:meth:`colliding_pairs`, :meth:`distance`); the shape's
            ``name``, else ``"attached_<k>"``. Must differ from every link name and other
            attached object.
        allowed : iterable of str
            Links it may touch besides ``link`` and the links fixed to it (the fingers
            holding it, say).

        Returns
        -------
        str
            The name.

        Raises
        ------
        RobotModelError
            ``link`` or an ``allowed`` link is unknown, or ``name`` is taken.
        ShapeTypeError, InvalidShapeError, InvalidPoseError
            ``shape`` is not a shape, is already in a group or has ``collision=False``
            (InvalidShapeError), ``pose`` is not a rigid transform, or ``allowed`` is not an
            iterable of link names (ShapeTypeError).
        """
        if not isinstance(shape, CollisionShape):
            raise ShapeTypeError(f"shape must be a CollisionShape, got {describe(shape)}")
        if not shape.collision:
            raise InvalidShapeError(
                f"shape {describe(shape)} has collision=False: nothing to check"
            )
        if not isinstance(link, str) or link not in self._link_index:
            self._unknown(link, "link")
        if isinstance(allowed, (str, bytes)) or not isinstance(allowed, Iterable):
            raise ShapeTypeError(
                f"allowed must be an iterable of link names, got {describe(allowed)}"
            )
        allowed_links = set()
        for other in allowed:
            if not isinstance(other, str) or other not in self._link_index:
                self._unknown(other, "link")
            allowed_links.add(other)
        kin = self._kin
        body = int(kin.link_body[self._link_index[link]])
        allowed_links |= {
            n for n, b in zip(kin.link_names, kin.link_body.tolist(), strict=True) if b == body
        }
        T_link_object = as_pose(pose, "pose")
        label = name if name is not None else shape.name
        if label is None:
            k = 0
            while f"attached_{k}" in self._attachments or f"attached_{k}" in self._link_index:
                k += 1
            label = f"attached_{k}"
        if not isinstance(label, str) or not label:
            raise RobotModelError(f"name must be a non-empty str, got {describe(label)}")
        if label in self._link_index or label in self._attachments:
            raise RobotModelError(
                f"name {label!r} is already a link or attached object of robot {self.name!r}"
            )
        self._guard()
        bounding_sphere(shape)  # refuses an unbounded shape before anything changes
        self.group.append(shape)  # refuses a shape already in a group
        self._attachments[label] = Attachment(shape, link, T_link_object, frozenset(allowed_links))
        self._shapes.append(shape)
        self._parts.append(label)
        self._element_body = np.append(self._element_body, body)
        T_body_object = kin.T_body_link[self._link_index[link]] @ T_link_object
        self._T_body_element = np.concatenate([self._T_body_element, T_body_object[None]])
        self._refresh_structure()
        self.set_q(self._q)
        return label

    @_exclusive
    def detach(self, name: str) -> CollisionShape:
        """Detach an attached object; it stays where it is in the world.

        Parameters
        ----------
        name : str
            As returned by :meth:`attach`.

        Returns
        -------
        CollisionShape
            The object, out of :attr:`group`, its ``T`` its last world pose.

        Raises
        ------
        RobotModelError
            ``name`` is not an attached object.
        """
        if name not in self._attachments:
            raise RobotModelError(
                f"name {describe(name)} is not an object attached to robot {self.name!r}; "
                f"attached: {_listing(self._attachments) or 'none'}"
            )
        self._guard()
        attachment = self._attachments.pop(name)
        shape = attachment.shape
        dropped = {pair for pair in self._scene_allowed if pair[0] == name}
        if dropped:
            self._scene_allowed -= dropped
            self._allowed_revision += 1
        T_world_object = shape.world_T
        i = next(k for k, s in enumerate(self._shapes) if s is shape)
        self.group.remove(shape)
        shape.T = T_world_object
        del self._shapes[i], self._parts[i]
        self._element_body = np.delete(self._element_body, i)
        self._T_body_element = np.delete(self._T_body_element, i, axis=0)
        self._refresh_structure()
        self.set_q(self._q)
        return shape

    # ---------------------------------------------------------------- allowed scene pairs

    @_exclusive
    def allow(self, part: str, obstacle: str) -> None:
        """Skip the pair of a link (or attached object) and a scene object in scene checks.

        For a part that touches an object by design: the base link standing on the table,
        a tool in its holder. The pair is skipped by every scene query (:meth:`in_collision`,
        :meth:`check`, :meth:`colliding_pairs`, :meth:`distance`, :meth:`check_motion`) in
        every scene with an object called ``obstacle``; the object's other pairs, and
        ``part``'s pairs with other objects, are still checked.

        Parameters
        ----------
        part : str
            A link or an attached object's name.
        obstacle : str
            The name of a scene object (it need not be in any scene yet).

        Raises
        ------
        RobotModelError
            ``part`` is neither a link nor an attached object of the robot.
        ShapeTypeError
            ``obstacle`` is not a non-empty str.
        """
        self._allowed_key(part, obstacle)
        if (part, obstacle) not in self._scene_allowed:
            self._scene_allowed.add((part, obstacle))
            self._allowed_revision += 1

    @_exclusive
    def disallow(self, part: str, obstacle: str) -> None:
        """Check the pair of ``part`` and scene object ``obstacle`` again (undo :meth:`allow`;
        nothing happens when it was not allowed).

        Raises
        ------
        RobotModelError, ShapeTypeError
            As for :meth:`allow`.
        """
        self._allowed_key(part, obstacle)
        if (part, obstacle) in self._scene_allowed:
            self._scene_allowed.discard((part, obstacle))
            self._allowed_revision += 1

    @property
    def allowed_scene_pairs(self) -> list[tuple[str, str]]:
        """list of (str, str): the ``(part, scene object)`` pairs :meth:`allow` skips, sorted."""
        return sorted(self._scene_allowed)

    def _allowed_key(self, part: Any, obstacle: Any) -> None:
        if not isinstance(part, str) or (
            part not in self._link_index and part not in self._attachments
        ):
            self._unknown(part, "part")
        if not isinstance(obstacle, str) or not obstacle:
            raise ShapeTypeError(
                f"obstacle must be the name of a scene object (a non-empty str), got "
                f"{describe(obstacle)}"
            )

    # ---------------------------------------------------------------- motions

    @_exclusive
    def check_motion(
        self, q0: Any, q1: Any, scene: Scene | None = None, *, tolerance: float = 1e-3
    ) -> bool:
        """Whether the straight-line joint motion from ``q0`` to ``q1`` is free.

        See :mod:`spatialcontact.robot.motion` for the method and the guarantee: True only
        when every checked pair is proved apart all along the motion (the segment
        ``q0 + t (q1 - q0)``, ``t`` in [0, 1]); never True when a configuration on it
        collides.

        Parameters
        ----------
        q0, q1 : array_like, shape (dof,)
        scene : Scene, optional
        tolerance : float
            Metres. A motion that comes closer than this to a contact without touching may be
            called not free.

        Returns
        -------
        bool
            True when the motion is free (of self-collision and of the scene).
        """
        self._guard()
        Q0 = np.array([self._check_q(q0, "q0")])
        Q1 = np.array([self._check_q(q1, "q1")])
        tol = _check_tolerance(tolerance)
        if scene is not None:
            check_scene(scene)
        return bool(self._motion_rows(Q0, Q1, scene, tol)[0])

    @_exclusive
    def check_motions(
        self,
        Q0: Any,
        Q1: Any,
        scene: Scene | None = None,
        *,
        tolerance: float = 1e-3,
        executor: concurrent.futures.Executor | None = None,
        progress: bool = False,
        chunk_size: int | None = None,
    ) -> np.ndarray:
        """:meth:`check_motion` for many motions.

        Parameters
        ----------
        Q0, Q1 : array_like, shape (M, dof)
            Start and end of each motion.
        scene : Scene, optional
        tolerance : float
            Metres, as for :meth:`check_motion`.
        executor, progress, chunk_size
            As for :meth:`check` (chunks of motions).

        Returns
        -------
        ndarray of bool, shape (M,)
            True where the motion is free.

        Raises
        ------
        InvalidArgumentError
            A bad row of ``Q0`` or ``Q1`` (named), different shapes, or a ``tolerance`` that
            is not finite and > 0.
        ShapeTypeError
            ``tolerance`` is not a real number (a bool or a string, say), ``progress`` is not
            True or False, or as for :meth:`check`.
        """
        self._guard()
        Q0 = self._check_Q(Q0, "Q0")
        Q1 = self._check_Q(Q1, "Q1")
        if Q0.shape != Q1.shape:
            raise InvalidArgumentError(
                f"Q0 and Q1 must have the same shape, got {Q0.shape} and {Q1.shape}"
            )
        tol = _check_tolerance(tolerance)
        progress = flag(progress, "progress")
        if scene is not None:
            check_scene(scene)
        if executor is None and not progress and chunk_size is None:
            return self._motion_rows(Q0, Q1, scene, tol)
        from ..batch import map_chunks

        parts = map_chunks(
            _motion_chunk,
            (self, scene, tol),
            np.stack([Q0, Q1], axis=1),
            chunk_size=chunk_size,
            executor=executor,
            progress=progress,
            unit="motion",
        )
        return np.concatenate(parts) if parts else np.zeros(0, dtype=bool)

    def _motion_rows(
        self, Q0: np.ndarray, Q1: np.ndarray, scene: Scene | None, tolerance: float
    ) -> np.ndarray:
        """:meth:`check_motions` of checked motions, here: the motions the prefilter's spheres
        prove free (see :meth:`set_motion_prefilter`), the others by the exact bounds."""
        self._guard()
        view = None if scene is None else self._view(scene)
        prefilter = self._prefilter
        if prefilter is None or self._attachments or not len(Q0):
            return check_motions(self, Q0, Q1, view, tolerance)
        W = self.group.world_T
        if self._prefilter_at is not W:
            prefilter.group.T = W
            self._prefilter_at = W
        free: np.ndarray = prefilter._proved_free(Q0, Q1, scene, tolerance)
        rest = np.flatnonzero(~free)
        if len(rest):
            free[rest] = check_motions(self, Q0[rest], Q1[rest], view, tolerance)
        return free

    @_exclusive
    def set_motion_prefilter(self, spheres: SphereModel | None) -> None:
        """Try to prove motions free on covering spheres first, in the compiled kernel.

        With a prefilter, :meth:`check_motion` and :meth:`check_motions` first run the sphere
        kernel's safe-skip proof (:meth:`SphereRobotModel.check_motions
        <spatialcontact.spheres.SphereRobotModel.check_motions>`) on ``spheres``, and check
        only the motions it does not prove free with this robot's own bounds. The spheres
        are proved to hold every point of each link's collision surface before they are
        taken, so links whose spheres are apart are apart: a motion is still never called
        free when a configuration on it collides. The answers are those without the
        prefilter, except that a free motion the exact bounds could not prove (one passing
        within ``tolerance`` of a contact) may be proved free by the spheres.

        The spheres check this robot's self pairs and every object of the scene (also those
        of other worlds and allowed scene pairs, which only makes them stricter). A robot
        with attached objects checks every motion without the prefilter. The kernel needs
        numba (``pip install "spatialcontact[spheres]"``); its first use in a new process
        compiles it, or loads it from numba's cache (about a second).

        Parameters
        ----------
        spheres : SphereModel or None
            Covering spheres of this robot's links (:meth:`spheres`, or loaded and then
            proved here); None removes the prefilter.

        Raises
        ------
        InvalidArgumentError
            ``spheres`` is not a SphereModel or None.
        RobotModelError
            The robot is not ``geometry="mesh"`` (a sphere-model robot checks spheres
            already; a convex one checks hulls that the spheres need not hold), numba is not
            installed, the spheres leave part of a link's surface out (the message names the
            links), skip self pairs this robot checks (``self_collision_ignore``) or shrink
            spheres (a negative ``self_collision_buffer``). The robot is left as it was.
        """
        from ..spheres.fit import SphereModel
        from ..spheres.model import SphereRobotModel, cover

        if spheres is None:
            self._prefilter = self._prefilter_at = None
            return
        if not isinstance(spheres, SphereModel):
            raise InvalidArgumentError(
                f"spheres must be a SphereModel or None, got {describe(spheres)}"
            )
        if self._geometry_kind != "mesh":
            raise RobotModelError(
                f"robot {self.name!r}: a motion prefilter is for geometry='mesh' robots, this "
                f"one has geometry={self._geometry_kind!r}"
            )
        if importlib.util.find_spec("numba") is None:
            raise RobotModelError(
                f"robot {self.name!r}: the motion prefilter runs in the sphere kernel, which "
                "needs numba: pip install 'spatialcontact[spheres]'"
            )
        skipped = sorted(tuple(sorted(pair)) for pair in spheres.ignored_pairs() - self._disabled)
        if skipped:
            raise RobotModelError(
                f"robot {self.name!r}: the spheres' self_collision_ignore skips link pairs "
                f"this robot checks: {skipped}"
            )
        shrunk = {k: v for k, v in spheres.self_collision_buffer.items() if v < 0.0}
        if shrunk:
            raise RobotModelError(
                f"robot {self.name!r}: the spheres' self_collision_buffer shrinks spheres "
                f"(a prefilter's spheres must hold the links): {shrunk}"
            )
        report = cover(self, spheres, False)
        left_out = [link for link, c in report.links.items() if not c.covered]
        if left_out:
            raise RobotModelError(
                f"robot {self.name!r}: the spheres leave part of the surface of "
                f"{', '.join(map(repr, left_out))} out; a prefilter's spheres must hold every "
                "link (fit them with robot.spheres(...))"
            )
        self._prefilter = SphereRobotModel(self._spec, self._semantic, spheres)
        self._prefilter_at = None

    @property
    def motion_prefilter(self) -> SphereModel | None:
        """SphereModel or None: the spheres of :meth:`set_motion_prefilter`."""
        prefilter = self._prefilter
        return None if prefilter is None else prefilter.sphere_model

    # ---------------------------------------------------------------- sphere models

    @_exclusive
    def spheres(self, count: Any = None, *, max_radius: Any = None) -> SphereModel:
        """Covering spheres fitted to each link's collision geometry (the URDF's meshes and
        primitives, also for a sphere-model robot); see :mod:`spatialcontact.spheres`.

        The union of each link's spheres holds every point of the link's collision surface
        (proved by construction; :meth:`spheres_cover` proves it again).

        Parameters
        ----------
        count : int or dict of str to int, optional
            Spheres per link (a dict gives them by link; links it leaves out get 1).
        max_radius : float, optional
            Metres: for each link the fewest spheres (up to 256) no larger than this. Give
            exactly one of ``count`` and ``max_radius``.

        Returns
        -------
        SphereModel

        Raises
        ------
        InvalidArgumentError
            Neither or both of ``count`` and ``max_radius``, a count outside [1, 256] or for
            an unknown link, or a ``max_radius`` outside [1e-5, 1e6] m.
        ShapeTypeError
            A count that is not an integer (a float or a bool, even a whole one), or a
            ``max_radius`` that is not a real number (a bool or a string, say).
        """
        from ..spheres.model import fit

        return fit(self, count, max_radius)

    @_exclusive
    def spheres_cover(self, model: SphereModel, *, measure: bool = True) -> CoverageReport:
        """Whether ``model``'s spheres hold each link's collision surface, and how loosely.

        Parameters
        ----------
        model : SphereModel
            Fitted, or loaded from a file (which carries no guarantee until checked here).
        measure : bool
            Also measure each link's overshoot and volume ratio (about 0.2 s a link);
            False leaves them NaN.

        Returns
        -------
        CoverageReport
            Per link: covered (proved), the surface points left out, the overshoot and the
            volume ratio.

        Raises
        ------
        InvalidArgumentError
            ``model`` is not a SphereModel.
        """
        from ..spheres.model import cover

        return cover(self, model, measure)

    # ---------------------------------------------------------------- pickling

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        for key in (
            "_lock",
            "_views",
            "_motion_model",
            "_own",
            "_obstacles_for",
            "_spheres",
            "_twins",
            "_twin_tf",
            "_twin_cache",
            "_twin_query",
            "_query",
            "_source",
            "_W_seen",
            "_W_moved",
        ):
            state.pop(key, None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.RLock()
        self._views = weakref.WeakKeyDictionary()
        self._twin_cache = {}
        self._refresh_structure()
        self.set_q(self._q)


def _check_chunk(payload: tuple[RobotModel, Scene | None], Q: np.ndarray) -> np.ndarray:
    """:meth:`RobotModel.check` of one chunk of checked configurations (N, dof), or (N,
    dof + 1) with each row's world as its last column."""
    robot, scene = payload
    if Q.shape[1] == robot.dof:
        return robot._check_rows(Q, scene)
    return robot._checked_rows(Q[:, :-1], scene, Q[:, -1].astype(np.intp))


def _motion_chunk(
    payload: tuple[RobotModel, Scene | None, float], motions: np.ndarray
) -> np.ndarray:
    """:meth:`RobotModel.check_motions` of one chunk of checked motions (M, 2, dof)."""
    robot, scene, tolerance = payload
    return robot._motion_rows(motions[:, 0], motions[:, 1], scene, tolerance)


def _check_tolerance(tolerance: Any) -> float:
    """A motion check's ``tolerance`` as a float: a real number (numpy numbers and 0-d arrays
    are numbers; bools and strings are not: ShapeTypeError), finite and > 0
    (else InvalidArgumentError)."""
    value = finite_real(tolerance, "tolerance", error=InvalidArgumentError)
    if value <= 0.0:
        raise InvalidArgumentError(
            f"tolerance must be a finite number > 0, got {describe(tolerance)}"
        )
    return value


def _row(name: str, n: int) -> str:
    """How an error names row ``n`` of the configurations ``name`` (``q``, ``q0`` and ``q1``
    are one configuration each)."""
    return name if name in ("q", "q0", "q1") else f"{name}[{n}]"


def _by_row(rows: np.ndarray, cols: np.ndarray) -> dict[int, list[int]]:
    """Group the column indices of nonzero entries (sorted by row) by row."""
    out: dict[int, list[int]] = {}
    for r, c in zip(rows.tolist(), cols.tolist(), strict=True):
        out.setdefault(r, []).append(c)
    return out
