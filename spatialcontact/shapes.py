"""CollisionShape and the primitive shapes.

Every shape has a pose ``T`` (in its parent group's frame, or the world when it has none) and,
unless made with ``collision=False``, a Coal geometry built from its size parameters. Moving a
shape only updates its Coal transform; changing a size rebuilds the geometry.
"""

from __future__ import annotations

import copy
import math
import warnings
from typing import Any, ClassVar, TypeVar, cast

import coal
import numpy as np

from . import _base
from . import query as _query
from ._base import ShapeBase
from ._coal import state as _state
from ._validate import (
    MAX_ASPECT,
    MAX_COORDINATE,
    aspect,
    coordinate,
    describe,
    finite_real,
    flag,
    numbers,
    size,
    size_vector3,
    text,
    vector3,
)
from .color import parse_color, to_hex
from .errors import (
    CollisionDisabledError,
    InvalidArgumentError,
    InvalidShapeError,
    SpatialContactError,
)
from .pose import pose_values, to_se3
from .serialize import Fields, is_located

__all__ = [
    "Box",
    "Capsule",
    "CollisionShape",
    "Cone",
    "Cuboid",
    "Cylinder",
    "Ellipsoid",
    "HalfSpace",
    "Sphere",
]


def _quaternion_xyzs(R: np.ndarray) -> list[float]:
    """Unit quaternion ``[x, y, z, w]`` of the rotation matrix ``R``, with spatialgeometry
    1.4.2's sign: the largest of ``w`` (when the trace is positive), ``x``, ``y`` or ``z`` (the
    largest diagonal entry's) is positive."""
    (r00, r01, r02), (r10, r11, r12), (r20, r21, r22) = R.tolist()
    trace = r00 + r11 + r22
    if trace > 0.0:
        s = 2.0 * math.sqrt(trace + 1.0)
        return [(r21 - r12) / s, (r02 - r20) / s, (r10 - r01) / s, 0.25 * s]
    if r00 > r11 and r00 > r22:
        s = 2.0 * math.sqrt(1.0 + r00 - r11 - r22)
        return [0.25 * s, (r01 + r10) / s, (r02 + r20) / s, (r21 - r12) / s]
    if r11 > r22:
        s = 2.0 * math.sqrt(1.0 + r11 - r00 - r22)
        return [(r01 + r10) / s, 0.25 * s, (r12 + r21) / s, (r02 - r20) / s]
    s = 2.0 * math.sqrt(1.0 + r22 - r00 - r11)
    return [(r02 + r20) / s, (r12 + r21) / s, 0.25 * s, (r10 - r01) / s]


def _rpy_degrees(R: np.ndarray) -> tuple[float, float, float]:
    """Roll, pitch, yaw (ZYX convention) of ``R`` in degrees."""
    roll = math.atan2(R[2, 1], R[2, 2])
    pitch = math.atan2(-R[2, 0], math.hypot(R[2, 1], R[2, 2]))
    yaw = math.atan2(R[1, 0], R[0, 0])
    return (math.degrees(roll), math.degrees(pitch), math.degrees(yaw))


def _pose_text(T: np.ndarray) -> str:
    t = ", ".join(f"{v + 0.0:.3g}" for v in T[:3, 3])
    rpy = ", ".join(f"{v + 0.0:.3g}°" for v in _rpy_degrees(T[:3, :3]))
    return f"t = {t}; rpy/zyx = {rpy}"


_TYPES: dict[str, type[CollisionShape]] = {}
"""The shape class of each ``stype``, for :meth:`CollisionShape.from_dict` (filled as the
classes are defined; the first class of a type keeps it)."""

_Shape = TypeVar("_Shape", bound="CollisionShape")


class CollisionShape(ShapeBase):
    """Base class of every shape that takes part in collision queries.

    Parameters
    ----------
    pose : SE3 or array_like, shape (4, 4), optional
        Pose of the shape in its parent group's frame (the world frame when it has no parent).
        Defaults to the identity.
    color : str or sequence of 3 or 4 floats, optional
        RGB(A) in [0, 1] or [0, 255], or a matplotlib colour name. Defaults to a mid-grey.
    name : str, optional
        A label for the user; spatialcontact never relies on it.
    collision : bool
        False makes a shape that is only described, never queried: queries raise
        :class:`~spatialcontact.errors.CollisionDisabledError`.
    base : SE3 or array_like, optional
        Deprecated alias of ``pose``.

    Notes
    -----
    Shapes are mutable, so ``==`` is identity (shapes may be set members and dict keys);
    :meth:`equals` compares their values.

    Examples
    --------
    >>> from spatialmath import SE3
    >>> from spatialcontact import Cuboid, Sphere
    >>> ball = Sphere(0.1, pose=SE3.Trans(0.0, 0.0, 0.3))
    >>> table = Cuboid([1.0, 1.0, 0.2])  # top face at z = 0.1
    >>> ball.iscollided(table), round(ball.distance(table), 6)
    (False, 0.1)
    >>> ball.T = SE3.Trans(0.0, 0.0, 0.15)  # moving is setting the pose
    >>> ball & table
    True
    """

    stype: ClassVar[str] = "shape"
    _size_params: ClassVar[tuple[str, ...]] = ()
    _is_group: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "stype" in cls.__dict__:  # a shape type of its own: from_dict builds it
            _TYPES.setdefault(cls.stype, cls)

    def __init__(
        self,
        *,
        pose: Any = None,
        color: Any = None,
        name: str | None = None,
        collision: bool = True,
        base: Any = None,
    ) -> None:
        if base is not None:
            warnings.warn("base kwarg is deprecated, use pose instead", FutureWarning, stacklevel=3)
            if pose is not None:
                raise InvalidShapeError(
                    "pose and base are the same parameter; give only pose, got both "
                    f"pose={describe(pose)} and base={describe(base)}"
                )
            pose = base
        collision = flag(collision, "collision")
        name = text(name, "name", True)
        color = parse_color(color)
        self._init_base(pose, "pose" if base is None else "base")
        self._color = color
        self._collision = bool(collision)
        self._name = name
        self._v = np.zeros(6)

    @property
    def pose(self) -> Any:
        """spatialmath ``SE3``: :attr:`T` as an SE3 (a copy). Settable like :attr:`T`."""
        return to_se3(self.T)

    @pose.setter
    def pose(self, value: Any) -> None:
        self.T = pose_values(value, "pose")[0]  # checked here so an error names ``pose``

    @property
    def name(self) -> str | None:
        """str or None: a label for the user; spatialcontact never relies on it."""
        return self._name

    @name.setter
    def name(self, value: str | None) -> None:
        self._name = text(value, "name", True)

    # ------------------------------------------------------------ appearance

    @property
    def collision(self) -> bool:
        """bool, read-only: whether this shape takes part in collision queries."""
        return self._collision

    @property
    def color(self) -> tuple[float, float, float, float]:
        """(r, g, b, a) floats in [0, 1]. Settable as in the constructor."""
        return self._color

    @color.setter
    def color(self, value: Any) -> None:
        self._color = parse_color(value)

    @property
    def opacity(self) -> float:
        """float in [0, 1]: the alpha channel of :attr:`color`."""
        return self._color[3]

    @opacity.setter
    def opacity(self, value: float) -> None:
        alpha = finite_real(value, "opacity")
        if alpha > 1.0:
            alpha /= 255.0
        if not 0.0 <= alpha <= 1.0:
            raise InvalidShapeError(f"opacity must lie in [0, 1] or [0, 255], got {value!r}")
        self._color = (*self._color[:3], alpha)

    @property
    def v(self) -> np.ndarray:
        """ndarray, shape (6,): spatial velocity ``[vx, vy, vz, wx, wy, wz]`` (for renderers)."""
        return self._v

    @v.setter
    def v(self, value: Any) -> None:
        v = numbers(value, "v", "6 real numbers", error=InvalidShapeError)
        if v.shape != (6,) or not np.all(np.isfinite(v)):
            raise InvalidShapeError(f"v must be 6 finite numbers, got {describe(value)}")
        self._v = v

    # -------------------------------------------------------------- geometry

    def _build_geometry(self) -> Any:
        """Make this shape's Coal geometry from its (already checked) parameters."""
        raise NotImplementedError

    def _rebuild(self) -> None:
        """Rebuild the Coal geometry after a size change (nothing when collision is off).

        The Coal functors cached for a pair hold raw pointers to both geometries, so every
        cached pair naming the old geometry is dropped before it can be freed.
        """
        if self._collision:
            geometry = self._build_geometry()
            geometry.computeLocalAABB()
            with _state.LOCK:
                _state.forget(self)
                self._geometry = geometry
                self._touch(True)

    @property
    def geometry(self) -> Any:
        """The Coal ``CollisionGeometry`` (shared, do not modify). Raises when collision=False."""
        if self._geometry is None:
            raise CollisionDisabledError(
                f"{self!r} was made with collision=False and has no collision geometry"
            )
        return self._geometry

    # ----------------------------------------------------------- description

    def to_dict(self, complete: bool = False) -> dict[str, Any]:
        """Describe the shape as a JSON-safe dict; :meth:`from_dict` builds it back.

        Parameters
        ----------
        complete : bool
            False (the default): spatialgeometry 1.4.2's dict, key for key, as renderers read
            it: ``stype``, the world pose as ``t`` (3,) and ``q`` (4,) (unit quaternion
            ``[x, y, z, w]``), ``v`` (6,), ``color`` (``0xRRGGBB``), ``opacity`` and the sizes
            under their constructor names. True: the same keys and what an exact copy needs
            besides: ``T`` (4 x 4 nested lists, the pose in the parent group's frame), ``rgba``
            (4 floats), ``name`` and ``collision``, and the data of shapes made from data
            (a mesh's ``vertices`` and ``faces`` when it was made from arrays).

        Returns
        -------
        dict
            Made of lists, floats, ints, strings, booleans and None (``json.dumps`` takes it).

        Notes
        -----
        A complete dict rebuilds a shape equal to this one (:meth:`equals`) that answers every
        query exactly as it does. The default dict rebuilds one at the same world pose to
        rounding, with the colour rounded to 8 bits per channel. ``complete`` names the
        superset: a complete dict is still a spatialgeometry dict, with keys added.
        """
        W = self.world_T
        out: dict[str, Any] = {
            "stype": self.stype,
            "t": W[:3, 3].tolist(),
            "q": _quaternion_xyzs(W[:3, :3]),
            "v": self._v.tolist(),
            "color": to_hex(self._color),
            "opacity": self._color[3],
        }
        for param in self._size_params:
            value = getattr(self, param)
            out[param] = value.tolist() if isinstance(value, np.ndarray) else value
        if flag(complete, "complete"):
            out.update(self._complete_fields())
        return out

    def fk_dict(self) -> dict[str, list[float]]:
        """The world pose as spatialgeometry 1.4.2 gives it to renderers.

        Returns
        -------
        dict
            ``t``: the translation (3,); ``q``: the unit quaternion ``[x, y, z, w]`` (4,);
            the values of :meth:`to_dict`'s keys of the same names.
        """
        W = self.world_T
        return {"t": W[:3, 3].tolist(), "q": _quaternion_xyzs(W[:3, :3])}

    def _complete_fields(self) -> dict[str, Any]:
        """What ``to_dict(complete=True)`` adds to the spatialgeometry keys."""
        return {
            "T": self.T.tolist(),
            "rgba": list(self._color),
            "name": self._name,
            "collision": self._collision,
        }

    @classmethod
    def from_dict(cls: type[_Shape], d: Any) -> _Shape:
        """Build a shape from a dict of :meth:`to_dict` (complete or not), or of
        spatialgeometry's ``to_dict``.

        ``CollisionShape.from_dict`` builds whatever type ``d["stype"]`` names (``"sphere"``,
        ``"cuboid"``, ``"cylinder"``, ``"capsule"``, ``"cone"``, ``"ellipsoid"``,
        ``"halfspace"``, ``"mesh"``, ``"convex_hull"``, ``"octree"``, ``"group"``); a
        subclass's ``from_dict`` (``Sphere.from_dict``) accepts only its own type.

        Parameters
        ----------
        d : dict
            ``stype`` and the sizes (the constructor's parameters) are required. The pose is
            ``T`` (in the parent group's frame, the world frame for a shape alone) or, when
            there is no ``T``, the world pose ``t`` and ``q``; the identity when neither is
            given. The colour is ``rgba`` or else ``color`` (``0xRRGGBB``) and ``opacity``;
            ``name``, ``collision`` and ``v`` are optional. A group's ``elements`` are dicts
            of the same kind. Other keys are ignored.

        Returns
        -------
        CollisionShape
            A new shape, in no group.

        Raises
        ------
        ShapeTypeError
            ``d`` (or an element of a group) is not a dict, or an entry has the wrong type.
        InvalidArgumentError
            No ``stype``, an unknown one, one that is not this class's, or a missing size.
        InvalidShapeError, InvalidPoseError, InvalidMeshError, MeshFileError
            A value the constructor refuses (the message names the dict, e.g.
            ``d['elements'][1]``, and the value).

        Examples
        --------
        >>> import json
        >>> from spatialcontact import CollisionShape, Sphere
        >>> ball = Sphere(0.25, name="ball")
        >>> text = json.dumps(ball.to_dict(complete=True))
        >>> copy = CollisionShape.from_dict(json.loads(text))
        >>> copy.equals(ball), type(copy).__name__
        (True, 'Sphere')
        """
        fields = Fields(d, "d")
        kind = cls._kind_of(fields)
        return cast("_Shape", kind._build(fields, None))

    @classmethod
    def _kind_of(cls, fields: Fields) -> type[CollisionShape]:
        """The class that ``fields.stype`` names, checked to be ``cls`` or a subclass."""
        kind = _TYPES.get(fields.stype)
        if kind is None:
            raise InvalidArgumentError(
                f"{fields.key('stype')} must be one of {sorted(_TYPES)}, got "
                f"{describe(fields.stype)}"
            )
        if issubclass(cls, kind) and cls.stype == kind.stype:
            return cls  # a subclass of the same type (Box)
        if not issubclass(kind, cls):
            raise InvalidArgumentError(
                f"{cls.__name__}.from_dict builds {cls.__name__} shapes, but "
                f"{fields.key('stype')} is {fields.stype!r} (a {kind.__name__}); use "
                "CollisionShape.from_dict for any type"
            )
        return kind

    @classmethod
    def _build(cls, fields: Fields, T_world_parent: np.ndarray | None) -> CollisionShape:
        """A ``cls`` from ``fields``, placed in a parent whose world pose is ``T_world_parent``
        (None: no parent). Errors of the constructor are raised again naming the dict."""
        try:
            common = {
                "pose": fields.local_pose(T_world_parent),
                "color": fields.color(),
                "name": fields.get("name"),
                "collision": fields.get("collision", True),
            }
            shape = cls._from_fields(fields, common, T_world_parent)
            if "v" in fields:
                shape.v = fields.get("v")
        except SpatialContactError as exc:
            if is_located(exc):  # it names the key (or the element) already
                raise
            raise fields.error(exc) from None
        return shape

    @classmethod
    def _from_fields(
        cls, fields: Fields, common: dict[str, Any], T_world_parent: np.ndarray | None
    ) -> CollisionShape:
        """Call the constructor with the sizes of ``fields`` and the keywords ``common``."""
        return cls(*[fields.require(p) for p in cls._size_params], **common)

    def _params_repr(self) -> list[str]:
        parts = []
        for param in self._size_params:
            value = getattr(self, param)
            if isinstance(value, np.ndarray):
                value = value.tolist()
            parts.append(f"{param}={value!r}")
        return parts

    def __repr__(self) -> str:
        try:
            parts = self._params_repr()
            if self.name is not None:
                parts.append(f"name={self.name!r}")
            parts.append(f"color={tuple(round(c, 3) for c in self._color[:3])!r}")
            if self._color[3] != 1.0:
                parts.append(f"opacity={round(self._color[3], 3)!r}")
            if not self._collision:
                parts.append("collision=False")
            parts.append(f"pose={_pose_text(self.T)!r}")
            return f"{type(self).__name__}({', '.join(parts)})"
        except Exception:  # repr must never fail, even on a half-made object
            return f"<{type(self).__name__} object at {id(self):#x}>"

    def equals(self, other: object) -> bool:
        """True when ``other`` is the same type of shape with equal sizes, pose, colour, name
        and collision flag."""
        if type(other) is not type(self):
            return False
        assert isinstance(other, CollisionShape)
        if (self.name, self._color, self._collision) != (
            other.name,
            other._color,
            other._collision,
        ) or not np.array_equal(self.T, other.T):
            return False
        return all(np.array_equal(getattr(self, p), getattr(other, p)) for p in self._size_params)

    # ------------------------------------------------------ pickling and copies

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_T"] = np.array(self.T)
        for key in _state.UNPICKLED_STATE:
            state.pop(key, None)
        if not self._is_group:  # see __setstate__
            state["_world_T"] = np.array(self.world_T)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        # A copy is a new shape: a new identity, no observers, its own Coal state.
        T = state["_T"]
        T.flags.writeable = False
        # A leaf is placed where it was: pickle may restore it after its group but before the
        # group's own group, when neither group can place it.
        world = state.pop("_world_T", None)
        self.__dict__.update(state)
        self._uid = next(_base._serial)
        self._observers = []
        _state.init_state(self)
        if self._collision and not self._is_group:
            geometry = self._build_geometry()
            geometry.computeLocalAABB()
            self._geometry = geometry
        parent = self._parent
        if world is not None:
            self._place(world)
        elif parent is None:
            self._place(T)
        elif "_tf" in parent.__dict__:  # parent restored first: this shape was pickled alone
            self._place(parent._world @ T)

    def __copy__(self) -> CollisionShape:
        """A new, independent shape equal to this one, in no group (``T`` is kept as it is).

        A group is copied with copies of its elements: moving the copy never moves the
        original. ``copy.deepcopy`` copies everything reachable, the group holding a shape
        included.
        """
        memo: dict[int, Any] = {id(self._parent): None} if self._parent is not None else {}
        return copy.deepcopy(self, memo)

    def copy(self) -> CollisionShape:
        """``copy.copy(self)``: a new, independent shape equal to this one, in no group.

        spatialgeometry 1.4.2's ``copy()``; here the copy is a new shape to the sensors too,
        and copying a group copies its elements.
        """
        return copy.copy(self)

    # --------------------------------------------------------------- queries

    iscollided = _query.iscollided
    closest_point = _query.closest_point
    distance = _query.distance
    contacts = _query.contacts

    def collided(self, other: CollisionShape) -> bool:
        """Deprecated alias of :meth:`iscollided`."""
        warnings.warn("collided is deprecated, use iscollided instead", FutureWarning, stacklevel=2)
        return self.iscollided(other)

    def __and__(self, other: object) -> bool:
        """``a & b`` is ``a.iscollided(b)`` (a bool, not a geometry)."""
        if not isinstance(other, CollisionShape):
            return NotImplemented
        return self.iscollided(other)


def _finish(shape: CollisionShape) -> None:
    """Build the geometry and place a freshly constructed leaf shape."""
    if shape._collision:
        geometry = shape._build_geometry()
        geometry.computeLocalAABB()
        shape._geometry = geometry
    shape._place(shape.T)


class Sphere(CollisionShape):
    """A solid sphere centred on the shape frame's origin.

    Parameters
    ----------
    radius : float
        Radius in metres, > 0.
    pose, color, name, collision, base
        See :class:`CollisionShape`.
    """

    stype = "sphere"
    _size_params = ("radius",)

    def __init__(
        self,
        radius: float,
        *,
        pose: Any = None,
        color: Any = None,
        name: str | None = None,
        collision: bool = True,
        base: Any = None,
    ) -> None:
        self._radius = size(radius, "radius")
        super().__init__(pose=pose, color=color, name=name, collision=collision, base=base)
        _finish(self)

    @property
    def radius(self) -> float:
        """float: radius in metres. Setting it rebuilds the Coal geometry."""
        return self._radius

    @radius.setter
    def radius(self, value: float) -> None:
        self._radius = size(value, "radius")
        self._rebuild()

    def _build_geometry(self) -> Any:
        return coal.Sphere(self._radius)


class Cuboid(CollisionShape):
    """A solid box centred on the shape frame's origin, edges along its axes.

    Parameters
    ----------
    scale : sequence of 3 floats, optional
        Full side lengths along x, y, z in metres, each > 0. ``None`` gives a unit cube.
    pose, color, name, collision, base
        See :class:`CollisionShape`.
    """

    stype = "cuboid"
    _size_params = ("scale",)

    def __init__(
        self,
        scale: Any = None,
        *,
        pose: Any = None,
        color: Any = None,
        name: str | None = None,
        collision: bool = True,
        base: Any = None,
    ) -> None:
        self._scale = size_vector3((1.0, 1.0, 1.0) if scale is None else scale, "scale")
        super().__init__(pose=pose, color=color, name=name, collision=collision, base=base)
        _finish(self)

    @property
    def scale(self) -> np.ndarray:
        """ndarray, shape (3,), read-only: full side lengths. Setting it rebuilds the geometry."""
        return self._scale

    @scale.setter
    def scale(self, value: Any) -> None:
        self._scale = size_vector3((1.0, 1.0, 1.0) if value is None else value, "scale")
        self._rebuild()

    def _build_geometry(self) -> Any:
        x, y, z = self._scale
        return coal.Box(x, y, z)


class Box(Cuboid):
    """Deprecated alias of :class:`Cuboid`."""

    def __init__(
        self,
        scale: Any = None,
        *,
        pose: Any = None,
        color: Any = None,
        name: str | None = None,
        collision: bool = True,
        base: Any = None,
    ) -> None:
        warnings.warn("Box is deprecated, use Cuboid instead", FutureWarning, stacklevel=2)
        super().__init__(scale, pose=pose, color=color, name=name, collision=collision, base=base)


class _RadiusLength(CollisionShape):
    """A shape sized by a radius and a full length along local z, centred on the origin."""

    _size_params = ("radius", "length")
    _max_aspect: ClassVar[float | None] = None
    """Largest ratio of the two sizes for which Coal's answers hold (None: no limit)."""

    def _set_sizes(self, radius: float, length: float) -> None:
        """Check and keep the sizes given to a subclass's constructor (geometry not built)."""
        self._radius, self._length = self._checked(size(radius, "radius"), size(length, "length"))

    def _checked(self, radius: float, length: float) -> tuple[float, float]:
        if self._max_aspect is not None:
            aspect((radius, length), "radius and length", self._max_aspect)
        return radius, length

    @property
    def radius(self) -> float:
        """float: radius in metres. Setting it rebuilds the Coal geometry."""
        return self._radius

    @radius.setter
    def radius(self, value: float) -> None:
        self._radius = self._checked(size(value, "radius"), self._length)[0]
        self._rebuild()

    @property
    def length(self) -> float:
        """float: full length along local z in metres. Setting it rebuilds the Coal geometry."""
        return self._length

    @length.setter
    def length(self, value: float) -> None:
        self._length = self._checked(self._radius, size(value, "length"))[1]
        self._rebuild()


class Cylinder(_RadiusLength):
    """A solid cylinder along local z, spanning z in [-length/2, length/2].

    Parameters
    ----------
    radius, length : float
        Radius and full length in metres, each > 0.
    pose, color, name, collision, base
        See :class:`CollisionShape`.
    """

    stype = "cylinder"

    def __init__(
        self,
        radius: float,
        length: float,
        *,
        pose: Any = None,
        color: Any = None,
        name: str | None = None,
        collision: bool = True,
        base: Any = None,
    ) -> None:
        self._set_sizes(radius, length)
        super().__init__(pose=pose, color=color, name=name, collision=collision, base=base)
        _finish(self)

    def _build_geometry(self) -> Any:
        return coal.Cylinder(self._radius, self._length)


class Capsule(_RadiusLength):
    """A solid capsule: the segment z in [-length/2, length/2] swept by a sphere of ``radius``.

    Its total extent along z is ``length + 2 * radius``.

    Parameters
    ----------
    radius, length : float
        Radius and length of the central segment in metres, each > 0.
    pose, color, name, collision, base
        See :class:`CollisionShape`.
    """

    stype = "capsule"

    def __init__(
        self,
        radius: float,
        length: float,
        *,
        pose: Any = None,
        color: Any = None,
        name: str | None = None,
        collision: bool = True,
        base: Any = None,
    ) -> None:
        self._set_sizes(radius, length)
        super().__init__(pose=pose, color=color, name=name, collision=collision, base=base)
        _finish(self)

    def _build_geometry(self) -> Any:
        return coal.Capsule(self._radius, self._length)


class Cone(_RadiusLength):
    """A solid cone along local +z: base disc at z = -length/2, apex at z = +length/2.

    Parameters
    ----------
    radius, length : float
        Base radius and full height in metres, each > 0.
    pose, color, name, collision, base
        See :class:`CollisionShape`.
    """

    stype = "cone"
    _max_aspect = MAX_ASPECT

    def __init__(
        self,
        radius: float,
        length: float,
        *,
        pose: Any = None,
        color: Any = None,
        name: str | None = None,
        collision: bool = True,
        base: Any = None,
    ) -> None:
        self._set_sizes(radius, length)
        super().__init__(pose=pose, color=color, name=name, collision=collision, base=base)
        _finish(self)

    def _build_geometry(self) -> Any:
        return coal.Cone(self._radius, self._length)


class Ellipsoid(CollisionShape):
    """A solid ellipsoid centred on the origin with semi-axes along x, y, z.

    Parameters
    ----------
    radii : sequence of 3 floats
        Semi-axis lengths in metres, each > 0.
    pose, color, name, collision, base
        See :class:`CollisionShape`.
    """

    stype = "ellipsoid"
    _size_params = ("radii",)

    def __init__(
        self,
        radii: Any,
        *,
        pose: Any = None,
        color: Any = None,
        name: str | None = None,
        collision: bool = True,
        base: Any = None,
    ) -> None:
        self._radii = size_vector3(radii, "radii", max_aspect=MAX_ASPECT)
        super().__init__(pose=pose, color=color, name=name, collision=collision, base=base)
        _finish(self)

    @property
    def radii(self) -> np.ndarray:
        """ndarray, shape (3,), read-only: semi-axes. Setting it rebuilds the geometry."""
        return self._radii

    @radii.setter
    def radii(self, value: Any) -> None:
        self._radii = size_vector3(value, "radii", max_aspect=MAX_ASPECT)
        self._rebuild()

    def _build_geometry(self) -> Any:
        a, b, c = self._radii
        return coal.Ellipsoid(a, b, c)


_MIN_NORMAL = 1e-12
"""A half-space's normal must be at least this long: its offset is divided by its length."""


class HalfSpace(CollisionShape):
    """The solid half-space ``{x : normal . x <= offset}`` in the shape frame.

    Parameters
    ----------
    normal : sequence of 3 floats
        Outward normal (pointing away from the solid); any length of at least 1e-12, stored
        normalised.
    offset : float
        Signed distance of the boundary plane from the origin along the normal. When the normal
        given is not unit length, the offset is divided by its length too, so the set is the
        same (and must then lie within ±1e6 m).
    pose, color, name, collision, base
        See :class:`CollisionShape`.

    Notes
    -----
    Coal has no signed distance between two half-spaces, so a query between two of them
    raises :class:`~spatialcontact.errors.UnsupportedPairError`.
    """

    stype = "halfspace"
    _size_params = ("normal", "offset")

    def __init__(
        self,
        normal: Any = (0.0, 0.0, 1.0),
        offset: float = 0.0,
        *,
        pose: Any = None,
        color: Any = None,
        name: str | None = None,
        collision: bool = True,
        base: Any = None,
    ) -> None:
        self._normal, self._offset = self._checked(normal, offset)
        super().__init__(pose=pose, color=color, name=name, collision=collision, base=base)
        _finish(self)

    @staticmethod
    def _checked(normal: Any, offset: float) -> tuple[np.ndarray, float]:
        n = vector3(normal, "normal")
        d = finite_real(offset, "offset")
        scale = float(np.abs(n).max())  # divided first: no overflow of the length
        if scale == 0.0:
            raise InvalidShapeError(f"normal must be a non-zero vector, got {describe(normal)}")
        n /= scale
        length = scale * float(np.linalg.norm(n))
        if length < _MIN_NORMAL:
            raise InvalidShapeError(
                f"normal must be at least {_MIN_NORMAL:g} long (only its direction is kept), "
                f"got {describe(normal)}"
            )
        n /= float(np.linalg.norm(n))
        n.flags.writeable = False
        d /= length
        if abs(d) > MAX_COORDINATE:
            if length == 1.0:
                coordinate(offset, "offset")  # raises: the offset as given is out of range
            raise InvalidShapeError(
                f"offset divided by the normal's length is too far out, got {d:g} (offset "
                f"{describe(offset)}, normal {describe(normal)}; it must lie within "
                f"±{MAX_COORDINATE:g} m)"
            )
        return n, d

    @classmethod
    def _from_fields(
        cls, fields: Fields, common: dict[str, Any], T_world_parent: np.ndarray | None
    ) -> CollisionShape:
        """As the constructor; a unit normal (to rounding) and its offset are kept bit for bit,
        so the dict of a half-space gives back the same one (normalising a unit vector again
        can move its last bits)."""
        shape = cast("HalfSpace", super()._from_fields(fields, common, T_world_parent))
        given = vector3(fields.get("normal"), "normal")
        if abs(float(np.linalg.norm(given)) - 1.0) <= 4 * np.finfo(float).eps and not (
            np.array_equal(given, shape._normal) and shape._offset == fields.get("offset")
        ):
            given.flags.writeable = False
            shape._normal = given
            shape._offset = float(fields.get("offset"))
            shape._rebuild()
        return shape

    @property
    def normal(self) -> np.ndarray:
        """ndarray, shape (3,), read-only: unit outward normal in the shape frame."""
        return self._normal

    @normal.setter
    def normal(self, value: Any) -> None:
        """Set the normal's direction (normalised); the offset is kept as it is."""
        self._normal = self._checked(value, 0.0)[0]
        self._rebuild()

    @property
    def offset(self) -> float:
        """float: the boundary plane's distance from the origin along :attr:`normal`."""
        return self._offset

    @offset.setter
    def offset(self, value: float) -> None:
        self._offset = coordinate(value, "offset")
        self._rebuild()

    def _build_geometry(self) -> Any:
        return coal.Halfspace(np.array(self._normal), self._offset)
