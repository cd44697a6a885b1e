"""Running the `sluice` command in the tests, as a user would: the console
script that `pip install` made beside this Python (scripts/test.sh), or,
under scripts/dev-pytest.sh, the staged package's `python -m sluice.cli`."""

import os
import shutil
import subprocess
import sys

TESTDATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "data")


def data_file(*parts):
    return os.path.normpath(os.path.join(TESTDATA, *parts))


def command():
    if os.environ.get("SLUICE_DEV_STAGE"):  # a staged copy on purpose: no console script for it
        return [sys.executable, "-m", "sluice.cli"]
    script = os.path.join(os.path.dirname(sys.executable), "sluice")
    assert os.path.exists(script), "the console script %s is missing: is sluice pip-installed?" % script
    return [script]


def run(*args, cwd=None, timeout=120, stdin=None, env=None):
    """CompletedProcess of `sluice args...` (text, stdout and stderr captured)."""
    return subprocess.run(command() + [str(a) for a in args], capture_output=True, text=True, cwd=cwd,
                          timeout=timeout, stdin=stdin if stdin is not None else subprocess.DEVNULL, env=env)


def copy(src, folder):
    dst = os.path.join(str(folder), os.path.basename(src))
    shutil.copyfile(src, dst)
    return dst
