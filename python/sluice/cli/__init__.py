"""The `sluice` command: TFRecord tools and pipeline runs on the sluice engine.

    sluice records count data/*.tfrecord
    sluice records head -n 2 data/train.tfrecord
    sluice run pipeline.toml

Installed as a console script by ``pip install`` (``[project.scripts]``) and
as a launcher by the CMake install; ``python -m sluice.cli`` is the same.
Exit status: 0 all well, 1 bad data (corrupt records, undecodable files),
2 a usage error (bad arguments, a missing file, a bad spec).
"""

import argparse
import sys

from sluice.cli import _common as c

__all__ = ["main"]


def _formatter(prog):
    return argparse.RawDescriptionHelpFormatter(prog, max_help_position=32)


class _Parser(argparse.ArgumentParser):
    """argparse with the exit code convention: 2 for usage errors (argparse's own)."""


def _add(sub, name, help_text, example, fn, description=None):
    p = sub.add_parser(name, help=help_text, description=description or help_text, epilog="example:\n  " + example,
                       formatter_class=_formatter)
    p.set_defaults(fn=fn)
    return p


def _compression(p, flag="--compression", default="auto", what="of the input files (auto: sniffed)"):
    choices = c.COMPRESSIONS if default == "auto" else c.COMPRESSIONS[1:]
    p.add_argument(flag, choices=choices, default=default, help="compression %s; default %s" % (what, default))


def _jobs(p):
    p.add_argument("--jobs", "-j", type=int, default=1, metavar="N", help="files read at once (default 1)")


def _build_records(sub):
    from sluice.cli import make_images, records

    rec = sub.add_parser("records", help="TFRecord files: count, print, verify, convert, ...",
                         description="Tools for TFRecord files. FILE arguments may be globs (quote them).",
                         epilog="example:\n  sluice records verify 'data/train-*'", formatter_class=_formatter)
    rsub = rec.add_subparsers(dest="records_command", metavar="COMMAND", required=True)

    p = _add(rsub, "count", "Count the records of each file (stops at the first corrupt record).",
             "sluice records count 'data/*.tfrecord' --jobs 4", records.cmd_count)
    p.add_argument("files", nargs="+", metavar="FILE")
    _compression(p)
    _jobs(p)
    p.add_argument("--json", action="store_true", help="print JSON")

    for name, text, example, fn in [
            ("head", "Print the first records of each file (-n, default 5).",
             "sluice records head -n 2 data/train.tfrecord", records.cmd_head),
            ("cat", "Print every record of each file.", "sluice records cat --jsonl data/train.tfrecord | jq .",
             records.cmd_cat)]:
        p = _add(rsub, name, text + " Examples and SequenceExamples are shown as JSON with feature names, "
                 "kinds and values (long bytes shortened); other records as bytes.", example, fn)
        p.add_argument("files", nargs="+", metavar="FILE")
        if name == "head":
            p.add_argument("-n", type=int, default=5, help="records per file (default 5)")
        _compression(p)
        p.add_argument("--raw", action="store_true", help="print each record's bytes, undecoded and in full")
        p.add_argument("--full", action="store_true", help="do not shorten long bytes values")
        p.add_argument("--jsonl", action="store_true", help="one JSON document per line")

    p = _add(rsub, "verify", "Check every record's checksums; list each corrupt record by file, record index "
             "and byte offset. Exit status 1 when any file is corrupt.",
             "sluice records verify 'data/*.tfrecord' --jobs 4", records.cmd_verify)
    p.add_argument("files", nargs="+", metavar="FILE")
    _compression(p)
    _jobs(p)
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--quiet", "-q", action="store_true", help="print only what is corrupt")

    for name, text, example, fn in [
            ("convert", "Copy IN to OUT with another compression (OUT is written only when IN is intact).",
             "sluice records convert data/train.tfrecord data/train.tfrecord.gz --compression gzip",
             records.cmd_convert),
            ("salvage", "Copy every readable record of a damaged IN to OUT, and report what was lost and "
             "where. Exit status 1 when something was lost.",
             "sluice records salvage damaged.tfrecord repaired.tfrecord", records.cmd_salvage)]:
        p = _add(rsub, name, text, example, fn)
        p.add_argument("input", metavar="IN")
        p.add_argument("output", metavar="OUT")
        _compression(p, default="none", what="of OUT")
        _compression(p, flag="--input-compression", what="of IN (auto: sniffed)")
        p.add_argument("--force", "-f", action="store_true", help="replace OUT if it exists")
        p.add_argument("--quiet", "-q", action="store_true")
        if name == "salvage":
            p.add_argument("--json", action="store_true", help="print JSON")

    for name, text, example, fn in [
            ("split", "Split IN into OUT-00000-of-0000N files of at most --records records or --bytes bytes.",
             "sluice records split data/train.tfrecord shards/train --records 1000", records.cmd_split),
            ("merge", "Merge IN files into OUT (or, with --records/--bytes, into OUT-00000-of-0000N files).",
             "sluice records merge 'parts/*.tfrecord' data/all.tfrecord", records.cmd_merge)]:
        p = _add(rsub, name, text, example, fn)
        if name == "split":
            p.add_argument("input", metavar="IN")
            p.add_argument("output", metavar="OUT")
        else:
            p.add_argument("paths", nargs="+", metavar="IN... OUT")
        p.add_argument("--records", type=int, metavar="N", help="records per output file")
        p.add_argument("--bytes", metavar="SIZE", help="bytes per output file (record frames, uncompressed; "
                       "k/M/G suffixes)")
        _compression(p, default="none", what="of the outputs")
        _compression(p, flag="--input-compression", what="of the inputs (auto: sniffed)")
        p.add_argument("--force", "-f", action="store_true", help="replace outputs that exist")
        p.add_argument("--quiet", "-q", action="store_true")

    p = _add(rsub, "index", "Write the record-offset index of each file beside it (FILE.idx), as "
             "sluice.io.TFRecordIndex uses it.", "sluice records index 'data/*.tfrecord'", records.cmd_index)
    p.add_argument("files", nargs="+", metavar="FILE")
    _compression(p)
    _jobs(p)
    p.add_argument("--quiet", "-q", action="store_true")

    p = _add(rsub, "schema", "The features found (name, kind, value counts) and a ready-to-paste feature spec "
             "for parse_example.", "sluice records schema data/train.tfrecord --max-records 1000",
             records.cmd_schema)
    p.add_argument("files", nargs="+", metavar="FILE")
    _compression(p)
    p.add_argument("--max-records", type=int, metavar="N", help="look at the first N records only")
    p.add_argument("--json", action="store_true", help="print JSON")

    p = _add(rsub, "make-images", "Turn a folder of labelled images (DIR/<class>/<image>.jpg, as ImageNet) into "
             "sharded TFRecord files OUT-00000-of-0000N of Examples with TensorFlow's feature names "
             "(image/encoded, image/class/label, image/height, ...), and OUT.labels.txt (label, tab, class "
             "name).",
             "sluice records make-images photos/ data/train --shards 4", make_images.cmd_make_images)
    p.add_argument("dir", metavar="DIR")
    p.add_argument("output", metavar="OUT")
    p.add_argument("--shards", type=int, default=1, metavar="N", help="output files (default 1)")
    _compression(p, default="none", what="of the outputs")
    p.add_argument("--label-offset", type=int, default=0, metavar="K",
                   help="first label (default 0; TF's build_image_data.py uses 1, keeping 0 for background)")
    p.add_argument("--no-shuffle", action="store_true", help="keep class order instead of shuffling")
    p.add_argument("--seed", type=int, default=0, help="shuffle seed (default 0)")
    _jobs(p)
    p.add_argument("--force", "-f", action="store_true", help="replace outputs that exist")
    p.add_argument("--quiet", "-q", action="store_true")


def _build_run(sub):
    from sluice.cli import run

    text = ("Run the input pipeline described in SPEC (a TOML file) to its end: a live progress bar on a "
            "terminal (plain lines elsewhere), then a summary.")
    p = _add(sub, "run", text, "sluice run pipeline.toml --max-batches 100", run.cmd_run,
             description=text + "\n\n" + run.SPEC_HELP)
    p.add_argument("spec", metavar="SPEC")
    p.add_argument("--max-batches", type=int, metavar="N", help="stop after N batches")
    p.add_argument("--interval", type=float, default=5.0, metavar="S",
                   help="seconds between progress lines when not on a terminal (default 5)")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress, only the summary")


def _build_doctor(sub):
    from sluice.cli import doctor

    text = ("Measure each stage of SPEC's pipeline, in its tf.data (Dataset) or tf.train (queue) form: "
            "throughput, time waiting on input, time blocked on output, buffer or queue fill over time; name the "
            "bottleneck and what to change; write an HTML report with plots and a Chrome trace (Perfetto).")
    p = _add(sub, "doctor", text, "sluice doctor pipeline.toml --step-ms 20", doctor.cmd_doctor,
             description=text)
    p.add_argument("spec", metavar="SPEC")
    p.add_argument("--form", choices=("dataset", "train"),
                   help="which form of the spec to measure (default: the spec's own `form`)")
    p.add_argument("--out", metavar="PREFIX", help="write PREFIX.html and PREFIX.trace.json (default: beside the "
                   "spec, SPEC-doctor.*)")
    p.add_argument("--max-batches", type=int, metavar="N", help="stop after N batches")
    p.add_argument("--step-ms", type=float, default=0.0, metavar="MS",
                   help="time the consumer spends per batch, standing in for a training step (default 0)")
    p.add_argument("--sample-ms", type=float, default=10.0, metavar="MS", help="queue sampling period (default 10)")
    p.add_argument("--json", action="store_true", help="print the diagnosis as JSON")


def build_parser():
    parser = _Parser(prog="sluice", formatter_class=_formatter,
                     description="sluice: TensorFlow's input system without TensorFlow. Tools for TFRecord files "
                     "and for running input pipelines.",
                     epilog="examples:\n  sluice records count 'data/*.tfrecord'\n"
                     "  sluice records head -n 1 data/train.tfrecord\n  sluice run pipeline.toml\n"
                     "  sluice doctor pipeline.toml\n\n"
                     "exit status: 0 all well, 1 bad data, 2 usage error")
    from sluice import __version__
    parser.add_argument("--version", action="version", version="sluice " + __version__)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    _build_records(sub)
    _build_run(sub)
    _build_doctor(sub)
    return parser


def main(argv=None):
    """Runs the command; returns its exit status (the console script exits with it)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.fn(args)
    except c.UsageError as e:
        c.eprint("sluice: error: %s" % e)
        return c.EXIT_USAGE
    except c.DataError as e:
        c.eprint("sluice: %s" % e)
        return c.EXIT_DATA
    except BrokenPipeError:  # `sluice records cat ... | head`
        sys.stderr.close()
        return c.EXIT_OK
    except KeyboardInterrupt:
        return 130


def _entry():
    sys.exit(main())
