"""Closest points between two meshes read from files, and a picture of them.

Run it with ``python examples/mesh_proximity.py [PICTURE.png]``. It loads two shipped meshes
(a Panda link and a torus), places the torus beside the link, prints the signed distance and
the closest point on each mesh (world frame), then moves the torus into the link to show what
hollow meshes answer (distance 0 once surfaces cross) against their convex hulls (a negative
depth). The picture, both meshes with the segment between the closest points, goes to the
path given, or to a temporary folder; the script prints where.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # draw to a file, never to a window
import matplotlib.pyplot as plt
import numpy as np
from spatialmath import SE3

from spatialcontact import Mesh, meshes
from spatialcontact.plot import plot

link = Mesh(meshes.path("panda") / "collision" / "link3.stl", color="lightsteelblue")
torus = Mesh(meshes.path("objects/torus.stl"), pose=SE3.Trans(0.2, 0.0, 0.1) * SE3.Ry(1.2))
torus.color = "orange"
print(f"link3: {len(link.faces)} triangles; torus: {len(torus.faces)} triangles")

d, p_link, p_torus = link.closest_point(torus)
assert d is not None and p_link is not None and p_torus is not None  # within inf_dist = 1 m
print(f"apart:   distance {d:+.4f} m")
print(f"         closest point on the link  {np.round(p_link, 4)}")
print(f"         closest point on the torus {np.round(p_torus, 4)}")
print(f"         |p_torus - p_link| = {np.linalg.norm(p_torus - p_link):.4f} (the distance)")

# Push the torus into the link: hollow meshes stop at 0, their hulls give a depth.
torus.T = SE3.Trans(0.05, 0.0, 0.1) * SE3.Ry(1.2)
inside = link.distance(torus)
hulls = link.convex_hull().distance(torus.convex_hull())
print(f"crossed: meshes {inside:+.4f} (hollow surfaces), convex hulls {hulls:+.4f}")

# The picture of the first placement.
torus.T = SE3.Trans(0.2, 0.0, 0.1) * SE3.Ry(1.2)
figure = plt.figure(figsize=(7, 6))
ax = figure.add_subplot(projection="3d")
plot(link, torus, ax=ax, alpha=0.45)
ax.plot(*np.stack([p_link, p_torus]).T, color="black", linewidth=2, marker="o", zorder=10)
ax.set_title(f"closest points of two meshes: {d * 1000:.1f} mm apart", fontsize=10)
ax.view_init(elev=15, azim=-70)
path = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp()) / "mesh_proximity.png"
figure.tight_layout()
figure.savefig(path, dpi=100)
print(f"picture: {path}")
