"""A hook of the documentation build (``mkdocs.yml``): the docstrings' Sphinx roles as code.

The docstrings name other objects the Sphinx way (``:class:`~spatialcontact.Scene```), which
mkdocstrings leaves as text: this shows each as code, with the path dropped where a ``~`` asks for
it (``Scene``), as Sphinx would.
"""

from __future__ import annotations

import re
from typing import Any

_ROLE = re.compile(r":(?:class|func|meth|attr|data|mod|exc|obj):(<code>|`)(?:~(?:\w+\.)*)?")


def on_page_content(html: str, **_: Any) -> str:
    """Drop each role and, after a ``~``, the dotted path before the name."""
    return _ROLE.sub(_keep, html)


def _keep(match: re.Match[str]) -> str:
    return match.group(1)
