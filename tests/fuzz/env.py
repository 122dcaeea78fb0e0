"""What the fuzz cases share within one child process: files on disk, robots, scenes.

Everything is made on first use and kept, so a child pays for a robot once, not per case.
"""

from __future__ import annotations

import shutil
import tempfile
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

import spatialcontact as sc

ARM_URDF = """<?xml version="1.0"?>
<robot name="arm">
  <link name="base"><collision><geometry><box size="0.2 0.2 0.1"/></geometry></collision></link>
  <link name="upper">
    <collision><origin xyz="0 0 0.25"/><geometry><cylinder radius="0.05" length="0.4"/>
    </geometry></collision>
  </link>
  <link name="fore">
    <collision><origin xyz="0 0 0.2"/><geometry><box size="0.06 0.06 0.3"/></geometry>
    </collision>
  </link>
  <link name="hand"><collision><geometry><sphere radius="0.06"/></geometry></collision></link>
  <joint name="j1" type="revolute"><parent link="base"/><child link="upper"/>
    <origin xyz="0 0 0.05"/><axis xyz="0 0 1"/>
    <limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
  <joint name="j2" type="revolute"><parent link="upper"/><child link="fore"/>
    <origin xyz="0 0 0.5"/><axis xyz="0 1 0"/>
    <limit lower="-2" upper="2" effort="1" velocity="1"/></joint>
  <joint name="j3" type="prismatic"><parent link="fore"/><child link="hand"/>
    <origin xyz="0 0 0.4"/><axis xyz="0 0 1"/>
    <limit lower="0" upper="0.1" effort="1" velocity="1"/></joint>
</robot>
"""
"""A three-joint arm of primitives (fast to load): base box, upper cylinder, fore box, hand
sphere; joints j1 (about z), j2 (about y), j3 (prismatic along z)."""

ARM_SRDF = """<?xml version="1.0"?>
<robot name="arm">
  <group_state name="home" group="arm"><joint name="j1" value="0"/><joint name="j2" value="0"/>
    <joint name="j3" value="0"/></group_state>
  <disable_collisions link1="base" link2="upper" reason="Adjacent"/>
  <disable_collisions link1="upper" link2="fore" reason="Adjacent"/>
  <disable_collisions link1="fore" link2="hand" reason="Adjacent"/>
</robot>
"""

TETRAHEDRON = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
TET_FACES = np.array([[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]])
CUBE = np.array([[x, y, z] for x in (-0.5, 0.5) for y in (-0.5, 0.5) for z in (-0.5, 0.5)])


def _stl_ascii(vertices: np.ndarray, faces: np.ndarray) -> str:
    rows = ["solid fuzz"]
    for face in faces:
        rows.append("facet normal 0 0 0\nouter loop")
        rows += [f"vertex {x} {y} {z}" for x, y, z in vertices[face]]
        rows.append("endloop\nendfacet")
    return "\n".join([*rows, "endsolid fuzz\n"])


class Env:
    """Files and objects shared by the cases of one child."""

    def __init__(self) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="fuzz-env-"))

    def close(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)

    # ------------------------------------------------------------------------------- files

    @cached_property
    def good_stl(self) -> Path:
        path = self.dir / "tet.stl"
        path.write_text(_stl_ascii(TETRAHEDRON, TET_FACES))
        return path

    @cached_property
    def bad_files(self) -> dict[str, Path]:
        """Mesh files that must be refused, by what is wrong with them."""
        d = self.dir
        files: dict[str, Path] = {}
        files["empty"] = d / "empty.stl"
        files["empty"].write_bytes(b"")
        text = _stl_ascii(TETRAHEDRON, TET_FACES)
        files["truncated"] = d / "truncated.stl"
        files["truncated"].write_text(text[: len(text) // 3])
        files["junk"] = d / "junk.obj"
        files["junk"].write_bytes(bytes(range(256)) * 8)
        files["binary-junk-stl"] = d / "junk.stl"
        files["binary-junk-stl"].write_bytes(b"\x00" * 80 + b"\xff\xff\xff\x7f" + b"\x01" * 40)
        files["directory"] = d / "folder.stl"
        files["directory"].mkdir()
        files["wrong-extension"] = d / "tet.txt"
        files["wrong-extension"].write_text(text)
        files["no-extension"] = d / "tet"
        files["no-extension"].write_text(text)
        files["missing"] = d / "missing.stl"
        files["unicode-missing"] = d / "ünïcødé-名前-🙂.stl"
        files["nan-vertices"] = d / "nan.stl"
        files["nan-vertices"].write_text(text.replace("vertex 1.0 0.0 0.0", "vertex nan 0 0"))
        files["flat"] = d / "flat.obj"
        files["flat"].write_text("v 0 0 0\nv 1 0 0\nv 2 0 0\nf 1 2 3\n")
        files["bad-index"] = d / "badindex.obj"
        files["bad-index"].write_text("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 9\n")
        return files

    @cached_property
    def unicode_stl(self) -> Path:
        path = self.dir / "ünïcødé-名前" / "tét 🙂.stl"
        path.parent.mkdir()
        path.write_text(_stl_ascii(TETRAHEDRON, TET_FACES))
        return path

    @cached_property
    def arm_files(self) -> tuple[Path, Path]:
        urdf, srdf = self.dir / "arm.urdf", self.dir / "arm.srdf"
        urdf.write_text(ARM_URDF)
        srdf.write_text(ARM_SRDF)
        return urdf, srdf

    def write(self, name: str, text: str | bytes) -> Path:
        """A file of the scratch directory holding ``text``."""
        path = self.dir / name
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text, encoding="utf-8")
        return path

    # ------------------------------------------------------------------------------ robots

    @cached_property
    def arm(self) -> sc.RobotModel:
        urdf, srdf = self.arm_files
        return sc.RobotModel.from_urdf(urdf, srdf=srdf)

    @cached_property
    def panda(self) -> sc.RobotModel:
        panda = sc.meshes.path("panda")
        return sc.RobotModel.from_urdf(panda / "panda.urdf", srdf=panda / "panda.srdf")

    @cached_property
    def prefilter_arm(self) -> sc.RobotModel:
        """A copy of :attr:`arm` for the motion prefilter cases (they change it)."""
        urdf, srdf = self.arm_files
        return sc.RobotModel.from_urdf(urdf, srdf=srdf)

    @cached_property
    def arm_spheres(self) -> Any:
        return self.arm.spheres(count=2)

    @cached_property
    def sphere_arm(self) -> Any:
        urdf, srdf = self.arm_files
        return sc.RobotModel.from_urdf(
            urdf, srdf=srdf, geometry="spheres", spheres=self.arm_spheres
        )

    @cached_property
    def curobo_file(self) -> Path:
        from spatialcontact.spheres import save_curobo

        path = self.dir / "arm_spheres.yml"
        save_curobo(self.arm_spheres, path)
        return path
