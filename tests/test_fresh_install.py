"""A new virtual environment, the project installed as the README says, the command line run.

This is what a newcomer does first. It takes a minute or two (the packages come from pip's
cache when they are there), so it is marked ``slow``: CI runs it, ``pytest -m "not slow"``
leaves it out.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def readme_install_command() -> str:
    """The README's first set-up command (``python -m pip install -e ".[test]"``)."""
    readme = (ROOT / "README.md").read_text()
    block = re.search(r"```bash\n(.*?)```", readme, re.DOTALL)
    assert block is not None, "the README has no set-up commands"
    first = block.group(1).splitlines()[0].split("#")[0].strip()
    assert first.startswith("python -m pip install -e "), first
    return first


@pytest.mark.slow
def test_a_fresh_environment_installs_and_runs_the_command_line(tmp_path: Path) -> None:
    env_dir = tmp_path / "env"
    venv.create(env_dir, with_pip=True, system_site_packages=False)
    bin_dir = env_dir / ("Scripts" if os.name == "nt" else "bin")
    python = bin_dir / "python"
    env = {**os.environ, "MPLBACKEND": "Agg", "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    env.pop("PYTHONPATH", None)
    env.pop("VIRTUAL_ENV", None)

    # The README's command, run in the checkout with the new environment's python.
    words = shlex.split(readme_install_command())
    assert words[0] == "python"
    install = subprocess.run(
        [str(python), *words[1:], "--quiet"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert install.returncode == 0, install.stderr[-3000:]

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(bin_dir / "spatialcontact"), *args],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )

    # Installed from this checkout, and nothing outside the environment is seen.
    where = subprocess.run(
        [
            str(python),
            "-c",
            "import spatialcontact, sys; print(spatialcontact.__file__); print(sys.prefix)",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    assert Path(where[0]).resolve() == ROOT / "spatialcontact" / "__init__.py"
    assert Path(where[1]).resolve() == env_dir.resolve()

    picture = tmp_path / "demo.png"
    demo = run("demo", "-n", "500", "--out", str(picture))
    assert demo.returncode == 0, demo.stderr
    assert "500 random configurations: " in demo.stdout
    assert demo.stdout.splitlines()[-1] == f"picture: {picture}"
    assert picture.read_bytes()[:4] == b"\x89PNG"

    box = ROOT / "spatialcontact" / "meshes" / "objects" / "box.stl"  # top face at z = 0.0625
    query = run(
        "query", str(box), "sphere:0.1", "--pose-b", "0", "0", "0.3", "0", "0", "0", "--json"
    )
    assert query.returncode == 0, query.stderr
    assert json.loads(query.stdout)["distance"] == pytest.approx(0.3 - 0.0625 - 0.1)

    robot = run("robot", "panda", "--random", "200", "--json")
    assert robot.returncode == 0, robot.stderr
    assert json.loads(robot.stdout)["configurations"] == 200
    robot = run(
        "robot", str(ROOT / "spatialcontact" / "meshes" / "iiwa14" / "lbr_iiwa_14_r820.urdf")
    )
    assert robot.returncode == 0 and "self-collision: False" in robot.stdout

    missing = run("query", "nofile.stl", "sphere:1")
    assert (missing.returncode, missing.stdout) == (1, "")
    assert (
        missing.stderr
        == "spatialcontact query: error: A: filename 'nofile.stl': no such mesh file\n"
    )
