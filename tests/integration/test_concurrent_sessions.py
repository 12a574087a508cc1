"""Two pytest sessions of this suite run side by side on one machine, each with its embedded
database, while a pytest session of another project starts beside them.

By default every pytest session of a user keeps its files in one `pytest-of-<user>` folder in
the machine's temporary folder, and each session, as it starts, makes that folder private to the
user again and prunes older sessions' folders in it. The embedded server runs as a user of its
own when the suite runs as root: once the folder is private it can no longer reach its files.
The suite gives each session a base folder of its own (tests/conftest.py), which nothing else
touches; both sessions here must carry on and pass.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SESSIONS = ("first", "second")

OTHER_PROJECT_TEST = """
def test_a_file(tmp_path):
    (tmp_path / "note").write_text("another project's session")
"""


def child_env(temproot: Path) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key != "DATABASE_URL"}
    env.update(PYTHONPATH=str(REPO), PYTEST_DEBUG_TEMPROOT=str(temproot))
    return env


def start_session(name: str, temproot: Path, handshake: Path) -> subprocess.Popen[str]:
    env = child_env(temproot)
    env.update(INTERLOCK_TEST_HANDSHAKE=str(handshake), INTERLOCK_TEST_SESSION=name)
    command = [sys.executable, "-m", "pytest", "tests/integration/concurrent_session.py"]
    return subprocess.Popen(
        [*command, "-q", "-p", "no:cacheprovider"],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def run_another_projects_session(temproot: Path, project: Path) -> None:
    project.mkdir()
    (project / "pytest.ini").write_text("[pytest]\n")
    (project / "test_other.py").write_text(OTHER_PROJECT_TEST)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_other.py"],
        cwd=project,
        env=child_env(temproot),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_sessions_side_by_side_keep_their_own_databases(tmp_path: Path) -> None:
    # Short, as the sessions' own folders are: the embedded server's socket goes in its data
    # folder only while that path fits in a socket address.
    temproot = Path(tempfile.mkdtemp(prefix="pytest-sessions-"))
    handshake = tmp_path / "handshake"
    handshake.mkdir()
    sessions = {name: start_session(name, temproot, handshake) for name in SESSIONS}
    try:
        deadline = time.monotonic() + 240
        while not all((handshake / f"{name}.ready").exists() for name in SESSIONS):
            for name, session in sessions.items():
                if session.poll() is not None:
                    output = session.communicate()[0]
                    raise AssertionError(f"{name} ended before its test was under way:\n{output}")
            assert time.monotonic() < deadline, "the sessions did not get their databases"
            time.sleep(0.1)

        run_another_projects_session(temproot, tmp_path / "other")
        (handshake / "go").touch()

        outputs = {name: s.communicate(timeout=120)[0] for name, s in sessions.items()}
    finally:
        for session in sessions.values():
            if session.poll() is None:
                session.kill()
                session.wait()
        shutil.rmtree(temproot, ignore_errors=True)
    for name, session in sessions.items():
        assert session.returncode == 0, outputs[name]

    basetemps = {Path((handshake / f"{name}.basetemp").read_text()) for name in SESSIONS}
    assert len(basetemps) == 2
    assert all(not folder.exists() for folder in basetemps), "a session left its folder behind"
