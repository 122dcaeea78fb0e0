"""Contact sensors on a box that drops onto a table, slides and hits a wall.

Run it with ``python examples/sensors_demo.py [PICTURE.png]``. The poses are scripted (there
is no physics): the box hangs in the air, lands 5 mm deep in the table, slides along x, presses
10 mm into the wall, then is lifted away. Three sensors watch it through one SensorHub, with
penalty forces (a spring of 20 kN/m: 5 mm of overlap pushes with 100 N):

- an ObjectContactSensor on the box (IR-SIM's readings: in_contact, partners, force, timers);
- a MatrixContactSensor with the box as sensing object and the table and wall as counterparts
  (Newton's total_force and force_matrix);
- a NamedContactSensor on the box updating at 10 Hz (Gazebo's throttled messages).

It prints the readings every 0.2 s and saves a picture to the path given (or to a temporary
folder; the script prints where): the force on the box, its contact and air timers over time,
and a 3D drawing of the table, the wall and the box with the contacts and their forces at the
moment the box presses into the wall.
"""

import sys
import tempfile
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # draw to a file, never to a window

import matplotlib.pyplot as plt
import numpy as np
from spatialmath import SE3

import spatialcontact as sc
from spatialcontact.plot import plot
from spatialcontact.sensors import (
    MatrixContactSensor,
    NamedContactSensor,
    ObjectContactSensor,
    PenaltyForce,
    SensorHub,
)

DT = 0.02  # seconds per step
HALF = 0.2  # half side of the box, metres

# The table's top is z = 0; the wall's face is x = 1.5.
scene = sc.Scene()
table = sc.Cuboid([4.0, 2.0, 0.2], pose=SE3(0, 0, -0.1), color="tan")
wall = sc.Cuboid([0.2, 2.0, 1.0], pose=SE3(1.6, 0, 0.5), color="lightgray")
box = sc.Cuboid([2 * HALF] * 3, pose=SE3(-1.4, 0, 0.6), color="steelblue")
for shape, name in ((table, "table"), (wall, "wall"), (box, "box")):
    scene.add(shape, name)


def box_position(t: float) -> tuple[float, float]:
    """(x, z) of the box centre at time t: air, landing and sliding, wall, lifted."""
    resting = HALF - 0.005  # 5 mm into the table
    if t < 0.3:
        return -1.4, 0.6  # hanging in the air
    if t < 1.5:
        return -1.4 + (t - 0.3) / 1.2 * 2.71, resting  # slides to x = 1.31
    if t < 1.8:
        return 1.31, resting  # face at 1.51: 10 mm into the wall
    return 1.0, 0.6  # lifted off


VIEW_LOW, VIEW_HIGH = np.array([0.9, -0.4, -0.2]), np.array([1.7, 0.4, 0.6])  # 3D panel region


def cropped(shape: sc.Cuboid) -> sc.Cuboid:
    """The part of an unrotated box inside the 3D panel's region, for drawing only."""
    centre, half = shape.T[:3, 3], np.asarray(shape.scale) / 2
    low = np.maximum(centre - half, VIEW_LOW)
    high = np.minimum(centre + half, VIEW_HIGH)
    return sc.Cuboid(high - low, pose=SE3.Trans(*(low + high) / 2), color=shape.color)


on_box = ObjectContactSensor(box, force_scale=0.002, name="box")
matrix = MatrixContactSensor(scene, "box", counterparts=["table", "wall"])
bumper = NamedContactSensor(scene, ["box"], update_rate=10.0, name="bumper")
hub = SensorHub(scene, [on_box, matrix, bumper], force_model=PenaltyForce(2e4))

times, force_z, force_x, contact_time, air_time = [], [], [], [], []
events: list[str] = []
figure = plt.figure(figsize=(11, 7))
snapshot = figure.add_subplot(2, 2, 4, projection="3d")
drawn = False

print(
    "time  box in_contact  partners          force on box (N)        contact  air   "
    "| matrix: from table, from wall (N)   | bumper: last update, messages"
)
for step in range(120):
    t = (step + 1) * DT
    x, z = box_position(t)
    box.T = SE3(x, 0, z)
    hub.step(DT)
    times.append(hub.time)
    force_z.append(on_box.force[2])
    force_x.append(on_box.force[0])
    contact_time.append(on_box.contact_time)
    air_time.append(on_box.air_time)
    if on_box.started or on_box.ended:
        events.append(f"{hub.time:.2f} s: contact {'started' if on_box.started else 'ended'}")
    if not drawn and len(on_box.partners) == 2:  # first step against table and wall
        # The shapes where they are now, cut to the region around the box for a closer look.
        plot(*(cropped(s) for s in (table, wall, box)), ax=snapshot, alpha=0.35)
        on_box.plot(snapshot)  # the contacts, force lines along the normals
        snapshot.set_title(f"at {hub.time:.2f} s: on the table, against the wall", fontsize=10)
        drawn = True
    if step % 10 == 9:
        names = ", ".join(scene.name_of(p) for p in on_box.partners) or "-"
        f = np.round(on_box.force, 6) + 0.0  # no "-0.0" from rounding noise
        assert matrix.force_matrix is not None  # None only without counterparts
        from_table, from_wall = np.round(matrix.force_matrix[0], 6) + 0.0
        print(
            f"{hub.time:4.2f}  {on_box.in_contact!s:<11} {names:<17} "
            f"({f[0]:7.1f}, {f[1]:5.1f}, {f[2]:6.1f})  {on_box.contact_time:5.2f}  "
            f"{on_box.air_time:4.2f} | ({from_table[2]:6.1f} z), ({from_wall[0]:7.1f} x)"
            f"  | {bumper.last_update_time:4.2f} s, {len(bumper.contacts())}"
        )

print("\nevents (ObjectContactSensor.started / ended):", "; ".join(events))
print("matrix counterparts of the box:", matrix.counterpart_names[0])
print("bumper reading at", bumper.last_measurement_time, "s:", bumper.contacts())

# The force, then the timers, over time; the contact drawing at the wall.
ax_force = figure.add_subplot(2, 2, 1)
ax_force.plot(times, force_z, label="z (table pushes up)")
ax_force.plot(times, force_x, label="x (wall pushes back)")
ax_force.set(xlabel="time (s)", ylabel="force on the box (N)", title="ObjectContactSensor.force")
ax_force.legend()
ax_timers = figure.add_subplot(2, 2, 2)
ax_timers.plot(times, contact_time, label="contact_time")
ax_timers.plot(times, air_time, label="air_time")
ax_timers.set(xlabel="time (s)", ylabel="seconds", title="one timer runs, the other is zero")
ax_timers.legend()
ax_x = figure.add_subplot(2, 2, 3)
positions = np.array([box_position(t) for t in times])
ax_x.plot(times, positions[:, 0], label="x")
ax_x.plot(times, positions[:, 1], label="z")
ax_x.set(xlabel="time (s)", ylabel="box centre (m)", title="scripted poses")
ax_x.legend()
snapshot.view_init(elev=25, azim=-70)
figure.tight_layout()
path = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp()) / "sensors_demo.png"
figure.savefig(path, dpi=80)
print(f"picture: {path}")
