"""`sluice records make-images` on generated images, and `sluice run SPEC` on
what it made, in both pipeline forms: outputs, progress, summaries, and the
errors of bad specs (with their line) and bad data."""

import json
import os
import pty
import subprocess

import numpy as np
import pytest

import sluice
from sluice import image as simage
from sluice import io as sio

from _cli_util import command, run

CLASSES = ["cat", "dog", "eel"]
PER_CLASS = 4


@pytest.fixture(scope="module")
def image_folder(tmp_path_factory):
    """DIR/<class>/<i>.jpg (and one PNG per class): 3 classes of 4 images, each class its own colour."""
    root = tmp_path_factory.mktemp("images")
    rng = np.random.default_rng(0)
    for label, name in enumerate(CLASSES):
        os.makedirs(root / name)
        for i in range(PER_CLASS):
            pixels = np.full((24 + i, 32, 3), 40 + 80 * label, np.uint8)
            pixels += rng.integers(0, 8, pixels.shape, dtype=np.uint8)
            if i == 0:
                (root / name / ("%d.png" % i)).write_bytes(simage.encode_png(pixels))
            else:
                (root / name / ("%d.jpg" % i)).write_bytes(simage.encode_jpeg(pixels, quality=95))
    return root


@pytest.fixture(scope="module")
def shards(image_folder, tmp_path_factory):
    out = tmp_path_factory.mktemp("shards") / "train"
    r = run("records", "make-images", image_folder, out, "--shards", "2", "--jobs", "2")
    assert r.returncode == 0, r.stderr
    return out


def shard_files(prefix):
    return ["%s-%05d-of-00002" % (prefix, i) for i in range(2)]


def test_make_images_writes_examples_with_tensorflow_feature_names(image_folder, shards):
    records = [r for f in shard_files(shards) for r in sio.tf_record_iterator(f)]
    assert len(records) == len(CLASSES) * PER_CLASS
    features = {"image/encoded": sio.FixedLenFeature([], sluice.string),
                "image/format": sio.FixedLenFeature([], sluice.string),
                "image/height": sio.FixedLenFeature([], sluice.int64),
                "image/width": sio.FixedLenFeature([], sluice.int64),
                "image/channels": sio.FixedLenFeature([], sluice.int64),
                "image/class/label": sio.FixedLenFeature([], sluice.int64),
                "image/class/text": sio.FixedLenFeature([], sluice.string),
                "image/filename": sio.FixedLenFeature([], sluice.string)}
    seen = set()
    for record in records:
        ex = sio.parse_single_example(record, features)
        name = ex["image/filename"].decode()
        seen.add(name)
        label = int(ex["image/class/label"])
        assert ex["image/class/text"].decode() == CLASSES[label] == name.split("/")[0]
        with open(os.path.join(image_folder, name), "rb") as f:
            assert ex["image/encoded"] == f.read()  # the file's bytes, as they are
        assert ex["image/format"] == (b"PNG" if name.endswith(".png") else b"JPEG")
        pixels = simage.decode_image(ex["image/encoded"])
        assert (int(ex["image/height"]), int(ex["image/width"]), int(ex["image/channels"])) == pixels.shape
        assert abs(float(pixels.mean()) - (44 + 80 * label)) < 6
    assert len(seen) == len(records)
    with open("%s.labels.txt" % shards) as f:
        assert f.read() == "0\tcat\n1\tdog\n2\teel\n"


def test_make_images_skips_what_does_not_decode_and_says_so(tmp_path):
    os.makedirs(tmp_path / "in" / "a")
    (tmp_path / "in" / "a" / "good.png").write_bytes(simage.encode_png(np.zeros((4, 4, 3), np.uint8)))
    (tmp_path / "in" / "a" / "broken.jpg").write_bytes(b"\xff\xd8\xff\xe0 not really a jpeg")
    r = run("records", "make-images", tmp_path / "in", tmp_path / "out")
    assert r.returncode == 1
    assert "broken.jpg" in r.stderr
    assert len(list(sio.tf_record_iterator(str(tmp_path / "out-00000-of-00001")))) == 1


def test_make_images_of_a_folder_without_classes_is_a_usage_error(tmp_path):
    r = run("records", "make-images", tmp_path, tmp_path / "out")
    assert r.returncode == 2
    assert "no class sub-folders" in r.stderr


SPEC = """\
form = "{form}"
epochs = 2

[source]
files = ["train-*-of-*"]
shuffle_files = true

[parse]
"image/encoded" = "string"
"image/class/label" = "int64"

[image]
feature = "image/encoded"
size = 16

[batch]
size = 5

[threads]
parallel = 2
"""


def write_spec(folder, text, name="pipeline.toml"):
    path = os.path.join(folder, name)
    with open(path, "w") as f:
        f.write(text)
    return path


@pytest.mark.parametrize("form", ["dataset", "train"])
def test_run_reads_every_record_of_every_epoch_in_both_forms(shards, form):
    spec = write_spec(os.path.dirname(shards), SPEC.format(form=form), "%s.toml" % form)
    r = run("run", spec, "--json", "--quiet")
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)
    assert summary["form"] == form
    assert summary["records"] == 2 * len(CLASSES) * PER_CLASS
    assert summary["batches"] == 5  # 24 records in batches of 5
    assert summary["bytes"] == 24 * 3 * 16 * 16 * 4 + 24 * 8  # float32 crops and int64 labels
    assert summary["error"] is None


def test_run_prints_plain_progress_lines_off_a_terminal_with_eta_once_indexed(shards, tmp_path):
    spec = write_spec(os.path.dirname(shards), SPEC.format(form="dataset"), "eta.toml")
    r = run("run", spec, "--interval", "0")
    assert r.returncode == 0, r.stderr
    lines = r.stderr.splitlines()
    assert lines and all("records/s" in line and "MB/s" in line and "batches" in line for line in lines)
    assert not any("ETA" in line for line in lines)  # the size is unknown
    assert "24 records in 5 batches" in r.stdout
    assert run("records", "index", *shard_files(shards)).returncode == 0
    r = run("run", spec, "--interval", "0")
    assert "ETA" in r.stderr.splitlines()[0] and "/24 records" in r.stderr.splitlines()[0]
    for f in shard_files(shards):
        os.remove(f + ".idx")


def test_run_draws_a_live_bar_on_a_terminal(shards):
    spec = write_spec(os.path.dirname(shards), SPEC.format(form="dataset"), "tty.toml")
    main, child = pty.openpty()
    env = dict(os.environ, COLUMNS="120", TERM="xterm")
    proc = subprocess.run(command() + ["run", spec], stdout=subprocess.PIPE, stderr=child, stdin=subprocess.DEVNULL,
                          env=env, timeout=120)
    os.close(child)
    drawn = b""
    while True:
        try:
            chunk = os.read(main, 65536)
        except OSError:
            break
        if not chunk:
            break
        drawn += chunk
    os.close(main)
    assert proc.returncode == 0
    text = drawn.decode("utf-8", "replace")
    assert "records/s" in text and "MB/s" in text
    assert "\x1b[" in text  # redrawn in place with terminal escapes, not plain lines
    assert "24 records" in text


@pytest.mark.parametrize("text, line, expected", [
    ('[source]\nfiles = ["train-*"]\n[batch]\nsize = 0\n', 4, "[batch] size: expected an integer > 0"),
    ('[source]\nfiles = ["train-*"]\n\n[batch]\nsise = 3\n', 5, "unknown key (expected one of: size"),
    ('form = "tf"\n[source]\nfiles = ["train-*"]\n', 1, 'form: expected one of "dataset", "train"'),
    ('[source]\nfiles = ["train-*"]\n[parse]\nx = "int32"\n', 4, 'dtype: expected one of "string"'),
    ('[source]\nfiles = ["nothing-*"]\n', 2, "no file matches 'nothing-*'"),
    ('[source]\nfiles = ["train-*"]\n[threads]\nparallel = "fast"\n', 4, 'expected "AUTOTUNE" or an integer'),
    ('[source]\nfiles = ["train-*"\n', 2, "not valid TOML"),
    ('[source]\nfiles = ["train-*"]\n[image]\nsize = 8\n', 3, "needs a [parse] table"),
])
def test_bad_spec_is_a_usage_error_naming_the_line(shards, text, line, expected):
    spec = write_spec(os.path.dirname(shards), text, "bad.toml")
    r = run("run", spec)
    assert r.returncode == 2
    assert "bad.toml:%d:" % line in r.stderr
    assert expected in r.stderr


def test_missing_spec_is_a_usage_error(tmp_path):
    r = run("run", tmp_path / "none.toml")
    assert r.returncode == 2
    assert "does not exist" in r.stderr


def test_run_stops_with_a_data_error_when_records_do_not_match_the_spec(shards):
    spec = write_spec(os.path.dirname(shards), '[source]\nfiles = ["train-*-of-*"]\n[parse]\nmissing = "int64"\n',
                      "missing.toml")
    r = run("run", spec, "--quiet")
    assert r.returncode == 1
    assert "missing" in r.stderr and "required" in r.stderr


def test_the_readme_pipeline_spec_runs(image_folder, tmp_path):
    import re
    readme = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "README.md")
    with open(readme) as f:
        (toml,) = re.findall(r"```toml\n(.*?)```", f.read(), flags=re.S)
    assert run("records", "make-images", image_folder, tmp_path / "data" / "train", "--shards", "2").returncode == 0
    r = run("run", write_spec(str(tmp_path), toml), "--json", "--quiet")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["records"] == len(CLASSES) * PER_CLASS
