"""A short tour of spatialcontact: primitives, a robot mesh, contacts and a moving group.

Run it with ``python examples/quickstart.py``. Lengths are in metres; poses are ``SE3``.
"""

from typing import Any

import numpy as np
from spatialmath import SE3

import spatialcontact as sc
from spatialcontact import meshes


def vec(v: Any) -> str:
    """A vector with 3 decimals, as text."""
    return "(" + ", ".join(f"{x + 0.0:.3f}" for x in np.round(v, 3)) + ")"


# 1. Primitives, placed by their pose. Cuboid takes full side lengths, centred on its origin.
box = sc.Cuboid([0.2, 0.2, 0.2])
ball = sc.Sphere(0.1, pose=SE3(0.5, 0, 0))
print("1. Primitives")
print(f"   ball.iscollided(box) = {ball.iscollided(box)}: ball starts at x=0.4, box ends at 0.1")
d, p_ball, p_box = ball.closest_point(box)
print(f"   closest_point: d = {d:.3f} (0.5 - 0.1 - 0.1), p1 = {vec(p_ball)}, p2 = {vec(p_box)}")
ball.T = SE3(0.15, 0, 0)  # move it: the two now overlap by 0.1 + 0.1 - 0.15 = 0.05
print(f"   after ball.T = SE3(0.15, 0, 0): ball & box = {ball & box}, the operator form")
print(f"   ball.distance(box) = {ball.distance(box):+.3f}: signed, negative on overlap")

# 2. A Franka Panda link from the shipped meshes against a box.
link0 = sc.Mesh(meshes.path("panda") / "collision" / "link0.stl")
low, high = link0.vertices.min(axis=0), link0.vertices.max(axis=0)
print("\n2. Panda link0 mesh (spatialcontact.meshes.path('panda'))")
print(f"   {len(link0.faces)} triangles, x from {low[0]:.3f} to {high[0]:.3f}")
obstacle = sc.Cuboid([0.2, 0.2, 0.2], pose=SE3(0.3, 0, 0.1))
print(f"   distance to a box whose face is at x=0.2: {link0.distance(obstacle):.4f}")
print(f"   (0.2 - {high[0]:.4f}, the link's farthest point along +x)")
obstacle.T = SE3(0.15, 0, 0.1)
print(f"   box face moved to x=0.05: iscollided = {link0.iscollided(obstacle)}")

# 3. Contacts: immutable records, deepest first, with column arrays over all of them.
contacts = link0.contacts(obstacle, max_contacts=3)
print(f"\n3. link0.contacts(box, max_contacts=3): {len(contacts)} contacts, deepest triangles")
first = contacts[0]
print(f"   o1, o2 = {type(first.o1).__name__}, {type(first.o2).__name__}: the shapes in contact")
print(f"   b1 = {first.b1}: index of the mesh triangle touched (b2 = {first.b2} on a primitive)")
print(f"   normal = {vec(first.normal)}: unit vector from o1 to o2, world frame")
print(f"   pos = {vec(first.pos)}: contact point, world frame")
print(f"   penetration_depth = {first.penetration_depth:.4f}: negative means overlap")
print(f"   contacts.b1 = {contacts.b1}: the same field for every contact, as an array")
report = first.report(obstacle)
print(f"   report(box): the box's view, depth {report.depth:.4f} (> 0 on overlap) and")
print(f"   normal {vec(report.normal)} pointing from the link into the box")

# 4. A group moves as one shape: set its pose, every member follows.
gripper = sc.CollisionShapeGroup(
    [
        sc.Cuboid([0.04, 0.16, 0.04], name="palm"),
        sc.Capsule(0.01, 0.06, pose=SE3(0, 0.07, -0.05), name="left finger"),  # along z
        sc.Capsule(0.01, 0.06, pose=SE3(0, -0.07, -0.05), name="right finger"),
    ],
    name="gripper",
)
table = sc.Cuboid([1.0, 1.0, 0.1], pose=SE3(0.5, 0, -0.05))  # top face at z = 0
print("\n4. A gripper group (palm + two fingers) lowered onto a table; fingertips at z - 0.09")
for z in (0.30, 0.10, 0.08):
    gripper.T = SE3(0.5, 0, z)
    d = gripper.distance(table)
    print(f"   gripper.T = SE3(0.5, 0, {z:.2f}): distance {d:+.3f}, collided {gripper & table}")
for c in gripper.contacts(table):  # one per touching member, deepest first
    print(f"   {c.o1.name!r} touches at {vec(c.pos)}, penetration_depth {c.penetration_depth:.3f}")
