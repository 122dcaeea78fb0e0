"""Newton's rules for selecting scene objects by name pattern or index."""

from __future__ import annotations

import re
from collections.abc import Sequence
from fnmatch import fnmatchcase
from typing import Any

import numpy as np

from .._validate import describe
from ._errors import SelectionError, SelectionIndexError, SensorTypeError

__all__ = ["Selection", "select"]

Selection = Any
"""A glob string, a list of globs, a compiled regular expression, or a list of indices."""


def _is_index(item: Any) -> bool:
    return isinstance(item, (int, np.integer)) and not isinstance(item, (bool, np.bool_))


def select(names: Sequence[str], selection: Selection, param: str) -> list[int]:
    """Indices of the objects named by ``selection``, following Newton's label matching.

    Parameters
    ----------
    names : sequence of str
        Object names in index order.
    selection : str, list of str, re.Pattern or list of int
        A glob pattern (``fnmatch`` rules, case-sensitive); a list of globs, any of which may
        match; a compiled regular expression that must match a whole name; or object indices.
    param : str
        The parameter name, for error messages.

    Returns
    -------
    list of int
        Ascending indices for patterns; the caller's order for a list of indices.

    Raises
    ------
    SelectionError
        If nothing matches, the list is empty or repeats an index.
    SelectionIndexError
        If an index is out of range (also an ``IndexError``).
    SensorTypeError
        If ``selection`` is of another type or a list mixes strings and indices.
    """
    if isinstance(selection, str):
        found = [i for i, name in enumerate(names) if fnmatchcase(name, selection)]
        return _matched(found, selection, param)
    if isinstance(selection, re.Pattern):
        found = [i for i, name in enumerate(names) if selection.fullmatch(name) is not None]
        return _matched(found, selection, param)
    if isinstance(selection, np.ndarray):
        if selection.ndim != 1 or not np.issubdtype(selection.dtype, np.integer):
            raise SensorTypeError(
                f"{param} as an array must be 1-D integers, got {describe(selection)}"
            )
        selection = selection.tolist()
    if not isinstance(selection, (list, tuple)):
        raise SensorTypeError(
            f"{param} must be a glob string, a list of globs, a compiled regular expression or "
            f"a list of indices, got {describe(selection)}"
        )
    items = list(selection)
    if not items:
        raise SelectionError(f"{param} is empty; it must select at least one object")
    if all(isinstance(item, str) for item in items):
        found = [i for i, name in enumerate(names) if any(fnmatchcase(name, p) for p in items)]
        return _matched(found, selection, param)
    if all(_is_index(item) for item in items):
        indices = [int(item) for item in items]
        count = len(names)
        for index in indices:
            if not 0 <= index < count:
                raise SelectionIndexError(
                    f"{param} contains index {index}, but the scene has {count} objects"
                )
        seen: set[int] = set()
        for index in indices:
            if index in seen:
                raise SelectionError(f"{param} contains duplicate index {index}")
            seen.add(index)
        return indices
    kinds = sorted({type(item).__name__ for item in items})
    raise SensorTypeError(
        f"{param} must be a list of str patterns or a list of int indices, got items of type "
        f"{', '.join(kinds)}: {describe(selection)}"
    )


def _matched(found: list[int], selection: Any, param: str) -> list[int]:
    if not found:
        raise SelectionError(
            f"no scene object matched {param}={describe(selection)}; check that the names exist"
        )
    return found
