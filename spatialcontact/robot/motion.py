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
bounds are made tighter, and then the stretch is split in the middle.

The motion is checked link by link (all ``<collision>`` elements of a link together). The
lower bounds on a pair's distance come in tiers, the cheapest first: (1) the gap between the
link's bounding sphere and the other link's sphere or the obstacle's bounding box; (2) for an
obstacle, the largest gap along the box's three axes between the box and the link's bounding
box (both tiers in numpy, for many pairs at once); (3) Coal's distance between the link's
convex hull (which holds all of its elements) and the other side; (4) when a hull is not the
link itself, the exact distance, after a collision test, over the link's elements. A stretch
is split rather than its bounds raised once they are at tier 2 or more and larger than
``tolerance``. A collision found at any sample ends the check: the motion is not free.
Distances from Coal are lowered by :data:`DISTANCE_SLACK` before use.

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

from ..group import CollisionShapeGroup
from ..mesh import ConvexHull, Mesh
from ..shapes import Capsule, CollisionShape, Cone, Cuboid, Cylinder, Ellipsoid, Sphere
from .culling import bounding_sphere
from .environment import SceneView
from .kinematics import Kinematics

if TYPE_CHECKING:
    from .model import RobotModel

__all__ = ["DISTANCE_SLACK", "MotionModel", "check_motions"]

DISTANCE_SLACK = 1e-5
"""Metres taken off every distance Coal reports before it bounds a motion."""

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
    hulls : CollisionShapeGroup
        One shape per part, holding the part: the element itself when the part is one shape
        that is not a mesh, else the convex hull of its elements. Posed by ``T_base_hull``.
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
                hulls.append(ConvexHull(points, name=robot._parts[elements[0]]))
                T_body_hull.append(np.eye(4))
                self.exact.append(False)
            c = robot._c_body[elements]
            middle = 0.5 * (c.min(axis=0) + c.max(axis=0))
            centres.append(middle)
            radii.append(
                float((np.linalg.norm(c - middle, axis=1) + robot._radius[elements]).max())
            )
        self.hulls = CollisionShapeGroup(hulls)
        self.T_body_hull = np.array(T_body_hull)
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
        self._centre_h = np.hstack([self.centre, np.ones((len(radii), 1))])[:, :, None]

    def centres(self, T_base_body: np.ndarray) -> np.ndarray:
        """Part sphere centres (S, parts, 3) at samples with ``T_base_body``
        (S, bodies, 4, 4)."""
        centres: np.ndarray = (T_base_body[:, self.body] @ self._centre_h)[..., :3, 0]
        return centres


def _reach(
    kin: Kinematics, body: np.ndarray, centre: np.ndarray, radius: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The configuration-free reach (parts, bodies) and chain (parts, bodies) of parts with
    spheres ``centre`` (body frame), ``radius``; see :class:`MotionModel`."""
    n = kin.n_bodies
    origin = np.zeros((n, 2, 3))  # each body's origin in its parent's frame, at both limits
    for b in range(1, n):
        t = kin.T_parent_joint[b, :3, 3]
        slide = kin.T_parent_joint[b, :3, :3] @ kin.axis[b] if kin.prismatic[b] else 0.0
        origin[b] = [t + kin.value_range[b, 0] * slide, t + kin.value_range[b, 1] * slide]
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


class _Motion:
    """One motion: its samples, and the bounds found at them for every pair."""

    def __init__(
        self,
        robot: RobotModel,
        model: MotionModel,
        q0: np.ndarray,
        q1: np.ndarray,
        view: SceneView | None,
    ) -> None:
        self.robot, self.model, self.view = robot, model, view
        self.q0, self.dq = q0, q1 - q0
        kin = robot._kin
        self.dv = np.concatenate([[0.0], np.abs(kin.values(q1) - kin.values(q0))])
        # How fast each pair's distance can change per unit t (see the module).
        speed = model.reach * self.dv  # (parts, bodies)
        self_rates = (speed[model.pair_a] * model.pair_joints_a).sum(axis=1) + (
            speed[model.pair_b] * model.pair_joints_b
        ).sum(axis=1)
        part_rates = (speed * model.chain).sum(axis=1)
        self.n_self = len(model.pairs)
        self.obstacles = 0 if view is None else len(view.shapes)
        self.rate = np.concatenate([self_rates, np.repeat(part_rates, self.obstacles)])
        if self.obstacles:
            assert view is not None
            self.boxes = robot._obstacles(view)
        self.ts: list[float] = []
        self.T: list[np.ndarray] = []  # T_base_body (bodies, 4, 4) per sample
        self.poses = np.zeros((0, len(self.dv), 4, 4))  # T_base_body per sample
        self.centres = np.zeros((0, len(model.body), 3))
        self.bound: dict[tuple[int, int], tuple[float, int]] = {}  # (sample, key) -> (d, tier)
        self.placed: dict[int, int] = {}  # id(group) -> sample it is placed at

    # ----------------------------------------------------------------- samples and bounds

    def add_samples(self, ts: list[float]) -> list[int]:
        """Forward kinematics at new parameters ``ts``; returns their sample indices."""
        Q = self.q0 + np.array(ts)[:, None] * self.dq
        T = self.robot._kin.body_poses_many(Q)
        centres = self.model.centres(T)
        first = len(self.ts)
        self.ts += ts
        self.T += list(T)
        self.poses = np.concatenate([self.poses, T])
        self.centres = np.concatenate([self.centres, centres])
        return list(range(first, first + len(ts)))

    def spheres(self, samples: np.ndarray, keys: np.ndarray) -> None:
        """Tier-1 bounds: bounding-volume gaps for pairs ``keys`` at ``samples`` (arrays of
        the same length). Keys below ``n_self`` are self pairs; the others are
        ``n_self + part * B + obstacle``."""
        model = self.model
        gaps = np.empty(len(keys))
        own = keys < self.n_self
        if own.any():
            s, k = samples[own], keys[own]
            a, b = model.pair_a[k], model.pair_b[k]
            gaps[own] = (
                np.linalg.norm(self.centres[s, a] - self.centres[s, b], axis=1)
                - model.radius[a]
                - model.radius[b]
            )
        other = ~own
        if other.any():
            s = samples[other]
            p, o = np.divmod(keys[other] - self.n_self, self.obstacles)
            rotations, centres, half = self.boxes
            gaps[other] = _gaps_each(
                self.centres[s, p], model.radius[p], rotations[o], centres[o], half[o]
            )
        for s_, k_, g in zip(samples.tolist(), keys.tolist(), gaps.tolist(), strict=True):
            self.bound[(s_, k_)] = (g, 1)

    def separations(self, samples: np.ndarray, keys: np.ndarray) -> None:
        """Tier-2 bounds of obstacle pairs: along each axis of the obstacle's box, the gap
        between the box and the projection of the part's bounding box (in its body's frame);
        the largest, or the tier-1 gap if that is larger."""
        model = self.model
        p, o = np.divmod(keys - self.n_self, self.obstacles)
        rotations, centres, half = self.boxes
        T = self.poses[samples, model.body[p]]
        points = model.corners[p] @ np.swapaxes(T[:, :3, :3], 1, 2)
        points += T[:, None, :3, 3] - centres[o][:, None, :]
        local = points @ rotations[o]  # in each box's frame
        separation = np.maximum(local.min(axis=1) - half[o], -half[o] - local.max(axis=1))
        bound = self.bound
        found = separation.max(axis=1).tolist()
        for s_, k_, g in zip(samples.tolist(), keys.tolist(), found, strict=True):
            bound[(s_, k_)] = (max(g, bound[(s_, k_)][0]), 2)

    def place(self, group: CollisionShapeGroup, sample: int, hulls: bool) -> None:
        """Place the robot's group (or the hulls) at a sample."""
        if self.placed.get(id(group)) == sample:
            return
        T = self.T[sample]
        robot = self.robot
        if hulls:
            group.set_poses(T[self.model.body] @ self.model.T_body_hull, check=False)
        else:
            P = T[robot._element_body] @ robot._T_body_element
            robot._place_poses(P, (self.q0 + self.ts[sample] * self.dq).tolist())
        self.placed[id(group)] = sample

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
            hull_b: Any = model.hulls[b]
            exact = model.exact[a] and model.exact[b]
        else:
            assert self.view is not None
            a, o = divmod(key - self.n_self, self.obstacles)
            hull_b = self.view.shapes[o]
            exact = model.exact[a]
        d = math.inf
        if tier == 3:
            self.place(model.hulls, sample, True)
            d = _distance(model.hulls[a], hull_b) - DISTANCE_SLACK
            if not exact or d > 0.0:
                self.bound[(sample, key)] = (d, 4 if exact else 3)
                return True
        self.place(robot.group, sample, False)
        if key < self.n_self:
            pairs = [(robot._shapes[robot._pair_a[k]], robot._shapes[robot._pair_b[k]]) for k in ks]
        else:
            other = self.view.shapes[o]  # type: ignore[union-attr]
            pairs = [(robot._shapes[e], other) for e in model.elements[a]]
        if any(x.iscollided(y) for x, y in pairs):
            return False
        if not exact:
            d = min(_distance(x, y) for x, y in pairs) - DISTANCE_SLACK
        self.bound[(sample, key)] = (d, 4)
        return True


def _distance(a: CollisionShape, b: CollisionShape) -> float:
    """Coal's signed distance between two shapes (as ``closest_point`` gives it)."""
    d = a.closest_point(b, inf_dist=math.inf)[0]
    return math.inf if d is None else float(d)


def _gaps_each(
    centres: np.ndarray,
    radius: np.ndarray,
    rotations: np.ndarray,
    box_centres: np.ndarray,
    half: np.ndarray,
) -> np.ndarray:
    """Sphere-to-box gaps of matched rows: sphere ``i`` against box ``i``."""
    local = np.einsum("nj,nji->ni", centres - box_centres, rotations)
    excess = np.maximum(np.abs(local) - half, 0.0)
    gaps: np.ndarray = np.sqrt(np.einsum("ni,ni->n", excess, excess)) - radius
    return gaps


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
    model = robot._motion_model
    out = np.zeros(len(Q0), dtype=bool)
    for m in range(len(Q0)):
        out[m] = _free(_Motion(robot, model, Q0[m], Q1[m], view), tolerance)
    return out


def _free(motion: _Motion, tolerance: float) -> bool:
    """Whether one motion is free: prove every pair apart on [0, 1] (see the module)."""
    keys = np.arange(motion.n_self + len(motion.model.body) * motion.obstacles)
    if not len(keys):
        return True
    s0, s1 = motion.add_samples([0.0, 1.0])
    for s in (s0, s1):
        motion.spheres(np.full(len(keys), s), keys)
    sa = np.full(len(keys), s0)
    sb = np.full(len(keys), s1)
    while len(keys):
        # Each round: drop the proved stretches, tighten the ends' bounds of the others (a
        # sphere gap gives way to a hull distance, which gives way to the exact distance
        # only when it is too small for splitting to help), drop the stretches proved now,
        # and split the rest in the middle of their unproved parts.
        rate = motion.rate[keys]
        ts = np.array(motion.ts)
        for _ in range(3):
            da, db, weak = _ends(motion, sa, sb, keys, tolerance)
            span = (ts[sb] - ts[sa]) * rate
            open_ = ~(da + db > span)
            keys, sa, sb, da, db, weak, rate, span = (
                x[open_] for x in (keys, sa, sb, da, db, weak, rate, span)
            )
            if not len(keys):
                return True
            if not weak.any():
                break
            upgrades = {
                (s, k, _next_tier(motion.bound[(s, k)][1], k, motion.n_self))
                for w, k, i, j in zip(
                    weak.tolist(), keys.tolist(), sa.tolist(), sb.tolist(), strict=True
                )
                if w
                for s in (i, j)
                if _is_weak(motion.bound[(s, k)], tolerance)
            }
            separations = [(s, k) for s, k, tier in upgrades if tier == 2]
            if separations:
                rows = np.array(separations, dtype=np.intp)
                motion.separations(rows[:, 0], rows[:, 1])
            for s, k, tier in sorted(upgrades):
                if tier > 2 and not motion.upgrade(s, k, tier):
                    return False
        if (span <= tolerance).any():
            return False
        tm = 0.5 * (ts[sa] + ts[sb])  # midpoints: stretches that share ends share them
        new_ts = sorted(set(tm.tolist()))
        new = dict(zip(new_ts, motion.add_samples(new_ts), strict=True))
        sm = np.array([new[t] for t in tm.tolist()], dtype=np.intp)
        motion.spheres(sm, keys)
        keys = np.concatenate([keys, keys])
        sa, sb = np.concatenate([sa, sm]), np.concatenate([sm, sb])
    return True


def _next_tier(tier: int, key: int, n_self: int) -> int:
    """The tier a bound is raised to: self pairs have no separating-axis tier."""
    return 3 if tier == 1 and key < n_self else tier + 1


def _is_weak(entry: tuple[float, int], tolerance: float) -> bool:
    """Whether a bound ``(value, tier)`` should be tightened before its stretch is split: a
    sphere gap always (spheres hold links loosely), a separating-axis bound or a hull
    distance only when it is too small for splitting to help."""
    value, tier = entry
    return tier == 1 or (tier < 4 and value <= tolerance)


def _ends(
    motion: _Motion, sa: np.ndarray, sb: np.ndarray, keys: np.ndarray, tolerance: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The bounds at both ends of each stretch, and whether either end could be tightened."""
    bound = motion.bound
    a = [bound[(i, k)] for i, k in zip(sa.tolist(), keys.tolist(), strict=True)]
    b = [bound[(j, k)] for j, k in zip(sb.tolist(), keys.tolist(), strict=True)]
    weak = [_is_weak(x, tolerance) or _is_weak(y, tolerance) for x, y in zip(a, b, strict=True)]
    return (
        np.array([x[0] for x in a]),
        np.array([y[0] for y in b]),
        np.array(weak, dtype=bool),
    )
