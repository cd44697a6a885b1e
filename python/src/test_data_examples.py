"""The sluice.data examples (examples/data_image_pipeline.py, examples/torch_train.py) run and check themselves."""

import pathlib
import subprocess
import sys

import pytest

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"


def _run(script, *args):
    run = subprocess.run([sys.executable, str(EXAMPLES / script), *args], capture_output=True, text=True,
                         timeout=110)
    return run.returncode, run.stdout + run.stderr


@pytest.mark.timeout(120)
def test_data_image_pipeline_example_checks_every_image():
    code, out = _run("data_image_pipeline.py", "--images", "40", "--files", "3", "--epochs", "2", "--threads", "2",
                     "--batch", "8", "--size", "32", "--width", "96", "--height", "80", "--quiet")
    assert code == 0, out
    assert "labels, shapes and colours: OK" in out


@pytest.mark.timeout(120)
def test_torch_training_example_learns():
    pytest.importorskip("torch")
    code, out = _run("torch_train.py", "--samples", "256", "--epochs", "4")
    assert code == 0, out
    assert out.strip().splitlines()[-1] == "OK", out
