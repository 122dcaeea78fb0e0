"""The exceptions spatialcontact raises.

Every error is also a built-in ``ValueError`` or ``TypeError``, so callers may catch either the
precise class, the common base :class:`SpatialContactError`, or the built-in one.
"""

from __future__ import annotations

__all__ = [
    "CollisionDisabledError",
    "InvalidArgumentError",
    "InvalidMeshError",
    "InvalidPoseError",
    "InvalidShapeError",
    "MeshFileError",
    "MeshFileNotFoundError",
    "NotInSceneError",
    "RobotModelError",
    "SceneError",
    "ShapeTypeError",
    "SpatialContactError",
    "UnsupportedPairError",
]


class SpatialContactError(Exception):
    """Base class of every error raised by spatialcontact."""


class InvalidArgumentError(SpatialContactError, ValueError):
    """A parameter's value is out of range (``max_contacts``, ``inf_dist``, ``security_margin``,
    a time step, ...).

    The message names the parameter, the value received and the range accepted.
    """


class InvalidShapeError(InvalidArgumentError):
    """A size or other shape parameter is out of range (non-positive, non-finite, outside the
    documented size range, wrong length); also an :class:`InvalidArgumentError`."""


class InvalidPoseError(SpatialContactError, ValueError):
    """A pose is not a finite rigid transform (4x4 with an orthonormal, right-handed rotation)."""


class InvalidMeshError(SpatialContactError, ValueError):
    """Mesh or point data that would give Coal a broken model (empty, degenerate, bad indices)."""


class MeshFileError(SpatialContactError, ValueError):
    """A mesh file is missing, empty or cannot be read."""


class MeshFileNotFoundError(MeshFileError, FileNotFoundError):
    """A mesh file does not exist (also a ``FileNotFoundError``, as spatialgeometry raises)."""


class CollisionDisabledError(SpatialContactError, ValueError):
    """A query on a shape created with ``collision=False``."""


class ShapeTypeError(SpatialContactError, TypeError):
    """An argument has the wrong type (a query given something that is not a shape, say)."""


class UnsupportedPairError(SpatialContactError, TypeError):
    """Coal has no algorithm for this pair of shape types."""


class SceneError(SpatialContactError, ValueError):
    """An object cannot join or stay in a scene: its name is taken, it is already held, ..."""


class NotInSceneError(SpatialContactError, KeyError, ValueError):
    """A name or shape the scene does not hold (also a ``KeyError`` and a ``ValueError``).

    The message lists the names the scene holds.
    """

    def __str__(self) -> str:
        # KeyError's str() is the repr of its argument (quotes and escapes): show the text.
        return str(self.args[0]) if self.args else ""


class RobotModelError(SpatialContactError, ValueError):
    """A robot description that cannot be used, or a name the robot does not have.

    Raised for a URDF or SRDF that is malformed or incomplete (the message names the file and
    the element), for joint types or geometry the robot model does not support, and for link,
    joint or attached-object names that the robot does not know (the message lists the valid
    ones). Also a ``ValueError``.
    """
