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

import math
import weakref
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import chain
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

import numpy as np

from .._validate import describe, numbers
from ..errors import InvalidArgumentError, InvalidShapeError, RobotModelError, ShapeTypeError
from ..group import CollisionShapeGroup
from ..mesh import ConvexHull, Mesh
from ..pose import as_pose
from ..shapes import CollisionShape, Cuboid, Cylinder, Sphere
from .culling import (
    CULL_SLACK,
    Spheres,
    bounding_sphere,
    box_frames,
    sphere_box_gaps,
    spheres_near_boxes,
)
from .environment import SceneView, check_scene
from .kinematics import Kinematics, Pose12
from .urdf import GeometrySpec, RobotSpec, SemanticSpec, read_srdf, read_urdf

if TYPE_CHECKING:
    from ..scene import Scene
    from .motion import MotionModel

__all__ = ["Attachment", "RobotDistance", "RobotModel"]

LIMIT_TOLERANCE = 1e-9
"""A joint value this far (radians or metres) outside its limits still counts as inside."""

_CHUNK = 2048
"""Configurations culled together against a scene by :meth:`RobotModel.in_collision_many`."""


class RobotDistance(NamedTuple):
    """The nearest pair found by :meth:`RobotModel.distance`.

    Attributes
    ----------
    distance : float
        Signed distance in metres (negative when solids overlap; meshes are hollow, so two
        overlapping meshes give 0); ``inf`` when there is nothing to measure to.
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
        against every object of the scene.

    Geometry
        ``geometry="mesh"`` uses the URDF's meshes as they are: hollow triangle surfaces, the
        same answers as pinocchio or any other Coal user gets. A link wholly inside an
        obstacle's mesh does not collide with it. ``geometry="convex"`` replaces each mesh
        with its convex hull: a solid, so overlaps are always found and distances are signed,
        and queries are faster; but the hull fills the link's concave parts, so
        configurations where links nest closely may read as colliding. Boxes, cylinders and
        spheres are the same in both.

    Placement
        :meth:`set_q` places :attr:`group` at a configuration. A query places it too when it
        asks Coal (not when the bounding spheres settle the answer), and leaves it there:
        :attr:`q` always tells where it is. Call :meth:`set_q` before using :attr:`group`
        yourself.

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
    Robots pickle: the copy holds copies of the shapes and gives the same answers. A robot is
    not safe to share between threads (its queries move its shapes); give each thread or
    process its own copy. Queries never modify a scene; a scene holding the robot's own group
    is checked without it.
    """

    def __init__(
        self,
        spec: RobotSpec,
        semantic: SemanticSpec | None,
        geometry: Literal["mesh", "convex"],
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
        self._refresh_structure()
        self.set_q(self.neutral)

    # ------------------------------------------------------------------ loading

    @classmethod
    def from_urdf(
        cls,
        path: Any,
        srdf: Any = None,
        package_dirs: Any = None,
        geometry: Literal["mesh", "convex"] = "mesh",
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
        geometry : {"mesh", "convex"}
            ``"mesh"``: the meshes as hollow surfaces (pinocchio's answers); ``"convex"``:
            each mesh's solid convex hull (faster, conservative). See the class notes.

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
            ``geometry`` is not ``"mesh"`` or ``"convex"``.
        """
        if geometry not in ("mesh", "convex"):
            raise InvalidArgumentError(
                f"geometry must be 'mesh' or 'convex', got {describe(geometry)}"
            )
        spec = read_urdf(path, package_dirs)
        semantic = None
        if srdf is not None:
            dofs = Kinematics(spec).dof_names
            semantic = read_srdf(srdf, spec, dofs)
        return cls(spec, semantic, geometry)

    def _make_shape(self, g: GeometrySpec, label: str) -> CollisionShape:
        if g.kind == "mesh":
            mesh = Mesh(g.filename, scale=g.size, name=label)
            if self._geometry_kind == "convex":
                return ConvexHull(mesh.vertices, name=label)
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
        """str: ``"mesh"`` or ``"convex"``, as given to :meth:`from_urdf`."""
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

    def _check_q(self, q: Any) -> list[float]:
        """``q`` as a list of :attr:`dof` floats, checked for length, NaN and limits."""
        if not (isinstance(q, np.ndarray) and q.dtype == np.float64):
            q = numbers(q, "q", f"{self.dof} joint values")
        if q.shape != (self.dof,):
            raise InvalidArgumentError(
                f"q must have {self.dof} joint values ({', '.join(self.joint_names)}), got an "
                f"array of shape {q.shape}"
            )
        values: list[float] = q.tolist()
        for v, (lo, hi) in zip(values, self._bounds_ok, strict=True):
            if not lo <= v <= hi:  # also NaN
                clipped: list[float] = self._limited(q.reshape(1, -1), "q")[0].tolist()
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
        self._contents = self.group._contents
        self._own = frozenset(id(s) for s in self.group.leaves()) | {id(self.group)}
        self._fixed = [b == 0 for b in body]  # elements that move with no joint
        self._cull_reach = ((self._radius + CULL_SLACK) ** 2)[:, None]
        # How far from the root's origin any element can reach, in every configuration.
        self._reach = float(
            (
                self._kin.origin_reach[self._element_body]
                + np.linalg.norm(self._c_body, axis=1)
                + self._radius
            ).max(initial=0.0)
        )
        self._obstacles_for: tuple[Any, ...] | None = None
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
            How many.
        rng : numpy Generator, int seed or None

        Returns
        -------
        ndarray, shape (n, dof)
        """
        generator = np.random.default_rng(rng)
        lower = np.where(np.isfinite(self._kin.lower), self._kin.lower, -math.pi)
        upper = np.where(np.isfinite(self._kin.upper), self._kin.upper, math.pi)
        return generator.uniform(lower, upper, size=(int(n), self.dof))

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
        """ndarray, shape (dof,): the configuration :attr:`group` is placed at (see the
        class notes)."""
        return np.array(self._q)

    def _place(self, T_base_body: list[Pose12], q: list[float]) -> None:
        """Place :attr:`group` at one configuration, given ``T_base_body`` of its bodies."""
        flat = np.fromiter(chain.from_iterable(T_base_body), float, 12 * len(T_base_body))
        P = self._poses
        P[:, :3] = flat.reshape(-1, 3, 4)[self._element_body] @ self._T_body_element
        self._place_poses(P, q)

    def _place_poses(self, T_base_element: np.ndarray, q: Any) -> None:
        """Place :attr:`group`'s elements at ``T_base_element`` (E, 4, 4), configuration ``q``."""
        self.group.set_poses(T_base_element, check=False)
        self._q = q

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

    def _obstacles(self, view: SceneView) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The view's obstacle boxes in the base frame: rotations (B, 3, 3), centres (B, 3)
        and half sides (B, 3)."""
        cached = self._obstacle_cache(view)
        return cached[3], cached[4], view.half

    def _obstacle_cache(self, view: SceneView) -> tuple[Any, ...]:
        """``(view, revision, W, rotations, centres, static answers, frames)`` of the view's
        boxes in the base frame, rebuilt when the view or the robot's group moved."""
        W = self.group.world_T
        cached = self._obstacles_for
        if (
            cached is None
            or cached[0] is not view
            or cached[1] != view.revision
            or cached[2] is not W
        ):
            R_world_base = W[:3, :3]
            rotations = np.einsum("ji,bjk->bik", R_world_base, view.rotations)  # R^T R_box
            centres = (view.centres - W[:3, 3]) @ R_world_base  # R^T (c - t), row by row
            # The obstacles the robot can reach at all: within its reach of the root's origin.
            origin = sphere_box_gaps(
                np.zeros((1, 3)), np.array([self._reach]), box_frames(rotations, centres), view.half
            )[0]
            near = np.flatnonzero(origin <= CULL_SLACK)
            frames = box_frames(rotations[near], centres[near])
            cached = (view, view.revision, W, rotations, centres, {}, frames, near, view.half[near])
            self._obstacles_for = cached
        return cached

    def _scene_gaps(self, centres: np.ndarray, view: SceneView) -> np.ndarray:
        """Sphere-to-box gaps (..., E, B) between the elements (centres (..., E, 3), base
        frame) and all of the view's obstacles."""
        rotations, boxes = self._obstacle_cache(view)[3:5]
        return sphere_box_gaps(centres, self._radius, box_frames(rotations, boxes), view.half)

    def _near(self, centres: np.ndarray, view: SceneView) -> tuple[np.ndarray, np.ndarray]:
        """Which elements (centres (..., E, 3)) come near which of the ``b`` obstacles within
        the robot's reach: a bool array (..., E, b), and those obstacles' indices (b,)."""
        cached = self._obstacle_cache(view)
        near = cached[7]
        return spheres_near_boxes(centres, self._cull_reach, cached[6], cached[8]), near

    def _scene_candidates(
        self, centres: list[tuple[float, float, float]], view: SceneView | None
    ) -> list[int]:
        """Element-obstacle pairs whose bounding volumes touch at one configuration, as
        ``element * B + obstacle``."""
        if view is None or not view.shapes:
            return []
        touching, near = self._near(np.array(centres), view)
        element, obstacle = np.nonzero(touching)
        found: list[int] = (element * len(view.shapes) + near[obstacle]).tolist()
        return found

    def _self_hits(self, candidates: list[int], first: bool) -> list[int]:
        """The candidate self pairs that collide (the first one only, if asked)."""
        shapes, pa, pb = self._shapes, self._pair_a, self._pair_b
        hits = []
        for k in candidates:
            if shapes[pa[k]].iscollided(shapes[pb[k]]):
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
        answers: dict[int, bool] = self._obstacles_for[5]
        shapes, obstacles, count, fixed = self._shapes, view.shapes, len(view.shapes), self._fixed
        hits, moving = [], []
        for k in candidates:
            e = k // count
            if not fixed[e]:
                moving.append(k)
                continue
            hit = answers.get(k)
            if hit is None:
                hit = answers[k] = shapes[e].iscollided(obstacles[k % count])
            if hit:
                hits.append(k)
        return hits, moving

    def _scene_hits(self, candidates: list[int], view: SceneView | None, first: bool) -> list[int]:
        """The candidate element-obstacle pairs that collide (the first one only, if asked)."""
        if not candidates:
            return []
        assert view is not None
        shapes, obstacles, count = self._shapes, view.shapes, len(view.shapes)
        hits = []
        for k in candidates:
            if shapes[k // count].iscollided(obstacles[k % count]):
                hits.append(k)
                if first:
                    break
        return hits

    # ---------------------------------------------------------------- queries

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
        values, T_base_body, centres = self._configuration(q)
        own = self._spheres.self_candidates(centres)
        view = None if scene is None else self._view(scene)
        fixed, other = self._split_static(self._scene_candidates(centres, view), view)
        if fixed:
            return True
        if not (own or other):
            return False
        self._place(T_base_body, values)
        return bool(self._self_hits(own, True) or self._scene_hits(other, view, True))

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
        values, T_base_body, centres = self._configuration(q)
        view = None if scene is None else self._view(scene)
        self._place(T_base_body, values)
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
        values, T_base_body, listed = self._configuration(q)
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
        self._place(T_base_body, values)
        for k in np.argsort(gaps, kind="stable").tolist():
            if gaps[k] > best.distance:
                break
            i, j = int(a[k]), int(b[k])
            found, p1, p2 = self._shapes[i].closest_point(others[j], inf_dist=math.inf)
            if found is not None and found < best.distance:
                best = RobotDistance(float(found), self._parts[i], names[j], p1, p2)
        return best

    def in_collision_many(self, Q: Any, scene: Scene | None = None) -> np.ndarray:
        """:meth:`in_collision` for many configurations at once.

        Forward kinematics and the bounding-sphere culls run in numpy over all
        configurations; Coal is asked only about the pairs left, stopping at each
        configuration's first collision.

        Parameters
        ----------
        Q : array_like, shape (N, dof)
        scene : Scene, optional

        Returns
        -------
        ndarray of bool, shape (N,)
            True where the configuration collides (with itself or the scene), exactly as
            ``in_collision(Q[n], scene)``.
        """
        self._guard()
        Q = self._check_Q(Q, "Q")
        view = None if scene is None else self._view(scene)
        out = np.zeros(len(Q), dtype=bool)
        for start in range(0, len(Q), _CHUNK):
            T_base_body = self._kin.body_poses_many(Q[start : start + _CHUNK])
            centres = self._spheres.centres_many(T_base_body)
            own = _by_row(*np.nonzero(self._spheres.self_candidates_many(centres)))
            other = {}
            for n, candidates in self._scene_candidates_many(centres, view).items():
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
            for n, poses in zip(todo, P, strict=True):
                self._place_poses(poses, Q[start + n].tolist())
                out[start + n] = bool(
                    self._self_hits(own.get(n, []), True)
                    or self._scene_hits(other.get(n, []), view, True)
                )
        return out

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
            (InvalidShapeError), or ``pose`` is not a rigid transform.
        """
        if not isinstance(shape, CollisionShape):
            raise ShapeTypeError(f"shape must be a CollisionShape, got {describe(shape)}")
        if not shape.collision:
            raise InvalidShapeError(
                f"shape {describe(shape)} has collision=False: nothing to check"
            )
        if link not in self._link_index:
            self._unknown(link, "link")
        allowed_links = set()
        for other in allowed:
            if other not in self._link_index:
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

    # ---------------------------------------------------------------- motions

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
        return bool(self.check_motions([q0], [q1], scene, tolerance=tolerance)[0])

    def check_motions(
        self, Q0: Any, Q1: Any, scene: Scene | None = None, *, tolerance: float = 1e-3
    ) -> np.ndarray:
        """:meth:`check_motion` for many motions.

        Parameters
        ----------
        Q0, Q1 : array_like, shape (M, dof)
            Start and end of each motion.
        scene : Scene, optional
        tolerance : float
            Metres, as for :meth:`check_motion`.

        Returns
        -------
        ndarray of bool, shape (M,)
            True where the motion is free.
        """
        from .motion import check_motions

        self._guard()
        Q0 = self._check_Q(Q0, "Q0")
        Q1 = self._check_Q(Q1, "Q1")
        if Q0.shape != Q1.shape:
            raise InvalidArgumentError(
                f"Q0 and Q1 must have the same shape, got {Q0.shape} and {Q1.shape}"
            )
        if not (isinstance(tolerance, (int, float)) and tolerance > 0 and math.isfinite(tolerance)):
            raise InvalidArgumentError(
                f"tolerance must be a finite number > 0, got {describe(tolerance)}"
            )
        view = None if scene is None else self._view(scene)
        return check_motions(self, Q0, Q1, view, float(tolerance))

    # ---------------------------------------------------------------- pickling

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        for key in ("_views", "_motion_model", "_own", "_obstacles_for", "_spheres"):
            state.pop(key, None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._views = weakref.WeakKeyDictionary()
        self._refresh_structure()
        self.set_q(self._q)


def _row(name: str, n: int) -> str:
    """How an error names row ``n`` of the configurations ``name`` (``q`` is one)."""
    return name if name == "q" else f"{name}[{n}]"


def _by_row(rows: np.ndarray, cols: np.ndarray) -> dict[int, list[int]]:
    """Group the column indices of nonzero entries (sorted by row) by row."""
    out: dict[int, list[int]] = {}
    for r, c in zip(rows.tolist(), cols.tolist(), strict=True):
        out.setdefault(r, []).append(c)
    return out
