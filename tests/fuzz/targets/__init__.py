"""The fuzz targets; importing this package registers them all (in a fixed order)."""

import os

from . import (  # noqa: F401  (each module registers its targets)
    batches,
    groups,
    queries,
    robots,
    scenes,
    sensors,
    shapes,
    spheres,
)

if os.environ.get("SPATIALCONTACT_FUZZ_SELFTEST") == "1":
    from . import selftest  # noqa: F401  (targets that fail on purpose, for test_fuzz.py)
