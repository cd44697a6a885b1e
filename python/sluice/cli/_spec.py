"""The pipeline spec of `sluice run`: a small TOML file, checked key by key,
with errors that name the line and say what was expected."""

import glob
import os

try:
    import tomllib
except ImportError:  # Python < 3.11
    import tomli as tomllib

from sluice.cli import _common as c

AUTOTUNE = -1
FORMS = ("dataset", "train")
DTYPES = ("string", "int64", "float32")
IMAGE_OPS = ("random_resized_crop", "decode")

# table -> {key: (checker name, default)}; None for the top level.
_SCHEMA = {
    None: {"form": ("form", "dataset"), "epochs": ("pos_int", 1)},
    "source": {"files": ("files", None), "compression": ("compression", "auto"),
               "shuffle_files": ("bool", False), "seed": ("int", 0)},
    "parse": None,  # feature name -> dtype or {dtype, shape, varlen, default}
    "image": {"feature": ("str", "image/encoded"), "op": ("image_op", "random_resized_crop"),
              "size": ("pos_int", 224), "flip": ("bool", True), "channels": ("pos_int", 3), "seed": ("int", 0)},
    "batch": {"size": ("pos_int", 32), "drop_remainder": ("bool", False), "shuffle_buffer": ("nonneg_int", 0)},
    "threads": {"parallel": ("autotune", AUTOTUNE), "prefetch": ("autotune", AUTOTUNE)},
}
_FEATURE_KEYS = ("dtype", "shape", "varlen", "default")


class SpecError(c.UsageError):
    pass


class Spec:
    """A checked spec: attributes per table (spec.batch["size"], spec.parse, ...)."""

    def __init__(self, path):
        self.path = path
        try:
            with open(path, "rb") as f:
                raw = f.read()
        except FileNotFoundError:
            raise c.UsageError("spec file %r does not exist" % path) from None
        except IsADirectoryError:
            raise c.UsageError("spec %r is a folder, not a file" % path) from None
        self.lines = raw.decode("utf-8", errors="replace").splitlines()
        try:
            doc = tomllib.loads(raw.decode("utf-8"))
        except UnicodeDecodeError as e:
            raise SpecError("%s: not UTF-8 text (%s)" % (path, e)) from None
        except tomllib.TOMLDecodeError as e:
            raise SpecError(self._toml_error(e)) from None
        self.folder = os.path.dirname(os.path.abspath(path))
        self._check(doc)

    # -- where things are ---------------------------------------------------------------

    def _toml_error(self, e):
        line = getattr(e, "lineno", None)
        msg = getattr(e, "msg", None) or str(e)
        if line is None:  # older tomllib: "... (at line 3, column 5)"
            import re
            m = re.search(r"at line (\d+)", str(e))
            line = int(m.group(1)) if m else (len(self.lines) if "end of document" in str(e) else None)
        msg = msg.split(" (at line")[0]
        return "%s:%s: not valid TOML: %s" % (self.path, line if line else "?", msg)

    def line_of(self, table, key=None):
        """1-based line of `key` in [table] (or of the table's header), None if not found."""
        start = 0
        if table is not None:
            start = None
            for i, text in enumerate(self.lines):
                if text.strip().replace(" ", "") == "[%s]" % table:
                    start = i
                    break
            if start is None:
                return None
            if key is None:
                return start + 1
            start += 1
        for i in range(start, len(self.lines)):
            text = self.lines[i].strip()
            if text.startswith("[") and i > start:
                break
            name = text.split("=", 1)[0].strip().strip("\"'")
            if "=" in text and name == key:
                return i + 1
        return None

    def error(self, table, key, what):
        line = self.line_of(table, key) or (self.line_of(table) if table else None)
        where = ("[%s] " % table if table else "") + (key if key else "")
        return SpecError("%s:%s: %s: %s" % (self.path, line or "?", where.strip(), what))

    # -- checks -------------------------------------------------------------------------

    def _check(self, doc):
        for key, value in doc.items():
            if isinstance(value, dict) and key in _SCHEMA and key is not None:
                continue
            if key not in _SCHEMA[None]:
                tables = ", ".join("[%s]" % t for t in _SCHEMA if t)
                raise self.error(None, key, "unknown key (expected form, epochs, or the tables %s)" % tables)
        top = {k: v for k, v in doc.items() if not isinstance(v, dict)}
        for name in [t for t in _SCHEMA if t]:
            if name in doc and not isinstance(doc[name], dict):
                raise self.error(None, name, "expected a table [%s]" % name)
        self.top = self._table(None, top)
        if "source" not in doc:
            raise SpecError("%s: missing table [source] (expected: [source] files = [\"data/*.tfrecord\"])"
                            % self.path)
        self.source = self._table("source", doc["source"])
        if self.source["files"] is None:
            raise self.error("source", None, "missing key files (a list of paths or globs)")
        self.parse = self._parse(doc.get("parse")) if "parse" in doc else None
        self.image = self._table("image", doc["image"]) if "image" in doc else None
        self.batch = self._table("batch", doc.get("batch", {}))
        self.threads = self._table("threads", doc.get("threads", {}))
        if self.image is not None:
            if self.parse is None:
                raise self.error("image", None, "needs a [parse] table with the image feature")
            if self.image["feature"] not in self.parse:
                raise self.error("image", "feature", "%r is not a feature of [parse] (features: %s)"
                                 % (self.image["feature"], ", ".join(sorted(self.parse))))
        self.files = self._expand(self.source["files"])

    def _table(self, name, values):
        schema = _SCHEMA[name]
        out = {}
        for key, value in values.items():
            if key not in schema:
                raise self.error(name, key, "unknown key (expected one of: %s)" % ", ".join(schema))
            out[key] = self._value(name, key, schema[key][0], value)
        for key, (_, default) in schema.items():
            out.setdefault(key, default)
        return out

    def _value(self, table, key, check, v):
        def bad(expected):
            return self.error(table, key, "expected %s, got %r" % (expected, v))
        if check == "bool":
            if not isinstance(v, bool):
                raise bad("true or false")
        elif check in ("int", "pos_int", "nonneg_int"):
            if isinstance(v, bool) or not isinstance(v, int):
                raise bad("an integer")
            if check == "pos_int" and v <= 0:
                raise bad("an integer > 0")
            if check == "nonneg_int" and v < 0:
                raise bad("an integer >= 0")
        elif check == "str":
            if not isinstance(v, str):
                raise bad("a string")
        elif check == "form":
            if v not in FORMS:
                raise bad("one of %s" % ", ".join('"%s"' % f for f in FORMS))
        elif check == "compression":
            if v not in c.COMPRESSIONS:
                raise bad("one of %s" % ", ".join('"%s"' % f for f in c.COMPRESSIONS))
        elif check == "image_op":
            if v not in IMAGE_OPS:
                raise bad("one of %s" % ", ".join('"%s"' % f for f in IMAGE_OPS))
        elif check == "autotune":
            if v == "AUTOTUNE":
                return AUTOTUNE
            if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
                raise bad('"AUTOTUNE" or an integer > 0')
        elif check == "files":
            if isinstance(v, str):
                v = [v]
            if not isinstance(v, list) or not v or not all(isinstance(f, str) for f in v):
                raise bad("a list of file paths or globs")
        return v

    def _parse(self, table):
        features = {}
        for name, value in table.items():
            if isinstance(value, str):
                value = {"dtype": value}
            if not isinstance(value, dict):
                raise self.error("parse", name, 'expected a dtype ("string", "int64", "float32") or a table '
                                 '{ dtype = ..., shape = [...], varlen = false }, got %r' % (value,))
            for k in value:
                if k not in _FEATURE_KEYS:
                    raise self.error("parse", name, "unknown field %r (expected: %s)" % (k, ", ".join(_FEATURE_KEYS)))
            dtype = value.get("dtype")
            if dtype not in DTYPES:
                raise self.error("parse", name, "dtype: expected one of %s, got %r"
                                 % (", ".join('"%s"' % d for d in DTYPES), dtype))
            shape = value.get("shape", [])
            if not isinstance(shape, list) or not all(isinstance(d, int) and not isinstance(d, bool) and d >= 0
                                                      for d in shape):
                raise self.error("parse", name, "shape: expected a list of sizes >= 0, got %r" % (shape,))
            varlen = value.get("varlen", False)
            if not isinstance(varlen, bool):
                raise self.error("parse", name, "varlen: expected true or false, got %r" % (varlen,))
            features[name] = {"dtype": dtype, "shape": shape, "varlen": varlen, "default": value.get("default")}
        if not features:
            raise self.error("parse", None, "no features (expected lines such as \"image/encoded\" = \"string\")")
        return features

    def _expand(self, patterns):
        files = []
        for pattern in patterns:
            full = pattern if os.path.isabs(pattern) else os.path.join(self.folder, pattern)
            matches = ([m for m in sorted(glob.glob(full)) if not m.endswith(c.INDEX_SUFFIX)] if glob.has_magic(full)
                       else [full] if os.path.isfile(full) else [])
            if not matches:
                raise self.error("source", "files", "no file matches %r (paths are relative to the spec's folder)"
                                 % pattern)
            files += [m for m in matches if m not in files]
        return files
