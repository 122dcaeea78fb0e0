"""CollisionShape and the primitive shapes.

Every shape has a pose ``T`` (in its parent group's frame, or the world when it has none) and,
unless made with ``collision=False``, a Coal geometry built from its size parameters. Moving a
shape only updates its Coal transform; changing a size rebuilds the geometry.
"""

from __future__ import annotations

import itertools
import math
import warnings
import weakref
from typing import TYPE_CHECKING, Any, ClassVar

import coal
import numpy as np

from . import query as _query
from ._validate import describe, finite_real, positive_real, positive_vector3, vector3
from .color import parse_color, to_hex
from .errors import CollisionDisabledError, InvalidShapeError, ShapeTypeError
from .pose import _rigid_values, as_pose, pose_values, to_se3

if TYPE_CHECKING:
    from .group import CollisionShapeGroup

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

_serial = itertools.count()
_FLOAT64 = np.dtype(np.float64)
_ROTATION = (slice(0, 3), slice(0, 3))
_TRANSLATION = (slice(0, 3), 3)


def _quaternion_xyzs(R: np.ndarray) -> list[float]:
    """Unit quaternion ``[x, y, z, w]`` (w >= 0) of the rotation matrix ``R``."""
    from spatialmath.base import r2q

    return [float(q) for q in r2q(R, order="xyzs")]


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


class CollisionShape:
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

    # Coal state and caches, set by query.init_state (not pickled).
    _tf: Any
    _geometry: Any
    _collide_pairs: dict[CollisionShape, tuple[Any, Any, Any, Any, Any]]
    _distance_pairs: dict[CollisionShape, tuple[Any, Any, Any, Any]]
    _contact_pairs: dict[CollisionShape, tuple[Any, Any, Any, Any, bool]]
    _cached_by: weakref.WeakSet[CollisionShape]
    _bounds_cache: Any
    _moves: int
    _T_values: list[float]

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
        if not isinstance(collision, (bool, np.bool_)):
            raise ShapeTypeError(f"collision must be True or False, got {describe(collision)}")
        if name is not None and not isinstance(name, str):
            raise ShapeTypeError(f"name must be a string or None, got {describe(name)}")
        self._T: np.ndarray | None = as_pose(pose, "pose" if base is None else "base")
        self._color = parse_color(color)
        self._collision = bool(collision)
        self.name = name
        self._uid = next(_serial)
        self._parent: CollisionShapeGroup | None = None
        self._v = np.zeros(6)
        _query.init_state(self)

    # ------------------------------------------------------------------ pose

    @property
    def T(self) -> np.ndarray:
        """ndarray, shape (4, 4), read-only: the pose in the parent group's frame (or world).

        Set it with an ``SE3`` or a 4x4 array-like; the value is checked to be a rigid
        transform and copied.
        """
        T = self._T
        if T is None:
            T = self._T = np.array(self._T_values).reshape(4, 4)
            T.flags.writeable = False
        return T

    @T.setter
    def T(self, value: Any) -> None:
        # The hot path of a planner: a float64 4x4 array is checked inline, and a leaf with
        # no parent moves its Coal transform directly (what _place does, without the call).
        if type(value) is np.ndarray and value.shape == (4, 4) and value.dtype is _FLOAT64:
            M = value
            values = _rigid_values(value) or pose_values(value, "T")[1]
        else:
            M, values = pose_values(value, "T")
        self._T_values = values
        self._T = None
        parent = self._parent
        if parent is not None:
            self._place(parent.world_T @ M)
            parent._touch()
        elif self._is_group:
            self._place(M)
        else:
            self._tf.setTransform(M[_ROTATION], M[_TRANSLATION])
            self._moves += 1

    @property
    def pose(self) -> Any:
        """spatialmath ``SE3``: :attr:`T` as an SE3 (a copy). Settable like :attr:`T`."""
        return to_se3(self.T)

    @pose.setter
    def pose(self, value: Any) -> None:
        self.T = pose_values(value, "pose")[0]  # checked here so an error names ``pose``

    @property
    def world_T(self) -> np.ndarray:
        """ndarray, shape (4, 4): the pose in the world frame (parent's ``world_T @ T``)."""
        if self._parent is None:
            return self.T
        return self._parent.world_T @ self.T

    @property
    def scene_parent(self) -> CollisionShapeGroup | None:
        """The group holding this shape, or None. Set by the group, read-only here."""
        return self._parent

    def _place(self, world: np.ndarray) -> None:
        """Move this shape's Coal transform to the world pose ``world`` (4, 4)."""
        self._tf.setTransform(world[:3, :3], world[:3, 3])
        self._moves += 1

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
        v = np.array(value, dtype=np.float64)
        if v.shape != (6,) or not np.all(np.isfinite(v)):
            raise InvalidShapeError(f"v must be 6 finite numbers, got {describe(value)}")
        self._v = v

    # -------------------------------------------------------------- geometry

    def _build_geometry(self) -> Any:
        """Make this shape's Coal geometry from its (already checked) parameters."""
        raise NotImplementedError

    def _rebuild(self) -> None:
        """Rebuild the Coal geometry after a size change (nothing when collision is off)."""
        if self._collision:
            geometry = self._build_geometry()
            geometry.computeLocalAABB()
            _query.set_geometry(self, geometry)

    @property
    def geometry(self) -> Any:
        """The Coal ``CollisionGeometry`` (shared, do not modify). Raises when collision=False."""
        if self._geometry is None:
            raise CollisionDisabledError(
                f"{self!r} was made with collision=False and has no collision geometry"
            )
        return self._geometry

    def _leaves(self) -> tuple[CollisionShape, ...]:
        """The leaf shapes that make up this shape: itself."""
        return (self,)

    def _collision_leaves(self) -> tuple[CollisionShape, ...]:
        """The leaves that take part in queries: itself, unless made with collision=False."""
        return (self,) if self._collision else ()

    # ----------------------------------------------------------- description

    def to_dict(self) -> dict[str, Any]:
        """Describe the shape as spatialgeometry does (type, world pose, colour, sizes)."""
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
        return out

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

    # -------------------------------------------------------------- pickling

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_T"] = np.array(self.T)
        for key in _query.UNPICKLED_STATE:
            state.pop(key, None)
        state.pop("_T_values", None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        T = state["_T"]
        T.flags.writeable = False
        self.__dict__.update(state)
        _query.init_state(self)
        if self._collision and not self._is_group:
            geometry = self._build_geometry()
            geometry.computeLocalAABB()
            self._geometry = geometry
        parent = self._parent
        if parent is None:
            self._place(T)
        elif "_tf" in parent.__dict__:  # parent restored first: this shape was pickled alone
            self._place(parent.world_T @ T)

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
    shape._rebuild()
    shape._place(shape.T)


class Sphere(CollisionShape):
    """A solid sphere centred on the shape frame's origin.

    Parameters
    ----------
    radius : float
        Radius in metres, > 0.
    **kwargs
        ``pose``, ``color``, ``name``, ``collision``, ``base``: see :class:`CollisionShape`.
    """

    stype = "sphere"
    _size_params = ("radius",)

    def __init__(self, radius: float, **kwargs: Any) -> None:
        self._radius = positive_real(radius, "radius")
        super().__init__(**kwargs)
        _finish(self)

    @property
    def radius(self) -> float:
        """float: radius in metres. Setting it rebuilds the Coal geometry."""
        return self._radius

    @radius.setter
    def radius(self, value: float) -> None:
        self._radius = positive_real(value, "radius")
        self._rebuild()

    def _build_geometry(self) -> Any:
        return coal.Sphere(self._radius)


class Cuboid(CollisionShape):
    """A solid box centred on the shape frame's origin, edges along its axes.

    Parameters
    ----------
    scale : sequence of 3 floats, optional
        Full side lengths along x, y, z in metres, each > 0. ``None`` gives a unit cube.
    **kwargs
        See :class:`CollisionShape`.
    """

    stype = "cuboid"
    _size_params = ("scale",)

    def __init__(self, scale: Any = None, **kwargs: Any) -> None:
        self._scale = positive_vector3((1.0, 1.0, 1.0) if scale is None else scale, "scale")
        super().__init__(**kwargs)
        _finish(self)

    @property
    def scale(self) -> np.ndarray:
        """ndarray, shape (3,), read-only: full side lengths. Setting it rebuilds the geometry."""
        return self._scale

    @scale.setter
    def scale(self, value: Any) -> None:
        self._scale = positive_vector3((1.0, 1.0, 1.0) if value is None else value, "scale")
        self._rebuild()

    def _build_geometry(self) -> Any:
        x, y, z = self._scale
        return coal.Box(x, y, z)


class Box(Cuboid):
    """Deprecated alias of :class:`Cuboid`."""

    def __init__(self, scale: Any = None, **kwargs: Any) -> None:
        warnings.warn("Box is deprecated, use Cuboid instead", FutureWarning, stacklevel=2)
        super().__init__(scale, **kwargs)


class _RadiusLength(CollisionShape):
    """A shape sized by a radius and a full length along local z, centred on the origin."""

    _size_params = ("radius", "length")

    def __init__(self, radius: float, length: float, **kwargs: Any) -> None:
        self._radius = positive_real(radius, "radius")
        self._length = positive_real(length, "length")
        super().__init__(**kwargs)
        _finish(self)

    @property
    def radius(self) -> float:
        """float: radius in metres. Setting it rebuilds the Coal geometry."""
        return self._radius

    @radius.setter
    def radius(self, value: float) -> None:
        self._radius = positive_real(value, "radius")
        self._rebuild()

    @property
    def length(self) -> float:
        """float: full length along local z in metres. Setting it rebuilds the Coal geometry."""
        return self._length

    @length.setter
    def length(self, value: float) -> None:
        self._length = positive_real(value, "length")
        self._rebuild()


class Cylinder(_RadiusLength):
    """A solid cylinder along local z, spanning z in [-length/2, length/2].

    Parameters
    ----------
    radius, length : float
        Radius and full length in metres, each > 0.
    **kwargs
        See :class:`CollisionShape`.
    """

    stype = "cylinder"

    def _build_geometry(self) -> Any:
        return coal.Cylinder(self._radius, self._length)


class Capsule(_RadiusLength):
    """A solid capsule: the segment z in [-length/2, length/2] swept by a sphere of ``radius``.

    Its total extent along z is ``length + 2 * radius``.

    Parameters
    ----------
    radius, length : float
        Radius and length of the central segment in metres, each > 0.
    **kwargs
        See :class:`CollisionShape`.
    """

    stype = "capsule"

    def _build_geometry(self) -> Any:
        return coal.Capsule(self._radius, self._length)


class Cone(_RadiusLength):
    """A solid cone along local +z: base disc at z = -length/2, apex at z = +length/2.

    Parameters
    ----------
    radius, length : float
        Base radius and full height in metres, each > 0.
    **kwargs
        See :class:`CollisionShape`.
    """

    stype = "cone"

    def _build_geometry(self) -> Any:
        return coal.Cone(self._radius, self._length)


class Ellipsoid(CollisionShape):
    """A solid ellipsoid centred on the origin with semi-axes along x, y, z.

    Parameters
    ----------
    radii : sequence of 3 floats
        Semi-axis lengths in metres, each > 0.
    **kwargs
        See :class:`CollisionShape`.
    """

    stype = "ellipsoid"
    _size_params = ("radii",)

    def __init__(self, radii: Any, **kwargs: Any) -> None:
        self._radii = positive_vector3(radii, "radii")
        super().__init__(**kwargs)
        _finish(self)

    @property
    def radii(self) -> np.ndarray:
        """ndarray, shape (3,), read-only: semi-axes. Setting it rebuilds the geometry."""
        return self._radii

    @radii.setter
    def radii(self, value: Any) -> None:
        self._radii = positive_vector3(value, "radii")
        self._rebuild()

    def _build_geometry(self) -> Any:
        a, b, c = self._radii
        return coal.Ellipsoid(a, b, c)


class HalfSpace(CollisionShape):
    """The solid half-space ``{x : normal . x <= offset}`` in the shape frame.

    Parameters
    ----------
    normal : sequence of 3 floats
        Outward normal (pointing away from the solid); any non-zero length, stored normalised.
    offset : float
        Signed distance of the boundary plane from the origin along the normal. When the normal
        given is not unit length, the offset is divided by its length too, so the set is the
        same.
    **kwargs
        See :class:`CollisionShape`.

    Notes
    -----
    Coal has no signed distance between two half-spaces, so a query between two of them
    raises :class:`~spatialcontact.errors.UnsupportedPairError`.
    """

    stype = "halfspace"
    _size_params = ("normal", "offset")

    def __init__(self, normal: Any = (0.0, 0.0, 1.0), offset: float = 0.0, **kwargs: Any) -> None:
        self._normal, self._offset = self._checked(normal, offset)
        super().__init__(**kwargs)
        _finish(self)

    @staticmethod
    def _checked(normal: Any, offset: float) -> tuple[np.ndarray, float]:
        n = vector3(normal, "normal")
        d = finite_real(offset, "offset")
        length = float(np.linalg.norm(n))
        if length < 1e-12:
            raise InvalidShapeError(f"normal must be a non-zero vector, got {describe(normal)}")
        n /= length
        n.flags.writeable = False
        return n, d / length

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
        self._offset = finite_real(value, "offset")
        self._rebuild()

    def _build_geometry(self) -> Any:
        return coal.Halfspace(np.array(self._normal), self._offset)
