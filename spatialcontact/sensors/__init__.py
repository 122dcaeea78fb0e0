"""Contact sensors that read :class:`~spatialcontact.Contacts`, after three simulators.

- :class:`ObjectContactSensor`: the sensor of one shape, with IR-SIM's ``Contact2D`` readings
  (``in_contact``, ``partners``, ``reports``, ``force``, ``contact_time``, ``air_time``,
  ``started``, ``ended``) and matplotlib drawing.
- :class:`MatrixContactSensor`: total and per-counterpart forces between scene objects, with
  Newton's ``SensorContact`` selection rules and output arrays.
- :class:`NamedContactSensor`: Gazebo's ``ContactSensor`` on named scene objects, with queued
  steps, throttled updates and callbacks.
- :class:`SensorHub`: queries a scene once per step, computes forces once, feeds every sensor.

Forces come from the caller, from :class:`PenaltyForce`, or are absent (``forces_valid`` is
then False). The adapters never query Coal: they read the contacts and forces handed to them,
and convert to each original's conventions themselves (see each module's notes). This package
is not imported by ``import spatialcontact``; matplotlib is imported only when drawing.
"""

from ._errors import (
    PlottingUnavailableError,
    SelectionError,
    SelectionIndexError,
    SensorTypeError,
    SensorValueError,
)
from .forces import PenaltyForce, resolve_forces, tangential_part
from .hub import SensorHub
from .matrix_sensor import MatrixContactSensor
from .named_sensor import (
    Connection,
    ContactMessage,
    ContactsMessage,
    NamedContactSensor,
    Wrenches,
)
from .object_sensor import ObjectContactSensor

__all__ = [
    "Connection",
    "ContactMessage",
    "ContactsMessage",
    "MatrixContactSensor",
    "NamedContactSensor",
    "ObjectContactSensor",
    "PenaltyForce",
    "PlottingUnavailableError",
    "SelectionError",
    "SelectionIndexError",
    "SensorHub",
    "SensorTypeError",
    "SensorValueError",
    "Wrenches",
    "resolve_forces",
    "tangential_part",
]
