"""Forward kinematics of a tree of rigid bodies, in numpy, for one configuration or many.

The links of a robot that fixed joints join are one rigid *body*: body 0 holds the root link,
and every moving joint (revolute, continuous, prismatic) starts a body holding its child link
and the links fixed to it. A body's frame is its joint's frame moved by the joint value, so
the joint axis passes through the body frame's origin (revolute) and has the same direction in
the joint and body frames.

A configuration ``q`` holds one value per *degree of freedom*: the moving joints that mimic
no other joint, in tree order (a joint after the joint of its parent link). A mimic joint's
value is ``multiplier * value(joint) + offset``, resolved through chains of mimics.

Frames: ``base`` is the root link's frame; ``T_base_body`` is a body's pose in it.
"""

from __future__ import annotations

import math
from math import cos, sin
from typing import Any

import numpy as np

from .. import _native
from ..errors import RobotModelError
from .urdf import JointSpec, RobotSpec

__all__ = ["Kinematics", "Pose12"]

_EYE4 = np.eye(4)
_EYE4.flags.writeable = False

Pose12 = tuple[float, float, float, float, float, float, float, float, float, float, float, float]
"""A rigid pose as plain floats: the top three rows of its 4x4 matrix, row by row."""

_IDENTITY: Pose12 = (1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0)


def _skew(axis: np.ndarray) -> np.ndarray:
    """The cross-product matrix of a 3-vector."""
    x, y, z = axis
    return np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])


class Kinematics:
    """Forward kinematics of a :class:`~spatialcontact.robot.urdf.RobotSpec`.

    Parameters
    ----------
    spec : RobotSpec
        The checked description (joints parents first).

    Attributes
    ----------
    dof_names : tuple of str
        The degrees of freedom, in the order of ``q``.
    lower, upper : ndarray, shape (dof,)
        Their limits (``-inf``/``inf`` for continuous joints).
    link_names : tuple of str
        Every link, in tree order (the root first).
    link_body : ndarray of int, shape (links,)
        The body of each link.
    T_body_link : ndarray, shape (links, 4, 4)
        Each link's pose in its body's frame.
    parent : ndarray of int, shape (bodies,)
        Each body's parent body (-1 for body 0).
    joint_names : tuple of str
        Each body's joint ("" for body 0).
    prismatic : ndarray of bool, shape (bodies,)
        Whether the body's joint is prismatic.
    axis : ndarray, shape (bodies, 3)
        Each body's joint axis in its frame (zeros for body 0).
    T_parent_joint : ndarray, shape (bodies, 4, 4)
        Each body's joint frame in the parent body's frame (identity for body 0).
    value_range : ndarray, shape (bodies, 2)
        The range of each body's joint value over the limits (mimics included).
    origin_reach : ndarray, shape (bodies,)
        A bound on each body's origin's distance from the root link's origin, in every
        configuration.
    """

    def __init__(self, spec: RobotSpec) -> None:
        movable = [j for j in spec.joints if j.kind != "fixed"]
        by_name = {j.name: j for j in spec.joints}
        self.dof_names = tuple(j.name for j in movable if j.mimic is None)
        index = {name: i for i, name in enumerate(self.dof_names)}
        link_body = {spec.root: 0}
        T_body_link = {spec.root: np.eye(4)}
        parents = [-1]
        names = [""]
        origins = [np.eye(4)]
        axes = [np.zeros(3)]
        prismatic = [False]
        sources, multipliers, offsets = [0], [0.0], [0.0]
        for joint in spec.joints:
            T_body_joint = T_body_link[joint.parent] @ joint.T_parent_joint
            if joint.kind == "fixed":
                link_body[joint.child] = link_body[joint.parent]
                T_body_link[joint.child] = T_body_joint
                continue
            link_body[joint.child] = len(parents)
            T_body_link[joint.child] = np.eye(4)
            parents.append(link_body[joint.parent])
            names.append(joint.name)
            origins.append(T_body_joint)
            axes.append(joint.axis)
            prismatic.append(joint.kind == "prismatic")
            source, multiplier, offset = _resolve(joint, by_name, spec.source)
            sources.append(index[source])
            multipliers.append(multiplier)
            offsets.append(offset)
        order = [spec.root, *(j.child for j in spec.joints)]
        self.link_names = tuple(order)
        self.link_body = np.array([link_body[name] for name in order], dtype=np.intp)
        self.T_body_link = np.array([T_body_link[name] for name in order])
        self.parent = np.array(parents, dtype=np.intp)
        self.joint_names = tuple(names)
        self.prismatic = np.array(prismatic)
        self.axis = np.array(axes)
        self.T_parent_joint = np.array(origins)
        dofs = [by_name[name] for name in self.dof_names]
        self.lower = np.array([j.lower for j in dofs])
        self.upper = np.array([j.upper for j in dofs])
        self._source = np.array(sources[1:], dtype=np.intp)
        self._multiplier = np.array(multipliers[1:])
        self._offset = np.array(offsets[1:])
        ends = np.stack(
            [
                self._multiplier * self.lower[self._source] + self._offset,
                self._multiplier * self.upper[self._source] + self._offset,
            ],
            axis=1,
        )
        ends[np.isnan(ends)] = 0.0  # 0 * inf: a continuous joint mimicked with multiplier 0
        self.value_range = np.vstack([[0.0, 0.0], np.sort(ends, axis=1)])
        # How far each body's origin can be from the root's: the joint-to-joint distances
        # along its chain, at the far end of each prismatic joint's range.
        self.origin_reach = np.zeros(len(parents))
        for b in range(1, len(parents)):
            t = self.T_parent_joint[b, :3, 3]
            far = float(np.linalg.norm(t))
            if self.prismatic[b]:
                slide = self.T_parent_joint[b, :3, :3] @ self.axis[b]
                far = max(float(np.linalg.norm(t + v * slide)) for v in self.value_range[b])
            self.origin_reach[b] = self.origin_reach[parents[b]] + far
        # The local motion of body b (b >= 1) in its parent's frame is
        #   R = R_pj + sin(v) R_pj K + (1 - cos(v)) R_pj K^2,  t = t_pj + v R_pj a,
        # (Rodrigues' formula with K the axis' cross-product matrix): sin and cos terms for
        # revolute joints, the v term for prismatic ones.
        R_pj = self.T_parent_joint[1:, :3, :3]
        K = np.array([_skew(a) for a in self.axis[1:]]).reshape(-1, 3, 3)
        revolute = ~self.prismatic[1:]
        self._t_pj = self.T_parent_joint[1:, :3, 3]
        self._A = (R_pj @ K) * revolute[:, None, None]
        self._B = (R_pj @ K @ K) * revolute[:, None, None]
        self._slide = (R_pj @ self.axis[1:, :, None])[..., 0] * self.prismatic[1:, None]
        self._steps = [(int(b), int(self.parent[b])) for b in range(1, len(self.parent))]
        # The same for body_poses_many, laid out for _native.chain_poses.
        R9, A9, B9 = (np.ascontiguousarray(x.reshape(-1, 9)) for x in (R_pj, self._A, self._B))
        self._chain: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, Any] = (
            R9,
            A9,
            B9,
            np.ascontiguousarray(self._t_pj),
            np.ascontiguousarray(self._slide),
            tuple(p for _, p in self._steps),
        )
        # The same for body_poses, as plain floats: R_pj + B, R_pj K, R_pj K^2 (row by row),
        # t_pj and the slide, with each body's degree of freedom, multiplier and offset.
        # R = (R_pj + B) + sin(v) A - cos(v) B.
        rows = zip(
            (R_pj + self._B).reshape(-1, 9).tolist(),
            self._A.reshape(-1, 9).tolist(),
            self._B.reshape(-1, 9).tolist(),
            self._t_pj.tolist(),
            self._slide.tolist(),
            self._source.tolist(),
            self._multiplier.tolist(),
            self._offset.tolist(),
            strict=True,
        )
        self._program = [(b, p, *row) for (b, p), row in zip(self._steps, rows, strict=True)]
        self._compiled = _compile(self._program, len(self.parent))

    def __getstate__(self) -> dict[str, object]:
        state = self.__dict__.copy()
        del state["_compiled"]  # a function made by _compile: made again on loading
        return state

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__dict__.update(state)
        self._compiled = _compile(self._program, len(self.parent))

    @property
    def n_bodies(self) -> int:
        """int: the number of bodies (moving joints + 1)."""
        return len(self.parent)

    def values(self, q: np.ndarray) -> np.ndarray:
        """Every moving joint's value, mimics included: shape ``(..., bodies - 1)`` from
        ``q`` of shape ``(..., dof)``."""
        out: np.ndarray = self._multiplier * q[..., self._source] + self._offset
        return out

    def body_poses(self, q: list[float]) -> list[Pose12]:
        """``T_base_body`` of every body for one checked configuration, in plain floats.

        For one configuration, Python arithmetic on a few dozen floats costs less than the
        per-call overhead of the numpy calls :meth:`body_poses_many` makes. The arithmetic is
        written out once per robot by :func:`_compile`, without the terms that are zero.

        Parameters
        ----------
        q : list of float, length dof

        Returns
        -------
        list of Pose12
            One pose per body, the top three rows of ``T_base_body`` row by row.
        """
        poses: list[Pose12] = self._compiled(q)
        return poses

    def body_poses_many(self, Q: np.ndarray) -> np.ndarray:
        """``T_base_body`` of every body for many checked configurations.

        Parameters
        ----------
        Q : ndarray, shape (N, dof)

        Returns
        -------
        ndarray, shape (N, bodies, 4, 4)
        """
        v = self.values(Q)
        out = np.empty((len(Q), v.shape[1] + 1, 4, 4))
        _native.chain_poses(v, *self._chain, out)  # compiled: numpy's cost is per operation
        return out


def _resolve(
    joint: JointSpec, by_name: dict[str, JointSpec], source: str
) -> tuple[str, float, float]:
    """The degree of freedom a joint follows, with the multiplier and offset from it."""
    multiplier, offset = 1.0, 0.0
    seen = [joint.name]
    while joint.mimic is not None:
        target, m, o = joint.mimic
        followed = by_name.get(target)
        if followed is None or followed.kind == "fixed":
            what = "is not a joint of the robot" if followed is None else "is a fixed joint"
            raise RobotModelError(
                f"URDF {source!r}, joint {joint.name!r}: the mimicked joint {target!r} {what}"
            )
        if target in seen:
            raise RobotModelError(
                f"URDF {source!r}: the mimic joints {', '.join(map(repr, seen))} follow each "
                "other in a loop"
            )
        seen.append(target)
        multiplier, offset = multiplier * m, multiplier * o + offset
        joint = followed
    if not (math.isfinite(multiplier) and math.isfinite(offset)):
        raise RobotModelError(f"URDF {source!r}, joint {seen[0]!r}: mimic values overflow")
    return joint.name, multiplier, offset


_ZERO = 1e-15
"""Coefficients of the joint transforms smaller than this are left out of the compiled forward
kinematics (the ``6e-17`` of ``cos(pi / 2)`` in a URDF's ``rpy``, say)."""


def _sum(terms: list[tuple[float, str]]) -> str:
    """Python source for ``sum(coefficient * name)`` (an empty name is the constant 1), with
    zero coefficients left out and unit ones written as the name alone."""
    parts = []
    for coefficient, name in terms:
        if abs(coefficient) < _ZERO:
            continue
        if not name:
            parts.append(repr(coefficient))
        elif coefficient == 1.0:
            parts.append(name)
        elif coefficient == -1.0:
            parts.append(f"-{name}")
        else:
            parts.append(f"{coefficient!r} * {name}")
    return " + ".join(parts).replace("+ -", "- ") or "0.0"


def _compile(program: list[tuple[Any, ...]], bodies: int) -> Any:
    """A function ``q -> list of Pose12`` doing what ``Kinematics._program`` describes, with the
    robot's constants written into its source (see :meth:`Kinematics.body_poses`).

    Each body's rotation is ``R_p @ (C + sin(v) A - cos(v) B)`` and its origin ``R_p @ (t + v
    d) + t_p`` (``p`` its parent): products with coefficients that are zero are left out,
    and a body whose parent is the root takes its local transform as it is.
    """
    lines = ["def body_poses(q):", f"    out = [IDENTITY] * {bodies}"]
    for b, p, r, a, k, t, d, i, m, o in program:
        lines.append(f"    v = {_sum([(m, f'q[{i}]'), (o, '')])}")
        revolute = any(abs(x) >= _ZERO for x in (*a, *k))
        if revolute:
            lines.append("    s = sin(v)")
            lines.append("    c = cos(v)")
        local = [_sum([(r[j], ""), (a[j], "s"), (-k[j], "c")]) for j in range(9)]
        origin = [_sum([(t[j], ""), (d[j], "v")]) for j in range(3)]
        if p == 0:
            entries = [*local[0:3], origin[0], *local[3:6], origin[1], *local[6:9], origin[2]]
            lines.append(f"    out[{b}] = ({', '.join(entries)})")
            continue
        for j, text in enumerate(local):
            lines.append(f"    l{j} = {text}")
        for j, text in enumerate(origin):
            lines.append(f"    x{j} = {text}")
        lines.append(f"    p0, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11 = out[{p}]")
        entries = []
        for row in range(3):
            parent = [f"p{4 * row + col}" for col in range(3)]
            for col in range(3):
                terms = [
                    f"{parent[n]} * l{3 * n + col}" for n in range(3) if local[3 * n + col] != "0.0"
                ]
                entries.append(" + ".join(terms) or "0.0")
            terms = [f"{parent[n]} * x{n}" for n in range(3) if origin[n] != "0.0"]
            entries.append(" + ".join([*terms, f"p{4 * row + 3}"]))
        lines.append(f"    out[{b}] = ({', '.join(entries)})")
    lines.append("    return out")
    namespace: dict[str, Any] = {"sin": sin, "cos": cos, "IDENTITY": _IDENTITY}
    exec("\n".join(lines), namespace)  # the source is made above, of numbers and names only
    return namespace["body_poses"]
