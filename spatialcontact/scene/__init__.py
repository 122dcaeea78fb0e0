"""Scenes: many named objects on a broadphase, asked which pairs touch.

:class:`Scene` (in :mod:`spatialcontact.scene.scene`) holds the objects and answers the
queries; :class:`~spatialcontact.scene.broadphase.Broadphase` finds which of their leaves
touch, on Coal's trees.
"""

from .scene import Scene

__all__ = ["Scene"]
