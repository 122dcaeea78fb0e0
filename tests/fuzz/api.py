"""The public API, read from the packages' ``__all__``: every callable a user can reach.

Each entry is a string: ``"module:Name"`` for a function or a class's constructor,
``"Owner.method"`` for a public method (named after the class that defines it, so an inherited
method counts once), ``"Owner.attribute="`` for a property setter.
"""

from __future__ import annotations

import importlib
import inspect
from typing import Any

PACKAGES = (
    "spatialcontact",
    "spatialcontact.batch",
    "spatialcontact.spheres",
    "spatialcontact.sensors",
    "spatialcontact.robot",
    "spatialcontact.scene",
    "spatialcontact.meshes",
)


def _owner_entries(cls: type) -> set[str]:
    out: set[str] = set()
    for owner in cls.__mro__:
        if owner is object or owner.__module__.split(".")[0] != "spatialcontact":
            continue
        for attr, value in vars(owner).items():
            if attr.startswith("_"):
                continue
            key = f"{owner.__name__}.{attr}"
            if isinstance(value, property):
                if value.fset is not None:
                    out.add(key + "=")
            elif isinstance(value, (classmethod, staticmethod)) or inspect.isfunction(value):
                out.add(key)
    return out


def public_api() -> set[str]:
    """Every public entry point (see the module docstring)."""
    entries: set[str] = set()
    for package in PACKAGES:
        module = importlib.import_module(package)
        for name in getattr(module, "__all__", []):
            obj: Any = getattr(module, name)
            if inspect.ismodule(obj):
                continue
            if inspect.isclass(obj):
                if issubclass(obj, BaseException):
                    continue
                entries.add(f"{obj.__name__}")
                entries |= _owner_entries(obj)
            elif callable(obj):
                entries.add(f"{package}:{name}")
    return entries
