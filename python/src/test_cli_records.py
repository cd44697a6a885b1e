"""`sluice records ...`, run as a command on the test files (good and corrupt)."""

import gzip
import hashlib
import json
import os
import zlib

import numpy as np
import pytest

import sluice
from sluice import io as sio

from _cli_util import copy, data_file, run

MNIST = data_file("tfrecord", "tfx_mnist", "mnist.tfrecord")  # 1000 records of 3203 bytes
FRAME = 3203
PENGUIN_EVAL = data_file("tfrecord", "tfx_penguin", "Split-eval", "data_tfrecord-00000-of-00001.gz")
SEQUENCE_EVAL = data_file("tfrecord", "tfx_tfrecord_sequence", "Split-eval", "data_tfrecord_eval.gz")
FOO_BAR = data_file("tfrecord", "beam_base64", "python_foo_bar.tfrecord")
CSV = data_file("csv", "tfx", "penguins_processed.csv")

RECORDS_COMMANDS = ["count", "head", "cat", "verify", "convert", "salvage", "split", "merge", "index", "schema",
                    "make-images"]


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def records_of(path, compression=None):
    return list(sio.tf_record_iterator(path, compression))


@pytest.fixture
def damaged(tmp_path):
    """The first 20 records of MNIST with record 5's data and record 9's length damaged, cut inside record 20."""
    with open(MNIST, "rb") as f:
        data = bytearray(f.read(FRAME * 20 + 50))
    data[FRAME * 5 + 12 + 100] ^= 0x40
    data[FRAME * 9 + 2] ^= 0x01
    path = tmp_path / "damaged.tfrecord"
    path.write_bytes(bytes(data))
    return str(path)


@pytest.mark.parametrize("args", [[], ["records"]] + [["records", c] for c in RECORDS_COMMANDS] + [["run"], ["doctor"]])
def test_every_command_has_help_with_an_example(args):
    r = run(*args, "--help")
    assert r.returncode == 0, r.stderr
    assert "usage: sluice" in r.stdout
    assert "example" in r.stdout


def test_no_command_is_a_usage_error():
    r = run("records")
    assert r.returncode == 2
    assert "required" in r.stderr


def test_count_gives_each_file_and_the_total_for_every_compression():
    files = [MNIST, PENGUIN_EVAL, data_file("tfrecord", "ecosystem_hadoop", "zipped-tf-records", "part-m-00000.gz"),
             FOO_BAR]
    r = run("records", "count", "--jobs", "2", "--json", *files)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert [f["records"] for f in doc["files"]] == [1000, 100, 5, 2]
    assert doc["total"] == 1107


def test_count_expands_globs():
    r = run("records", "count", data_file("tfrecord", "beam_base64") + "/*.tfrecord")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[-1] == "5\ttotal"


def test_auto_compression_sniffs_zlib_and_gzip(tmp_path):
    with open(MNIST, "rb") as f:
        plain = f.read()
    (tmp_path / "m.zlib").write_bytes(zlib.compress(plain))
    (tmp_path / "m.gzip").write_bytes(gzip.compress(plain))
    r = run("records", "count", "--json", tmp_path / "m.zlib", tmp_path / "m.gzip")
    assert r.returncode == 0, r.stderr
    assert [f["records"] for f in json.loads(r.stdout)["files"]] == [1000, 1000]
    # Told the wrong compression, the file is bad data.
    assert run("records", "count", "--compression", "none", tmp_path / "m.zlib").returncode == 1


def test_missing_file_is_a_usage_error():
    r = run("records", "count", "/nonexistent/x.tfrecord")
    assert r.returncode == 2
    assert "does not exist" in r.stderr


def test_glob_matching_nothing_is_a_usage_error(tmp_path):
    r = run("records", "verify", str(tmp_path / "*.tfrecord"))
    assert r.returncode == 2
    assert "no input file matches" in r.stderr


def test_a_file_that_is_not_a_tfrecord_is_a_data_error():
    r = run("records", "count", CSV)
    assert r.returncode == 1
    assert "does not look like a TFRecord file" in r.stderr


def test_head_prints_an_example_with_names_kinds_and_values():
    r = run("records", "head", "-n", "1", PENGUIN_EVAL)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["record"] == 0 and doc["type"] == "Example"
    assert doc["features"] == {  # SOURCES.md: the first eval record is CSV row 6
        "body_mass_g": {"float_list": [0.25694445]}, "culmen_depth_mm": {"float_list": [0.5595238]},
        "culmen_length_mm": {"float_list": [0.24727273]}, "flipper_length_mm": {"float_list": [0.15254237]},
        "species": {"int64_list": [0]}}


def test_head_prints_a_sequence_example_with_context_and_feature_lists():
    r = run("records", "head", "-n", "2", "--jsonl", SEQUENCE_EVAL)
    assert r.returncode == 0, r.stderr
    first, second = [json.loads(line) for line in r.stdout.splitlines()]
    assert first["type"] == "SequenceExample"
    assert first["context"] == {"f": {}, "i": {}}  # k = 10500: k % 10 == 0, empty context features
    assert first["feature_lists"] == {"s": [{"bytes_list": ["10500"]}, {"bytes_list": ["10501"]}]}
    assert second["context"] == {"f": {"float_list": [10501.0]}, "i": {"int64_list": [10501]}}


def test_cat_prints_every_record_and_non_examples_as_bytes():
    r = run("records", "cat", "--jsonl", FOO_BAR)
    assert r.returncode == 0, r.stderr
    assert [json.loads(line)["bytes"] for line in r.stdout.splitlines()] == ["foo", "bar"]


def test_long_bytes_are_shortened_unless_raw_or_full(tmp_path):
    path = str(tmp_path / "long.tfrecord")
    value = bytes(range(256)) * 4
    with sio.TFRecordWriter(path) as w:
        w.write(sio.serialize_example({"blob": value, "label": 7}))
    short = json.loads(run("records", "head", "--jsonl", path).stdout)
    text = short["features"]["blob"]["bytes_list"][0]
    assert text.endswith("... (1024 bytes)") and len(text) < 200
    full = json.loads(run("records", "head", "--jsonl", "--full", path).stdout)
    assert "..." not in full["features"]["blob"]["bytes_list"][0]
    raw = json.loads(run("records", "head", "--jsonl", "--raw", path).stdout)
    assert "features" not in raw and len(raw["bytes"]) > 1024


def test_verify_passes_intact_files():
    r = run("records", "verify", MNIST, PENGUIN_EVAL, SEQUENCE_EVAL, "--jobs", "2")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "3 files checked, 0 corrupt" in r.stdout


def test_verify_lists_each_corrupt_record_by_file_index_and_offset(damaged):
    r = run("records", "verify", "--json", damaged, MNIST)
    assert r.returncode == 1
    doc = json.loads(r.stdout)
    assert doc["ok"] is False
    bad, good = doc["files"]
    assert good["ok"] and good["records"] == 1000
    assert bad["records"] == 18  # records 0..19 but 5 and 9; record 20 is cut short
    where = [(c["record"], c["offset"]) for c in bad["corruptions"]]
    assert where[0] == (5, FRAME * 5)      # bad data checksum
    assert where[1] == (9, FRAME * 9)      # bad length checksum: the reader resyncs at record 10
    assert where[2][1] == FRAME * 20       # the record cut short
    assert "data checksum" in bad["corruptions"][0]["message"]
    text = run("records", "verify", damaged)
    assert text.returncode == 1
    assert "%s: record 5 at byte %d" % (damaged, FRAME * 5) in text.stdout


def test_count_stops_at_the_first_corrupt_record(damaged):
    r = run("records", "count", damaged)
    assert r.returncode == 1
    assert r.stdout.startswith("5\t")
    assert "record 5" in r.stderr


def test_convert_changes_compression_and_keeps_records(tmp_path):
    out = tmp_path / "m.tfrecord.gz"
    r = run("records", "convert", MNIST, out, "--compression", "gzip")
    assert r.returncode == 0, r.stderr
    assert out.read_bytes()[:2] == b"\x1f\x8b"
    assert records_of(str(out), "GZIP") == records_of(MNIST)
    back = tmp_path / "back.tfrecord"
    assert run("records", "convert", out, back).returncode == 0  # gzip sniffed, written plain
    assert digest(back) == digest(MNIST)


def test_convert_never_writes_over_its_input(tmp_path):
    path = copy(MNIST, tmp_path)
    before = digest(path)
    for args in ([path, path], [path, path, "--force"]):
        r = run("records", "convert", *args, "--compression", "gzip")
        assert r.returncode == 2
        assert "refusing to write over an input" in r.stderr
    os.symlink(path, tmp_path / "link")
    assert run("records", "convert", path, tmp_path / "link", "--force").returncode == 2
    assert digest(path) == before


def test_existing_output_needs_force(tmp_path):
    out = tmp_path / "out.tfrecord"
    out.write_bytes(b"keep")
    assert run("records", "convert", FOO_BAR, out).returncode == 2
    assert out.read_bytes() == b"keep"
    assert run("records", "convert", FOO_BAR, out, "--force").returncode == 0
    assert records_of(str(out)) == [b"foo", b"bar"]


def test_convert_of_a_corrupt_file_writes_nothing(damaged, tmp_path):
    out = tmp_path / "out.tfrecord"
    r = run("records", "convert", damaged, out)
    assert r.returncode == 1
    assert "salvage" in r.stderr
    assert not out.exists()
    assert os.listdir(tmp_path) == ["damaged.tfrecord"]  # no temporary left behind


def test_salvage_copies_every_readable_record_and_reports_the_losses(damaged, tmp_path):
    out = tmp_path / "salvaged.tfrecord"
    before = digest(damaged)
    r = run("records", "salvage", "--json", damaged, out)
    assert r.returncode == 1  # something was lost
    doc = json.loads(r.stdout)
    original = records_of(MNIST)[:20]
    kept = [original[i] for i in range(20) if i not in (5, 9)]
    assert records_of(str(out)) == kept
    assert doc["records_copied"] == len(kept)
    assert [c["offset"] for c in doc["corruptions"]] == [FRAME * 5, FRAME * 9, FRAME * 20]
    assert digest(damaged) == before
    # A salvaged file is intact.
    assert run("records", "verify", out).returncode == 0


def test_salvage_of_an_intact_file_exits_0(tmp_path):
    r = run("records", "salvage", FOO_BAR, tmp_path / "out")
    assert r.returncode == 0, r.stderr
    assert "nothing lost" in r.stdout


def test_split_by_records_then_merge_gives_the_file_back(tmp_path):
    r = run("records", "split", MNIST, tmp_path / "parts" / "m", "--records", "300")
    assert r.returncode == 0, r.stderr
    parts = sorted(os.listdir(tmp_path / "parts"))
    assert parts == ["m-%05d-of-00004" % i for i in range(4)]
    assert [len(records_of(str(tmp_path / "parts" / p))) for p in parts] == [300, 300, 300, 100]
    merged = tmp_path / "merged.tfrecord"
    assert run("records", "merge", str(tmp_path / "parts" / "m-*"), merged).returncode == 0
    assert digest(merged) == digest(MNIST)


def test_split_by_bytes_keeps_each_file_within_the_limit(tmp_path):
    r = run("records", "split", MNIST, tmp_path / "m", "--bytes", "1M")
    assert r.returncode == 0, r.stderr
    sizes = [os.path.getsize(tmp_path / n) for n in sorted(os.listdir(tmp_path))]
    assert len(sizes) == 4 and max(sizes) <= 1 << 20
    assert sum(sizes) == 1000 * FRAME


def test_split_needs_a_limit():
    assert run("records", "split", MNIST, "/tmp/never").returncode == 2


def test_index_writes_the_side_file_tfrecordindex_loads(tmp_path):
    path = copy(MNIST, tmp_path)
    r = run("records", "index", path)
    assert r.returncode == 0, r.stderr
    assert os.path.exists(path + ".idx")
    index = sio.TFRecordIndex(path)
    assert not index.rebuilt and len(index) == 1000
    assert index.read(999) == records_of(MNIST)[999]


def test_schema_reports_features_and_a_spec_that_parses_the_records():
    r = run("records", "schema", "--json", PENGUIN_EVAL)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["examples"] == 100
    by_name = {f["name"]: f for f in doc["features"]}
    assert by_name["species"]["kind"] == "int64_list"
    assert (by_name["body_mass_g"]["values_min"], by_name["body_mass_g"]["values_max"]) == (1, 1)
    scope = {}
    exec(doc["spec"], scope)  # the ready-to-paste spec
    parsed = sluice.io.parse_single_example(records_of(PENGUIN_EVAL, "GZIP")[0], scope["features"])
    assert int(parsed["species"]) == 0
    assert np.isclose(parsed["culmen_length_mm"], 0.24727273)


def test_schema_of_sequence_examples_gives_context_and_sequence_specs():
    r = run("records", "schema", SEQUENCE_EVAL, "--max-records", "50")
    assert r.returncode == 0, r.stderr
    assert "50 records in 1 file: 50 SequenceExamples" in r.stdout
    assert "'i': sluice.io.VarLenFeature(sluice.int64)" in r.stdout  # empty in every tenth record
    assert "'s': sluice.io.FixedLenSequenceFeature([], sluice.string)" in r.stdout


def test_schema_of_records_that_are_not_examples_is_a_data_error():
    assert run("records", "schema", FOO_BAR).returncode == 1


@pytest.mark.parametrize("command", ["head", "cat", "schema", "verify"])
def test_every_reading_command_says_when_a_file_is_not_a_tfrecord(command):
    r = run("records", command, CSV)
    assert r.returncode == 1
    assert "does not look like a TFRecord file" in r.stdout + r.stderr
