"""Loading robots: URDF and SRDF reading, joints, geometry, forward kinematics, errors."""

from __future__ import annotations

import math
import pickle
from pathlib import Path

import numpy as np
import pytest

from spatialcontact import Cuboid, Cylinder, Mesh, Sphere, meshes
from spatialcontact.errors import InvalidArgumentError, MeshFileNotFoundError
from spatialcontact.robot import RobotModel, RobotModelError
from spatialcontact.robot.kinematics import Kinematics
from spatialcontact.robot.urdf import read_urdf

LIMIT = '<limit lower="{lo}" upper="{hi}" effort="1" velocity="1"/>'

TWO_LINK = f"""<?xml version="1.0"?>
<robot name="two">
  <link name="base"/>
  <link name="arm">
    <collision>
      <origin xyz="0.5 0 0"/>
      <geometry><box size="1 0.1 0.1"/></geometry>
    </collision>
  </link>
  <link name="slider">
    <collision><geometry><sphere radius="0.05"/></geometry></collision>
  </link>
  <link name="tip"/>
  <link name="twin">
    <collision><geometry><cylinder radius="0.02" length="0.1"/></geometry></collision>
  </link>
  <link name="wheel"/>
  <joint name="shoulder" type="revolute">
    <parent link="base"/><child link="arm"/>
    <origin xyz="0 0 1"/><axis xyz="0 0 1"/>
    {LIMIT.format(lo=-3, hi=3)}
  </joint>
  <joint name="slide" type="prismatic">
    <parent link="arm"/><child link="slider"/>
    <origin xyz="1 0 0"/><axis xyz="1 0 0"/>
    {LIMIT.format(lo=0, hi=0.5)}
  </joint>
  <joint name="fixed_tip" type="fixed">
    <parent link="slider"/><child link="tip"/>
    <origin xyz="0 0 0.2" rpy="0 0 1.5707963267948966"/>
  </joint>
  <joint name="twin_slide" type="prismatic">
    <parent link="arm"/><child link="twin"/>
    <origin xyz="0.5 0 0"/><axis xyz="0 1 0"/>
    {LIMIT.format(lo=-1, hi=1)}
    <mimic joint="slide" multiplier="-1" offset="0.1"/>
  </joint>
  <joint name="spin" type="continuous">
    <parent link="tip"/><child link="wheel"/>
    <axis xyz="1 0 0"/>
  </joint>
</robot>
"""


def rot_z(a: float) -> np.ndarray:
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, -s, 0, 0], [s, c, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]])


def rot_x(a: float) -> np.ndarray:
    c, s = math.cos(a), math.sin(a)
    return np.array([[1, 0, 0, 0], [0, c, -s, 0], [0, s, c, 0], [0, 0, 0, 1]])


def trans(x: float, y: float, z: float) -> np.ndarray:
    T = np.eye(4)
    T[:3, 3] = (x, y, z)
    return T


@pytest.fixture
def two_link(tmp_path: Path) -> Path:
    path = tmp_path / "two.urdf"
    path.write_text(TWO_LINK)
    return path


def test_joints_limits_and_links(two_link: Path) -> None:
    robot = RobotModel.from_urdf(two_link)
    assert robot.name == "two"
    assert robot.joint_names == ("shoulder", "slide", "spin")  # the mimic joint is not in q
    assert robot.dof == 3
    assert robot.link_names == ("base", "arm", "slider", "tip", "wheel", "twin")
    np.testing.assert_array_equal(robot.limits, [[-3, 3], [0, 0.5], [-math.inf, math.inf]])
    assert not robot.limits.flags.writeable
    np.testing.assert_array_equal(robot.neutral, [0.0, 0.0, 0.0])
    box, ball, rod = robot.group.leaves()
    assert isinstance(box, Cuboid) and isinstance(ball, Sphere) and isinstance(rod, Cylinder)
    np.testing.assert_array_equal(box.scale, [1.0, 0.1, 0.1])
    assert ball.radius == 0.05 and (rod.radius, rod.length) == (0.02, 0.1)
    assert robot.shapes_of("twin") == [rod]


def test_fk_against_hand_computed_poses(two_link: Path) -> None:
    robot = RobotModel.from_urdf(two_link)
    for theta, d, phi in [(0.0, 0.0, 0.0), (0.7, 0.3, -1.2), (-2.5, 0.5, 3.0)]:
        poses = robot.fk([theta, d, phi])
        T_world_arm = trans(0, 0, 1) @ rot_z(theta)
        T_world_slider = T_world_arm @ trans(1 + d, 0, 0)
        T_world_tip = T_world_slider @ trans(0, 0, 0.2) @ rot_z(math.pi / 2)
        T_world_wheel = T_world_tip @ rot_x(phi)
        T_world_twin = T_world_arm @ trans(0.5, -d + 0.1, 0)  # mimic: -1 * slide + 0.1
        expected = {
            "base": np.eye(4),
            "arm": T_world_arm,
            "slider": T_world_slider,
            "tip": T_world_tip,
            "wheel": T_world_wheel,
            "twin": T_world_twin,
        }
        assert list(poses) == list(robot.link_names)
        for link, T in expected.items():
            np.testing.assert_allclose(poses[link], T, atol=1e-12, err_msg=link)
        many = robot.fk_many([[theta, d, phi], [0.0, 0.0, 0.0]])
        assert many.shape == (2, 6, 4, 4)
        np.testing.assert_allclose(many[0], np.array(list(poses.values())), atol=1e-12)


def test_fk_follows_the_group_pose(two_link: Path) -> None:
    robot = RobotModel.from_urdf(two_link)
    robot.group.T = trans(1, 2, 3)
    np.testing.assert_allclose(robot.fk([0.0, 0.0, 0.0])["arm"], trans(1, 2, 4), atol=1e-12)


def test_set_q_places_the_shapes(two_link: Path) -> None:
    robot = RobotModel.from_urdf(two_link)
    robot.set_q([math.pi / 2, 0.25, 0.0])
    np.testing.assert_array_equal(robot.q, [math.pi / 2, 0.25, 0.0])
    (box,) = robot.shapes_of("arm")
    np.testing.assert_allclose(box.world_T[:3, 3], [0.0, 0.5, 1.0], atol=1e-12)
    (ball,) = robot.shapes_of("slider")
    np.testing.assert_allclose(ball.world_T[:3, 3], [0.0, 1.25, 1.0], atol=1e-12)


def test_single_and_batch_kinematics_agree(two_link: Path) -> None:
    """The single-configuration kinematics (compiled per robot, zero terms left out) agree
    with the numpy ones: revolute, prismatic, fixed and mimic joints, and after pickling."""
    for path in (meshes.path("panda") / "panda.urdf", two_link):
        kin = Kinematics(read_urdf(path))
        kin = pickle.loads(pickle.dumps(kin))
        lower = np.where(np.isfinite(kin.lower), kin.lower, -np.pi)
        upper = np.where(np.isfinite(kin.upper), kin.upper, np.pi)
        Q = np.random.default_rng(3).uniform(lower, upper, (50, len(kin.dof_names)))
        many = kin.body_poses_many(Q)
        for q, T in zip(Q, many, strict=True):
            single = np.array(kin.body_poses(q.tolist())).reshape(-1, 3, 4)
            np.testing.assert_allclose(single, T[:, :3], atol=1e-14)


def test_panda_and_iiwa_load_with_their_meshes() -> None:
    panda = RobotModel.from_urdf(meshes.path("panda") / "panda.urdf")
    assert panda.dof == 8 and panda.joint_names[-1] == "panda_finger_joint1"
    assert sum(isinstance(s, Mesh) for s in panda.group.leaves()) == 9
    iiwa = RobotModel.from_urdf(meshes.path("iiwa14") / "lbr_iiwa_14_r820.urdf")
    assert iiwa.dof == 7 and len(iiwa.group) == 8
    assert not iiwa.self_collision(iiwa.neutral)


def test_without_srdf_adjacent_links_are_skipped() -> None:
    iiwa = RobotModel.from_urdf(meshes.path("iiwa14") / "lbr_iiwa_14_r820.urdf")
    pairs = set(iiwa.collision_pairs)
    assert ("base_link", "link_1") not in pairs and ("link_3", "link_4") not in pairs
    assert ("base_link", "link_2") in pairs and len(pairs) == 28 - 7


def test_srdf_pairs_and_states() -> None:
    folder = meshes.path("panda")
    panda = RobotModel.from_urdf(folder / "panda.urdf", srdf=folder / "panda.srdf")
    assert len(panda.collision_pairs) == 20  # pinocchio's 44 geometry pairs, by link
    assert ("panda_link0", "panda_hand") in panda.collision_pairs
    assert ("panda_link6", "panda_link7") not in panda.collision_pairs
    np.testing.assert_allclose(
        panda.states["default"],
        [0.0, -0.785398, 0.0, -2.35619, 0.0, 1.5707, 0.785398, 0.001],
    )


def test_package_and_absolute_mesh_paths(tmp_path: Path) -> None:
    stl = meshes.path("objects/box.stl")
    package = tmp_path / "share" / "my_robot" / "meshes"
    package.mkdir(parents=True)
    (package / "box.stl").write_bytes(stl.read_bytes())
    text = """<robot name="r"><link name="a"><collision><geometry>
        <mesh filename="{}" scale="2 2 2"/></geometry></collision></link></robot>"""
    urdf = tmp_path / "robot" / "r.urdf"
    urdf.parent.mkdir()
    urdf.write_text(text.format("package://my_robot/meshes/box.stl"))
    robot = RobotModel.from_urdf(urdf, package_dirs=tmp_path / "share")
    (mesh,) = robot.group.leaves()
    assert isinstance(mesh, Mesh)
    np.testing.assert_allclose(mesh.vertices.max(axis=0), [0.5, 0.25, 0.125])  # scaled by 2
    urdf.write_text(text.format(stl))
    (absolute,) = RobotModel.from_urdf(urdf).group.leaves()
    assert isinstance(absolute, Mesh) and absolute.vertices.max() == pytest.approx(0.5)
    convex = RobotModel.from_urdf(urdf, geometry="convex")
    assert type(convex.group.leaves()[0]).__name__ == "ConvexHull"


# ------------------------------------------------------------------------------ errors


def write(tmp_path: Path, text: str, name: str = "r.urdf") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_missing_and_malformed_files(tmp_path: Path) -> None:
    with pytest.raises(RobotModelError, match=r"URDF '.*nope.urdf': no such file"):
        RobotModel.from_urdf(tmp_path / "nope.urdf")
    with pytest.raises(RobotModelError, match="URDF must be a path"):
        RobotModel.from_urdf(42)
    with pytest.raises(RobotModelError, match=r"not well-formed XML: .*line 1"):
        RobotModel.from_urdf(write(tmp_path, "<robot name='r'><link name='a'>"))
    with pytest.raises(RobotModelError, match="root element must be <robot>, got <model>"):
        RobotModel.from_urdf(write(tmp_path, "<model/>"))
    with pytest.raises(RobotModelError, match="cannot be read: KeyError"):
        RobotModel.from_urdf(write(tmp_path, "<robot name='r'><link/></robot>"))
    capsule = "<robot name='r'><link name='a'><collision><geometry><capsule radius='1' length='1'/>"
    with pytest.raises(RobotModelError, match="Unknown tag: capsule"):
        RobotModel.from_urdf(write(tmp_path, capsule + "</geometry></collision></link></robot>"))


def test_bad_joints(tmp_path: Path) -> None:
    def robot(joint: str) -> str:
        return f"<robot name='r'><link name='a'/><link name='b'/>{joint}</robot>"

    floating = "<joint name='j' type='floating'><parent link='a'/><child link='b'/></joint>"
    with pytest.raises(RobotModelError, match="joint 'j': type 'floating' is not supported"):
        RobotModel.from_urdf(write(tmp_path, robot(floating)))
    orphan = "<joint name='j' type='fixed'><parent link='a'/><child link='c'/></joint>"
    with pytest.raises(RobotModelError, match="child link 'c' is not a link of the robot"):
        RobotModel.from_urdf(write(tmp_path, robot(orphan)))
    no_limit = "<joint name='j' type='revolute'><parent link='a'/><child link='b'/></joint>"
    with pytest.raises(RobotModelError, match=r"incomplete: .*<limit>"):
        RobotModel.from_urdf(write(tmp_path, robot(no_limit)))
    swapped = (
        "<joint name='j' type='revolute'><parent link='a'/><child link='b'/>"
        + LIMIT.format(lo=1, hi=-1)
        + "</joint>"
    )
    with pytest.raises(RobotModelError, match=r"lower <= upper, got lower=1\.0, upper=-1\.0"):
        RobotModel.from_urdf(write(tmp_path, robot(swapped)))
    zero = swapped.replace(
        LIMIT.format(lo=1, hi=-1), "<axis xyz='0 0 0'/>" + LIMIT.format(lo=-1, hi=1)
    )
    with pytest.raises(RobotModelError, match="axis must not be zero"):
        RobotModel.from_urdf(write(tmp_path, robot(zero)))
    with pytest.raises(RobotModelError, match="one root link, but 2 links"):
        RobotModel.from_urdf(write(tmp_path, robot("")))
    mimic = (
        "<joint name='j' type='prismatic'><parent link='a'/><child link='b'/>"
        + LIMIT.format(lo=0, hi=1)
        + "<mimic joint='ghost'/></joint>"
    )
    with pytest.raises(RobotModelError, match="the mimicked joint 'ghost' is not a joint"):
        RobotModel.from_urdf(write(tmp_path, robot(mimic)))
    # Limits past the range of poses: a prismatic joint put the shapes 1e200 m out (distance
    # inf), a revolute one of ±1e308 made sample() overflow.
    for kind, lo, hi, unit in (("prismatic", -1, 1e200, "m"), ("revolute", -1e308, 1e308, "rad")):
        far = (
            f"<joint name='j' type='{kind}'><parent link='a'/><child link='b'/>"
            + LIMIT.format(lo=lo, hi=hi)
            + "</joint>"
        )
        with pytest.raises(
            RobotModelError, match=rf"joint 'j': limits must lie within ±1e\+06 {unit}"
        ):
            RobotModel.from_urdf(write(tmp_path, robot(far)))


def test_missing_mesh_names_the_link_and_paths(tmp_path: Path) -> None:
    text = """<robot name="r"><link name="hand"><collision><geometry>
        <mesh filename="package://gone/hand.stl"/></geometry></collision></link></robot>"""
    with pytest.raises(
        MeshFileNotFoundError,
        match=r"link 'hand', collision 0: mesh 'package://gone/hand.stl' not found \(tried",
    ):
        RobotModel.from_urdf(write(tmp_path, text))
    with pytest.raises(RobotModelError, match="mesh scale must be > 0"):
        RobotModel.from_urdf(write(tmp_path, text.replace('"/>', '" scale="1 -1 1"/>')))


def test_bad_srdf(tmp_path: Path, two_link: Path) -> None:
    with pytest.raises(RobotModelError, match=r"SRDF .* not well-formed XML"):
        RobotModel.from_urdf(two_link, srdf=write(tmp_path, "<robot", "bad.srdf"))
    srdf = "<robot name='two'><disable_collisions link1='arm' link2='{}'/></robot>"
    with pytest.raises(RobotModelError, match="link2 'elbow' is not a link of 'two'; links: 'arm'"):
        RobotModel.from_urdf(two_link, srdf=write(tmp_path, srdf.format("elbow"), "a.srdf"))
    missing = "<robot name='two'><disable_collisions link1='arm'/></robot>"
    with pytest.raises(RobotModelError, match="<disable_collisions> 0 has no link2 attribute"):
        RobotModel.from_urdf(two_link, srdf=write(tmp_path, missing, "b.srdf"))
    state = (
        "<robot name='two'><group_state name='s' group='g'>"
        "<joint name='twin_slide' value='0'/></group_state></robot>"
    )
    with pytest.raises(RobotModelError, match="joint 'twin_slide' is not a degree of freedom"):
        RobotModel.from_urdf(two_link, srdf=write(tmp_path, state, "c.srdf"))
    good = RobotModel.from_urdf(two_link, srdf=write(tmp_path, srdf.format("slider"), "d.srdf"))
    assert ("arm", "slider") not in good.collision_pairs


def test_links_that_are_all_children_are_a_loop(tmp_path: Path) -> None:
    # The message read "but no link are no joint's child".
    loop = (
        "<robot name='r'><link name='a'/><link name='b'/>"
        "<joint name='j' type='fixed'><parent link='a'/><child link='b'/></joint>"
        "<joint name='k' type='fixed'><parent link='b'/><child link='a'/></joint></robot>"
    )
    with pytest.raises(RobotModelError) as raised:
        RobotModel.from_urdf(write(tmp_path, loop))
    assert str(raised.value).endswith(
        "the links must form one tree with one root link, but every link is a joint's child "
        "(the joints form a loop)"
    )


def group_states(*states: str) -> str:
    """An SRDF for the two-link robot with these ``<group_state>`` bodies, named 's'."""
    body = "".join(f"<group_state name='s' group='g'>{joints}</group_state>" for joints in states)
    return f"<robot name='two'>{body}</robot>"


def refusal(tmp_path: Path, two_link: Path, *states: str) -> str:
    """The message of the RobotModelError that loading the two-link robot with an SRDF of
    these ``<group_state>`` bodies raises, with the SRDF's path written ``<srdf>``."""
    srdf = write(tmp_path, group_states(*states), "s.srdf")
    with pytest.raises(RobotModelError) as raised:
        RobotModel.from_urdf(two_link, srdf=srdf)
    return str(raised.value).replace(repr(str(srdf)), "<srdf>")


def test_a_state_outside_the_limits_is_refused(tmp_path: Path, two_link: Path) -> None:
    # It was loaded, and then every query given robot.states['s'] raised.
    assert refusal(tmp_path, two_link, "<joint name='shoulder' value='3.5'/>") == (
        "SRDF <srdf>, <group_state> 0 ('s'): joint 'shoulder' = 3.5 is outside its limits "
        "[-3.0, 3.0]"
    )
    with pytest.raises(RobotModelError, match=r"joint 'slide' = -0.1 is outside its limits"):
        RobotModel.from_urdf(
            two_link, srdf=write(tmp_path, group_states("<joint name='slide' value='-0.1'/>"))
        )
    inside = group_states(  # within LIMIT_TOLERANCE, and a continuous joint has no limits
        "<joint name='shoulder' value='3.0000000001'/><joint name='spin' value='100'/>"
    )
    robot = RobotModel.from_urdf(two_link, srdf=write(tmp_path, inside, "inside.srdf"))
    assert robot.states["s"].tolist() == [3.0000000001, 0.0, 100.0]
    assert robot.check([robot.states["s"]]).shape == (1,)  # a q every query takes


def test_a_state_joint_with_several_values_is_refused(tmp_path: Path, two_link: Path) -> None:
    # value="0.1 0.2" kept 0.1 silently.
    assert refusal(tmp_path, two_link, "<joint name='shoulder' value='0.1 0.2'/>") == (
        "SRDF <srdf>, <group_state> 0 ('s'): joint 'shoulder' must have one finite value, got "
        "'0.1 0.2'"
    )
    for value in ("", "nan", "x"):
        with pytest.raises(RobotModelError, match="joint 'shoulder' must have one finite value"):
            RobotModel.from_urdf(
                two_link,
                srdf=write(tmp_path, group_states(f"<joint name='shoulder' value='{value}'/>")),
            )


def test_two_states_of_one_name_are_refused(tmp_path: Path, two_link: Path) -> None:
    # The last one won silently.
    first, second = "<joint name='shoulder' value='0.1'/>", "<joint name='shoulder' value='0.2'/>"
    assert refusal(tmp_path, two_link, first, second) == (
        "SRDF <srdf>, <group_state> 1 ('s'): a <group_state> named 's' comes earlier"
    )


def test_bad_geometry_argument(two_link: Path) -> None:
    with pytest.raises(InvalidArgumentError, match=r"geometry must be 'mesh', .*got 'hull'"):
        RobotModel.from_urdf(two_link, geometry="hull")  # type: ignore[arg-type]


def test_a_flat_mesh_link_is_checked_in_motion_and_kept_as_a_mesh_for_convex(
    tmp_path: Path,
) -> None:
    # A 20 cm plate (two triangles in one plane) on link b, which turns about z: its convex
    # hull has no volume, and check_motion raised "points must include 4 points that are not
    # coplanar" at every call (geometry="convex" refused to load). The motion model holds a
    # flat part in its box grown by 1 µm; the convex robot keeps the plate as a mesh.
    import trimesh

    corners = np.array([[0, 0, 0], [0.2, 0, 0], [0.2, 0.2, 0], [0, 0.2, 0]], dtype=float)
    plate = trimesh.Trimesh(corners, np.array([[0, 1, 2], [0, 2, 3]]))
    plate.export(tmp_path / "plate.stl")
    path = write(
        tmp_path,
        """<robot name="r">
  <link name="a"/>
  <link name="b"><collision><geometry><mesh filename="plate.stl"/></geometry></collision></link>
  <joint name="j1" type="revolute"><parent link="a"/><child link="b"/>
    <origin xyz="0 0 0.3"/><axis xyz="0 0 1"/>
    <limit lower="-2" upper="2" effort="1" velocity="1"/></joint>
</robot>""",
    )
    robot = RobotModel.from_urdf(path)
    assert robot.check_motion([0.0], [2.0])  # nothing to hit
    # The plate covers polar angles [q, q + 90°]. A 2 cm cube 0.1 m out at 100° is clear of
    # it at q = 0 and at q = 2 rad (115°), and swept through in between.
    from spatialcontact import Scene

    scene = Scene()
    angle = math.radians(100.0)
    scene.add(
        Cuboid([0.02, 0.02, 0.02], pose=trans(0.1 * math.cos(angle), 0.1 * math.sin(angle), 0.3))
    )
    assert not robot.in_collision([0.0], scene) and not robot.in_collision([2.0], scene)
    assert robot.in_collision([0.5], scene)
    assert not robot.check_motion([0.0], [2.0], scene)
    convex = RobotModel.from_urdf(path, geometry="convex")
    assert isinstance(convex.group[0], Mesh)
    assert not convex.check_motion([0.0], [2.0], scene)
    assert convex.check_motion([0.0], [0.0 + 1e-3])
