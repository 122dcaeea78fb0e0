"""Reading robot descriptions: URDF through yourdfpy, SRDF through the standard library.

:func:`read_urdf` turns a URDF file into a :class:`RobotSpec`: the links, the joints (in an
order where every joint comes after the joint of its parent link) and the collision geometry,
with every mesh file found on disk. :func:`read_srdf` reads the link pairs an SRDF disables
and its named joint states. Both check what they read and raise
:class:`~spatialcontact.errors.RobotModelError` naming the file and the element.

yourdfpy is imported by :func:`read_urdf` only, so ``import spatialcontact`` does not need it.
"""

from __future__ import annotations

import math
import os
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .._validate import MAX_COORDINATE, MAX_SIZE, MIN_SIZE, describe
from ..errors import MeshFileNotFoundError, RobotModelError

__all__ = [
    "GeometrySpec",
    "JointSpec",
    "RobotSpec",
    "SemanticSpec",
    "package_directories",
    "read_srdf",
    "read_urdf",
    "resolve_mesh",
]

LIMIT_TOLERANCE = 1e-9
"""A joint value this far (radians or metres) outside its limits still counts as inside."""

JOINT_TYPES = ("revolute", "continuous", "prismatic", "fixed")
"""The URDF joint types a robot model supports (``floating`` and ``planar`` are refused)."""

_LISTED = 20
"""How many valid names an error message lists at most."""


@dataclass(frozen=True)
class GeometrySpec:
    """One ``<collision>`` element of a link.

    Attributes
    ----------
    link : str
        The link it belongs to.
    index : int
        Its position among the link's ``<collision>`` elements.
    kind : str
        ``"mesh"``, ``"box"``, ``"cylinder"`` or ``"sphere"``.
    T_link_geometry : ndarray, shape (4, 4)
        The element's ``<origin>``: its pose in the link frame.
    size : tuple of float
        ``"mesh"``: the scale along x, y, z; ``"box"``: the full sides x, y, z;
        ``"cylinder"``: radius and length (along z); ``"sphere"``: the radius.
    filename : pathlib.Path or None
        The mesh file found on disk (None for primitives).
    """

    link: str
    index: int
    kind: str
    T_link_geometry: np.ndarray
    size: tuple[float, ...]
    filename: Path | None = None


@dataclass(frozen=True)
class JointSpec:
    """One ``<joint>``.

    Attributes
    ----------
    name, kind, parent, child : str
        The joint's name, type (one of :data:`JOINT_TYPES`) and the two link names.
    T_parent_joint : ndarray, shape (4, 4)
        The joint's ``<origin>``: the joint frame in the parent link's frame. The child
        link's frame is the joint frame moved by the joint's value.
    axis : ndarray, shape (3,)
        Unit axis in the joint frame (``[1, 0, 0]`` when the URDF gives none).
    lower, upper : float
        Limits in radians or metres; ``-inf`` and ``inf`` for continuous and fixed joints.
    mimic : tuple of (str, float, float) or None
        ``(joint, multiplier, offset)``: this joint's value is
        ``multiplier * value(joint) + offset``.
    """

    name: str
    kind: str
    parent: str
    child: str
    T_parent_joint: np.ndarray
    axis: np.ndarray
    lower: float
    upper: float
    mimic: tuple[str, float, float] | None = None


@dataclass(frozen=True)
class RobotSpec:
    """What a URDF file describes, checked.

    Attributes
    ----------
    name : str
        The ``<robot name>``.
    root : str
        The link that is no joint's child.
    links : tuple of str
        Every link, in file order.
    joints : tuple of JointSpec
        Every joint, each after the joint of its parent link.
    geometries : tuple of GeometrySpec
        Every collision element, by link in file order.
    source : str
        The URDF file read.
    """

    name: str
    root: str
    links: tuple[str, ...]
    joints: tuple[JointSpec, ...]
    geometries: tuple[GeometrySpec, ...]
    source: str


@dataclass(frozen=True)
class SemanticSpec:
    """What an SRDF file adds.

    Attributes
    ----------
    disabled : tuple of (str, str)
        The ``<disable_collisions>`` link pairs, in file order.
    states : dict of str to dict of str to float
        Each ``<group_state>``'s joint values by joint name.
    source : str
        The SRDF file read.
    """

    disabled: tuple[tuple[str, str], ...]
    states: dict[str, dict[str, float]] = field(default_factory=dict)
    source: str = ""


# ---------------------------------------------------------------------------- helpers


def _listing(names: Iterable[str]) -> str:
    shown = sorted(names)
    text = ", ".join(repr(n) for n in shown[:_LISTED])
    if len(shown) > _LISTED:
        text += f", ... ({len(shown) - _LISTED} more)"
    return text


def _file(path: Any, what: str) -> Path:
    """``path`` as an existing file, or a RobotModelError naming ``what`` it should be."""
    if not isinstance(path, (str, os.PathLike)) or not os.fspath(path):
        raise RobotModelError(f"{what} must be a path to a file, got {describe(path)}")
    out = Path(os.fspath(path))
    if not out.is_file():
        where = (
            "is a directory"
            if out.is_dir()
            else "not a regular file"
            if out.exists()
            else "no such file"
        )
        raise RobotModelError(f"{what} {str(out)!r}: {where}")
    return out


def _xml_root(path: Path, what: str) -> ET.Element:
    """The root element of an XML file, which must be ``<robot>``."""
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as error:
        raise RobotModelError(f"{what} {str(path)!r} is not well-formed XML: {error}") from None
    if root.tag != "robot":
        raise RobotModelError(
            f"{what} {str(path)!r}: the root element must be <robot>, got <{root.tag}>"
        )
    return root


def package_directories(value: Any, urdf: Path) -> tuple[Path, ...]:
    """The folders searched for ``package://`` meshes: ``value`` and the URDF's folders.

    Parameters
    ----------
    value : str, os.PathLike, sequence of them, or None
        Folders that hold packages (``<dir>/<package>/...``) or are a package themselves
        (``<dir>`` named ``<package>``).
    urdf : pathlib.Path
        The URDF file: its folder and the folder above it are searched after ``value``.
    """
    if value is None:
        given: list[Any] = []
    elif isinstance(value, (str, os.PathLike)):
        given = [value]
    elif isinstance(value, Sequence):
        given = list(value)
    else:
        raise RobotModelError(
            f"package_dirs must be a folder, a sequence of folders or None, got {describe(value)}"
        )
    out = []
    for item in given:
        if not isinstance(item, (str, os.PathLike)):
            raise RobotModelError(f"package_dirs must hold folder paths, got {describe(item)}")
        out.append(Path(os.fspath(item)))
    here = urdf.resolve().parent
    return (*out, here, here.parent)


def resolve_mesh(filename: str, urdf: Path, package_dirs: Sequence[Path], where: str) -> Path:
    """The file a URDF ``<mesh filename>`` names.

    ``package://pkg/rest`` is looked for as ``<dir>/pkg/rest`` and, for a folder named
    ``pkg``, ``<dir>/rest``, in each of ``package_dirs``; ``file://`` and absolute paths are
    taken as they are; other paths are relative to the URDF's folder.

    Raises
    ------
    MeshFileNotFoundError
        No candidate exists; the message names ``where`` and every path tried.
    """
    if filename.startswith("package://"):
        package, _, rest = filename[len("package://") :].partition("/")
        candidates = []
        for folder in package_dirs:
            candidates.append(folder / package / rest)
            if folder.name == package:
                candidates.append(folder / rest)
    elif filename.startswith("file://"):
        candidates = [Path(filename[len("file://") :])]
    else:
        path = Path(filename)
        candidates = [path if path.is_absolute() else urdf.resolve().parent / path]
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    tried = ", ".join(repr(str(c)) for c in candidates)
    raise MeshFileNotFoundError(f"{where}: mesh {filename!r} not found (tried {tried})")


def _finite(values: Any, what: str) -> np.ndarray:
    out = np.asarray(values, dtype=np.float64)
    if not np.all(np.isfinite(out)):
        raise RobotModelError(f"{what} must be finite, got {out.tolist()}")
    return out


def _positive(values: Any, what: str) -> tuple[float, ...]:
    out = _finite(values, what).reshape(-1)
    if not np.all(out > 0.0):
        raise RobotModelError(f"{what} must be > 0, got {out.tolist()}")
    return tuple(float(v) for v in out)


def _sizes(values: Any, what: str) -> tuple[float, ...]:
    """Sizes of a box, cylinder or sphere in metres, each within [MIN_SIZE, MAX_SIZE] as the
    shapes take them."""
    out = _positive(values, what)
    if not all(MIN_SIZE <= v <= MAX_SIZE for v in out):
        raise RobotModelError(f"{what} must lie in [{MIN_SIZE:g}, {MAX_SIZE:g}] m, got {list(out)}")
    return out


def _pose(matrix: Any, what: str) -> np.ndarray:
    if matrix is None:
        return np.eye(4)
    out = _finite(matrix, what)
    if out.shape == (4, 4) and not np.all(np.abs(out[:3, 3]) <= MAX_COORDINATE):
        raise RobotModelError(
            f"{what} is too far out: its translation must lie within ±{MAX_COORDINATE:g} m, "
            f"got {out[:3, 3].tolist()}"
        )
    out.flags.writeable = False
    return out


# ------------------------------------------------------------------------------ URDF


def read_urdf(path: Any, package_dirs: Any = None) -> RobotSpec:
    """Read and check a URDF file with yourdfpy.

    Parameters
    ----------
    path : str or os.PathLike
        The URDF file.
    package_dirs : str, os.PathLike, sequence of them, or None
        Where ``package://`` meshes are looked for (see :func:`package_directories`).

    Returns
    -------
    RobotSpec

    Raises
    ------
    RobotModelError
        The file is missing or malformed, a joint's type is not supported, the links do not
        form one tree, or a value is missing or out of range.
    MeshFileNotFoundError
        A mesh file is not found.
    """
    urdf_path = _file(path, "URDF")
    _xml_root(urdf_path, "URDF")
    import yourdfpy

    try:
        model = yourdfpy.URDF.load(
            str(urdf_path),
            build_scene_graph=False,
            build_collision_scene_graph=False,
            load_meshes=False,
            load_collision_meshes=False,
        )
    except Exception as error:  # yourdfpy raises KeyError, TypeError, ValueError, ...
        raise RobotModelError(
            f"URDF {str(urdf_path)!r} cannot be read: {type(error).__name__}: {error} "
            "(every <link> and <joint> needs a name, every <joint> a <parent> and <child>, "
            "every <geometry> one <box>, <cylinder>, <sphere> or <mesh>)"
        ) from None
    if not model.validate():
        problems = "; ".join(str(e) for e in model.errors)
        raise RobotModelError(f"URDF {str(urdf_path)!r} is incomplete: {problems}")
    robot = model.robot
    source = str(urdf_path)
    links = tuple(link.name for link in robot.links)
    _unique(links, "link", source)
    _unique([joint.name for joint in robot.joints], "joint", source)
    joints = [_joint(joint, set(links), source) for joint in robot.joints]
    root, ordered = _tree(links, joints, source)
    folders = package_directories(package_dirs, urdf_path)
    geometries = tuple(
        _geometry(link.name, i, collision, urdf_path, folders)
        for link in robot.links
        for i, collision in enumerate(link.collisions)
    )
    return RobotSpec(robot.name, root, links, tuple(ordered), geometries, source)


def _unique(names: Sequence[str], what: str, source: str) -> None:
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise RobotModelError(f"URDF {source!r}: two {what}s are named {name!r}")
        seen.add(name)


def _joint(joint: Any, links: set[str], source: str) -> JointSpec:
    where = f"URDF {source!r}, joint {joint.name!r}"
    if joint.type not in JOINT_TYPES:
        raise RobotModelError(
            f"{where}: type {joint.type!r} is not supported (supported: {', '.join(JOINT_TYPES)})"
        )
    for role, link in (("parent", joint.parent), ("child", joint.child)):
        if link not in links:
            raise RobotModelError(
                f"{where}: {role} link {link!r} is not a link of the robot; links: "
                f"{_listing(links)}"
            )
    axis = _finite(joint.axis if joint.axis is not None else (1.0, 0.0, 0.0), f"{where}: axis")
    norm = float(np.linalg.norm(axis))
    if joint.type != "fixed" and not norm > 1e-12:
        raise RobotModelError(f"{where}: the axis must not be zero, got {axis.tolist()}")
    unit = axis / norm if norm > 1e-12 else np.array([1.0, 0.0, 0.0])
    unit.flags.writeable = False
    lower, upper = -math.inf, math.inf
    if joint.type in ("revolute", "prismatic"):
        lower, upper = float(joint.limit.lower), float(joint.limit.upper)
        if not (math.isfinite(lower) and math.isfinite(upper) and lower <= upper):
            raise RobotModelError(
                f"{where}: limits must be finite with lower <= upper, got lower={lower}, "
                f"upper={upper}"
            )
        if max(abs(lower), abs(upper)) > MAX_COORDINATE:
            unit_name = "m" if joint.type == "prismatic" else "rad"
            raise RobotModelError(
                f"{where}: limits must lie within ±{MAX_COORDINATE:g} {unit_name} (the range "
                f"of the poses the shapes take), got lower={lower:g}, upper={upper:g}"
            )
    mimic = None
    if joint.mimic is not None and joint.type != "fixed":
        multiplier = 1.0 if joint.mimic.multiplier is None else float(joint.mimic.multiplier)
        offset = 0.0 if joint.mimic.offset is None else float(joint.mimic.offset)
        if not (math.isfinite(multiplier) and math.isfinite(offset)):
            raise RobotModelError(
                f"{where}: mimic multiplier and offset must be finite, got {multiplier}, {offset}"
            )
        mimic = (str(joint.mimic.joint), multiplier, offset)
    return JointSpec(
        joint.name,
        joint.type,
        joint.parent,
        joint.child,
        _pose(joint.origin, f"{where}: origin"),
        unit,
        lower,
        upper,
        mimic,
    )


def _tree(
    links: tuple[str, ...], joints: list[JointSpec], source: str
) -> tuple[str, list[JointSpec]]:
    """The root link and the joints ordered parents first; checks the links form one tree."""
    by_child: dict[str, JointSpec] = {}
    for joint in joints:
        if joint.child in by_child:
            raise RobotModelError(
                f"URDF {source!r}: link {joint.child!r} is the child of two joints "
                f"({by_child[joint.child].name!r} and {joint.name!r})"
            )
        by_child[joint.child] = joint
    roots = [link for link in links if link not in by_child]
    if len(roots) != 1:
        what = (
            "every link is a joint's child (the joints form a loop)"
            if not roots
            else f"{len(roots)} links ({_listing(roots)}) are no joint's child"
        )
        raise RobotModelError(
            f"URDF {source!r}: the links must form one tree with one root link, but {what}"
        )
    children: dict[str, list[JointSpec]] = {}
    for joint in joints:
        children.setdefault(joint.parent, []).append(joint)
    ordered: list[JointSpec] = []  # depth first, children in file order
    stack = [iter(children.get(roots[0], []))]
    while stack:
        for joint in stack[-1]:
            ordered.append(joint)
            stack.append(iter(children.get(joint.child, [])))
            break
        else:
            stack.pop()
    if len(ordered) != len(joints):
        loose = sorted(set(by_child) - {j.child for j in ordered})
        raise RobotModelError(
            f"URDF {source!r}: links {_listing(loose)} are not connected to the root link "
            f"{roots[0]!r} (their joints form a loop)"
        )
    return roots[0], ordered


def _geometry(
    link: str, index: int, collision: Any, urdf: Path, folders: Sequence[Path]
) -> GeometrySpec:
    where = f"URDF {str(urdf)!r}, link {link!r}, collision {index}"
    origin = _pose(collision.origin, f"{where}: origin")
    geometry = collision.geometry
    if geometry.mesh is not None:
        filename = geometry.mesh.filename
        if not filename:
            raise RobotModelError(f"{where}: <mesh> has no filename")
        scale = geometry.mesh.scale
        scales = (1.0, 1.0, 1.0) if scale is None else _positive(scale, f"{where}: mesh scale")
        if len(scales) == 1:
            scales = scales * 3
        if len(scales) != 3:
            raise RobotModelError(f"{where}: mesh scale must be 1 or 3 numbers, got {scales}")
        found = resolve_mesh(str(filename), urdf, folders, where)
        return GeometrySpec(link, index, "mesh", origin, scales, found)
    if geometry.box is not None:
        sides = _sizes(geometry.box.size, f"{where}: box size")
        if len(sides) != 3:
            raise RobotModelError(f"{where}: box size must be 3 numbers, got {sides}")
        return GeometrySpec(link, index, "box", origin, sides)
    if geometry.cylinder is not None:
        cylinder = geometry.cylinder
        sizes = _sizes((cylinder.radius, cylinder.length), f"{where}: cylinder radius, length")
        return GeometrySpec(link, index, "cylinder", origin, sizes)
    sphere = geometry.sphere
    return GeometrySpec(link, index, "sphere", origin, _sizes(sphere.radius, f"{where}: radius"))


# ------------------------------------------------------------------------------ SRDF


def read_srdf(path: Any, robot: RobotSpec, joints: Sequence[str]) -> SemanticSpec:
    """Read and check an SRDF file's ``<disable_collisions>`` and ``<group_state>`` entries.

    Parameters
    ----------
    path : str or os.PathLike
        The SRDF file.
    robot : RobotSpec
        The robot it describes: every link it names must be one of ``robot.links``.
    joints : sequence of str
        The joints a state may set (the robot's degrees of freedom).

    Returns
    -------
    SemanticSpec

    Raises
    ------
    RobotModelError
        The file is missing or not well-formed XML, an entry lacks an attribute, or names a
        link or joint the robot does not have; a state's joint value is not one finite
        number or is outside the joint's limits; two states have the same name.
    """
    srdf_path = _file(path, "SRDF")
    root = _xml_root(srdf_path, "SRDF")
    source = str(srdf_path)
    links = set(robot.links)
    disabled = []
    for i, element in enumerate(root.iter("disable_collisions")):
        pair = (element.get("link1"), element.get("link2"))
        where = f"SRDF {source!r}, <disable_collisions> {i}"
        for attribute, link in zip(("link1", "link2"), pair, strict=True):
            if link is None:
                raise RobotModelError(f"{where} has no {attribute} attribute")
            if link not in links:
                raise RobotModelError(
                    f"{where}: {attribute} {link!r} is not a link of {robot.name!r}; links: "
                    f"{_listing(links)}"
                )
        disabled.append((str(pair[0]), str(pair[1])))
    states: dict[str, dict[str, float]] = {}
    known = set(joints)
    limits = {j.name: (j.lower, j.upper) for j in robot.joints}
    for i, element in enumerate(root.iter("group_state")):
        name = element.get("name")
        where = f"SRDF {source!r}, <group_state> {i} ({name!r})"
        if name is None:
            raise RobotModelError(f"{where} has no name attribute")
        if name in states:
            raise RobotModelError(f"{where}: a <group_state> named {name!r} comes earlier")
        values: dict[str, float] = {}
        for entry in element.iter("joint"):
            joint, text = entry.get("name"), entry.get("value")
            if joint not in known:
                raise RobotModelError(
                    f"{where}: joint {joint!r} is not a degree of freedom of {robot.name!r}; "
                    f"joints: {_listing(known)}"
                )
            words = text.split() if text is not None else []
            try:
                value = float(words[0]) if len(words) == 1 else math.nan
            except ValueError:
                value = math.nan
            if not math.isfinite(value):
                raise RobotModelError(
                    f"{where}: joint {joint!r} must have one finite value, got {text!r}"
                )
            lower, upper = limits[joint]
            if not lower - LIMIT_TOLERANCE <= value <= upper + LIMIT_TOLERANCE:
                raise RobotModelError(
                    f"{where}: joint {joint!r} = {value!r} is outside its limits [{lower}, {upper}]"
                )
            values[joint] = value
        states[name] = values
    return SemanticSpec(tuple(disabled), states, source)
