"""The ``spatialcontact`` command line (also ``python -m spatialcontact``).

Commands:

- ``spatialcontact demo``: the shipped Panda in a table-and-shelf work cell: random
  configurations checked, a motion checked, a picture of a colliding configuration.
- ``spatialcontact query A B``: two shapes (mesh files or specs such as ``sphere:0.1``): collided,
  signed distance, witness points and contacts, as text or ``--json``.
- ``spatialcontact robot URDF``: self- and scene collision, distance and colliding pairs of a
  robot at one configuration, or the collision rate over ``--random N``.
- ``spatialcontact bench``: runs the benchmark scripts of a checkout and prints their tables.

Errors are one line on stderr (``spatialcontact query: error: ...``) with exit code 1 for bad
input and 2 for a bad command line; never a traceback.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click
import numpy as np

from . import __version__, meshes
from ._validate import describe, flag, numbers
from .contact import Contacts
from .errors import InvalidArgumentError, ShapeTypeError, SpatialContactError
from .mesh import Mesh
from .robot import RobotModel
from .robot.model import MAX_SAMPLES
from .scene import Scene
from .shapes import (
    Capsule,
    CollisionShape,
    Cone,
    Cuboid,
    Cylinder,
    Ellipsoid,
    HalfSpace,
    Sphere,
)

__all__ = ["SPEC_KINDS", "CommandLineError", "load_scene", "main", "parse_pose", "parse_shape"]

SPEC_KINDS: dict[str, tuple[str, ...]] = {
    "sphere": ("radius",),
    "box": ("x", "y", "z"),
    "cuboid": ("x", "y", "z"),
    "cylinder": ("radius", "length"),
    "capsule": ("radius", "length"),
    "cone": ("radius", "length"),
    "ellipsoid": ("a", "b", "c"),
    "halfspace": ("nx", "ny", "nz", "offset"),
    "hull": ("mesh file",),
}
"""The primitive specs ``kind:v1,v2,...`` and what their numbers are (``hull:FILE`` takes the
convex hull of a mesh file). Sizes are full side lengths for boxes, full lengths along local z
for cylinders, capsules (the central segment) and cones, as the classes take them."""

_EXAMPLES = "sphere:0.1, box:0.1,0.2,0.3, cylinder:0.05,0.4, hull:part.stl or a mesh file"


class CommandLineError(InvalidArgumentError):
    """A bad shape spec, pose, configuration or scene file given on the command line."""


# ------------------------------------------------------------------------ parsing


def parse_shape(spec: str, *, name: str = "shape", base: Path | None = None) -> CollisionShape:
    """The shape a command-line spec describes.

    Parameters
    ----------
    spec : str
        ``kind:v1,v2,...`` with a kind of :data:`SPEC_KINDS` (``sphere:0.1``,
        ``box:0.1,0.2,0.3``, ``halfspace:0,0,1,0``; ``halfspace`` alone is the solid below
        z = 0), ``hull:FILE`` (the convex hull of a mesh file), or the path of a mesh file
        (STL, OBJ, PLY, GLB, DAE, ...).
    name : str
        What the spec is called in error messages (``"A"``, ``"objects[2].shape"``).
    base : Path, optional
        Folder that relative file paths start from (the working directory by default).

    Returns
    -------
    CollisionShape
        At the identity pose.

    Raises
    ------
    CommandLineError
        An unknown kind, the wrong count of numbers, a size out of range, a missing or
        unreadable mesh file; the message starts with ``name``.

    Examples
    --------
    >>> parse_shape("box:0.1,0.2,0.3").scale.tolist()
    [0.1, 0.2, 0.3]
    """
    if not isinstance(spec, str) or not spec.strip():
        raise CommandLineError(f"{name} must be a shape spec or a mesh file, got {describe(spec)}")
    try:
        return _shape(spec.strip(), name, base)
    except CommandLineError:
        raise
    except SpatialContactError as error:  # a size out of range, a missing or bad mesh file
        raise CommandLineError(f"{name}: {error}") from None


def _shape(text: str, name: str, base: Path | None) -> CollisionShape:
    kind, sep, rest = text.partition(":")
    kind = kind.lower()
    path = Path(text) if base is None else base / text
    if path.exists():
        return Mesh(path)  # Mesh says what is wrong with a directory or an unreadable file
    if kind == "halfspace" and not sep:
        return HalfSpace()
    if kind in SPEC_KINDS:
        fields = SPEC_KINDS[kind]
        example = f"{kind}:{','.join(fields)}"
        if not sep or not rest.strip():
            raise CommandLineError(f"{name}: {text!r} gives no values; write {example}")
        if kind == "hull":
            return Mesh(Path(rest) if base is None else base / rest).convex_hull()
        values = _numbers(rest, f"{name} ({example})")
        if len(values) != len(fields):
            raise CommandLineError(
                f"{name}: {kind} takes {len(fields)} number{'s' if len(fields) > 1 else ''} "
                f"({','.join(fields)}), got {len(values)} in {text!r}"
            )
    elif Path(text).suffix and not sep:
        return Mesh(path)  # a file name: Mesh says it does not exist
    else:
        raise CommandLineError(
            f"{name}: {text!r} is neither a file nor a shape spec (kinds: "
            f"{', '.join(SPEC_KINDS)}; e.g. {_EXAMPLES})"
        )
    if kind == "sphere":
        return Sphere(values[0])
    if kind in ("box", "cuboid"):
        return Cuboid(values)
    if kind == "cylinder":
        return Cylinder(*values)
    if kind == "capsule":
        return Capsule(*values)
    if kind == "cone":
        return Cone(*values)
    if kind == "ellipsoid":
        return Ellipsoid(values)
    return HalfSpace(values[:3], values[3])


def _numbers(text: str, name: str) -> list[float]:
    out = []
    for item in text.replace(" ", "").split(","):
        try:
            out.append(float(item))
        except ValueError:
            raise CommandLineError(f"{name}: {item!r} is not a number") from None
    return out


def parse_pose(
    values: Sequence[float] | np.ndarray, *, degrees: bool = False, name: str = "pose"
) -> np.ndarray:
    """A pose from ``x y z roll pitch yaw`` (metres; radians, or degrees when ``degrees``).

    The rotation is ``Rz(yaw) @ Ry(pitch) @ Rx(roll)`` (roll about x first), as spatialmath's
    ``SE3.RPY`` makes it.

    Parameters
    ----------
    values : sequence of 6 real numbers
        ``x y z roll pitch yaw``; booleans, strings and ``None`` are refused.
    degrees : bool
        Whether roll, pitch and yaw are in degrees.
    name : str
        What the pose is called in error messages (``"--pose-a"``, ``"objects[2].pose"``).

    Returns
    -------
    ndarray, shape (4, 4)
        The pose; the shapes check it when it is set.

    Raises
    ------
    ShapeTypeError
        ``values`` is not a sequence of real numbers (a string, ``None``, booleans among the
        values), or ``degrees`` is not a bool; the message names the parameter and the value.
    CommandLineError
        Not 6 numbers (or a ragged sequence), or a roll, pitch or yaw that is not finite.

    Examples
    --------
    >>> (parse_pose([1, 2, 3, 0, 0, 90], degrees=True).round(6)[:3] + 0.0).tolist()
    [[0.0, -1.0, 0.0, 1.0], [1.0, 0.0, 0.0, 2.0], [0.0, 0.0, 1.0, 3.0]]
    """
    what = "6 numbers (x y z roll pitch yaw)"
    flat = numbers(values, name, what, error=CommandLineError)
    degrees = flag(degrees, "degrees")
    if flat.shape != (6,):
        raise CommandLineError(
            f"{name} must be {what}, got {describe(values)} (shape {flat.shape})"
        )
    if not np.isfinite(flat[3:]).all():
        raise CommandLineError(
            f"{name}: roll, pitch and yaw must be finite, got {describe(values)}"
        )
    x, y, z, roll, pitch, yaw = flat.tolist()
    if degrees:
        roll, pitch, yaw = (math.radians(a) for a in (roll, pitch, yaw))
    cr, sr, cp, sp, cy, sy = (
        math.cos(roll),
        math.sin(roll),
        math.cos(pitch),
        math.sin(pitch),
        math.cos(yaw),
        math.sin(yaw),
    )
    T = np.eye(4)
    T[:3, :3] = [
        [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
        [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
        [-sp, cp * sr, cp * cr],
    ]
    T[:3, 3] = (x, y, z)
    return T


def _placed(shape: CollisionShape, pose: Sequence[float] | None, degrees: bool, name: str) -> None:
    if pose is None:
        return
    try:
        shape.T = parse_pose(pose, degrees=degrees)
    except SpatialContactError as error:
        raise CommandLineError(f"{name}: {error}") from None


_SCENE_KEYS = ("objects",)
_OBJECT_KEYS = ("name", "shape", "pose")


def _no_repeated_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object, refused when a key appears twice (JSON keeps the last silently)."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"the key {key!r} appears twice in one object")
        out[key] = value
    return out


def _unknown_keys(entry: dict[str, Any], allowed: tuple[str, ...], where: str) -> None:
    """Refuse the keys of ``entry`` that are not ``allowed`` (a typo would go unnoticed)."""
    unknown = [key for key in entry if key not in allowed]
    if unknown:
        raise CommandLineError(
            f"{where}: unknown key{'s' if len(unknown) > 1 else ''} "
            f"{', '.join(map(repr, unknown))} (allowed keys: {', '.join(allowed)})"
        )


def load_scene(path: str | os.PathLike[str]) -> Scene:
    """A :class:`Scene` from a JSON file.

    The file holds ``{"objects": [{"name": ..., "shape": ..., "pose": ...}, ...]}``: each
    ``shape`` a spec as :func:`parse_shape` reads it (mesh paths relative to the file), each
    ``pose`` (optional) six numbers ``x y z roll pitch yaw`` (radians) or a 4x4 matrix, each
    ``name`` optional. Other keys are refused, at the top level and in the objects.

    Parameters
    ----------
    path : str or os.PathLike
        The JSON file.

    Returns
    -------
    Scene
        The objects, in the file's order.

    Raises
    ------
    ShapeTypeError
        ``path`` is not a ``str`` or ``os.PathLike``.
    CommandLineError
        A missing or malformed file, an unknown key, a bad shape or pose; the message names
        the entry (``objects[2]``).
    """
    if not isinstance(path, (str, os.PathLike)):
        raise ShapeTypeError(f"path must be a str or os.PathLike, got {describe(path)}")
    try:
        path = Path(path)
    except TypeError:  # a PathLike giving bytes
        raise ShapeTypeError(f"path must be a str or os.PathLike, got {describe(path)}") from None
    try:
        data = json.loads(path.read_text(), object_pairs_hook=_no_repeated_keys)
    except FileNotFoundError:
        raise CommandLineError(f"scene {str(path)!r}: no such file") from None
    except IsADirectoryError:
        raise CommandLineError(f"scene {str(path)!r}: is a directory, not a JSON file") from None
    except RecursionError:
        raise CommandLineError(f"scene {str(path)!r}: nested too deeply to read") from None
    except (OSError, ValueError) as error:  # JSON, UTF-8, over-long integers, repeated keys
        raise CommandLineError(f"scene {str(path)!r}: cannot read it as JSON ({error})") from None
    if isinstance(data, dict):
        _unknown_keys(data, _SCENE_KEYS, f"scene {str(path)!r}")
    objects = data.get("objects") if isinstance(data, dict) else None
    if not isinstance(objects, list):
        raise CommandLineError(
            f'scene {str(path)!r}: expected {{"objects": [...]}}, got {describe(data)}'
        )
    scene = Scene()
    for i, entry in enumerate(objects):
        where = f"scene {str(path)!r}, objects[{i}]"
        if isinstance(entry, dict):
            _unknown_keys(entry, _OBJECT_KEYS, where)
        if not isinstance(entry, dict) or "shape" not in entry:
            raise CommandLineError(f'{where}: expected {{"shape": ..., ...}}, got {entry!r}')
        try:
            shape = parse_shape(entry["shape"], name=f"{where}.shape", base=path.parent)
            pose = entry.get("pose")
            if pose is not None:
                shape.T = _scene_pose(pose, f"{where}.pose")
            scene.add(shape, entry.get("name"))
        except (SpatialContactError, ValueError, TypeError) as error:
            if isinstance(error, CommandLineError):
                raise
            raise CommandLineError(f"{where}: {error}") from None
    return scene


def _scene_pose(pose: Any, name: str) -> np.ndarray:
    """The pose of a scene entry: 6 numbers ``x y z roll pitch yaw`` or a 4x4 matrix."""
    what = "6 numbers (x y z roll pitch yaw) or a 4x4 matrix"
    matrix = numbers(pose, name, what, type_error=CommandLineError, error=CommandLineError)
    if matrix.shape == (6,):
        return parse_pose(pose, name=name)
    if matrix.shape != (4, 4):
        raise CommandLineError(f"{name} must be {what}, got {describe(pose)}")
    return matrix


def _robot_files(urdf: str, srdf: Path | None) -> tuple[Path, Path | None]:
    """The URDF file (a path, or a shipped robot's name) and the SRDF to use with it."""
    path = Path(urdf)
    if not path.exists() and urdf in meshes.names():
        folder = meshes.path(urdf)
        found = sorted(folder.glob("*.urdf"))
        if found:
            if srdf is None:
                srdf = next(iter(sorted(folder.glob("*.srdf"))), None)
            return found[0], srdf
    if not path.exists():
        robots = [n for n in meshes.names() if any(meshes.path(n).glob("*.urdf"))]
        raise CommandLineError(f"URDF {urdf!r}: no such file (shipped robots: {', '.join(robots)})")
    return path, srdf


def _configuration(robot: RobotModel, text: str | None) -> np.ndarray:
    if text is None:
        return robot.neutral
    if text in robot.states:
        return robot.states[text]
    if text == "neutral":
        return robot.neutral
    if "," not in text:
        try:
            float(text)
        except ValueError:
            named = ", ".join(["neutral", *robot.states])
            raise CommandLineError(
                f"--q: {text!r} is neither joint values nor a named state of {robot.name} "
                f"(named states: {named})"
            ) from None
    values = _numbers(text, "--q")
    if len(values) != robot.dof:
        named = ", ".join(["neutral", *robot.states])
        raise CommandLineError(
            f"--q: {robot.name} takes {robot.dof} joint values ({', '.join(robot.joint_names)}), "
            f"got {len(values)}; or give a named state: {named}"
        )
    return np.array(values)


# ------------------------------------------------------------------------ output


def _vector(v: Any) -> str:
    return "[" + ", ".join(f"{x:+.6f}" for x in np.asarray(v, dtype=float).tolist()) + "]"


def _contact_rows(contacts: Contacts) -> list[dict[str, Any]]:
    return [
        {
            "pos": c.pos.tolist(),
            "normal": c.normal.tolist(),
            "penetration_depth": float(c.penetration_depth),
            "nearest_points": c.nearest_points.tolist(),
            "b1": int(c.b1),
            "b2": int(c.b2),
        }
        for c in contacts
    ]


def _emit_json(data: dict[str, Any]) -> None:
    click.echo(json.dumps(data, indent=2, allow_nan=False))


# ------------------------------------------------------------------------ commands


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="spatialcontact")
def cli() -> None:
    """Collision geometry for robotics, on Coal: shapes, robots and scenes from the shell."""


_POSE_HELP = "x y z roll pitch yaw (metres, radians unless --deg)"


@cli.command()
@click.argument("a")
@click.argument("b")
@click.option("--pose-a", nargs=6, type=float, default=None, help=f"Pose of A: {_POSE_HELP}.")
@click.option("--pose-b", nargs=6, type=float, default=None, help=f"Pose of B: {_POSE_HELP}.")
@click.option("--deg", is_flag=True, help="Roll, pitch and yaw are in degrees.")
@click.option(
    "--contacts",
    "max_contacts",
    type=click.IntRange(min=0),
    default=1,
    show_default=True,
    help="Contacts to report per leaf pair (0: none).",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
def query(
    a: str,
    b: str,
    pose_a: tuple[float, ...] | None,
    pose_b: tuple[float, ...] | None,
    deg: bool,
    max_contacts: int,
    as_json: bool,
) -> None:
    """Collision, signed distance, witness points and contacts between shapes A and B.

    A and B are mesh files or primitive specs: sphere:R, box:X,Y,Z (full sides),
    cylinder:R,L, capsule:R,L, cone:R,L, ellipsoid:A,B,C, halfspace:NX,NY,NZ,D, hull:FILE.
    Points and vectors are in the world frame, in metres; the normal points from A to B; the
    distance (and a contact's depth) is negative when the shapes overlap.
    """
    shape_a = parse_shape(a, name="A")
    shape_b = parse_shape(b, name="B")
    _placed(shape_a, pose_a, deg, "--pose-a")
    _placed(shape_b, pose_b, deg, "--pose-b")
    collided = shape_a.iscollided(shape_b)
    d, p1, p2 = shape_a.closest_point(shape_b, inf_dist=math.inf)
    assert d is not None  # no distance exceeds an infinite cut-off
    contacts = shape_a.contacts(shape_b, max_contacts=max_contacts) if max_contacts else Contacts()
    if as_json:
        _emit_json(
            {
                "a": a,
                "b": b,
                "collided": bool(collided),
                "distance": float(d),
                "witness_a": np.asarray(p1).tolist(),
                "witness_b": np.asarray(p2).tolist(),
                "contacts": _contact_rows(contacts),
            }
        )
        return
    click.echo(f"A: {describe(shape_a)}")
    click.echo(f"B: {describe(shape_b)}")
    click.echo(f"collided: {collided}")
    click.echo(f"distance: {d:+.6f} m (signed: negative on overlap)")
    click.echo(f"witness on A: {_vector(p1)}")
    click.echo(f"witness on B: {_vector(p2)}")
    if not max_contacts:
        return
    click.echo(f"contacts: {len(contacts)}")
    for i, c in enumerate(contacts):
        click.echo(
            f"  {i}: pos {_vector(c.pos)}, normal {_vector(c.normal)}, "
            f"depth {c.penetration_depth:+.6f}, b1 {c.b1}, b2 {c.b2}"
        )


@cli.command()
@click.argument("urdf")
@click.option("--srdf", type=click.Path(path_type=Path), default=None, help="SRDF file.")
@click.option(
    "--q", "q_text", default=None, help="Joint values, comma-separated, or a named state."
)
@click.option(
    "--random", "n_random", type=click.IntRange(1, MAX_SAMPLES), default=None, help="Check N."
)
@click.option(
    "--seed", type=click.IntRange(min=0), default=0, show_default=True, help="Seed of --random."
)
@click.option("--scene", "scene_file", type=click.Path(path_type=Path), default=None)
@click.option(
    "--geometry",
    type=click.Choice(["mesh", "convex"]),
    default="mesh",
    show_default=True,
    help="Link meshes as they are, or their convex hulls.",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
def robot(
    urdf: str,
    srdf: Path | None,
    q_text: str | None,
    n_random: int | None,
    seed: int,
    scene_file: Path | None,
    geometry: str,
    as_json: bool,
) -> None:
    """Self- and scene collision, distance and colliding pairs of a robot.

    URDF is a file or a shipped robot (panda, iiwa14; the Panda's SRDF comes with it). With
    --q (default: the neutral configuration), one configuration is checked; with --random N,
    N random configurations within the joint limits, and the collision rate is printed. The
    scene (--scene) is a JSON file: {"objects": [{"name": "table", "shape": "box:1,1,0.05",
    "pose": [x, y, z, roll, pitch, yaw]}, ...]}.
    """
    if q_text is not None and n_random is not None:
        raise CommandLineError("--q and --random: give one or the other, not both")
    urdf_path, srdf_path = _robot_files(urdf, srdf)
    model = RobotModel.from_urdf(
        urdf_path, srdf=srdf_path, geometry="convex" if geometry == "convex" else "mesh"
    )
    scene = None if scene_file is None else load_scene(scene_file)
    if n_random is not None:
        _robot_random(model, scene, n_random, seed, as_json)
        return
    q = _configuration(model, q_text)
    own = model.self_collision(q)
    hit = model.in_collision(q, scene)
    pairs = model.colliding_pairs(q, scene)
    nearest = model.distance(q, scene)
    if as_json:
        _emit_json(
            {
                "robot": model.name,
                "q": np.asarray(q, dtype=float).tolist(),
                "self_collision": bool(own),
                "in_collision": bool(hit),
                "colliding_pairs": [list(p) for p in pairs],
                "distance": None if math.isinf(nearest.distance) else nearest.distance,
                "nearest": [nearest.part, nearest.other],
            }
        )
        return
    click.echo(f"robot: {model.name}, {model.dof} joint values ({', '.join(model.joint_names)})")
    click.echo(f"q: {_vector(q)}")
    click.echo(f"self-collision: {own}")
    if scene is not None:
        click.echo(f"in collision (self or scene: {', '.join(scene.names)}): {hit}")
    click.echo("colliding pairs: " + ("; ".join(f"{p} - {o}" for p, o in pairs) or "none"))
    what = "clearance to the scene" if scene is not None else "nearest self-collision pair"
    if math.isinf(nearest.distance):
        click.echo(f"{what}: no pair to measure")
    else:
        click.echo(f"{what}: {nearest.distance:+.6f} m between {nearest.part} and {nearest.other}")


def _robot_random(model: RobotModel, scene: Scene | None, n: int, seed: int, as_json: bool) -> None:
    Q = model.sample(n, rng=seed)
    start = time.perf_counter()
    hits = model.check(Q, scene)
    took = time.perf_counter() - start
    own = model.check(Q) if scene is not None else hits
    if as_json:
        _emit_json(
            {
                "robot": model.name,
                "configurations": n,
                "seed": seed,
                "in_collision": int(hits.sum()),
                "self_collision": int(own.sum()),
                "seconds": took,
            }
        )
        return
    click.echo(f"robot: {model.name}, {n} random configurations (seed {seed})")
    click.echo(f"in collision: {int(hits.sum())} ({hits.mean():.1%})")
    if scene is not None:
        click.echo(f"  with itself: {int(own.sum())} ({own.mean():.1%}); the rest with the scene")
    click.echo(f"time: {took * 1e6 / n:.0f} µs per configuration ({took:.3f} s)")


def _workcell() -> Scene:
    """A table 1 mm under the Panda's base and a shelf of three boards standing on it."""

    def at(x: float, y: float, z: float) -> np.ndarray:
        return parse_pose([x, y, z, 0.0, 0.0, 0.0])

    scene = Scene()
    tan = (0.82, 0.71, 0.55)  # numbers: colour names would need matplotlib
    scene.add(Cuboid([1.6, 1.2, 0.05], pose=at(0.3, 0.0, -0.026), color=tan), "table")
    x, depth, width, height = 0.62, 0.3, 0.8, 0.9
    scene.add(Cuboid([depth, 0.02, height], pose=at(x, -width / 2, height / 2)), "shelf side L")
    scene.add(Cuboid([depth, 0.02, height], pose=at(x, width / 2, height / 2)), "shelf side R")
    scene.add(Cuboid([0.02, width, height], pose=at(x + depth / 2, 0, height / 2)), "shelf back")
    for z in (0.25, 0.55, 0.89):
        scene.add(Cuboid([depth, width, 0.02], pose=at(x, 0.0, z)), f"board z={z:.2f}")
    return scene


@cli.command()
@click.option("-n", "n", type=click.IntRange(10, MAX_SAMPLES), default=3000, show_default=True)
@click.option("--seed", type=click.IntRange(min=0), default=1, show_default=True)
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Where to write the picture (default: a new temporary folder).",
)
def demo(n: int, seed: int, out: Path | None) -> None:
    """The shipped Panda in a table-and-shelf work cell.

    Checks N random configurations (collision rate and time), checks a straight-line motion,
    and draws a colliding configuration with its contact points to a PNG file.
    """
    if out is not None and not out.parent.is_dir():
        raise CommandLineError(f"--out {str(out)!r}: no such folder {str(out.parent)!r}")
    folder = meshes.path("panda")
    model = RobotModel.from_urdf(folder / "panda.urdf", srdf=folder / "panda.srdf")
    scene = _workcell()
    click.echo(f"Panda: {model.dof} joint values; scene: {', '.join(scene.names)}")
    Q = model.sample(n, rng=seed)
    start = time.perf_counter()
    hits = model.check(Q, scene)
    took = time.perf_counter() - start
    own = model.check(Q)
    click.echo(
        f"{n} random configurations: {hits.mean():.1%} collide "
        f"({own.mean():.1%} with the robot itself), {took * 1e6 / n:.0f} µs per configuration"
    )
    free = Q[~hits]
    if len(free) >= 2:
        q0, q1 = free[0], free[1]
        start = time.perf_counter()
        ok = model.check_motion(q0, q1, scene)
        click.echo(
            f"straight-line motion between two free configurations: "
            f"{'free' if ok else 'not proved free'} ({(time.perf_counter() - start) * 1e3:.1f} ms)"
        )
    touching = Q[hits & ~own]
    if len(touching) == 0:
        click.echo("no configuration touches the scene alone: no picture")
        return
    q = touching[0]
    pairs = model.colliding_pairs(q, scene)
    click.echo("a colliding configuration: " + "; ".join(f"{p} - {o}" for p, o in pairs))
    path = out if out is not None else Path(tempfile.mkdtemp(prefix="spatialcontact-")) / "demo.png"
    try:
        _draw_demo(model, scene, q, pairs, path)
    except ImportError as error:  # matplotlib is an optional extra
        click.echo(
            f"no picture: drawing needs matplotlib ({error}); "
            'pip install "spatialcontact[plot]" installs it'
        )
        return
    click.echo(f"picture: {path}")


def _draw_demo(
    model: RobotModel, scene: Scene, q: np.ndarray, pairs: list[tuple[str, str]], path: Path
) -> None:
    import matplotlib

    from .plot import plot

    matplotlib.use("Agg")  # a file, never a window
    import matplotlib.pyplot as plt

    model.set_q(q)
    contacts = Contacts()
    touching: list[CollisionShape] = []
    for part, other in pairs:
        mine = model.shapes_of(part)
        theirs = model.shapes_of(other) if other in model.link_names else [scene[other]]
        touching += mine
        for a in mine:
            for b in theirs:
                contacts = contacts + a.contacts(b, max_contacts=4)
    figure = plt.figure(figsize=(8, 7))
    ax = figure.add_subplot(projection="3d")
    plot(scene, ax=ax, color="lightsteelblue", alpha=0.2)
    plot(model, ax=ax, contacts=contacts, highlight=touching, color="dimgray", alpha=0.9)
    ax.view_init(elev=20, azim=-160)
    listed = "\n".join(f"{p} - {o}" for p, o in pairs)
    ax.set_title(f"A colliding configuration: links in contact in red,\n{listed}", fontsize=9)
    ax.figure.tight_layout()
    ax.figure.savefig(path, dpi=110)
    plt.close(ax.figure)


def _bench_folder(given: Path | None) -> Path:
    folder = given if given is not None else Path(__file__).resolve().parent.parent / "benchmarks"
    if not (folder / "_timing.py").is_file():
        raise CommandLineError(
            f"no benchmark scripts in {str(folder)!r}: they are part of the source checkout, not "
            "of the installed package; run from a checkout (pip install -e .) or give --dir"
        )
    return folder


@cli.command()
@click.argument("names", nargs=-1)
@click.option("--quick", is_flag=True, help="A rough run of a few seconds per script.")
@click.option(
    "--json",
    "json_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Also write each script's figures to DIR/<script>.json.",
)
@click.option(
    "--dir",
    "folder",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="The benchmarks folder (default: the checkout's benchmarks/).",
)
def bench(names: tuple[str, ...], quick: bool, json_dir: Path | None, folder: Path | None) -> None:
    """Run the benchmark scripts and print their tables (NAMES: e.g. queries scene).

    Each script runs in its own process and prints its tables beside the peers installed
    (``pip install -e ".[bench]"`` installs them all); --quick gives rough figures fast.
    """
    where = _bench_folder(folder)
    scripts = sorted(where.glob("bench_*.py"))
    if names:
        known = {s.stem.removeprefix("bench_"): s for s in scripts}
        missing = [n for n in names if n.removeprefix("bench_") not in known]
        if missing:
            raise CommandLineError(
                f"no benchmark named {', '.join(missing)} (known: {', '.join(known)})"
            )
        scripts = [known[n.removeprefix("bench_")] for n in names]
    if json_dir is not None:
        json_dir.mkdir(parents=True, exist_ok=True)
    failed = []
    with click.progressbar(
        scripts,
        label="benchmarks",
        file=sys.stderr,
        item_show_func=lambda s: None if s is None else s.name,
    ) as bar:
        for script in bar:
            command = [sys.executable, str(script)] + (["--quick"] if quick else [])
            if json_dir is not None:
                command += ["--json", str(json_dir / f"{script.stem}.json")]
            done = subprocess.run(command, capture_output=True, text=True, cwd=where)
            click.echo(f"\n== {script.name} ==\n{done.stdout}")
            if done.returncode != 0:
                last = (done.stderr.strip().splitlines() or ["(no message)"])[-1]
                failed.append(f"{script.name} (exit {done.returncode}: {last})")
    if failed:
        raise CommandLineError("failed: " + "; ".join(failed))


# ------------------------------------------------------------------------ entry point


def _fail(command: str, message: str, code: int) -> int:
    line = " ".join(message.split())  # one line, whatever the message holds
    click.echo(f"{command}: error: {line}", err=True)
    return code


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line with ``argv`` (``sys.argv[1:]`` by default); return the exit code.

    Bad input (a missing file, a bad spec, pose or configuration) gives one line on stderr and
    exit code 1; a bad command line (an unknown option, a non-number) exit code 2.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    command = "spatialcontact" + (f" {args[0]}" if args and args[0] in cli.commands else "")
    try:
        cli.main(args=args, prog_name="spatialcontact", standalone_mode=False)
    except click.exceptions.NoArgsIsHelpError as error:
        click.echo(error.ctx.get_help() if error.ctx else str(error), err=True)
        return 2
    except click.exceptions.UsageError as error:
        return _fail(command, error.format_message(), 2)
    except click.exceptions.Abort:
        return _fail(command, "interrupted", 130)
    except click.exceptions.Exit as done:
        return int(done.exit_code)
    except (SpatialContactError, ValueError, TypeError, OSError, ImportError) as error:
        return _fail(command, str(error) or type(error).__name__, 1)
    except KeyboardInterrupt:
        return _fail(command, "interrupted", 130)
    return 0
