"""Sphere models of robots: covering spheres fitted to the links, proved, and checked fast.

A planner that checks many configurations can stand each link in for a few spheres. This
package fits them (:meth:`RobotModel.spheres <spatialcontact.robot.RobotModel.spheres>`),
proves that they hold each link's whole collision surface
(:meth:`RobotModel.spheres_cover <spatialcontact.robot.RobotModel.spheres_cover>`), reads and
writes them in cuRobo's format (:func:`load_curobo`, :func:`save_curobo`), and checks a
robot made of them (``RobotModel.from_urdf(..., geometry="spheres")``) in a compiled kernel
(numba, imported only when a check runs; ``pip install "spatialcontact[spheres]"``).

Examples
--------
>>> from spatialcontact import meshes
>>> from spatialcontact.robot import RobotModel
>>> panda = meshes.path("panda")
>>> robot = RobotModel.from_urdf(panda / "panda.urdf", srdf=panda / "panda.srdf")
>>> model = robot.spheres(count=4)
>>> model.count
44
>>> robot.spheres_cover(model).covered
True
"""

from .coverage import CoverageReport, LinkCoverage
from .curobo import load_curobo, save_curobo
from .fit import MARGIN, SphereModel
from .model import SphereRobotModel

__all__ = [
    "MARGIN",
    "CoverageReport",
    "LinkCoverage",
    "SphereModel",
    "SphereRobotModel",
    "load_curobo",
    "save_curobo",
]
