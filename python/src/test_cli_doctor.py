"""`sluice doctor SPEC` on generated image shards (tf.train queue form): the
bottleneck it names, its per-stage figures, the HTML report (rendered in
headless Chromium, where installed, to check the plots show) and the Chrome
trace."""

import json
import os
import shutil
import subprocess

import numpy as np
import pytest

from sluice import image as simage

from _cli_util import run

SPEC = """\
form = "train"
epochs = {epochs}

[source]
files = ["train-*-of-*"]

[parse]
"image/encoded" = "string"
"image/class/label" = "int64"

[image]
size = {size}

[batch]
size = 2

[threads]
parallel = {threads}
prefetch = 2
"""


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    root = tmp_path_factory.mktemp("doctor")
    rng = np.random.default_rng(1)
    for cls in ("a", "b"):
        os.makedirs(root / "images" / cls)
        for i in range(6):
            pixels = rng.integers(0, 255, (96, 128, 3), dtype=np.uint8)
            (root / "images" / cls / ("%d.jpg" % i)).write_bytes(simage.encode_jpeg(pixels, quality=90))
    assert run("records", "make-images", root / "images", root / "train", "--shards", "2").returncode == 0
    return root


def spec(folder, name, epochs, size, threads=2):
    path = os.path.join(folder, name)
    with open(path, "w") as f:
        f.write(SPEC.format(epochs=epochs, size=size, threads=threads))
    return path


def doctor(*args):
    r = run("doctor", *args, "--json")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_a_slow_training_step_is_named_the_bottleneck(folder):
    d = doctor(spec(folder, "slow_step.toml", 5, 16), "--step-ms", "30")
    assert d["verdict"].startswith("consumer-bound"), d
    assert "nothing to change in the input" in d["advice"]
    readers = next(s for s in d["stages"] if s["stage"].startswith("reader threads"))
    assert readers["blocked_on_output"] >= 0.5
    assert d["consumer"]["records"] == 60 and d["consumer"]["batches"] == 30


def test_slow_decoding_is_named_the_bottleneck(folder):
    d = doctor(spec(folder, "slow_decode.toml", 3, 768, threads=1))
    assert d["verdict"].startswith("input-bound: the reader threads"), d
    if (os.cpu_count() or 1) > 1:
        assert "raise [threads] parallel from 1" in d["advice"]
    consumer = next(s for s in d["stages"] if s["stage"].startswith("consumer"))
    assert consumer["waiting_on_input"] >= 0.5


def test_the_report_plots_each_queue_and_the_trace_opens_in_perfetto_format(folder):
    d = doctor(spec(folder, "report.toml", 3, 32), "--step-ms", "5", "--out", folder / "rep")
    assert d["html"] == str(folder / "rep.html")
    with open(d["html"]) as f:
        page = f.read()
    assert "input_producer/fifo_queue" in page and "batch_join/fifo_queue" in page
    assert page.count("<svg") == 4  # fill and rate of each of the two queues
    assert page.count("<polyline") == 4
    assert "http://" not in page.replace("http://www.w3.org/2000/svg", "")  # self-contained
    with open(d["trace"]) as f:
        trace = json.load(f)
    counters = {e["name"] for e in trace["traceEvents"] if e["ph"] == "C"}
    assert counters == {"input_producer/fifo_queue", "batch_join/fifo_queue"}
    waits = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    assert len(waits) == d["consumer"]["batches"] == 18
    assert all(e["dur"] > 0 for e in waits)


def test_doctor_never_writes_over_its_inputs(folder):
    path = spec(folder, "clash.html", 1, 16)  # a spec whose name is what --out would write
    before = open(path).read()
    r = run("doctor", path, "--out", os.path.join(folder, "clash"))
    assert r.returncode == 2
    assert "refusing to write over an input" in r.stderr
    assert open(path).read() == before


def _chromium():
    for name in ("chromium", "chromium-browser", "google-chrome", "headless_shell"):
        if shutil.which(name):
            return shutil.which(name)
    return None


@pytest.mark.skipif(_chromium() is None, reason="no Chromium to render the report")
def test_the_report_renders_its_plots_in_headless_chromium(folder, tmp_path):
    d = doctor(spec(folder, "render.toml", 3, 32), "--step-ms", "5", "--out", folder / "render")
    shot = tmp_path / "shot.png"
    subprocess.run([_chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                    "--window-size=900,1400", "--screenshot=%s" % shot, "file://" + d["html"]],
                   capture_output=True, timeout=120, check=True)
    pixels = simage.decode_png(shot.read_bytes())[..., :3].astype(int)
    # The queues' lines are drawn in #1f77b4 and #d62728: count the pixels of each colour.
    for colour in ((0x1f, 0x77, 0xb4), (0xd6, 0x27, 0x28)):
        close = np.abs(pixels - np.array(colour)).sum(axis=-1) < 40
        assert close.sum() > 200, "the plot in %s is not on the screenshot" % (colour,)


def dataset_spec(folder, name, epochs, size, threads=2):
    path = os.path.join(folder, name)
    with open(path, "w") as f:
        f.write(SPEC.format(epochs=epochs, size=size, threads=threads).replace('form = "train"', 'form = "dataset"'))
    return path


def test_dataset_form_a_slow_training_step_is_named_the_bottleneck(folder):
    d = doctor(dataset_spec(folder, "ds_slow_step.toml", 5, 16), "--step-ms", "30")
    assert d["form"] == "dataset"
    assert d["verdict"].startswith("consumer-bound"), d
    assert d["consumer"]["records"] == 60 and d["consumer"]["batches"] == 30
    names = [s["stage"].split(" ", 1)[1] for s in d["stages"][:-1]]
    # The last map and the batch are one stage (map_and_batch_fusion).
    assert "ParallelMap" in names and "MapAndBatch" in names and "Prefetch" in names, names


def test_dataset_form_a_waiting_consumer_names_the_busiest_stage(folder):
    d = doctor(dataset_spec(folder, "ds_slow_decode.toml", 10, 768, threads=1))
    consumer = next(s for s in d["stages"] if s["stage"].startswith("consumer"))
    assert consumer["waiting_on_input"] >= 0.5
    busiest = max(d["stages"][:-1], key=lambda s: s["busy"])
    assert d["verdict"].startswith("input-bound: the %s stage is the busiest" % busiest["stage"].split(" ", 1)[1]), d
    if "Map" in busiest["stage"] and (os.cpu_count() or 1) > 1:
        assert "raise [threads] parallel" in d["advice"]


def test_dataset_form_report_plots_each_stage(folder):
    d = doctor(dataset_spec(folder, "ds_report.toml", 3, 32), "--step-ms", "5", "--out", folder / "dsrep")
    with open(d["html"]) as f:
        page = f.read()
    stages = [s["stage"] for s in d["stages"][:-1]]
    assert "tf.data Dataset form" in page
    assert page.count("<svg") == 2 * len(stages) and len(stages) >= 3
    with open(d["trace"]) as f:
        trace = json.load(f)
    assert {e["name"] for e in trace["traceEvents"] if e["ph"] == "C"} == set(stages)


def test_form_flag_measures_the_other_form(folder):
    d = doctor(spec(folder, "flag.toml", 1, 16), "--form", "dataset")
    assert d["form"] == "dataset"
