"""Mesh data shipped with spatialcontact, found with :func:`path`.

Folders
-------
``panda``
    Franka Emika Panda collision model: ``collision/*.stl`` (link0-link7, hand, finger),
    ``panda.urdf`` and ``panda.srdf`` (link pairs to skip in self-collision). Apache-2.0, see
    ``LICENSE`` and ``NOTICE`` in the folder.
``iiwa14``
    KUKA LBR iiwa 14 R820 collision model: ``collision/*.stl`` (base_link, link_1-link_7) and
    ``lbr_iiwa_14_r820.urdf``. Apache-2.0, see ``LICENSE-Apache-2.0`` and ``NOTICE``.
``objects``
    Generic closed meshes of exact, documented sizes (box, spheres, cylinder, capsule, cone,
    torus) written by :mod:`spatialcontact.meshes.generate`, under spatialcontact's own
    BSD-3-Clause licence. Their sizes are listed in ``objects/README.md``.

The URDF files name their meshes relative to their own folder (``collision/link1.stl``).

Examples
--------
>>> from spatialcontact import meshes
>>> meshes.names()
('iiwa14', 'objects', 'panda')
>>> meshes.path("panda").name
'panda'
>>> meshes.path("objects/box.stl").name
'box.stl'
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from .._validate import describe
from ..errors import MeshFileError, MeshFileNotFoundError, ShapeTypeError

__all__ = ["names", "path"]

_ROOT = Path(__file__).resolve().parent
"""The folder holding this module and the data folders."""

_NAMES = ("iiwa14", "objects", "panda")
"""The data folders, sorted."""


def names() -> tuple[str, ...]:
    """The names of the shipped data folders, sorted.

    Returns
    -------
    tuple of str
        ``('iiwa14', 'objects', 'panda')``: each one is a valid argument of :func:`path`.
    """
    return _NAMES


def _listing(folder: Path) -> str:
    entries = sorted(p.name + ("/" if p.is_dir() else "") for p in folder.iterdir())
    return ", ".join(entries)


def path(name: str) -> Path:
    """The absolute path of a shipped data folder, or of a file inside one.

    Parameters
    ----------
    name : str
        A folder name from :func:`names` (``"panda"``, ``"iiwa14"``, ``"objects"``), or a
        path inside one written with ``/`` (``"objects/box.stl"``,
        ``"panda/collision/link1.stl"``).

    Returns
    -------
    pathlib.Path
        Absolute path of the existing folder or file, in the installed package.

    Raises
    ------
    ShapeTypeError
        ``name`` is not a ``str``.
    MeshFileError
        The first part of ``name`` is not one of :func:`names`, or ``name`` is empty,
        absolute or holds ``.``/``..`` parts.
    MeshFileNotFoundError
        ``name`` names a folder from :func:`names` but the rest does not exist there (the
        message lists what the deepest existing folder holds).

    Examples
    --------
    >>> from spatialcontact import Mesh, meshes
    >>> link = Mesh(meshes.path("panda") / "collision" / "link1.stl")
    >>> Mesh(meshes.path("objects/box.stl")).vertices.max(axis=0).tolist()
    [0.25, 0.125, 0.0625]
    """
    if not isinstance(name, str):
        raise ShapeTypeError(f"name must be a str, got {describe(name)}")
    valid = ", ".join(repr(n) for n in _NAMES)
    parts = PurePosixPath(name).parts
    if not parts or name.startswith("/") or any(p in (".", "..") for p in name.split("/")):
        raise MeshFileError(
            f"name must be a shipped mesh folder ({valid}) or a relative path inside one, "
            f"got {name!r}"
        )
    if parts[0] not in _NAMES:
        raise MeshFileError(f"name must be one of {valid} (or a path inside one), got {name!r}")
    found = _ROOT.joinpath(*parts)
    if not found.exists():
        folder = _ROOT / parts[0]
        for part in parts[1:-1]:
            if not (folder / part).is_dir():
                break
            folder = folder / part
        where = folder.relative_to(_ROOT).as_posix()
        raise MeshFileNotFoundError(
            f"name {name!r}: no such file in the shipped meshes; {where}/ holds {_listing(folder)}"
        )
    return found
