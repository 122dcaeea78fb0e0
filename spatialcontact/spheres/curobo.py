"""Sphere sets in cuRobo's robot-configuration format (YAML), read and written.

cuRobo keeps a robot's spheres in its robot configuration file, under
``robot_cfg: kinematics:`` (or in a file of their own, at the top level)::

    collision_spheres:
      panda_link0:
        - center: [0.0, 0.0, 0.085]
          radius: 0.06
      ...
    self_collision_ignore:
      panda_link0: [panda_link1, panda_link2]
    self_collision_buffer:
      panda_link0: 0.1

:func:`load_curobo` reads these three keys wherever they are (the top level, ``kinematics``
or ``robot_cfg: kinematics``) and ignores the rest; ``collision_spheres`` may also name
another YAML file holding the link map, relative to the first. :func:`save_curobo` writes
the three keys at the top level (a file cuRobo's ``collision_spheres:`` can name, or merge by
hand). Centres are in each link's frame, in metres.

Loaded spheres carry no guarantee: check them against the robot with
:meth:`RobotModel.spheres_cover <spatialcontact.robot.RobotModel.spheres_cover>`.

PyYAML is imported by these functions only.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

from .._validate import MAX_SIZE, MIN_SIZE, describe
from ..errors import RobotModelError
from .fit import SphereModel

__all__ = ["load_curobo", "save_curobo"]

_KEYS = ("collision_spheres", "self_collision_ignore", "self_collision_buffer")


def _path(path: Any, what: str) -> Path:
    if not isinstance(path, (str, os.PathLike)):
        raise RobotModelError(f"{what} must be a path to a file, got {describe(path)}")
    return Path(os.fspath(path))


def _read(path: Path) -> Any:
    import yaml

    if not path.is_file():
        raise RobotModelError(f"sphere file {str(path)!r}: no such file")
    try:
        with open(path, encoding="utf-8") as stream:
            return yaml.safe_load(stream)
    except yaml.YAMLError as error:
        raise RobotModelError(f"sphere file {str(path)!r} is not valid YAML: {error}") from None
    except UnicodeDecodeError as error:
        raise RobotModelError(f"sphere file {str(path)!r} is not UTF-8 text: {error}") from None


def _section(document: Any, where: str) -> dict[str, Any]:
    """The mapping holding ``collision_spheres``: the top level, ``kinematics`` or
    ``robot_cfg: kinematics``."""
    candidates = [document]
    if isinstance(document, dict):
        candidates.append(document.get("kinematics"))
        robot_cfg = document.get("robot_cfg")
        if isinstance(robot_cfg, dict):
            candidates.append(robot_cfg.get("kinematics"))
    for candidate in candidates:
        if isinstance(candidate, dict) and "collision_spheres" in candidate:
            return candidate
    raise RobotModelError(
        f"{where}: no 'collision_spheres' at the top level, under 'kinematics' or under "
        "'robot_cfg: kinematics'"
    )


def _number(value: Any, where: str) -> float:
    """``value`` as a float: a YAML number, or a string that reads as one.

    PyYAML follows YAML 1.1, where a float needs a dot: ``6e-2`` or ``1e300`` are read as
    strings. YAML 1.2 and JSON read them as numbers, and so does this function.
    """
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            pass
    elif not isinstance(value, bool) and isinstance(value, (int, float)):
        return float(value)
    raise RobotModelError(f"{where} must be a number, got {describe(value)}")


def _spheres(entries: Any, where: str) -> dict[str, list[list[float]]]:
    if not isinstance(entries, dict):
        raise RobotModelError(
            f"{where}: collision_spheres must map link names to lists of spheres, got "
            f"{describe(entries)}"
        )
    out = {}
    for link, items in entries.items():
        here = f"{where}: collision_spheres[{link!r}]"
        if items is None:
            items = []
        if not isinstance(items, list):
            raise RobotModelError(f"{here} must be a list of spheres, got {describe(items)}")
        rows = []
        for i, item in enumerate(items):
            if not isinstance(item, dict) or set(item) != {"center", "radius"}:
                raise RobotModelError(
                    f"{here}[{i}] must be a mapping with exactly 'center' and 'radius', got "
                    f"{describe(item)}"
                )
            centre = item["center"]
            if not isinstance(centre, list) or len(centre) != 3:
                raise RobotModelError(
                    f"{here}[{i}].center must be a list of 3 numbers, got {describe(centre)}"
                )
            xyz = [_number(c, f"{here}[{i}].center") for c in centre]
            r = _number(item["radius"], f"{here}[{i}].radius")
            if not (all(math.isfinite(c) for c in xyz) and math.isfinite(r)):
                raise RobotModelError(f"{here}[{i}] must be finite, got {describe(item)}")
            if r <= 0:
                raise RobotModelError(
                    f"{here}[{i}].radius must be > 0, got {r!r} (cuRobo's placeholder "
                    "spheres of negative radius are not spheres: leave them out)"
                )
            if not MIN_SIZE <= r <= MAX_SIZE:
                raise RobotModelError(
                    f"{here}[{i}].radius must lie in [{MIN_SIZE:g}, {MAX_SIZE:g}] m, got {r!r}"
                )
            rows.append([*xyz, r])
        out[str(link)] = rows
    return out


def load_curobo(path: Any) -> SphereModel:
    """Read a sphere set from a cuRobo robot configuration (see the module).

    Parameters
    ----------
    path : str or os.PathLike
        A YAML file.

    Returns
    -------
    SphereModel
        With ``source`` the file's path. Links with an empty list get no spheres.

    Raises
    ------
    RobotModelError
        A missing file, invalid YAML, no ``collision_spheres``, or an entry that is not a
        sphere (the message names the file, the link and the entry); a radius must lie in
        the shapes' size range, [1e-5, 1e6] m.

    Notes
    -----
    Numbers such as ``6e-2``, which PyYAML (YAML 1.1: a float needs a dot, ``6.0e-2``) reads
    as strings, are taken as the numbers they spell.
    """
    file = _path(path, "path")
    where = f"sphere file {str(file)!r}"
    section = _section(_read(file), where)
    entries = section["collision_spheres"]
    if isinstance(entries, str):  # another file holding the link map
        other = file.parent / entries
        where = f"sphere file {str(other)!r}"
        inner = _read(other)
        entries = inner.get("collision_spheres", inner) if isinstance(inner, dict) else inner
    spheres = _spheres(entries, where)
    ignore = section.get("self_collision_ignore") or {}
    if not isinstance(ignore, dict):
        raise RobotModelError(
            f"{where}: self_collision_ignore must map link names to lists of links, got "
            f"{describe(ignore)}"
        )
    buffer = section.get("self_collision_buffer") or {}
    if not isinstance(buffer, dict):
        raise RobotModelError(
            f"{where}: self_collision_buffer must map link names to numbers, got {describe(buffer)}"
        )
    return SphereModel(
        {link: rows for link, rows in spheres.items() if rows},
        {str(k): v or [] for k, v in ignore.items()},
        {k: _number(v, f"{where}: self_collision_buffer[{k!r}]") for k, v in buffer.items()},
        source=where,
    )


def save_curobo(model: SphereModel, path: Any) -> None:
    """Write a sphere set in cuRobo's format (the three keys at the top level).

    Parameters
    ----------
    model : SphereModel
    path : str or os.PathLike
        The YAML file to write (replaced if it exists).

    Raises
    ------
    RobotModelError
        ``model`` is not a SphereModel, or ``path`` is not a path.
    """
    import yaml

    if not isinstance(model, SphereModel):
        raise RobotModelError(f"model must be a SphereModel, got {describe(model)}")
    file = _path(path, "path")
    document = {
        "collision_spheres": {
            link: [{"center": row[:3], "radius": row[3]} for row in rows.tolist()]
            for link, rows in model.spheres.items()
        },
        "self_collision_ignore": {k: list(v) for k, v in model.self_collision_ignore.items()},
        "self_collision_buffer": dict(model.self_collision_buffer),
    }
    try:
        with open(file, "w", encoding="utf-8") as stream:
            yaml.safe_dump(document, stream, sort_keys=False)
    except OSError as error:
        raise RobotModelError(
            f"sphere file {str(file)!r}: cannot write it ({error.strerror or error})"
        ) from None
