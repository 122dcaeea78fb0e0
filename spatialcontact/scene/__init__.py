"""Scenes: many named objects on a broadphase, asked which pairs touch.

:class:`Scene` (in :mod:`spatialcontact.scene.scene`) holds the objects and answers the
queries; :class:`~spatialcontact.scene.broadphase.Broadphase` finds which of their leaves
touch, on Coal's trees (one per world of a multi-world scene, see ``docs/worlds.md``);
:class:`WorldContacts` are the contacts of a scene query, with the world of each.
"""

from .scene import Scene, WorldContacts

__all__ = ["Scene", "WorldContacts"]
