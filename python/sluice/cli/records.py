"""`sluice records ...`: count, print, verify, convert, split, merge, index,
salvage and describe TFRecord files. The loops over records run in the
engine (sluice._core.scan_records, sluice.io); this module decides what to
read and how to report it."""

import concurrent.futures
import json
import os
import sys
import tempfile

from sluice import _core
from sluice import errors
from sluice import io as sio
from sluice.cli import _common as c
from sluice.cli import _examples


# ---- helpers ---------------------------------------------------------------------------

def _options(name):
    return sio.TFRecordOptions(c.core_compression(name))


def _scan(path, compression, keep_going, out_path=None, out_compression="none"):
    """_core.scan_records of `path`; its dict, plus "file" and "compression"."""
    comp = c.compression_of(path, compression)
    out_options = _options(out_compression)._as_core() if out_path is not None else None
    try:
        r = _core.scan_records(path, _options(comp)._as_core(), keep_going, out_path, out_options)
    except errors.NotFoundError:
        raise c.UsageError("input file %r does not exist" % path) from None
    r["file"], r["compression"] = path, comp
    return r


def _map_files(fn, files, jobs):
    """[fn(f) for f in files], on `jobs` threads (the engine releases the GIL)."""
    if jobs <= 1 or len(files) <= 1:
        return [fn(f) for f in files]
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(fn, files))


def _format_hint(r):
    """A hint when a file's very first header is bad: most likely not a TFRecord file, or compressed."""
    first = r["corruptions"][0] if r["corruptions"] else None
    if r["records"] == 0 and first is not None and first["offset"] == 0 and "length checksum" in first["message"]:
        return (" -- %s does not look like a TFRecord file%s" %
                (r["file"], "" if r["compression"] == "none" else " (read as %s)" % r["compression"]))
    return ""


def _read_error(path, e, comp, records_read):
    """The message of a read error, with the format hint when the first header is already bad."""
    hint = ""
    if records_read == 0 and "length checksum" in e.message:
        hint = " -- %s does not look like a TFRecord file%s" % (path, "" if comp == "none" else " (read as %s)" % comp)
    return e.message + hint


def _describe(corruption):
    where = "record %d" % corruption["record"] if corruption["record"] >= 0 else \
        "after readable record %d" % (corruption["records_before"] - 1)
    lost = ""
    if corruption["bytes"]:
        lost = " (%d bytes lost%s)" % (corruption["bytes"], ", 1 record" if corruption["records"] == 1 else
                                       ", record count unknown" if corruption["records"] == 0 else
                                       ", %d records" % corruption["records"])
    return "%s at byte %d: %s%s" % (where, corruption["offset"], corruption["message"], lost)


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


class _TempOutput:
    """A temporary file beside `path`, renamed onto it by commit(), removed otherwise,
    so a failed command leaves no half-written output."""

    def __init__(self, path):
        self.path = path
        folder = os.path.dirname(os.path.abspath(path))
        os.makedirs(folder, exist_ok=True)
        fd, self.tmp = tempfile.mkstemp(prefix=".%s." % os.path.basename(path), suffix=".tmp", dir=folder)
        os.close(fd)
        os.chmod(self.tmp, 0o666 & ~_umask())  # mkstemp's 0600 is for secrets, not data files

    def commit(self):
        os.replace(self.tmp, self.path)
        self.tmp = None

    def discard(self):
        if self.tmp is not None and os.path.exists(self.tmp):
            os.remove(self.tmp)
        self.tmp = None


# ---- count -----------------------------------------------------------------------------

def cmd_count(args):
    files = c.expand_inputs(args.files)
    results = _map_files(lambda f: _scan(f, args.compression, keep_going=False), files, args.jobs)
    total, status = 0, c.EXIT_OK
    for r in results:
        if r["stopped"] is not None:
            c.eprint("sluice records count: %s: %s%s" % (r["file"], r["stopped"], _format_hint(r)))
            status = c.EXIT_DATA
        total += r["records"]
    if args.json:
        c.print_json({"files": [{"file": r["file"], "records": r["records"], "ok": r["stopped"] is None}
                                for r in results], "total": total})
    else:
        for r in results:
            print("%d\t%s%s" % (r["records"], r["file"], "" if r["stopped"] is None else "\t(stopped at a corrupt "
                                                                                      "record)"))
        if len(results) > 1:
            print("%d\ttotal" % total)
    return status


# ---- head / cat ------------------------------------------------------------------------

def _record_json(path, index, record, args):
    head = {"file": path, "record": index}
    if args.raw:
        head["bytes"] = _examples.bytes_text(record, full=True)
        return head
    try:
        decoded = _examples.decode(record)
    except _examples.NotAnExample:
        head["bytes"] = _examples.bytes_text(record, full=args.full)
        return head
    head["type"] = "Example" if decoded[0] == "example" else "SequenceExample"
    head.update(_examples.to_json(decoded, full=args.full))
    return head


def _print_record(doc, jsonl):
    if jsonl:
        c.print_json(doc)
        return
    # One feature per line: readable, and still one JSON document per record.
    lines = []
    for key, value in doc.items():
        if isinstance(value, dict) and value:
            inner = ",\n".join("    %s: %s" % (json.dumps(k, ensure_ascii=False), json.dumps(v, ensure_ascii=False))
                               for k, v in value.items())
            lines.append("  %s: {\n%s\n  }" % (json.dumps(key), inner))
        else:
            lines.append("  %s: %s" % (json.dumps(key), json.dumps(value, ensure_ascii=False)))
    sys.stdout.write("{\n" + ",\n".join(lines) + "\n}\n")


def _print_records(args, limit):
    files = c.expand_inputs(args.files)
    status = c.EXIT_OK
    for path in files:
        comp = c.compression_of(path, args.compression)
        index = 0
        try:
            for record in sio.tf_record_iterator(path, _options(comp)):
                if limit is not None and index >= limit:
                    break
                _print_record(_record_json(path, index, record, args), args.jsonl)
                index += 1
        except errors.NotFoundError:
            raise c.UsageError("input file %r does not exist" % path) from None
        except errors.OpError as e:
            sys.stdout.flush()
            c.eprint("sluice records: %s" % _read_error(path, e, comp, index))
            status = c.EXIT_DATA
    return status


def cmd_head(args):
    if args.n < 0:
        raise c.UsageError("-n must be >= 0, got %d" % args.n)
    return _print_records(args, args.n)


def cmd_cat(args):
    return _print_records(args, None)


# ---- verify ----------------------------------------------------------------------------

def cmd_verify(args):
    files = c.expand_inputs(args.files)
    results = _map_files(lambda f: _scan(f, args.compression, keep_going=True), files, args.jobs)
    bad = [r for r in results if r["corruptions"] or r["stopped"] is not None]
    if args.json:
        c.print_json({"ok": not bad, "files": [
            {"file": r["file"], "compression": r["compression"], "records": r["records"],
             "ok": not r["corruptions"] and r["stopped"] is None, "corruptions": r["corruptions"]}
            for r in results]})
    else:
        for r in results:
            if not r["corruptions"] and r["stopped"] is None:
                if not args.quiet:
                    print("OK\t%s\t%d records" % (r["file"], r["records"]))
                continue
            print("CORRUPT\t%s\t%d readable records, %d corrupt stretch%s%s"
                  % (r["file"], r["records"], len(r["corruptions"]), "" if len(r["corruptions"]) == 1 else "es",
                     _format_hint(r)))
            for corruption in r["corruptions"]:
                print("  %s: %s" % (r["file"], _describe(corruption)))
        if not args.quiet or bad:
            print("%d file%s checked, %d corrupt" % (len(results), "" if len(results) == 1 else "s", len(bad)))
    return c.EXIT_DATA if bad else c.EXIT_OK


# ---- convert / salvage -----------------------------------------------------------------

def _copy(args, keep_going):
    if not os.path.exists(args.input):
        raise c.UsageError("input file %r does not exist" % args.input)
    c.check_output_free(args.output, [args.input], args.force)
    out = _TempOutput(args.output)
    try:
        r = _scan(args.input, args.input_compression, keep_going, out.tmp, args.compression)
        if not keep_going and r["stopped"] is not None:
            out.discard()
            c.eprint("sluice records convert: %s (nothing written; `sluice records salvage` copies what is "
                     "readable)" % r["stopped"])
            return r, c.EXIT_DATA
        out.commit()
    finally:
        out.discard()
    return r, c.EXIT_OK


def cmd_convert(args):
    r, status = _copy(args, keep_going=False)
    if status == c.EXIT_OK and not args.quiet:
        print("%d records: %s (%s) -> %s (%s)" % (r["records"], args.input, r["compression"], args.output,
                                                 args.compression))
    return status


def cmd_salvage(args):
    r, _ = _copy(args, keep_going=True)
    lost = r["corruptions"]
    if args.json:
        c.print_json({"input": args.input, "output": args.output, "records_copied": r["records"],
                      "corruptions": lost, "records_lost": sum(x["records"] for x in lost),
                      "bytes_lost": sum(x["bytes"] for x in lost), "stopped": r["stopped"]})
    else:
        print("%d records copied: %s -> %s" % (r["records"], args.input, args.output))
        for corruption in lost:
            print("  lost: %s: %s" % (args.input, _describe(corruption)))
        if r["stopped"] is not None:
            print("  the rest of %s could not be read" % args.input)
        if not lost:
            print("  nothing lost")
    return c.EXIT_DATA if lost or r["stopped"] is not None else c.EXIT_OK


# ---- split / merge ---------------------------------------------------------------------

def _parse_size(text):
    """Bytes of "100", "64k", "10M", "1G" (powers of 1024)."""
    units = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
    t = text.strip().lower().rstrip("b")
    mult = 1
    if t and t[-1] in units:
        mult, t = units[t[-1]], t[:-1]
    try:
        value = int(float(t) * mult)
    except ValueError:
        raise c.UsageError("not a size: %r (examples: 1000, 64k, 10M, 1G)" % text) from None
    if value <= 0:
        raise c.UsageError("size must be > 0, got %r" % text)
    return value


class _Resharder:
    """Writes records to `out` (one file) or, with a limit, to out-00000-of-0000N files."""

    def __init__(self, out, compression, max_records, max_bytes):
        self.out, self.compression = out, compression
        self.max_records, self.max_bytes = max_records, max_bytes
        self.sharded = max_records is not None or max_bytes is not None
        self.temps = []  # one _TempOutput per shard
        self.writer = None
        self.records = self.bytes = 0
        self.total = 0

    def write(self, record):
        frame = len(record) + 16
        if self.writer is None or (self.sharded and (
                (self.max_records is not None and self.records >= self.max_records) or
                (self.max_bytes is not None and self.records and self.bytes + frame > self.max_bytes))):
            self._next()
        self.writer.write(record)
        self.records += 1
        self.bytes += frame
        self.total += 1

    def _next(self):
        if self.writer is not None:
            self.writer.close()
        self.temps.append(_TempOutput(self.out if not self.sharded else "%s-%05d" % (self.out, len(self.temps))))
        self.writer = sio.TFRecordWriter(self.temps[-1].tmp, _options(self.compression))
        self.records = self.bytes = 0

    def finish(self):
        if self.writer is None:
            self._next()  # an empty input still makes one (empty) file
        self.writer.close()
        names = [self.out] if not self.sharded else [
            "%s-%05d-of-%05d" % (self.out, i, len(self.temps)) for i in range(len(self.temps))]
        for temp, name in zip(self.temps, names):
            temp.path = name
            temp.commit()
        return names

    def discard(self):
        if self.writer is not None:
            self.writer.close()
        for temp in self.temps:
            temp.discard()


def _reshard(args, inputs, out):
    files = c.expand_inputs(inputs)
    max_bytes = _parse_size(args.bytes) if args.bytes is not None else None
    if args.records is not None and args.records <= 0:
        raise c.UsageError("--records must be > 0, got %d" % args.records)
    r = _Resharder(out, args.compression, args.records, max_bytes)
    names = [out] if not r.sharded else []
    for name in names:
        c.check_output_free(name, files, args.force)
    try:
        for path in files:
            for record in sio.tf_record_iterator(path, _options(c.compression_of(path, args.input_compression))):
                r.write(record)
        final = ["%s-%05d-of-%05d" % (out, i, len(r.temps)) for i in range(len(r.temps))] if r.sharded else names
        for name in final:
            c.check_output_free(name, files, args.force)
        names = r.finish()
    except errors.OpError as e:
        r.discard()
        c.eprint("sluice records: %s (nothing written)" % e.message)
        return c.EXIT_DATA
    except BaseException:
        r.discard()
        raise
    if not args.quiet:
        print("%d records from %d file%s -> %d file%s: %s" % (
            r.total, len(files), "" if len(files) == 1 else "s", len(names), "" if len(names) == 1 else "s",
            names[0] if len(names) == 1 else "%s ... %s" % (names[0], names[-1])))
    return c.EXIT_OK


def cmd_split(args):
    if args.records is None and args.bytes is None:
        raise c.UsageError("split needs --records N or --bytes SIZE")
    return _reshard(args, [args.input], args.output)


def cmd_merge(args):
    if len(args.paths) < 2:
        raise c.UsageError("merge needs at least one input and an output")
    return _reshard(args, args.paths[:-1], args.paths[-1])


# ---- index -----------------------------------------------------------------------------

def cmd_index(args):
    files = c.expand_inputs(args.files)
    for path in files:
        c.check_not_input(sio._core.record_index_path(path), files)

    def build(path):
        comp = c.compression_of(path, args.compression)
        try:
            index = sio.TFRecordIndex(path, _options(comp), use_cache=True)
            return path, len(index), index.index_path, None
        except errors.OpError as e:
            return path, 0, None, e.message

    status = c.EXIT_OK
    for path, n, index_path, error in _map_files(build, files, args.jobs):
        if error is not None:
            c.eprint("sluice records index: %s" % error)
            status = c.EXIT_DATA
        elif not args.quiet:
            print("%d\t%s\t-> %s" % (n, path, index_path))
    return status


# ---- schema ----------------------------------------------------------------------------

def cmd_schema(args):
    files = c.expand_inputs(args.files)
    schema = _examples.Schema()
    status = c.EXIT_OK
    for path in files:
        comp = c.compression_of(path, args.compression)
        before = schema.records
        try:
            for record in sio.tf_record_iterator(path, _options(comp)):
                if args.max_records is not None and schema.records >= args.max_records:
                    break
                schema.add(record)
        except errors.OpError as e:
            c.eprint("sluice records schema: %s" % _read_error(path, e, comp, schema.records - before))
            status = c.EXIT_DATA
    if not schema.records:
        c.eprint("sluice records schema: no records to describe")
        return c.EXIT_DATA
    if not (schema.examples or schema.sequence_examples):
        c.eprint("sluice records schema: none of the %d records is a tf.train.Example or SequenceExample"
                 % schema.records)
        return c.EXIT_DATA
    if args.json:
        doc = schema.to_json()
        doc["spec"] = schema.spec_source()
        c.print_json(doc, indent=2)
        return status
    kinds = "%d Examples" % schema.examples
    if schema.sequence_examples:
        kinds = "%d SequenceExamples" % schema.sequence_examples + (", " + kinds if schema.examples else "")
    print("%d records in %d file%s: %s%s" % (schema.records, len(files), "" if len(files) == 1 else "s", kinds,
                                           ", %d not Examples" % schema.other if schema.other else ""))
    _print_schema_table("context features" if schema.is_sequence else "features", schema.to_json()["features"])
    if schema.is_sequence:
        _print_schema_table("sequence features (values per step)", schema.to_json()["sequence_features"])
    print()
    print(schema.spec_source())
    return status


def _print_schema_table(title, entries):
    print()
    print("%s:" % title)
    width = max([len(e["name"]) for e in entries] + [4])
    print("  %-*s  %-10s  %9s  %10s" % (width, "name", "kind", "values", "present"))
    for e in entries:
        values = "-" if e["values_min"] is None else (
            "%d" % e["values_min"] if e["values_min"] == e["values_max"] else "%d..%d" % (e["values_min"],
                                                                                       e["values_max"]))
        print("  %-*s  %-10s  %9s  %10s" % (width, e["name"], e["kind"] or "(empty)", values,
                                           "%d/%d" % (e["present_in"], e["of"])))
