"""Straight-line motion checks with distance bounds: free stretches are proved, never guessed.

Along the joint-space segment ``q(t) = q0 + t (q1 - q0)``, ``t`` in [0, 1], every point of a
link moves at most ``L (t_b - t_a)`` between ``t_a`` and ``t_b``, where
``L = sum_i r_i |dv_i|`` over the moving joints ``i`` of the link's chain: ``dv_i`` is the
change of joint ``i``'s value over the segment (mimic joints included) and ``r_i`` bounds the
distance from joint ``i``'s axis to the link's geometry in every configuration (1 for a
prismatic joint): the distance from the axis to the next joint's origin, plus the
joint-to-joint distances down the chain (at the far end of a prismatic joint's range), plus
the distance from the link's frame to the far side of its bounding sphere. Two links' relative
motion involves only the joints that are not common to both of their chains, so a pair of
links sums those joints' terms for both links; a link and an obstacle sum the link's.

If a pair is apart by at least ``d_a`` at ``t_a`` and ``d_b`` at ``t_b``, and
``d_a + d_b > (t_b - t_a) L``, it cannot touch anywhere between: a contact at ``t`` would need
``d_a <= (t - t_a) L`` and ``d_b <= (t_b - t) L``. That proves the stretch free. Otherwise the
bounds are made tighter, and then the stretch is split (into :data:`SPLIT` equal ones).

The motion is checked link by link (all ``<collision>`` elements of a link together). The
lower bounds on a pair's distance come in tiers, the cheapest first: (1) the gap between the
link's bounding sphere and the other link's sphere or the obstacle's bounding box; (2) for an
obstacle, the largest gap along the box's three axes between the box and the link's bounding
box (both tiers in numpy, for all pairs and samples at once); (3) Coal's distance between
the link's convex hull (which holds all of its elements) and the other side; (4) when a hull
is not the link itself, the exact distance, after a collision test, over the link's elements.
The bounds found at a sample are kept for every stretch that ends there. A bound is sent to
Coal only when splitting cannot do better cheaply (see :func:`_weak`): a self pair's sphere
bound once it is at most :data:`SPLIT_FIRST` of its stretch's span, a separating-axis bound
or a hull distance once it is at most ``tolerance``. A collision found at any sample ends the
check: the motion is not free. Distances from Coal are lowered by :data:`DISTANCE_SLACK`
before use.

Each motion starts cut into :data:`INITIAL_STRETCHES` equal stretches, whose bounds are
kept in dense (motion, sample, pair) arrays for the first round. There, a stretch is also
proved by the bounds at the ends of the half of the motion that holds it, and Coal is asked
at the motion's ends and middle before the other samples: three distances often prove a
pair over the whole motion. The stretches still open after a round are split into
:data:`SPLIT` equal ones. The motions of one :func:`check_motions` call are checked
together: every round's numpy work (forward kinematics of the new samples, the sphere and
box bounds, the tests of every open stretch) is done once for all of them, and only the Coal
distances are asked one by one. What a scene view gives the bounds (its boxes in the base
frame, the allowed pairs) is kept between calls until the view, the robot's world pose or
its allowed pairs change.

Guarantee: :func:`check_motions` calls a motion free only when every checked pair was proved
apart over the whole segment. A motion is called not free when a sampled configuration
collides, or when an unproved stretch of a pair is so short that it moves the pair by at most
``tolerance`` metres (the pair passes within ``tolerance`` of touching); a motion that touches
anywhere is never called free.
"""

from __future__ import annotations

import copy
import math
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import _native
from ..errors import InvalidMeshError
from ..mesh import ConvexHull, Mesh
from ..shapes import Capsule, CollisionShape, Cone, Cuboid, Cylinder, Ellipsoid, Sphere
from .culling import bounding_sphere
from .environment import SceneView
from .kinematics import _EYE4, Kinematics

if TYPE_CHECKING:
    from .model import RobotModel

__all__ = ["DISTANCE_SLACK", "MotionModel", "check_motions"]

INITIAL_STRETCHES = 8
"""Equal stretches each motion is cut into before the first round (their ends' forward
kinematics and sphere bounds are computed in one numpy call); even."""

SPLIT = 4
"""Equal stretches each stretch still open after a round is split into (their new samples'
forward kinematics and bounds in one numpy call: the calls, not the samples, cost)."""

SPLIT_FIRST = 0.25
"""A self pair's sphere bound above this fraction of its stretch's span is not sent to Coal:
the stretch is split first (see :func:`_weak`)."""

DISTANCE_SLACK = 1e-5
"""Metres taken off every distance Coal reports before it bounds a motion."""

_FLAT_PADDING = 1e-6
"""Metres added on every side of the box that stands in for the hull of a flat part."""

_CORNERS = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], dtype=float)


def _hull_points(shape: CollisionShape) -> np.ndarray:
    """Points (n, 3) in the shape's frame whose convex hull holds the shape."""
    if isinstance(shape, Mesh):
        return shape.vertices
    if isinstance(shape, ConvexHull):
        return shape.points
    if isinstance(shape, Cuboid):
        half = 0.5 * np.asarray(shape.scale)
    elif isinstance(shape, Sphere):
        half = np.full(3, shape.radius)
    elif isinstance(shape, (Cylinder, Cone)):
        half = np.array([shape.radius, shape.radius, 0.5 * shape.length])
    elif isinstance(shape, Capsule):
        half = np.array([shape.radius, shape.radius, 0.5 * shape.length + shape.radius])
    elif isinstance(shape, Ellipsoid):
        half = np.asarray(shape.radii, dtype=float)
    else:  # any other bounded shape: the box around its bounding sphere
        centre, radius = bounding_sphere(shape)
        return centre + radius * _CORNERS
    points: np.ndarray = half * _CORNERS
    return points


def _holding(points: np.ndarray, name: str) -> ConvexHull:
    """The convex hull of ``points`` (n, 3); for points with no volume (a flat mesh, a single
    triangle), the box around them grown by 1 µm on every side, which holds them too."""
    try:
        return ConvexHull(points, name=name)
    except InvalidMeshError:
        low, high = points.min(axis=0) - _FLAT_PADDING, points.max(axis=0) + _FLAT_PADDING
        return ConvexHull(0.5 * (low + high) + 0.5 * (high - low) * _CORNERS, name=name)


class MotionModel:
    """A robot seen link by link, with what bounds each link's motion.

    Parameters
    ----------
    robot : RobotModel

    Attributes
    ----------
    elements : list of list of int
        The robot's elements (indices of its shapes) in each part: a link's ``<collision>``
        elements, or one attached object.
    body : ndarray of int, shape (parts,)
    centre : ndarray, shape (parts, 3)
        Each part's bounding-sphere centre in its body's frame.
    radius : ndarray, shape (parts,)
    reach : ndarray, shape (parts, bodies)
        ``reach[p, b]`` bounds, in every configuration, the distance from body ``b``'s joint
        axis to part ``p`` (1 for a prismatic joint; 0 when ``b`` is not on ``p``'s chain).
    chain : ndarray of bool, shape (parts, bodies)
        Whether body ``b``'s joint moves part ``p``.
    pairs : list of (int, int, list of int)
        The part pairs self-collision checks, each with the robot's self pairs (indices into
        its pair arrays) between their elements.
    hulls : list of CollisionShape
        One shape per part, holding the part: a copy of the element itself when the part is
        one shape that is not a mesh, else the convex hull of its elements; each in no group,
        placed on its own (``T_body_hull`` is its pose in the part's body frame).
    exact : list of bool
        Whether each part's hull is the part itself.
    """

    def __init__(self, robot: RobotModel) -> None:
        kin: Kinematics = robot._kin
        index: dict[str, int] = {}
        self.elements: list[list[int]] = []
        for e, part in enumerate(robot._parts):
            if part not in index:
                index[part] = len(self.elements)
                self.elements.append([])
            self.elements[index[part]].append(e)
        self.part_of = np.array([index[p] for p in robot._parts], dtype=np.intp)
        self.body = np.array([robot._element_body[el[0]] for el in self.elements], dtype=np.intp)
        T_body_element = robot._T_body_element
        hulls: list[CollisionShape] = []
        self.exact: list[bool] = []
        T_body_hull = []
        centres, radii = [], []
        for elements in self.elements:
            shapes = [robot._shapes[e] for e in elements]
            if len(shapes) == 1 and not isinstance(shapes[0], Mesh):
                hulls.append(copy.copy(shapes[0]))
                T_body_hull.append(T_body_element[elements[0]])
                self.exact.append(True)
            else:
                points = np.vstack(
                    [
                        _hull_points(s) @ T_body_element[e][:3, :3].T + T_body_element[e][:3, 3]
                        for s, e in zip(shapes, elements, strict=True)
                    ]
                )
                hulls.append(_holding(points, robot._parts[elements[0]]))
                T_body_hull.append(np.eye(4))
                self.exact.append(False)
            c = robot._c_body[elements]
            middle = 0.5 * (c.min(axis=0) + c.max(axis=0))
            centres.append(middle)
            radii.append(
                float((np.linalg.norm(c - middle, axis=1) + robot._radius[elements]).max())
            )
        self.hulls = hulls
        self.T_body_hull = np.array(T_body_hull)
        # The same, None where the hull sits at its body's frame (no product to place it).
        self.hull_offset = [None if np.array_equal(T, _EYE4) else T for T in self.T_body_hull]
        # The corners of each hull's bounding box in its body's frame: a box holding the
        # part, for the separating-axis bounds against obstacle boxes.
        boxes = []
        for hull, T in zip(hulls, self.T_body_hull, strict=True):
            points = (
                np.asarray(hull.geometry.points()).reshape(-1, 3)
                if isinstance(hull, ConvexHull)
                else _hull_points(hull)
            )
            points = points @ T[:3, :3].T + T[:3, 3]
            low, high = points.min(axis=0), points.max(axis=0)
            boxes.append(0.5 * (low + high) + 0.5 * (high - low) * _CORNERS)
        self.corners = np.array(boxes)
        self.centre = np.array(centres)
        self.radius = np.array(radii)
        self.reach, self.chain = _reach(kin, self.body, self.centre, self.radius)
        grouped: dict[tuple[int, int], list[int]] = {}
        for k, (a, b) in enumerate(
            zip(robot._pair_a.tolist(), robot._pair_b.tolist(), strict=True)
        ):
            grouped.setdefault((int(self.part_of[a]), int(self.part_of[b])), []).append(k)
        self.pairs = [(a, b, ks) for (a, b), ks in grouped.items()]
        self.pair_a = np.array([a for a, _, _ in self.pairs], dtype=np.intp)
        self.pair_b = np.array([b for _, b, _ in self.pairs], dtype=np.intp)
        # The joints that move one part of a pair relative to the other.
        self.pair_joints_a = self.chain[self.pair_a] & ~self.chain[self.pair_b]
        self.pair_joints_b = self.chain[self.pair_b] & ~self.chain[self.pair_a]
        self.pair_radius = self.radius[self.pair_a] + self.radius[self.pair_b]
        # What _native.motion_bounds reads of the parts and their pairs.
        self.bounds_args = (
            tuple(self.body.tolist()),
            np.ascontiguousarray(self.centre, dtype=np.float64),
            tuple(self.pair_a.tolist()),
            tuple(self.pair_b.tolist()),
            np.ascontiguousarray(self.pair_radius, dtype=np.float64),
            np.ascontiguousarray(self.radius, dtype=np.float64),
        )
        # Each self pair's, then each part's, rate per unit change of each degree of
        # freedom: of each moving joint's value (bodies 1 on), times |multiplier| for the
        # joints that follow the degree of freedom. A motion's rates are its |dq| times these.
        per_joint = np.vstack(
            [
                self.reach[self.pair_a] * self.pair_joints_a
                + self.reach[self.pair_b] * self.pair_joints_b,
                self.reach * self.chain,
            ]
        )[:, 1:].T
        follows = np.zeros((len(kin.dof_names), kin.n_bodies - 1))
        follows[kin._source, np.arange(kin.n_bodies - 1)] = np.abs(kin._multiplier)
        self._per_dof = follows @ per_joint
        self._rates_for: dict[int, np.ndarray] = {}
        self._scene: _SceneBounds | None = None
        self._W_seen: np.ndarray | None = None
        self._W_moved: np.ndarray | None = None

    def world_moved(self, W: np.ndarray) -> np.ndarray | None:
        """The robot's world pose ``W`` (4, 4), or None when it is the identity."""
        if W is not self._W_seen:
            self._W_seen = W
            self._W_moved = None if np.array_equal(W, np.eye(4)) else W
        return self._W_moved

    def rates(self, obstacles: int) -> np.ndarray:
        """(dof, keys) rates of every pair key (see :class:`_Motions`) per unit change of each
        degree of freedom, with ``obstacles`` obstacles."""
        rates = self._rates_for.get(obstacles)
        if rates is None:
            n_self = len(self.pairs)
            rates = self._rates_for[obstacles] = np.hstack(
                [self._per_dof[:, :n_self], np.repeat(self._per_dof[:, n_self:], obstacles, 1)]
            )
        return rates

    def scene_bounds(self, robot: RobotModel, view: SceneView | None) -> _SceneBounds:
        """What the bounds of a motion need of a scene view (kept until the view, the
        robot's world pose or its allowed pairs change)."""
        cached = None if view is None or not view.shapes else robot._obstacle_cache(view)
        scene = self._scene
        if scene is None or scene.source is not cached or scene.view is not view:
            scene = self._scene = _SceneBounds(self, view, cached)
        return scene


class _SceneBounds:
    """A scene view's obstacles as the motion bounds use them.

    Attributes
    ----------
    view, source
        The view (or None) and the robot's ``_Obstacles`` of it (None without obstacles).
    obstacles : int
    box_args : tuple
        The boxes as :func:`spatialcontact._native.motion_bounds` reads them: their rotations
        (B, 9, row by row) and centres (B, 3) in the base frame and their half sides (B, 3),
        or three None.
    allowed : ndarray of bool, shape (keys,)
        The pair keys never checked.
    checked : ndarray of int
        The other keys.
    obstacle : ndarray of bool, shape (keys,)
        Which keys are obstacle pairs.
    allowed_elements : ndarray of bool, shape (E, B), or None
    """

    def __init__(self, model: MotionModel, view: SceneView | None, source: Any) -> None:
        self.view, self.source = view, source
        n_self = len(model.pairs)
        self.obstacles = 0 if source is None else len(view.shapes)  # type: ignore[union-attr]
        self.allowed = np.zeros(n_self + len(model.body) * self.obstacles, dtype=bool)
        self.allowed_elements: np.ndarray | None = None
        self.box_args: tuple[Any, Any, Any] = (None, None, None)
        if source is not None:
            assert view is not None
            rotations, centres, half = (
                np.ascontiguousarray(x, dtype=np.float64).reshape(len(x), -1)
                for x in (source.rotations, source.centres, view.half)
            )
            self.box_args = (rotations, centres, half)
            if source.allowed is not None:
                self.allowed_elements = source.allowed
                # A part's pair with an obstacle is allowed when all its elements' are.
                by_part = np.ones((len(model.body), self.obstacles), dtype=bool)
                for p, elements in enumerate(model.elements):
                    by_part[p] = source.allowed[elements].all(axis=0)
                self.allowed[n_self:] = by_part.reshape(-1)
        self.checked = np.flatnonzero(~self.allowed)
        self.obstacle = np.arange(len(self.allowed)) >= n_self
        self._first: tuple[int, tuple[np.ndarray, ...]] | None = None

    def first_samples(self, motion_count: int) -> tuple[np.ndarray, ...]:
        """The first round of ``motion_count`` motions, each cut into
        :data:`INITIAL_STRETCHES` (``n``) equal stretches: the samples' motions and
        parameters, each (S,); the stretches' lengths in ``t`` (1, n, 1), and the halves'
        (1, 2, 1); which samples Coal is asked at first (n + 1, 1) (see
        :func:`_first_round`)."""
        if self._first is None or self._first[0] != motion_count:
            n, h = INITIAL_STRETCHES, INITIAL_STRETCHES // 2
            ts = np.linspace(0.0, 1.0, n + 1)
            coarse = np.zeros((n + 1, 1), dtype=bool)
            coarse[[0, h, n]] = True
            self._first = (
                motion_count,
                (
                    np.repeat(np.arange(motion_count), n + 1),
                    np.tile(ts, motion_count),
                    (ts[1:] - ts[:-1])[None, :, None],
                    (ts[h::h] - ts[:-h:h])[None, :, None],
                    coarse,
                ),
            )
        return self._first[1]


_NO_SAMPLES = np.zeros(0)
"""What :class:`_Motions` holds per sample before it has any (never written to)."""


def _reach(
    kin: Kinematics, body: np.ndarray, centre: np.ndarray, radius: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The configuration-free reach (parts, bodies) and chain (parts, bodies) of parts with
    spheres ``centre`` (body frame), ``radius``; see :class:`MotionModel`."""
    n = kin.n_bodies
    origin = np.zeros((n, 2, 3))  # each body's origin in its parent's frame, at both limits
    for b in range(1, n):
        t = kin.T_parent_joint[b, :3, 3]
        origin[b] = t  # a revolute joint (maybe continuous, of infinite range) turns in place
        if kin.prismatic[b]:
            slide = kin.T_parent_joint[b, :3, :3] @ kin.axis[b]
            origin[b] += kin.value_range[b, :, None] * slide
    link_length = np.linalg.norm(origin, axis=2).max(axis=1)
    reach = np.zeros((len(body), n))
    chain = np.zeros((len(body), n), dtype=bool)
    for p, (k, c, r) in enumerate(zip(body.tolist(), centre, radius.tolist(), strict=True)):
        path = []  # bodies from k up to (not including) 0
        b = k
        while b > 0:
            path.append(b)
            b = int(kin.parent[b])
        for depth, b in enumerate(path):
            chain[p, b] = True
            if kin.prismatic[b]:
                reach[p, b] = 1.0
                continue
            axis = kin.axis[b]
            if depth == 0:  # the axis is the line through the body's origin along axis
                reach[p, b] = _line_distance(c, axis) + r
                continue
            # dist(point, axis) <= dist(next origin, axis) + the joint-to-joint distances
            # down to the part's body + the distance from its origin to the part.
            first = max(_line_distance(o, axis) for o in origin[path[depth - 1]])
            between = sum(link_length[s] for s in path[: depth - 1])
            reach[p, b] = first + between + float(np.linalg.norm(c)) + r
    return reach, chain


def _line_distance(point: np.ndarray, axis: np.ndarray) -> float:
    """Distance from ``point`` to the line through the origin along the unit ``axis``."""
    return float(np.linalg.norm(point - (point @ axis) * axis))


class _Motions:
    """Many motions checked together: their samples, and the bounds found at them.

    Pairs are numbered by *key*: the self part pairs first (``key < n_self``), then the part
    and obstacle pairs, ``n_self + part * B + obstacle``. A *sample* is a configuration on
    one of the motions (``motion[s]`` at parameter ``ts[s]``). The bounds live in two arrays
    of shape (samples, keys): ``value`` (metres, a lower bound on the pair's distance) and
    ``tier`` (how it was found, 1 to 4; 0 for an allowed pair, never checked). The numpy work
    of a round is shared by all the motions still open.
    """

    def __init__(
        self,
        robot: RobotModel,
        model: MotionModel,
        Q0: np.ndarray,
        Q1: np.ndarray,
        view: SceneView | None,
    ) -> None:
        self.robot, self.model, self.view = robot, model, view
        self.Q0, self.dQ = Q0, Q1 - Q0
        self.scene = scene = model.scene_bounds(robot, view)
        self.n_self = len(model.pairs)
        self.obstacles = scene.obstacles
        # How fast each pair's distance can change per unit t (see the module), (M, keys).
        self.rate = np.abs(self.dQ) @ model.rates(self.obstacles)
        self.keys = self.n_self + len(model.body) * self.obstacles
        self.allowed = scene.allowed
        self.checked = scene.checked
        self.allowed_elements = scene.allowed_elements
        self.W_moved = model.world_moved(robot.group.world_T)  # the root's world pose
        # Per sample: its motion, parameter, T_base_body (bodies, 4, 4), the bounds (keys,)
        # and their tiers; set by the first add_samples.
        self.motion = self.ts = self.T = self.value = self.tier = _NO_SAMPLES
        self.hull_at = [-1] * len(model.hulls)  # the sample each hull is placed at
        self.group_at = -1  # the sample the robot's group is placed at

    # ----------------------------------------------------------------- samples and bounds

    def add_samples(self, motion: np.ndarray, ts: np.ndarray) -> np.ndarray:
        """Forward kinematics and tier-1 bounds of every pair at parameters ``ts`` of
        motions ``motion``; returns the new samples' indices.

        Tier 1 is the gap between the part's bounding sphere and the other part's sphere or
        the obstacle's bounding box.
        """
        Q = self.Q0[motion] + ts[:, None] * self.dQ[motion]
        T = self.robot._kin.body_poses_many(Q)
        first = len(self.ts)
        value = _native.motion_bounds(T, *self.model.bounds_args, *self.scene.box_args)
        tier: np.ndarray = np.ones(value.shape, dtype=np.int8)
        if first:  # (else the arrays are _NO_SAMPLES)
            self.motion = np.concatenate([self.motion, motion])
            self.ts = np.concatenate([self.ts, ts])
            self.T = np.concatenate([self.T, T])
            self.value = np.concatenate([self.value, value])
            self.tier = np.concatenate([self.tier, tier])
        else:
            self.motion, self.ts, self.T, self.value, self.tier = motion, ts, T, value, tier
        if len(self.checked) < self.keys:
            self.value[first:, self.allowed] = math.inf
            self.tier[first:, self.allowed] = 0
        return np.arange(first, first + len(ts))

    def separations(self, samples: np.ndarray, keys: np.ndarray) -> None:
        """Tier-2 bounds of obstacle pairs: along each axis of the obstacle's box, the gap
        between the box and the projection of the part's bounding box (in its body's frame);
        the largest, or the tier-1 gap if that is larger."""
        model = self.model
        p, o = np.divmod(keys - self.n_self, self.obstacles)
        separation = _native.box_separations(
            self.T,
            tuple(samples.tolist()),
            tuple(p.tolist()),
            tuple(o.tolist()),
            model.bounds_args[0],
            model.corners,
            *self.scene.box_args,
        )
        self.value[samples, keys] = np.maximum(separation, self.value[samples, keys])
        self.tier[samples, keys] = 2

    def hull(self, part: int, sample: int) -> CollisionShape:
        """Part ``part``'s hull, placed at a sample (in the world frame)."""
        hull = self.model.hulls[part]
        if self.hull_at[part] != sample:
            # The hulls are the model's own and only ever asked for distances: moving their
            # Coal transforms (what ``T`` would do, without its checks) is all that is needed.
            model = self.model
            hull._place_product(
                self.W_moved, self.T[sample, model.body[part]], model.hull_offset[part]
            )
            self.hull_at[part] = sample
        return hull

    def place(self, sample: int) -> None:
        """Place the robot's private copies of its elements at a sample (see
        :meth:`RobotModel._twin`)."""
        if self.group_at == sample:
            return
        robot = self.robot
        P = self.T[sample, robot._element_body] @ robot._T_body_element
        robot._begin(robot._begin_many(P))
        self.group_at = sample

    def upgrade(self, sample: int, key: int, tier: int) -> bool:
        """Raise a pair's bound at a sample to ``tier`` (3 or 4); False when the pair
        collides there.

        Tier 3 is the distance between hulls (tier 4 at once when the hulls are the parts
        themselves); tier 4 the exact distance over the parts' elements. A bound at or below
        zero is kept only after a collision test found the pair apart.
        """
        model, robot = self.model, self.robot
        if key < self.n_self:
            a, b, ks = model.pairs[key]
            exact = model.exact[a] and model.exact[b]
        else:
            assert self.view is not None
            a, o = divmod(key - self.n_self, self.obstacles)
            exact = model.exact[a]
        d = math.inf
        if tier == 3:
            other = self.hull(b, sample) if key < self.n_self else self.view.shapes[o]  # type: ignore[union-attr]
            d = self.hull(a, sample).distance(other) - DISTANCE_SLACK
            if not exact or d > 0.0:
                self.value[sample, key] = max(d, self.value[sample, key])
                self.tier[sample, key] = 4 if exact else 3
                return True
        self.place(sample)
        twin = robot._twin
        if key < self.n_self:
            pairs = [(twin(robot._pair_a_list[k]), twin(robot._pair_b_list[k])) for k in ks]
        else:
            obstacle = self.view.shapes[o]  # type: ignore[union-attr]
            pairs = [
                (twin(e), obstacle)
                for e in model.elements[a]
                if self.allowed_elements is None or not self.allowed_elements[e, o]
            ]
        if any(x.iscollided(y) for x, y in pairs):
            return False
        if not exact:
            d = min(x.distance(y) for x, y in pairs) - DISTANCE_SLACK
        self.value[sample, key] = max(d, self.value[sample, key])
        self.tier[sample, key] = 4
        return True


def check_motions(
    robot: RobotModel,
    Q0: np.ndarray,
    Q1: np.ndarray,
    view: SceneView | None,
    tolerance: float,
) -> np.ndarray:
    """Whether each straight-line motion ``Q0[m] -> Q1[m]`` is free (see the module).

    Parameters
    ----------
    robot : RobotModel
    Q0, Q1 : ndarray, shape (M, dof)
        Checked configurations.
    view : SceneView or None
        The scene's obstacles, or None for self-collision only.
    tolerance : float
        Metres: an unproved stretch that moves its pair by at most this ends the check (not
        free).

    Returns
    -------
    ndarray of bool, shape (M,)
    """
    if robot._motion_model is None:
        robot._motion_model = MotionModel(robot)
    free = np.ones(len(Q0), dtype=bool)
    if not len(Q0):
        return free
    motions = _Motions(robot, robot._motion_model, Q0, Q1, view)
    if not len(motions.checked):
        return free
    # Every open stretch of every pair of every motion: (key, start sample, end sample).
    keys, sa, sb = _first_round(motions, free, tolerance)
    while len(keys):
        # Split the open stretches into SPLIT equal ones (stretches that share ends share
        # the new samples), then tighten the bounds at their ends as in the first round.
        first, inverse = _first_of_each(sa * len(motions.ts) + sb)
        starts, stops = sa[first], sb[first]
        t0, t1 = motions.ts[starts], motions.ts[stops]
        parts = np.arange(1, SPLIT) / SPLIT  # (SPLIT - 1,)
        new = motions.add_samples(
            np.repeat(motions.motion[starts], SPLIT - 1),
            (t0[:, None] + parts * (t1 - t0)[:, None]).reshape(-1),
        ).reshape(-1, SPLIT - 1)[inverse]  # (n, SPLIT - 1)
        cuts = np.empty((len(sa), SPLIT + 1), dtype=np.intp)  # (n, SPLIT + 1)
        cuts[:, 0], cuts[:, 1:-1], cuts[:, -1] = sa, new, sb
        keys = np.broadcast_to(keys, (SPLIT, len(keys))).reshape(-1)
        sa, sb = cuts[:, :-1].T.reshape(-1), cuts[:, 1:].T.reshape(-1)
        keys, sa, sb = _round(motions, free, keys, sa, sb, tolerance)
    return free


def _first_of_each(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(values, return_index=True, return_inverse=True)[1:]`` of an int array
    (n,), with fewer numpy calls: where each distinct value first occurs (in increasing
    order of the values), and for each entry the rank of its value among them."""
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    starts = np.empty(len(values), dtype=bool)
    starts[:1] = True
    np.not_equal(ordered[1:], ordered[:-1], out=starts[1:])
    inverse = np.empty(len(values), dtype=np.intp)
    inverse[order] = np.cumsum(starts) - 1
    return order[starts], inverse


def _first_round(
    motions: _Motions, free: np.ndarray, tolerance: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The first round, as :func:`_round` does it, on every pair of every motion cut into
    :data:`INITIAL_STRETCHES` equal stretches, in dense (motion, stretch, key) arrays.

    Returns the stretches left open (key, start sample, end sample), each (n,), and clears
    ``free`` of the motions found not free.
    """
    n = INITIAL_STRETCHES
    count, keys = len(free), motions.keys
    motion, ts, dt, dh, coarse = motions.scene.first_samples(count)
    motions.add_samples(motion, ts)  # samples m (n + 1) + j: motion m at ts[j]
    # Metres each stretch of each pair can move, (motions, stretches, keys), and each half
    # of the motion, (motions, 2, keys).
    rate = motions.rate[:, None, :]
    span, halves = dt * rate, dh * rate
    obstacle = motions.scene.obstacle
    stale = True
    for i in range(4):
        value = motions.value.reshape(count, n + 1, keys)
        open_ = _open(value, span, halves, free)
        stale = False
        if not open_.any():
            return _NONE
        tier = motions.tier.reshape(count, n + 1, keys)
        # The ends of open stretches whose bounds to tighten (as in _round, with one span
        # for all the stretches of a pair: they differ by rounding only).
        ends = np.zeros(value.shape, dtype=bool)
        ends[:, :-1] = open_
        ends[:, 1:] |= open_
        weak = ends & _weak(tier, value, obstacle, span[:, :1], tolerance)
        every = weak
        if not i:
            # Coarse first: Coal is asked at the motion's ends and middle before the other
            # samples (three distances may prove a pair on both halves of the motion, and
            # save the others).
            weak = weak & (coarse | ((tier == 1) & obstacle))
        m, j, k = np.nonzero(weak)
        if not len(m):
            if not i and every.any():
                continue
            break
        if _tighten(motions, free, m * (n + 1) + j, k) and not free.any():
            return _NONE
        stale = True
    if stale:
        open_ = _open(motions.value.reshape(count, n + 1, keys), span, halves, free)
    short = (open_ & (span <= tolerance)).any(axis=(1, 2))
    if short.any():
        free[short] = False
        open_ &= free[:, None, None]
    m, j, k = np.nonzero(open_)
    sa = m * (n + 1) + j
    return k, sa, sa + 1


def _open(value: np.ndarray, span: np.ndarray, halves: np.ndarray, free: np.ndarray) -> np.ndarray:
    """Which first-round stretches (motions, stretches, keys) are open: not proved free by
    the bounds ``value`` (motions, samples, keys) at their ends, nor by those at the ends
    of the half of the motion that holds them, for a motion still ``free``."""
    out = _native.open_stretches(value, span, halves)
    out &= free[:, None, None]
    return out


_NONE = (np.zeros(0, dtype=np.intp),) * 3
"""No open stretches (key, start sample, end sample)."""


def _round(
    motions: _Motions,
    free: np.ndarray,
    keys: np.ndarray,
    sa: np.ndarray,
    sb: np.ndarray,
    tolerance: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One round on the open stretches (key, start sample, end sample), each (n,): drop the
    proved stretches, tighten the ends' bounds of the others (a sphere gap gives way to a
    separating axis or a hull distance, which gives way to the exact distance only when it
    is too small for splitting to help), drop the stretches proved now, and end the check
    of a motion with a stretch too short to split. Returns the stretches left open and
    clears ``free`` of the motions found not free."""
    n_self = motions.n_self
    span = (motions.ts[sb] - motions.ts[sa]) * motions.rate[motions.motion[sa], keys]
    for _ in range(4):
        value, tier = motions.value, motions.tier
        da, db = value[sa, keys], value[sb, keys]
        open_ = ~(da + db > span)
        if not open_.all():
            keys, sa, sb, da, db, span = (x[open_] for x in (keys, sa, sb, da, db, span))
            if not len(keys):
                return _NONE
        ta, tb = tier[sa, keys], tier[sb, keys]
        weak_a = _weak(ta, da, keys >= n_self, span, tolerance)
        weak_b = _weak(tb, db, keys >= n_self, span, tolerance)
        if not (weak_a.any() or weak_b.any()):
            break
        count = motions.keys
        entries = np.unique(
            np.concatenate([sa[weak_a] * count + keys[weak_a], sb[weak_b] * count + keys[weak_b]])
        )
        s, k = np.divmod(entries, count)
        if _tighten(motions, free, s, k):
            keep = free[motions.motion[sa]]
            keys, sa, sb, span = (x[keep] for x in (keys, sa, sb, span))
            if not len(keys):
                return _NONE
    short = span <= tolerance
    if short.any():
        free[motions.motion[sa[short]]] = False
        keep = free[motions.motion[sa]]
        keys, sa, sb = (x[keep] for x in (keys, sa, sb))
    return keys, sa, sb


def _tighten(motions: _Motions, free: np.ndarray, s: np.ndarray, k: np.ndarray) -> bool:
    """Tighten the bounds of pair keys ``k`` at samples ``s`` (each (n,), sorted by sample)
    one tier: a sphere gap of an obstacle pair to the separating axes, any other bound to a
    hull or the exact distance (:meth:`_Motions.upgrade`). Clears ``free`` of the motions
    found colliding, and returns whether there were any."""
    now = motions.tier[s, k]
    second = (now == 1) & (k >= motions.n_self)  # obstacle pairs: the separating axes next
    if second.any():
        motions.separations(s[second], k[second])
        rest = ~second
        s, k, now = s[rest], k[rest], now[rest]
    failed = False
    motion_of = motions.motion
    for s_, k_, t_ in zip(s.tolist(), k.tolist(), now.tolist(), strict=True):
        which = int(motion_of[s_])
        if free[which] and not motions.upgrade(s_, k_, 3 if t_ < 3 else 4):
            free[which] = False
            failed = True
    return failed


def _weak(
    tier: np.ndarray, value: np.ndarray, obstacle: np.ndarray, span: np.ndarray, tolerance: float
) -> np.ndarray:
    """Which bounds (``tier``, ``value``) at the ends of open stretches (``span`` metres of
    motion) to tighten before the stretches are split.

    A sphere gap of an obstacle pair always gives way to the separating axes (numpy, cheap).
    A self pair's sphere gap is sent to Coal (a hull distance) only when it is at most
    :data:`SPLIT_FIRST` of the stretch's span: above that, splitting the stretch is cheaper
    and soon proves it. A separating-axis bound or a hull distance is tightened only once it
    is at most ``tolerance``, when splitting cannot help.
    """
    cheap = (tier == 1) & obstacle
    coal = (tier == 1) & (value <= SPLIT_FIRST * span)
    close = (tier < 4) & (value <= tolerance)
    out: np.ndarray = cheap | coal | close
    return out
