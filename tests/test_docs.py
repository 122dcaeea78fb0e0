"""Every Python block of the README and of docs/ runs as written, and their links lead somewhere.

The blocks of one page run in order in one namespace, as a reader pasting them into one
session would, in an empty working directory.
"""

from __future__ import annotations

import re
from pathlib import Path

import matplotlib
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
FENCE = re.compile(r"^```python\n(.*?)^```$", re.MULTILINE | re.DOTALL)
LINK = re.compile(r"\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#{1,6} (.+)$", re.MULTILINE)


def python_blocks(page: Path) -> list[tuple[int, str]]:
    """(first line number, code) of each ```python block of ``page``."""
    text = page.read_text()
    return [(text.count("\n", 0, m.start(1)) + 1, m.group(1)) for m in FENCE.finditer(text)]


def slug(heading: str) -> str:
    """The anchor mkdocs' table of contents gives a heading (and GitHub, for these)."""
    plain = re.sub(r"[`*]", "", heading).strip().lower()
    return re.sub(r"[\s]+", "-", re.sub(r"[^\w\s-]", "", plain))


def name(page: Path) -> str:
    return str(page.relative_to(ROOT))


PAGES_WITH_CODE = [page for page in PAGES if python_blocks(page)]


def test_the_pages_are_found() -> None:
    names = [name(page) for page in PAGES_WITH_CODE]
    assert "README.md" in names and "docs/conventions.md" in names
    assert len(python_blocks(ROOT / "README.md")) == 1
    # The blocks are found whole: the README's starts with its imports and ends with a print.
    ((_, code),) = python_blocks(ROOT / "README.md")
    assert code.startswith("from spatialmath import SE3\n")
    assert code.endswith("print(ball.distance(table))  # 0.4\n")


@pytest.mark.parametrize("page", PAGES_WITH_CODE, ids=name)
def test_python_blocks_run_as_written(
    page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # files a block writes land here
    namespace: dict[str, object] = {"__name__": "__main__"}
    try:
        for line, code in python_blocks(page):
            # Padding keeps the page's line numbers in a traceback.
            exec(compile("\n" * (line - 1) + code, str(page), "exec"), namespace)
    finally:
        plt.close("all")


@pytest.mark.parametrize("page", PAGES, ids=name)
def test_relative_links_lead_to_files_and_headings(page: Path) -> None:
    for target in LINK.findall(page.read_text()):
        if re.match(r"[a-z]+://", target):
            continue
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        assert file.exists(), f"{name(page)} links to {target}: no such file"
        if anchor and file.suffix == ".md":
            anchors = {slug(h) for h in HEADING.findall(file.read_text())}
            assert anchor in anchors, f"{name(page)} links to {target}: no such heading"


def test_the_readme_leads_to_the_thread_model_and_the_numeric_limits() -> None:
    readme = (ROOT / "README.md").read_text()
    assert "(docs/threads.md)" in readme
    assert "(docs/limits.md#the-supported-range)" in readme
    limits = (ROOT / "docs" / "limits.md").read_text()
    assert "| sizes: radii, lengths, side lengths, semi-axes" in limits
    assert "within ±1e6 m per axis" in limits
    threads = (ROOT / "docs" / "threads.md").read_text()
    assert "Coal holds Python's GIL while it computes" in threads


def test_slug_matches_mkdocs() -> None:
    assert slug("Known limitations (Coal 3.0.3)") == "known-limitations-coal-303"
    assert slug("`closest_point` between two overlapping hollow meshes") == (
        "closest_point-between-two-overlapping-hollow-meshes"
    )


def test_shapes_name_their_keywords_as_the_docs_say() -> None:
    import inspect

    import spatialcontact as sc

    keywords = ["pose", "color", "name", "collision", "base"]
    for cls in (
        sc.Sphere,
        sc.Cuboid,
        sc.Box,
        sc.Cylinder,
        sc.Capsule,
        sc.Cone,
        sc.Ellipsoid,
        sc.HalfSpace,
        sc.Mesh,
        sc.ConvexHull,
        sc.OcTree,
    ):
        parameters = inspect.signature(cls).parameters
        assert [p for p in parameters if p in keywords] == keywords, cls.__name__
        assert all(parameters[p].kind is inspect.Parameter.KEYWORD_ONLY for p in keywords)
        assert not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values())
    with pytest.raises(
        TypeError,
        match=r"^Cylinder\.__init__\(\) missing 1 required "
        r"positional argument: 'length'$",
    ):
        sc.Cylinder(radius=0.1)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match=r"got an unexpected keyword argument 'pos'"):
        sc.Sphere(0.1, pos=None)  # type: ignore[call-arg]
