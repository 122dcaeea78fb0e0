"""Robots whose links are sets of spheres, checked in the compiled kernel.

:class:`SphereRobotModel` is the :class:`~spatialcontact.robot.RobotModel` that
``RobotModel.from_urdf(..., geometry="spheres")`` returns: every link's collision geometry is
replaced by its spheres (one :class:`~spatialcontact.Sphere` element each, named
``link/i``), so every query of the robot model answers for the spheres. The yes/no queries
(:meth:`~SphereRobotModel.check`, :meth:`~SphereRobotModel.check_motions`,
:meth:`~SphereRobotModel.in_collision` and ``self_collision``) run in the numba kernel
(:mod:`spatialcontact.spheres.kernel`); ``colliding_pairs`` and ``distance``, which name links
and give witness points, ask Coal.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import TYPE_CHECKING, Any, ClassVar, Literal

import numpy as np

from .._validate import describe, finite_real
from ..errors import InvalidArgumentError, RobotModelError
from ..robot.culling import Spheres
from ..robot.model import RobotDistance, RobotModel, _check_tolerance, _exclusive
from ..robot.urdf import GeometrySpec, RobotSpec, SemanticSpec
from ..shapes import CollisionShape, Sphere
from .coverage import CoverageReport, prove
from .fit import SphereModel, fit_spec
from .geometry import link_surfaces
from .packing import Obstacles, Robot, joint_map, pack_obstacles, pack_robot

if TYPE_CHECKING:
    from ..scene import Scene

__all__ = ["DEFAULT_COUNT", "SphereRobotModel", "cover", "fit", "sphere_robot"]

DEFAULT_COUNT = 8
"""Spheres fitted per link when ``from_urdf(geometry="spheres")`` is given no sphere model."""

DEFAULT_RESOLUTION = 0.02
"""Radians (or metres): the largest joint change between the configurations
``check_motions(method="discrete")`` checks."""


def _sphere_spec(spec: RobotSpec, model: SphereModel) -> RobotSpec:
    """``spec`` with every link's geometry replaced by the model's spheres."""
    unknown = [link for link in model.spheres if link not in spec.links]
    if unknown:
        raise RobotModelError(
            f"{model.source}: spheres for {', '.join(map(repr, unknown))}, which robot "
            f"{spec.name!r} does not have; its links: {', '.join(map(repr, spec.links))}"
        )
    for link, others in model.self_collision_ignore.items():
        for name in (link, *others):
            if name not in spec.links:
                raise RobotModelError(
                    f"{model.source}: self_collision_ignore names {name!r}, which robot "
                    f"{spec.name!r} does not have"
                )
    for link, buffer in model.self_collision_buffer.items():
        if link not in spec.links:
            raise RobotModelError(
                f"{model.source}: self_collision_buffer names {link!r}, which robot "
                f"{spec.name!r} does not have"
            )
        rows = model.spheres.get(link)
        if rows is not None and len(rows) and not (rows[:, 3] + buffer > 0).all():
            raise RobotModelError(
                f"{model.source}: self_collision_buffer[{link!r}] = {buffer!r} leaves a sphere "
                f"of radius {float(rows[:, 3].min())!r} without volume (radius + buffer must "
                "be > 0)"
            )
    geometries = []
    for link in spec.links:
        for i, (x, y, z, r) in enumerate(model.spheres.get(link, np.zeros((0, 4))).tolist()):
            T = np.eye(4)
            T[:3, 3] = (x, y, z)
            geometries.append(GeometrySpec(link, i, "sphere", T, (r,)))
    return replace(spec, geometries=tuple(geometries))


class SphereRobotModel(RobotModel):
    """A robot whose links are the spheres of a :class:`~spatialcontact.spheres.SphereModel`.

    Made by :meth:`RobotModel.from_urdf(..., geometry="spheres")
    <spatialcontact.robot.RobotModel.from_urdf>`. Every query of
    :class:`~spatialcontact.robot.RobotModel` works and answers for the spheres (the links
    themselves are no longer checked); :meth:`check` and :meth:`check_motions` run in the
    compiled kernel. Self-collision checks the robot's pairs (the SRDF's, or all but adjacent
    links) less the model's ``self_collision_ignore`` pairs.

    When the model covers the robot (:meth:`spheres_cover`, true of fitted models), a
    configuration whose links touch (mesh answers) is never free here: the spheres hold each
    link's surface.

    The model's ``self_collision_buffer`` (cuRobo's) grows (or, negative, shrinks) the
    radii of a link's spheres in self-collision tests only, in every query: two links'
    spheres touch when their centres are at most the sum of their grown radii apart, and
    :meth:`distance` without a scene measures the grown spheres. Scene tests, and tests
    between a link and an attached object, take the spheres as they are.

    Attributes
    ----------
    sphere_model : SphereModel
        The spheres.
    """

    def __init__(self, spec: RobotSpec, semantic: SemanticSpec | None, model: SphereModel) -> None:
        self.sphere_model = model
        self._link_spec = spec
        self._packed: Robot | None = None
        self._packed_scene: tuple[Any, ...] | None = None
        self._clouds: Literal["cells", "points"] = "cells"
        super().__init__(_sphere_spec(spec, model), semantic, "spheres")

    def _disabled_link_pairs(self) -> set[frozenset[str]]:
        return super()._disabled_link_pairs() | self.sphere_model.ignored_pairs()

    def _refresh_structure(self) -> None:
        super()._refresh_structure()
        self._packed = None
        self._packed_scene = None
        buffer = self.sphere_model.self_collision_buffer
        grown = [
            buffer.get(self._parts[e], 0.0) if e < self._link_parts else 0.0
            for e in range(len(self._shapes))
        ]
        self._self_radius = self._radius + np.array(grown, dtype=float)
        self._buffered = any(grown)
        if self._buffered:  # the self pairs' culls reach the grown spheres
            shapes: list[CollisionShape] = [
                Sphere(float(self._self_radius[e])) if grow else shape
                for e, (shape, grow) in enumerate(zip(self._shapes, grown, strict=True))
            ]
            self._spheres = Spheres(
                shapes, self._body_list, self._T_body_element, self._pair_a, self._pair_b
            )

    def _self_hits(self, candidates: list[int], first: bool) -> list[int]:
        """As for any robot, with two links' spheres at their self radii."""
        if not self._buffered:
            return super()._self_hits(candidates, first)
        twin, pa, pb, links = self._twin, self._pair_a_list, self._pair_b_list, self._link_parts
        radius = self._self_radius
        hits = []
        for k in candidates:
            i, j = pa[k], pb[k]
            if i < links and j < links:
                gap = np.linalg.norm(self._centre(i) - self._centre(j)) - radius[i] - radius[j]
                touching = bool(gap <= 0.0)
            else:
                touching = twin(i).iscollided(twin(j))
            if touching:
                hits.append(k)
                if first:
                    break
        return hits

    def _centre(self, e: int) -> np.ndarray:
        """Sphere element ``e``'s centre in the world frame, placed by :meth:`_twin`."""
        self._twin(e)
        tf = self._twin_tf[e]
        assert tf is not None
        out: np.ndarray = np.asarray(tf.getTranslation(), dtype=float)
        return out

    @_exclusive
    def distance(self, q: Any, scene: Scene | None = None) -> RobotDistance:
        """:meth:`RobotModel.distance <spatialcontact.robot.RobotModel.distance>`; without a
        scene, two links' spheres are measured at their self radii (see the class notes)."""
        if scene is not None or not self._buffered:
            return super().distance(q, scene)
        _, T_base_body, _ = self._configuration(q)
        self._begin(T_base_body)
        links, radius = self._link_parts, self._self_radius
        best = RobotDistance(math.inf, None, None, None, None)
        for i, j in zip(self._pair_a_list, self._pair_b_list, strict=True):
            if i < links and j < links:
                ci, cj = self._centre(i), self._centre(j)
                between = float(np.linalg.norm(cj - ci))
                d = between - radius[i] - radius[j]
                if d < best.distance:
                    u = (cj - ci) / between if between > 0 else np.array([1.0, 0.0, 0.0])
                    best = RobotDistance(
                        d, self._parts[i], self._parts[j], ci + radius[i] * u, cj - radius[j] * u
                    )
                continue
            found, p1, p2 = self._twin(i).closest_point(self._twin(j), inf_dist=math.inf)
            if found is None:
                continue
            grow = radius[i] - self._radius[i] if i < links else 0.0  # j is attached
            d = float(found) - grow
            if d < best.distance:
                if grow:  # the witness point on the grown sphere
                    centre = self._centre(i)
                    u = np.asarray(p1) - centre
                    p1 = centre + u * (radius[i] / max(float(np.linalg.norm(u)), 1e-300))
                best = RobotDistance(d, self._parts[i], self._parts[j], p1, p2)
        return best

    @property
    def clouds(self) -> Literal["cells", "points"]:
        """How the kernel tests an :class:`~spatialcontact.OcTree` of a scene.

        ``"cells"`` (the default): its occupied cells, solid boxes, as Coal does.
        ``"points"``: the points it was built from, so a raw point cloud is tested as a set
        of points (a sphere touching or holding a point collides) and the tree's resolution
        only matters to Coal. Queries answered by Coal (``colliding_pairs``, ``distance``,
        and every query of a robot with attached objects or allowed scene pairs) still test
        the cells, which hold the points.

        Raises
        ------
        InvalidArgumentError
            On setting anything else.
        """
        return self._clouds

    @clouds.setter
    def clouds(self, value: Literal["cells", "points"]) -> None:
        if value not in ("cells", "points"):
            raise InvalidArgumentError(f"clouds must be 'cells' or 'points', got {describe(value)}")
        self._clouds = value
        self._packed_scene = None

    def __getstate__(self) -> dict[str, Any]:
        state = super().__getstate__()
        state["_packed"] = state["_packed_scene"] = None
        return state

    # ------------------------------------------------------------------ kernel arrays

    def _kernel_robot(self) -> Robot:
        if self._packed is None:
            self._packed = pack_robot(self)
        return self._packed

    def _kernel_scene(self, scene: Scene | None) -> Obstacles:
        if scene is None:
            return _NO_OBSTACLES
        view = self._view(scene)
        W = self.group.world_T
        cached = self._packed_scene
        if (
            cached is None
            or cached[0] is not view
            or cached[1] != view.revision
            or cached[2] is not W
        ):
            cached = (view, view.revision, W, pack_obstacles(view, W, self._clouds == "points"))
            self._packed_scene = cached
        packed: Obstacles = cached[3]
        return packed

    # ------------------------------------------------------------------ queries

    def _kernel_ready(self) -> bool:
        """Whether the kernel can answer: no attached objects and no allowed scene pairs
        (those are answered by Coal, as for any robot)."""
        return not self._attachments and not getattr(self, "_scene_allowed", None)

    @_exclusive
    def in_collision(self, q: Any, scene: Scene | None = None) -> bool:
        """:meth:`RobotModel.in_collision <spatialcontact.robot.RobotModel.in_collision>` in
        the kernel, as one row of :meth:`check` (and so :meth:`self_collision` too).

        The answer is Coal's on the spheres (the kernel's tests are exact for them); a robot
        with attached objects or allowed scene pairs, and a configuration whose spheres only
        touch the box of an obstacle the kernel has no test for, are answered by Coal.
        """
        if not self._kernel_ready():
            return super().in_collision(q, scene)
        return bool(self._check_rows(np.array([self._check_q(q)]), scene)[0])

    def _check_rows(self, Q: np.ndarray, scene: Scene | None) -> np.ndarray:
        """:meth:`check` of checked configurations ``Q`` (N, dof), in the kernel.

        Forward kinematics and every sphere test run compiled, one configuration after
        another, each stopping at its first collision. Scene objects the kernel has no test
        for are culled by their bounding boxes; a configuration whose spheres touch such a
        box (and nothing else) is answered by Coal (``RobotModel.in_collision``).
        """
        if not self._kernel_ready():
            return super()._check_rows(Q, scene)
        from . import kernel

        r, o = self._kernel_robot(), self._kernel_scene(scene)
        codes = kernel.check_many(
            np.ascontiguousarray(Q), r.parent, r.mimic, r.joints, r.spheres, r.link_start,
            r.links, r.pairs, o.kind, o.bound, o.data, o.cloud, o.grid, o.cells,
        )  # fmt: skip
        out: np.ndarray = codes == kernel.HIT
        for n in np.flatnonzero(codes == kernel.UNSURE).tolist():
            out[n] = RobotModel.in_collision(self, Q[n], scene)
        return out

    def _motion_rows(
        self, Q0: np.ndarray, Q1: np.ndarray, scene: Scene | None, tolerance: float
    ) -> np.ndarray:
        """:meth:`check_motions` (``method="bound"``) of checked motions, in the kernel."""
        if not self._kernel_ready():
            if self._buffered:
                raise RobotModelError(
                    f"robot {self.name!r}: check_motions(method='bound') with attached objects or "
                    "allowed scene pairs does not apply self_collision_buffer "
                    f"{dict(self.sphere_model.self_collision_buffer)}: use method='discrete'"
                )
            return super()._motion_rows(Q0, Q1, scene, tolerance)
        from . import kernel

        codes = self._bound_codes(Q0, Q1, scene, tolerance)
        out: np.ndarray = codes == kernel.FREE
        unsure = np.flatnonzero(codes == kernel.UNSURE)
        if len(unsure):
            out[unsure] = super()._motion_rows(Q0[unsure], Q1[unsure], scene, tolerance)
        return out

    def _bound_codes(
        self, Q0: np.ndarray, Q1: np.ndarray, scene: Scene | None, tolerance: float
    ) -> np.ndarray:
        """The kernel's code (FREE, HIT or UNSURE) of each checked motion, ``method="bound"``,
        for a robot the kernel can answer (:meth:`_kernel_ready`)."""
        from . import kernel

        r, o = self._kernel_robot(), self._kernel_scene(scene)
        codes: np.ndarray = kernel.motions_bound(
            np.ascontiguousarray(Q0), np.ascontiguousarray(Q1), tolerance, r.parent, r.mimic,
            r.joints, r.spheres, r.link_start, r.links, r.pairs, r.reach, r.chain, r.span, r.axes,
            o.kind, o.bound, o.data, o.cloud, o.grid, o.cells,
        )  # fmt: skip
        return codes

    def _proved_free(
        self, Q0: np.ndarray, Q1: np.ndarray, scene: Scene | None, tolerance: float
    ) -> np.ndarray:
        """Which checked motions the kernel proves free, with nothing else asked: False for a
        motion that touches, comes within ``tolerance`` or meets an obstacle the kernel has
        no test for (see :meth:`RobotModel.set_motion_prefilter
        <spatialcontact.robot.RobotModel.set_motion_prefilter>`)."""
        from . import kernel

        free: np.ndarray = self._bound_codes(Q0, Q1, scene, tolerance) == kernel.FREE
        return free

    @_exclusive
    def check_motions(
        self,
        Q0: Any,
        Q1: Any,
        scene: Scene | None = None,
        *,
        tolerance: float = 1e-3,
        executor: Any = None,
        progress: bool = False,
        chunk_size: int | None = None,
        method: Literal["bound", "discrete"] = "bound",
        resolution: float = DEFAULT_RESOLUTION,
    ) -> np.ndarray:
        """Whether each straight-line motion ``Q0[m] -> Q1[m]`` is free, in the kernel.

        ``method="bound"`` (the default) proves motions free with the safe-skip bound of
        :mod:`spatialcontact.robot.motion`, applied to the spheres: at a configuration on the
        motion, two spheres (or a sphere and an obstacle) with gap ``g`` cannot touch while
        the motion's parameter ``t`` moves by less than about ``g / L``, either way, where
        ``L`` bounds how fast the gap can shrink (the sum over the joints that move one side
        relative to the other of each joint's change times the largest distance from its
        axis to the link's bounding sphere). The kernel checks the motion's middle, then the
        parts on either side that the pairs' proofs do not cover, each with only the pairs
        not yet proved apart on it (see :func:`spatialcontact.spheres.kernel.motions_bound`).
        A motion is free only when every pair is proved apart everywhere on it; it is called
        not free when a gap is at most ``tolerance``. ``method="discrete"`` checks
        configurations at most ``resolution`` apart in every joint value, both ends included
        (the answers of :meth:`check` on them), and proves nothing between them.

        Motions that come within ``tolerance`` of an obstacle the kernel has no test for,
        and every motion of a robot with attached objects or allowed scene pairs, are checked
        by Coal (:meth:`RobotModel.check_motions
        <spatialcontact.robot.RobotModel.check_motions>`, or each discrete step with
        :meth:`in_collision`).

        Parameters
        ----------
        Q0, Q1 : array_like, shape (M, dof)
        scene : Scene, optional
        tolerance : float
            Metres (``method="bound"``).
        executor, progress, chunk_size
            As for :meth:`check` (``method="bound"`` only).
        method : {"bound", "discrete"}
        resolution : float
            Radians or metres (``method="discrete"``), in (0, 1].

        Returns
        -------
        ndarray of bool, shape (M,)
            True where the motion is free.

        Raises
        ------
        InvalidArgumentError
            Bad ``Q0`` or ``Q1``, shapes that differ, a bad ``tolerance``, ``method`` or
            ``resolution``, or an executor, progress bar or chunk size with
            ``method="discrete"``.
        ShapeTypeError
            A ``tolerance`` or ``resolution`` that is not a real number (a bool or a string,
            say), or as for :meth:`RobotModel.check_motions
            <spatialcontact.robot.RobotModel.check_motions>`.
        RobotModelError
            ``method="bound"`` for a robot with attached objects or allowed scene pairs whose
            sphere model has a ``self_collision_buffer``.
        """
        if method not in ("bound", "discrete"):
            raise InvalidArgumentError(
                f"method must be 'bound' or 'discrete', got {describe(method)}"
            )
        if method == "bound":
            return super().check_motions(
                Q0, Q1, scene, tolerance=tolerance, executor=executor, progress=progress,
                chunk_size=chunk_size,
            )  # fmt: skip
        step = finite_real(resolution, "resolution", error=InvalidArgumentError)
        if not 0 < step <= 1:
            raise InvalidArgumentError(
                f"resolution must be a number in (0, 1] (radians or metres), got "
                f"{describe(resolution)}"
            )
        _check_tolerance(tolerance)  # unused by the discrete check, but still checked
        if executor is not None or progress or chunk_size is not None:
            raise InvalidArgumentError(
                "executor, progress and chunk_size apply to method='bound' only, got "
                f"executor={describe(executor)}, progress={describe(progress)}, "
                f"chunk_size={describe(chunk_size)}"
            )
        self._guard()
        Q0 = self._check_Q(Q0, "Q0")
        Q1 = self._check_Q(Q1, "Q1")
        if Q0.shape != Q1.shape:
            raise InvalidArgumentError(
                f"Q0 and Q1 must have the same shape, got {Q0.shape} and {Q1.shape}"
            )
        mimic = joint_map(self._kin)
        if not self._kernel_ready():
            return np.array(
                [
                    not self._check_rows(_steps(a, b, mimic, step), scene).any()
                    for a, b in zip(Q0, Q1, strict=True)
                ],
                dtype=bool,
            )
        from . import kernel

        r, o = self._kernel_robot(), self._kernel_scene(scene)
        codes = kernel.motions_discrete(
            np.ascontiguousarray(Q0), np.ascontiguousarray(Q1), step, r.parent,
            r.mimic, r.joints, r.spheres, r.link_start, r.links, r.pairs, r.reach, r.chain, r.span,
            r.axes, o.kind, o.bound, o.data, o.cloud, o.grid, o.cells,
        )  # fmt: skip
        out: np.ndarray = codes == kernel.FREE
        for m in np.flatnonzero(codes == kernel.UNSURE).tolist():
            out[m] = not self._check_rows(_steps(Q0[m], Q1[m], r.mimic, step), scene).any()
        return out

    # ------------------------------------------------------------------ spheres

    @_exclusive
    def spheres_cover(
        self, model: SphereModel | None = None, *, measure: bool = True
    ) -> CoverageReport:
        """:meth:`RobotModel.spheres_cover` against the links' own geometry (the URDF's
        meshes and primitives), of this robot's sphere model by default."""
        return cover(self, self.sphere_model if model is None else model, measure)


def _steps(q0: np.ndarray, q1: np.ndarray, mimic: np.ndarray, resolution: float) -> np.ndarray:
    """The configurations ``motions_discrete`` checks on ``q0 -> q1`` (``mimic`` from
    :func:`~spatialcontact.spheres.packing.joint_map`)."""
    largest = float(np.abs((q1 - q0) @ mimic[:-1]).max(initial=0.0))
    steps = max(math.ceil(largest / resolution), 1)
    t = np.arange(steps + 1) / steps
    out: np.ndarray = q0 + t[:, None] * (q1 - q0)
    return out


class _NoView:
    """A scene view without obstacles."""

    shapes: ClassVar[list[Any]] = []


_NO_OBSTACLES = pack_obstacles(_NoView(), np.eye(4))  # type: ignore[arg-type]


def _link_spec(robot: RobotModel) -> RobotSpec:
    return robot._link_spec if isinstance(robot, SphereRobotModel) else robot._spec


def fit(robot: RobotModel, count: Any = None, max_radius: Any = None) -> SphereModel:
    """:meth:`RobotModel.spheres <spatialcontact.robot.RobotModel.spheres>`."""
    return fit_spec(_link_spec(robot), count, max_radius)


def cover(robot: RobotModel, model: Any, measure: Any = True) -> CoverageReport:
    """:meth:`RobotModel.spheres_cover <spatialcontact.robot.RobotModel.spheres_cover>`."""
    if not isinstance(model, SphereModel):
        raise InvalidArgumentError(f"model must be a SphereModel, got {describe(model)}")
    if not isinstance(measure, (bool, np.bool_)):
        raise InvalidArgumentError(f"measure must be True or False, got {describe(measure)}")
    return prove(link_surfaces(_link_spec(robot)), model, bool(measure))


def sphere_robot(spec: RobotSpec, semantic: SemanticSpec | None, spheres: Any) -> SphereRobotModel:
    """The sphere-model robot of ``from_urdf(..., geometry="spheres", spheres=...)``:
    ``spheres`` is a SphereModel, or None to fit :data:`DEFAULT_COUNT` spheres per link."""
    if spheres is None:
        spheres = fit_spec(spec, DEFAULT_COUNT)
    if not isinstance(spheres, SphereModel):
        raise InvalidArgumentError(
            f"spheres must be a SphereModel or None, got {describe(spheres)}"
        )
    return SphereRobotModel(spec, semantic, spheres)
