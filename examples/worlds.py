"""Many worlds in one scene: 64 copies of a small environment on one shared ground.

World 0 holds a ball and a box; ``scene.replicate`` copies them into 63 more worlds, 2 m apart,
while the ground stays one global object that every world touches. Each step moves every ball
to a random height, asks for the contacts of all worlds at once, and reads a matrix contact
sensor with one row per world's ball (columns: the ground, then the world's own box). Nothing
is written to disk. Run with ``python examples/worlds.py``.
"""

from __future__ import annotations

import time

import numpy as np

from spatialcontact import Cuboid, Scene, Sphere
from spatialcontact.sensors import MatrixContactSensor

WORLDS = 64


def at(x: float, y: float, z: float) -> np.ndarray:
    T = np.eye(4)
    T[:3, 3] = (x, y, z)
    return T


def main() -> None:
    scene = Scene()
    scene.add(Cuboid([1000.0, 10.0, 0.1], pose=at(0, 0, -0.05)), "ground")  # global (world -1)
    scene.add_world()
    scene.add(Sphere(0.1, pose=at(0, 0, 0.5)), "ball", world=0)
    scene.add(Cuboid([0.2, 0.2, 0.2], pose=at(0.2, 0, 0.09)), "box", world=0)
    scene.replicate(WORLDS - 1, spacing=2.0)
    print(
        f"{len(scene)} objects in {scene.worlds} worlds; "
        f"'box/5' is in world {scene.world_of('box/5')}"
    )

    sensor = MatrixContactSensor(scene, "ball*", counterparts=["ground", "box*"])
    print(
        f"sensor rows {len(sensor.sensing_indices)}, "
        f"columns of world 5: {sensor.counterpart_names[5]}"
    )

    rng = np.random.default_rng(0)
    balls = [scene["ball"]] + [scene[f"ball/{w}"] for w in range(1, WORLDS)]
    for step in range(3):
        for w, ball in enumerate(balls):  # some balls dip into the ground, some float
            ball.T = at(2.0 * w + rng.uniform(-0.05, 0.05), 0.0, rng.uniform(0.0, 0.3))
        started = time.perf_counter()
        contacts = scene.contacts()
        took = time.perf_counter() - started
        touching = scene.in_collision_per_world()
        sensor.update(contacts, forces=np.full(len(contacts), 5.0))  # 5 N on each contact
        assert sensor.force_matrix is not None
        ground_push = sensor.force_matrix[:, 0, 2]  # vertical force of the ground on each ball
        print(
            f"step {step}: {len(contacts)} contacts in {took * 1e3:.1f} ms, "
            f"{int(touching.sum())} of {WORLDS} worlds in collision, "
            f"{int((ground_push > 0).sum())} balls pushed up by the ground"
        )
        # no contact ever pairs two worlds: each one's objects are its world's or global
        for contact, world in zip(contacts, contacts.world, strict=True):
            a, b = scene.name_of(contact.o1), scene.name_of(contact.o2)
            assert {scene.world_of(a), scene.world_of(b)} <= {-1, int(world)}


if __name__ == "__main__":
    main()
