"""What every `sluice` sub-command shares: exit codes, errors, input files,
compression sniffing, and the rule that no output is ever written over an input."""

import glob
import json
import os
import sys


EXIT_OK = 0
EXIT_DATA = 1   # the data is bad (corrupt records, undecodable files)
EXIT_USAGE = 2  # the command line or the spec is wrong (argparse's code too)

COMPRESSIONS = ("auto", "none", "gzip", "zlib")
INDEX_SUFFIX = ".idx"  # sluice.io.TFRecordIndex's side files
_CORE_NAMES = {"none": "", "gzip": "GZIP", "zlib": "ZLIB"}


class UsageError(Exception):
    """A wrong command line, a missing file, a bad spec: exit status 2."""


class DataError(Exception):
    """Bad data (a corrupt record, a file that is not what it should be): exit status 1."""


def eprint(*args):
    print(*args, file=sys.stderr)


def expand_inputs(patterns, what="input file"):
    """The files named by `patterns` (paths or globs), in order, each once.

    A pattern that matches nothing, or names a folder, is a UsageError.
    """
    files = []
    for pattern in patterns:
        if glob.has_magic(pattern):
            # sluice's own index side files are never inputs a glob means.
            matches = sorted(m for m in glob.glob(pattern) if not m.endswith(INDEX_SUFFIX))
            if not matches:
                raise UsageError("no %s matches %r" % (what, pattern))
        else:
            matches = [pattern]
        for m in matches:
            if os.path.isdir(m):
                raise UsageError("%s %r is a folder, not a file" % (what, m))
            if not os.path.exists(m):
                raise UsageError("%s %r does not exist" % (what, m))
            if m not in files:
                files.append(m)
    return files


def _valid_tfrecord_header(head):
    """True when `head` starts with a TFRecord header whose length checksum holds."""
    if len(head) < 12:
        return False
    from sluice import _core
    return _core.masked_crc32c(bytes(head[:8])) == int.from_bytes(head[8:12], "little")


def sniff_compression(path):
    """"gzip", "zlib" or "none": what the first bytes of `path` say it is.

    A valid TFRecord header wins over a zlib-looking first byte; an empty
    file is "none".
    """
    with open(path, "rb") as f:
        head = f.read(12)
    if head[:2] == b"\x1f\x8b":
        return "gzip"
    if _valid_tfrecord_header(head) or len(head) < 2:
        return "none"
    cmf, flg = head[0], head[1]
    if cmf & 0x0F == 8 and (cmf >> 4) <= 7 and (cmf * 256 + flg) % 31 == 0:
        return "zlib"
    return "none"


def compression_of(path, compression):
    """The compression to read `path` with ("none", "gzip", "zlib")."""
    return sniff_compression(path) if compression == "auto" else compression


def core_compression(name):
    """The io layer's name ("", "GZIP", "ZLIB") of "none", "gzip" or "zlib"."""
    return _CORE_NAMES[name]


def check_not_input(output, inputs):
    """UsageError when `output` is (or links to) one of `inputs`: nothing is written over an input."""
    if not os.path.exists(output):
        return
    for path in inputs:
        if os.path.exists(path) and os.path.samefile(output, path):
            raise UsageError("output %r is the input file %r: refusing to write over an input" % (output, path))


def check_output_free(output, inputs, force):
    """UsageError when `output` is an input, or exists and `force` is off."""
    check_not_input(output, inputs)
    if os.path.exists(output) and not force:
        raise UsageError("output %r exists (use --force to replace it)" % output)


def print_json(value, stream=None, indent=None):
    stream = stream or sys.stdout
    stream.write(json.dumps(value, indent=indent, ensure_ascii=False) + "\n")


def human_bytes(n):
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if abs(n) < 1000 or unit == "TB":
            return ("%d %s" % (n, unit)) if unit == "B" else ("%.1f %s" % (n, unit))
        n /= 1000.0
    return str(n)
