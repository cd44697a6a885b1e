#!/usr/bin/env python3
"""Builds the fuzzers' seed corpora from tests/data (stdlib only).

    python3 fuzz/make_seed_corpus.py TESTDATA_DIR OUT_DIR

writes OUT_DIR/<fuzzer>/<name> for every fuzzer that has seeds:
  record_reader_fuzzer   each TFRecord file (head), prefixed with its mode
                         byte (0: plain, 2: GZIP), and a plain copy of each
                         gzipped file's records (mode 0)
  example_parser_fuzzer  records of each TFRecord file, one Example per seed
                         for single parsing (mode 0, and mode 4: the view),
                         a few joined by the fuzzer's "\\n--\\n" separator
                         (mode 1), SequenceExamples (modes 2 and 3)
  decode_csv_fuzzer      each CSV file (head), options byte 0, types byte 0
  image_decode_fuzzer    each JPEG/PNG image (the fuzzer's own mode bytes
                         are documented in fuzz/image_decode_fuzzer.cc; a
                         leading 0 byte selects its default decode)
Seeds are capped at 64 KiB, the size the fuzzers run with (-max_len).
"""

import gzip
import os
import struct
import sys

MAX_LEN = 64 * 1024
SEP = b"\n--\n"


def records(data):
    """TFRecord payloads of `data` (no CRC check: these are seeds)."""
    out, pos = [], 0
    while pos + 12 <= len(data):
        (n,) = struct.unpack_from("<Q", data, pos)
        if pos + 16 + n > len(data):
            break
        out.append(data[pos + 12:pos + 12 + n])
        pos += 16 + n
    return out


def write(out_dir, fuzzer, name, payload):
    d = os.path.join(out_dir, fuzzer)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(payload[:MAX_LEN])


def main():
    testdata, out_dir = sys.argv[1], sys.argv[2]
    tfrecord_dir = os.path.join(testdata, "tfrecord")
    for root, _, files in sorted(os.walk(tfrecord_dir)):
        for fname in sorted(files):
            if fname.endswith(".pbtxt"):
                continue
            path = os.path.join(root, fname)
            tag = os.path.relpath(path, tfrecord_dir).replace(os.sep, "_")
            raw = open(path, "rb").read()
            gz = raw[:2] == b"\x1f\x8b"
            write(out_dir, "record_reader_fuzzer", tag, (b"\x02" if gz else b"\x00") + raw)
            plain = gzip.decompress(raw) if gz else raw
            if gz:
                write(out_dir, "record_reader_fuzzer", tag + ".plain", b"\x00" + plain)
            recs = records(plain)
            sequence = "sequence" in tag
            for i, rec in enumerate(recs[:4]):
                modes = (2,) if sequence else (0, 4)
                for mode in modes:
                    write(out_dir, "example_parser_fuzzer", "%s.%d.m%d" % (tag, i, mode), bytes([mode]) + rec)
            if recs:
                mode = 3 if sequence else 1
                write(out_dir, "example_parser_fuzzer", "%s.batch.m%d" % (tag, mode),
                      bytes([mode]) + SEP.join(recs[:4]))
    csv_dir = os.path.join(testdata, "csv")
    for root, _, files in sorted(os.walk(csv_dir)):
        for fname in sorted(files):
            raw = open(os.path.join(root, fname), "rb").read()
            write(out_dir, "decode_csv_fuzzer", fname, b"\x00\x00" + raw)
    image_dir = os.path.join(testdata, "images")
    for root, _, files in sorted(os.walk(image_dir)):
        for fname in sorted(files):
            if fname.lower().endswith((".jpg", ".jpeg", ".png")):
                path = os.path.join(root, fname)
                tag = os.path.relpath(path, image_dir).replace(os.sep, "_")
                write(out_dir, "image_decode_fuzzer", tag, b"\x00" + open(path, "rb").read())


if __name__ == "__main__":
    main()
