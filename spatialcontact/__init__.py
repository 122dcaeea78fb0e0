"""spatialcontact: collision geometry for robotics, on Coal.

Shapes (:class:`Sphere`, :class:`Cuboid`, ..., :class:`Mesh`, :class:`OcTree`) and nested
:class:`CollisionShapeGroup` s answer ``iscollided``, ``closest_point``, ``distance`` and
``contacts`` against each other; :class:`Scene` holds many named objects on Coal's broadphase.
"""

import coal  # noqa: F401  first: it loads the libraries that spatialcontact._native links to

from . import meshes
from .contact import Contact, ContactReport, Contacts
from .errors import (
    CollisionDisabledError,
    InvalidArgumentError,
    InvalidMeshError,
    InvalidPoseError,
    InvalidShapeError,
    MeshFileError,
    MeshFileNotFoundError,
    NotInSceneError,
    RobotModelError,
    SceneError,
    ShapeTypeError,
    SpatialContactError,
    UnsupportedPairError,
)
from .group import CollisionShapeGroup
from .mesh import ConvexHull, Mesh, OcTree
from .robot import RobotModel
from .scene import Scene
from .shapes import (
    Box,
    Capsule,
    CollisionShape,
    Cone,
    Cuboid,
    Cylinder,
    Ellipsoid,
    HalfSpace,
    Sphere,
)

__version__ = "0.1.0"

__all__ = [
    "Box",
    "Capsule",
    "CollisionDisabledError",
    "CollisionShape",
    "CollisionShapeGroup",
    "Cone",
    "Contact",
    "ContactReport",
    "Contacts",
    "ConvexHull",
    "Cuboid",
    "Cylinder",
    "Ellipsoid",
    "HalfSpace",
    "InvalidArgumentError",
    "InvalidMeshError",
    "InvalidPoseError",
    "InvalidShapeError",
    "Mesh",
    "MeshFileError",
    "MeshFileNotFoundError",
    "NotInSceneError",
    "OcTree",
    "RobotModel",
    "RobotModelError",
    "Scene",
    "SceneError",
    "ShapeTypeError",
    "SpatialContactError",
    "Sphere",
    "UnsupportedPairError",
    "meshes",
]
