"""Nested groups: a two-link arm built from capsules, moved as one, queried as one.

Run it with ``python examples/groups.py``. A ``CollisionShapeGroup`` is a list of shapes that
is itself a shape: its elements are placed relative to it, and moving the group moves them
all for the very next query. The arm (a base group holding a forearm group) is swung over a
row of boxes; each query treats a group as the union of its leaves, and reports which leaf
is involved.
"""

import math

import numpy as np
from spatialmath import SE3

from spatialcontact import Capsule, CollisionShapeGroup, Cuboid

# A row of three boxes, 0.2 m cubes centred at z = 0.1, at x = 0.6, 0.9 and 1.2.
boxes = CollisionShapeGroup(
    [Cuboid([0.2, 0.2, 0.2], pose=SE3.Trans(x, 0, 0.1), name=f"box x={x}") for x in (0.6, 0.9, 1.2)]
)

# The arm: an upper link along +x from the shoulder, then a forearm group at its end. Capsules
# lie along their local z, so each is turned onto x (Ry(90°)) and centred on its link.
upper = Capsule(0.05, 0.4, pose=SE3.Trans(0.2, 0, 0) * SE3.Ry(math.pi / 2), name="upper")
fore = Capsule(0.04, 0.3, pose=SE3.Trans(0.15, 0, 0) * SE3.Ry(math.pi / 2), name="fore")
forearm = CollisionShapeGroup([fore], pose=SE3.Trans(0.4, 0, 0), name="forearm")
arm = CollisionShapeGroup([upper, forearm], pose=SE3.Trans(0, 0, 0.5), name="arm")
print(f"arm leaves: {[leaf.name for leaf in arm.leaves()]}")
print(f"fore world x: {fore.world_T[0, 3]:.2f} (0.4 + 0.15: the poses compose)")

# Lower the arm: each height moves the whole arm, no update call.
for z in (0.5, 0.3, 0.22):
    arm.T = SE3.Trans(0, 0, z)
    d, p_arm, p_boxes = arm.closest_point(boxes)
    print(
        f"\narm at z = {z}: iscollided {arm.iscollided(boxes)}, distance {d:+.3f} "
        f"(= {z} - 0.04 - 0.2: the forearm's underside over the box tops)"
    )
    for c in arm.contacts(boxes):
        print(f"  contact {c.o1.name} - {c.o2.name}: depth {c.penetration_depth:+.3f}")

# Bend the forearm down 30° at the elbow: only its own pose changes.
forearm.T = SE3.Trans(0.4, 0, 0) * SE3.Ry(math.radians(30))
arm.T = SE3.Trans(0, 0, 0.4)
d, p_arm, p_boxes = arm.closest_point(boxes)
assert p_arm is not None and p_boxes is not None  # closer than inf_dist = 1 m
print(f"\nforearm bent 30° down, arm at z = 0.4: distance {d:+.3f}")
print(f"  closest point on the arm {np.round(p_arm, 3)}, on the boxes {np.round(p_boxes, 3)}")
print(f"  touching: {[(c.o1.name, c.o2.name) for c in arm.contacts(boxes)]}")
