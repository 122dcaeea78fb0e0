"""Builds ``spatialcontact._native`` against the Coal of the build environment.

The Coal wheel (``coal``, a cmeel package) ships its headers and those of Boost; Eigen's come
from ``cmeel-eigen``. Both are build requirements (pyproject.toml), installed in the isolated
build environment under ``site-packages/cmeel.prefix``, with numpy for its C API (the module
returns arrays).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy
from setuptools import Extension, setup


def _cmeel_prefix() -> Path:
    """The ``cmeel.prefix`` folder holding Coal's headers and libraries."""
    for entry in sys.path:
        prefix = Path(entry) / "cmeel.prefix"
        if (prefix / "include" / "coal" / "config.hh").is_file():
            return prefix
    raise RuntimeError(
        "spatialcontact needs Coal's headers to build: pip install coal==3.0.3 cmeel-eigen "
        "(pip does it for you unless build isolation is off)"
    )


PREFIX = _cmeel_prefix()

native = Extension(
    "spatialcontact._native",
    sources=["spatialcontact/_native.cpp"],
    depends=["spatialcontact/_mesh_contacts.hpp"],
    include_dirs=[
        str(PREFIX / "include"),
        str(PREFIX / "include" / "eigen3"),
        numpy.get_include(),
    ],
    library_dirs=[str(PREFIX / "lib")],
    libraries=["coal", f"boost_python{sys.version_info[0]}{sys.version_info[1]}"],
    # The installed module finds Coal's libraries beside it in site-packages; an editable
    # install finds them already loaded by ``import coal``, which spatialcontact does first.
    extra_link_args=["-Wl,-rpath,$ORIGIN/../cmeel.prefix/lib"],
    extra_compile_args=["-std=c++17", "-O2", "-ffp-contract=off", "-fvisibility=hidden"],
    language="c++",
)

setup(ext_modules=[native])
