"""Robot arms from URDF/SRDF: self-collision, scene and motion checks for planners.

:class:`RobotModel` loads a robot with :meth:`RobotModel.from_urdf` and answers, for a joint
configuration ``q``: is it in self-collision, does it touch a :class:`~spatialcontact.Scene`,
how far is it from the obstacles, and is the straight-line motion between two configurations
free. Its links form a :class:`~spatialcontact.CollisionShapeGroup` (``robot.group``) that
composes with every other query.

Examples
--------
>>> from spatialcontact import Cuboid, Scene, meshes
>>> from spatialcontact.robot import RobotModel
>>> panda = meshes.path("panda")
>>> robot = RobotModel.from_urdf(panda / "panda.urdf", srdf=panda / "panda.srdf")
>>> robot.dof, robot.joint_names[0]
(8, 'panda_joint1')
>>> ready = robot.states["default"]
>>> robot.self_collision(ready)
False
>>> scene = Scene()
>>> top = 0.45  # a table under the hand, its top 2.7 cm below the fingertips
>>> table = Cuboid([0.6, 0.6, 0.1], pose=[[1, 0, 0, 0.5], [0, 1, 0, 0], [0, 0, 1, top - 0.05],
...                                     [0, 0, 0, 1]])
>>> scene.add(table, "table")
'table'
>>> robot.in_collision(ready, scene)
False
>>> clearance = robot.distance(ready, scene)
>>> round(clearance.distance, 4), clearance.part, clearance.other
(0.0274, 'panda_leftfinger', 'table')
>>> table.T = [[1, 0, 0, 0.5], [0, 1, 0, 0], [0, 0, 1, 0.45], [0, 0, 0, 1]]  # 5 cm higher
>>> robot.colliding_pairs(ready, scene)
[('panda_leftfinger', 'table'), ('panda_rightfinger', 'table')]
>>> step = [0.3, 0, 0, 0, 0, 0, 0, 0]  # turn about the base, clear of the table
>>> robot.check_motion(ready, ready + step)
True
"""

from ..errors import RobotModelError
from .model import Attachment, RobotDistance, RobotModel

__all__ = ["Attachment", "RobotDistance", "RobotModel", "RobotModelError"]
