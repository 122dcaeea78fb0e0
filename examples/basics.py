"""Two shapes and the three questions: do they touch, how far apart, where do they touch.

Run it with ``python examples/basics.py``. A ball of radius 0.1 m above a table whose top face
is at z = 0 is moved down in three steps; each step prints ``iscollided``, ``closest_point``
(signed distance and the closest point on each shape) and ``contacts`` (normal, depth and
witness points). Every number is in metres, world frame; the expected values are worked out
in the comments.
"""

from typing import Any

import numpy as np
from spatialmath import SE3

from spatialcontact import Cuboid, Sphere

table = Cuboid([1.0, 1.0, 0.1], pose=SE3.Trans(0, 0, -0.05))  # top face at z = 0
ball = Sphere(0.1)


def show(v: Any) -> str:
    return "(" + ", ".join(f"{x + 0.0:.3f}" for x in np.round(v, 3)) + ")"


# Centre heights: 0.3 (0.2 m of air), 0.1 (touching), 0.08 (2 cm into the table).
for z in (0.3, 0.1, 0.08):
    ball.T = SE3.Trans(0, 0, z)  # moving is setting the pose; nothing is rebuilt
    d, p_ball, p_table = ball.closest_point(table)
    print(f"ball centre at z = {z}:")
    print(f"  iscollided     {ball.iscollided(table)}")  # touching counts as collided
    print(f"  closest_point  d = {d:+.3f}, on ball {show(p_ball)}, on table {show(p_table)}")
    contacts = ball.contacts(table)  # a Contacts list, deepest first; empty when apart
    for c in contacts:
        print(
            f"  contact        normal {show(c.normal)} (ball to table), "
            f"depth {c.penetration_depth:+.3f}, pos {show(c.pos)}"
        )
    if not contacts:
        print("  contacts       none")

# The signed distance alone, and the cut-off of closest_point: beyond inf_dist, no answer.
ball.T = SE3.Trans(0, 0, 0.5)
print(f"\nat z = 0.5: distance {ball.distance(table):+.3f}")  # 0.5 - 0.1
print(f"closest_point(table, inf_dist=0.3) = {ball.closest_point(table, inf_dist=0.3)}")
