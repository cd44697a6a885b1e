"""The TF 1 tutorial pipelines of examples/tf1 (docs/porting-tf1.md) run and check themselves."""
import pathlib
import subprocess
import sys

import pytest

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples" / "tf1"


@pytest.mark.timeout(120)
@pytest.mark.parametrize("script", sorted(p.name for p in EXAMPLES.glob("*.py")))
def test_tf1_example_runs_and_checks_its_output(script, tmp_path):
    run = subprocess.run([sys.executable, str(EXAMPLES / script), str(tmp_path)] if script != "train_then_eval.py"
                         else [sys.executable, str(EXAMPLES / script)],
                         capture_output=True, text=True, timeout=110)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.strip().splitlines()[-1].startswith("OK"), run.stdout
