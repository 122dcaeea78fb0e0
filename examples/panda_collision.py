"""A Franka Panda at a table with a shelf: configuration and motion checks, and a picture.

Run ``python examples/panda_collision.py [PICTURE.png]``. It loads the shipped Panda (URDF and
SRDF), builds a table and a shelf from boxes, checks a few thousand random configurations (one
call each, then all at once), checks a few straight-line motions, and draws a colliding
configuration with its contact points. The picture goes to the path given, or to a temporary
folder; the script prints where.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from mpl_toolkits.mplot3d.art3d import Poly3DCollection

from spatialcontact import CollisionShape, Cuboid, Mesh, Scene, meshes
from spatialcontact.robot import RobotModel

N_CONFIGURATIONS = 3000
N_MOTIONS = 6


def pose(x: float, y: float, z: float) -> np.ndarray:
    T = np.eye(4)
    T[:3, 3] = (x, y, z)
    return T


def workcell() -> Scene:
    """A table the robot's base stands on (its top 1 mm into the base link's mesh), and a shelf
    of three boards on it."""
    scene = Scene()
    scene.add(Cuboid([1.6, 1.2, 0.05], pose=pose(0.3, 0.0, -0.024)), "table")
    x, depth, width, height = 0.62, 0.3, 0.8, 0.9
    scene.add(Cuboid([depth, 0.02, height], pose=pose(x, -width / 2, height / 2)), "shelf side L")
    scene.add(Cuboid([depth, 0.02, height], pose=pose(x, width / 2, height / 2)), "shelf side R")
    scene.add(Cuboid([0.02, width, height], pose=pose(x + depth / 2, 0, height / 2)), "shelf back")
    for z in (0.25, 0.55, 0.89):
        scene.add(Cuboid([depth, width, 0.02], pose=pose(x, 0.0, z)), f"board z={z:.2f}")
    return scene


def faces(shape: CollisionShape) -> np.ndarray:
    """The triangles (or box faces) of a mesh or box, in the world frame: (n, k, 3)."""
    W = shape.world_T
    if isinstance(shape, Mesh):
        corners = shape.vertices[shape.faces]
    else:
        assert isinstance(shape, Cuboid)
        h = 0.5 * np.asarray(shape.scale)
        c = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)]) * h
        quads = [(0, 1, 3, 2), (4, 5, 7, 6), (0, 1, 5, 4), (2, 3, 7, 6), (0, 2, 6, 4), (1, 3, 7, 5)]
        corners = c[np.array(quads)]
    return corners @ W[:3, :3].T + W[:3, 3]


def contact_points(robot: RobotModel, scene: Scene, pairs: list[tuple[str, str]]) -> np.ndarray:
    """Contact positions (n, 3), world frame, of the colliding pairs at the robot's placement."""
    points = []
    for part, other in pairs:
        others = robot.shapes_of(other) if other in robot.link_names else [scene[other]]
        for a in robot.shapes_of(part):
            for b in others:
                points += [c.pos for c in a.contacts(b, max_contacts=8)]
    return np.array(points).reshape(-1, 3)


def draw(robot: RobotModel, scene: Scene, q: np.ndarray, path: Path) -> None:
    pairs = robot.colliding_pairs(q, scene)
    robot.set_q(q)
    points = contact_points(robot, scene, pairs)
    fig = plt.figure(figsize=(9, 7))
    ax = fig.add_subplot(projection="3d")
    for name in scene.names:
        colour = "tan" if name == "table" else "lightsteelblue"
        ax.add_collection3d(
            Poly3DCollection(faces(scene[name]), facecolor=colour, edgecolor="grey", alpha=0.25)
        )
    touching = {part for pair in pairs for part in pair}
    for leaf in robot.group.leaves():
        part = robot.part_of(leaf)
        colour = "orangered" if part in touching else "dimgray"
        ax.add_collection3d(
            Poly3DCollection(faces(leaf), facecolor=colour, edgecolor="none", alpha=0.6)
        )
    ax.scatter(
        *points.T,
        s=70,
        c="yellow",
        edgecolors="black",
        depthshade=False,
        zorder=10,
        label="contact points",
    )
    ax.set(xlim=(-0.5, 1.0), ylim=(-0.75, 0.75), zlim=(-0.05, 1.2), xlabel="x (m)", ylabel="y (m)")
    ax.set_zlabel("z (m)")
    ax.set_box_aspect((1.5, 1.5, 1.25))
    ax.view_init(elev=28, azim=-155)
    listed = "\n".join(f"{a} - {b}" for a, b in pairs)
    ax.set_title(f"A colliding configuration (links in contact in red)\n{listed}", fontsize=9)
    ax.legend(loc="upper left")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv: list[str]) -> int:
    folder = meshes.path("panda")
    robot = RobotModel.from_urdf(folder / "panda.urdf", srdf=folder / "panda.srdf")
    scene = workcell()
    assert robot.colliding_pairs(robot.states["default"], scene) == [("panda_link0", "table")]
    robot.allow("panda_link0", "table")  # the base stands on the table: skip that pair
    print(f"Panda: {robot.dof} joint values ({', '.join(robot.joint_names)})")
    print(f"{len(robot.collision_pairs)} link pairs checked for self-collision (SRDF applied)")
    print(f"scene: {', '.join(scene.names)}")

    Q = robot.sample(N_CONFIGURATIONS, rng=1)
    start = time.perf_counter()
    one_by_one = np.array([robot.in_collision(q, scene) for q in Q])
    single = (time.perf_counter() - start) / len(Q) * 1e6
    start = time.perf_counter()
    at_once = robot.check(Q, scene)
    batch = (time.perf_counter() - start) / len(Q) * 1e6
    assert (one_by_one == at_once).all()
    own = robot.check(Q)
    print(f"\n{len(Q)} random configurations: {at_once.mean():.1%} collide")
    print(f"  ({own.mean():.1%} with the robot itself, the rest with the table or the shelf)")
    print(f"  in_collision: {single:.0f} µs per configuration; check: {batch:.0f} µs")

    free = Q[~at_once]
    rng = np.random.default_rng(2)
    print(
        f"\n{N_MOTIONS} straight-line motions of 1 radian (largest joint change) from free starts:"
    )
    for q0 in free[:N_MOTIONS]:
        change = rng.normal(size=robot.dof)
        change[-1] = 0.0
        q1 = np.clip(q0 + change / np.abs(change).max(), robot.limits[:, 0], robot.limits[:, 1])
        start = time.perf_counter()
        ok = robot.check_motion(q0, q1, scene)
        took = (time.perf_counter() - start) * 1e3
        clearance = robot.distance(q0, scene)
        print(
            f"  free: {ok!s:5}  ({took:.1f} ms; start {clearance.distance * 100:.1f} cm from "
            f"{clearance.other!r} at {clearance.part})"
        )

    # Draw a configuration that touches a shelf board (and not itself).
    q = next(
        q
        for q in Q[at_once & ~own]
        if any(other.startswith("board") for _, other in robot.colliding_pairs(q, scene))
    )
    path = Path(argv[1]) if len(argv) > 1 else Path(tempfile.mkdtemp()) / "panda_collision.png"
    draw(robot, scene, q, path)
    print(f"\npicture of a colliding configuration: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
