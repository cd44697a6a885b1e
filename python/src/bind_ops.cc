// Bindings of the ops layer, wrapped by sluice/_parsing.py (parse_*example,
// decode_csv/raw/compressed, string_split) and sluice/_example.py (Example
// serialisation):
//
//   _core.ExampleParser(spec)            ops::ExampleParser
//   _core.SequenceExampleParser(c, s)    ops::SequenceExampleParser
//   _core.decode_csv / decode_raw / decode_compressed / string_split(_v2)
//   _core.serialize_example / serialize_sequence_example / decode_feature
//
// Specs come from the Python layer as tuples, one per output (see SpecEntry).
// Results: dense outputs as numpy arrays (TensorToPython: zero-copy for
// numbers), SparseTensors as (indices, values, dense_shape) tuples and
// RaggedTensors as (values, [row_splits, ...]) tuples; the Python layer wraps
// the tuples in sluice.SparseTensor / RaggedTensor.
//
// GIL: batch parses, CSV decoding and decompression run without the GIL (the
// records are borrowed from bytes objects the call keeps alive, and bytes are
// immutable); results are converted, and errors raised, with it held again.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bind_common.h"
#include "sluice/core/dtype.h"
#include "sluice/core/shape.h"
#include "sluice/core/status.h"
#include "sluice/core/tensor.h"
#include "sluice/ops/composite_tensor.h"
#include "sluice/ops/decode_compressed.h"
#include "sluice/ops/decode_csv.h"
#include "sluice/ops/decode_raw.h"
#include "sluice/ops/example_builder.h"
#include "sluice/ops/example_view.h"
#include "sluice/ops/feature_spec.h"
#include "sluice/ops/parse_example.h"
#include "sluice/ops/parse_sequence_example.h"
#include "sluice/ops/string_split.h"

namespace sluice::python {
namespace {

using ops::FeatureKind;

// Below this many bytes a batch parse or decode keeps the GIL: releasing and
// retaking it would cost more than the work.
constexpr size_t kGilFreeBytes = 16 << 10;

// ---- arguments ----------------------------------------------------------------

std::string_view BytesView(nb::handle obj, const char* what) {
  PyObject* o = obj.ptr();
  if (!PyBytes_Check(o)) {
    throw nb::type_error((std::string(what) + " must be bytes, got " + Py_TYPE(o)->tp_name).c_str());
  }
  return std::string_view(PyBytes_AS_STRING(o), static_cast<size_t>(PyBytes_GET_SIZE(o)));
}

std::string Str(nb::handle obj) { return nb::cast<std::string>(obj); }

DType AsDType(nb::handle obj) { return static_cast<DType>(nb::cast<int>(obj)); }

TensorShape AsShape(nb::handle obj) {
  std::vector<int64_t> dims = nb::cast<std::vector<int64_t>>(obj);
  return TensorShape(std::span<const int64_t>(dims));
}

std::optional<Tensor> AsDefault(nb::handle obj, DType dtype) {
  if (obj.is_none()) return std::nullopt;
  return PythonToTensor(obj, dtype);
}

ops::RaggedPartition AsPartition(nb::handle obj) {
  nb::tuple t = nb::borrow<nb::tuple>(obj);
  const auto kind = static_cast<ops::RaggedPartition::Kind>(nb::cast<int>(t[0]));
  ops::RaggedPartition p;
  p.kind = kind;
  p.key = Str(t[1]);
  p.length = nb::cast<int64_t>(t[2]);
  return p;
}

// One spec entry: (kind, name, ...):
//   ("fixed", name, shape, dtype, default|None)
//   ("var", name, dtype)
//   ("fixed_seq", name, shape, dtype, allow_missing, default|None)
//   ("sparse", name, [index_key...], value_key, dtype, [size...], already_sorted)
//   ("ragged", name, dtype, value_key, [(partition_kind, key, length)...], row_splits_dtype)
// Defaults are numpy arrays of the dtype's storage (object arrays of bytes
// for strings), already checked by the Python layer.
std::pair<std::string, ops::FeatureConfig> AsConfig(nb::handle obj) {
  nb::tuple t = nb::borrow<nb::tuple>(obj);
  const std::string kind = Str(t[0]);
  std::string name = Str(t[1]);
  if (kind == "fixed") {
    const DType dtype = AsDType(t[3]);
    return {std::move(name), ops::FixedLenFeature(AsShape(t[2]), dtype, AsDefault(t[4], dtype))};
  }
  if (kind == "var") return {std::move(name), ops::VarLenFeature(AsDType(t[2]))};
  if (kind == "fixed_seq") {
    const DType dtype = AsDType(t[3]);
    return {std::move(name),
            ops::FixedLenSequenceFeature(AsShape(t[2]), dtype, nb::cast<bool>(t[4]), AsDefault(t[5], dtype))};
  }
  if (kind == "sparse") {
    return {std::move(name),
            ops::SparseFeature(nb::cast<std::vector<std::string>>(t[2]), Str(t[3]), AsDType(t[4]),
                               nb::cast<std::vector<int64_t>>(t[5]), nb::cast<bool>(t[6]))};
  }
  if (kind == "ragged") {
    std::vector<ops::RaggedPartition> partitions;
    for (nb::handle p : nb::borrow<nb::sequence>(t[4])) partitions.push_back(AsPartition(p));
    return {std::move(name), ops::RaggedFeature(AsDType(t[2]), Str(t[3]), std::move(partitions), AsDType(t[5]))};
  }
  throw nb::value_error(("unknown feature kind " + kind).c_str());
}

ops::FeatureSpec AsSpec(nb::handle entries) {
  ops::FeatureSpec spec;
  for (nb::handle e : nb::borrow<nb::sequence>(entries)) spec.insert(AsConfig(e));
  return spec;
}

// Borrowed views of a tuple of bytes (the tuple keeps them alive and cannot
// change), and their total size.
std::vector<std::string_view> RecordViews(const nb::tuple& records, size_t* total_bytes) {
  std::vector<std::string_view> views;
  views.reserve(records.size());
  *total_bytes = 0;
  for (nb::handle r : records) {
    views.push_back(BytesView(r, "serialized records"));
    *total_bytes += views.back().size();
  }
  return views;
}

std::vector<std::string> AsNames(const std::optional<std::vector<std::string>>& names) {
  return names ? *names : std::vector<std::string>();
}

// Runs `fn` without the GIL when the work is large enough to be worth it.
template <class F>
auto MaybeWithoutGil(size_t work_bytes, F&& fn) -> decltype(fn()) {
  if (work_bytes < kGilFreeBytes) return fn();
  GilRelease release;
  return fn();
}

// ---- results ------------------------------------------------------------------

nb::object SparseToPython(ops::SparseTensor s) {
  return nb::make_tuple(TensorToPython(std::move(s.indices)), TensorToPython(std::move(s.values)),
                        TensorToPython(std::move(s.dense_shape)));
}

nb::object RaggedToPython(ops::RaggedTensor r) {
  nb::list splits;
  for (Tensor& t : r.nested_row_splits) splits.append(TensorToPython(std::move(t)));
  return nb::make_tuple(TensorToPython(std::move(r.values)), splits);
}

nb::dict FeaturesToPython(ops::ParsedFeatures features) {
  nb::dict out;
  for (auto& [name, value] : features) {
    nb::str key(name.data(), name.size());
    if (auto* t = std::get_if<Tensor>(&value)) {
      out[key] = TensorToPython(std::move(*t));
    } else if (auto* s = std::get_if<ops::SparseTensor>(&value)) {
      out[key] = SparseToPython(std::move(*s));
    } else {
      out[key] = RaggedToPython(std::move(std::get<ops::RaggedTensor>(value)));
    }
  }
  return out;
}

nb::tuple SequenceToPython(ops::ParsedSequenceExample parsed) {
  nb::dict lengths;
  for (auto& [name, t] : parsed.lengths) lengths[nb::str(name.data(), name.size())] = TensorToPython(std::move(t));
  return nb::make_tuple(FeaturesToPython(std::move(parsed.context)),
                        FeaturesToPython(std::move(parsed.feature_lists)), lengths);
}

// ---- parsers --------------------------------------------------------------------

struct ExampleParserHandle {
  explicit ExampleParserHandle(nb::handle spec)
      : parser(ValueOrThrow(ops::ExampleParser::Create(AsSpec(spec)))) {}
  ops::ExampleParser parser;
};

nb::dict ParseSingle(const ExampleParserHandle& h, nb::bytes serialized) {
  std::string_view record(serialized.c_str(), serialized.size());
  Result<ops::ParsedFeatures> parsed =
      MaybeWithoutGil(record.size(), [&] { return h.parser.ParseSingle(record); });
  return FeaturesToPython(ValueOrThrow(std::move(parsed)));
}

nb::dict ParseBatch(const ExampleParserHandle& h, nb::tuple serialized,
                    const std::optional<std::vector<std::string>>& names) {
  size_t total = 0;
  const std::vector<std::string_view> records = RecordViews(serialized, &total);
  const std::vector<std::string> record_names = AsNames(names);
  Result<ops::ParsedFeatures> parsed =
      MaybeWithoutGil(total, [&] { return h.parser.Parse(records, record_names); });
  return FeaturesToPython(ValueOrThrow(std::move(parsed)));
}

struct SequenceParserHandle {
  SequenceParserHandle(nb::handle context, nb::handle sequence)
      : parser(ValueOrThrow(ops::SequenceExampleParser::Create(AsSpec(context), AsSpec(sequence)))) {}
  ops::SequenceExampleParser parser;
};

nb::tuple ParseSequenceSingle(const SequenceParserHandle& h, nb::bytes serialized) {
  std::string_view record(serialized.c_str(), serialized.size());
  Result<ops::ParsedSequenceExample> parsed =
      MaybeWithoutGil(record.size(), [&] { return h.parser.ParseSingle(record); });
  return SequenceToPython(ValueOrThrow(std::move(parsed)));
}

nb::tuple ParseSequenceBatch(const SequenceParserHandle& h, nb::tuple serialized,
                             const std::optional<std::vector<std::string>>& names) {
  size_t total = 0;
  const std::vector<std::string_view> records = RecordViews(serialized, &total);
  const std::vector<std::string> record_names = AsNames(names);
  Result<ops::ParsedSequenceExample> parsed =
      MaybeWithoutGil(total, [&] { return h.parser.Parse(records, record_names); });
  return SequenceToPython(ValueOrThrow(std::move(parsed)));
}

// ---- decoders ----------------------------------------------------------------------

size_t StringBytes(const Tensor& t) {
  size_t n = 0;
  for (const std::string& s : t.flat<std::string>()) n += s.size();
  return n;
}

// record_defaults: [(dtype, default array or None)].
nb::list DecodeCsv(nb::handle records, nb::handle record_defaults, const std::string& field_delim,
                   bool use_quote_delim, const std::string& na_value, const std::vector<int64_t>& select_cols) {
  const Tensor input = PythonToTensor(records, DType::kString);
  std::vector<Tensor> defaults;
  for (nb::handle d : nb::borrow<nb::sequence>(record_defaults)) {
    nb::tuple t = nb::borrow<nb::tuple>(d);
    const DType dtype = AsDType(t[0]);
    defaults.push_back(t[1].is_none() ? Tensor(dtype, TensorShape({0})) : PythonToTensor(t[1], dtype));
  }
  ops::DecodeCSVOptions options;
  options.field_delim = field_delim;
  options.use_quote_delim = use_quote_delim;
  options.na_value = na_value;
  options.select_cols = select_cols;
  Result<std::vector<Tensor>> columns =
      MaybeWithoutGil(StringBytes(input), [&] { return ops::DecodeCSV(input, defaults, options); });
  nb::list out;
  for (Tensor& t : ValueOrThrow(std::move(columns))) out.append(TensorToPython(std::move(t)));
  return out;
}

nb::object DecodeRaw(nb::handle bytes, int out_type, bool little_endian, std::optional<int64_t> fixed_length) {
  const Tensor input = PythonToTensor(bytes, DType::kString);
  return TensorToPython(ValueOrThrow(ops::DecodeRaw(input, static_cast<DType>(out_type), little_endian, fixed_length)));
}

nb::object DecodeCompressed(nb::handle bytes, const std::string& compression_type) {
  const Tensor input = PythonToTensor(bytes, DType::kString);
  Result<Tensor> out =
      MaybeWithoutGil(StringBytes(input), [&] { return ops::DecodeCompressed(input, compression_type); });
  return TensorToPython(ValueOrThrow(std::move(out)));
}

nb::object StringSplit(nb::handle strings, const std::string& delimiter, bool skip_empty) {
  return SparseToPython(ValueOrThrow(ops::StringSplit(PythonToTensor(strings, DType::kString), delimiter, skip_empty)));
}

nb::object StringSplitV2(nb::handle strings, const std::string& sep, int64_t maxsplit) {
  return SparseToPython(ValueOrThrow(ops::StringSplitV2(PythonToTensor(strings, DType::kString), sep, maxsplit)));
}

// ---- serialisation ---------------------------------------------------------------------

// A FeatureData of `dtype` values from a 1-D numpy array: read in place when
// it is a C-contiguous array of exactly that dtype (what the Python layer
// passes), else copied through the buffer protocol first.
template <class T>
ops::FeatureData FromArray(nb::handle values, DType dtype, ops::FeatureData (*make)(std::span<const T>)) {
  ContiguousArray array;
  if (AsContiguousArray(values.ptr(), NumpyStorageDescr(dtype), &array) && array.ndim == 1) {
    return make(std::span<const T>(static_cast<const T*>(array.data), static_cast<size_t>(array.dims[0])));
  }
  const Tensor t = PythonToTensor(values, dtype);
  if (t.rank() != 1) throw nb::type_error("feature values must be a 1-D array");
  return make(std::span<const T>(t.data<T>(), static_cast<size_t>(t.num_elements())));
}

// A FeatureData from a list of Python ints (kInt64) or numbers (kFloat,
// rounded to float32), read without building a numpy array. TypeError or
// OverflowError for an item that is not one.
ops::FeatureData FromList(nb::handle list, FeatureKind kind) {
  PyObject* seq = list.ptr();
  const Py_ssize_t n = PyList_GET_SIZE(seq);
  if (kind == FeatureKind::kInt64) {
    std::vector<int64_t> v(static_cast<size_t>(n));
    for (Py_ssize_t i = 0; i < n; ++i) {
      v[static_cast<size_t>(i)] = PyLong_AsLongLong(PyList_GET_ITEM(seq, i));
      if (v[static_cast<size_t>(i)] == -1 && PyErr_Occurred()) throw nb::python_error();
    }
    return ops::FeatureData::Int64s(v);
  }
  std::vector<float> v(static_cast<size_t>(n));
  for (Py_ssize_t i = 0; i < n; ++i) {
    const double x = PyFloat_AsDouble(PyList_GET_ITEM(seq, i));
    if (x == -1.0 && PyErr_Occurred()) throw nb::python_error();
    v[static_cast<size_t>(i)] = static_cast<float>(x);
  }
  return ops::FeatureData::Floats(v);
}

// (kind, values): kind is FeatureKind's number; values a 1-D int64 / float32
// numpy array or a list of Python numbers (kInt64, kFloat), a list of bytes
// (kBytes), or None (kNone).
ops::FeatureData AsFeature(nb::handle kind_obj, nb::handle values) {
  const auto kind = static_cast<FeatureKind>(nb::cast<int>(kind_obj));
  if ((kind == FeatureKind::kInt64 || kind == FeatureKind::kFloat) && PyList_Check(values.ptr())) {
    return FromList(values, kind);
  }
  switch (kind) {
    case FeatureKind::kNone:
      return ops::FeatureData();
    case FeatureKind::kInt64:
      return FromArray<int64_t>(values, DType::kInt64, &ops::FeatureData::Int64s);
    case FeatureKind::kFloat:
      return FromArray<float>(values, DType::kFloat32, &ops::FeatureData::Floats);
    case FeatureKind::kBytes: {
      std::vector<std::string_view> views;
      nb::sequence seq = nb::borrow<nb::sequence>(values);
      views.reserve(nb::len(seq));
      for (nb::handle v : seq) views.push_back(BytesView(v, "BytesList values"));
      return ops::FeatureData::Bytes(views);
    }
  }
  throw nb::value_error("invalid feature kind");
}

// items: [(key, kind, values)].
void FillFeatures(nb::handle items, ops::FeaturesBuilder* out) {
  for (nb::handle item : nb::borrow<nb::sequence>(items)) {
    nb::tuple t = nb::borrow<nb::tuple>(item);
    out->Add(Str(t[0]), AsFeature(t[1], t[2]));
  }
}

nb::bytes ToBytes(const std::string& s) { return nb::bytes(s.data(), s.size()); }

nb::bytes SerializeExample(nb::handle items, bool write_empty_features) {
  ops::ExampleBuilder b;
  b.set_write_empty_features(write_empty_features);
  FillFeatures(items, &b.features());
  return ToBytes(b.Serialize());
}

// rows: [(kind, values)].
void FillFeatureList(nb::handle rows, ops::FeatureListBuilder* out) {
  for (nb::handle row : nb::borrow<nb::sequence>(rows)) {
    nb::tuple r = nb::borrow<nb::tuple>(row);
    out->Add(AsFeature(r[0], r[1]));
  }
}

// context: items or None (absent); feature_lists: [(key, [(kind, values)])]
// or None (absent).
nb::bytes SerializeSequenceExample(nb::handle context, nb::handle feature_lists) {
  ops::SequenceExampleBuilder b;
  if (!context.is_none()) {
    b.set_write_empty_context(true);
    FillFeatures(context, &b.context());
  }
  if (!feature_lists.is_none()) {
    b.set_write_empty_feature_lists(true);
    for (nb::handle entry : nb::borrow<nb::sequence>(feature_lists)) {
      nb::tuple t = nb::borrow<nb::tuple>(entry);
      ops::FeatureListBuilder& list = b.feature_list(Str(t[0]));
      list.Clear();  // a repeated key keeps its last list, as a dict would
      FillFeatureList(t[1], &list);
    }
  }
  return ToBytes(b.Serialize());
}

nb::bytes SerializeFeature(nb::handle kind, nb::handle values) {
  std::string out;
  AsFeature(kind, values).AppendTo(&out);
  return ToBytes(out);
}

nb::bytes SerializeFeatures(nb::handle items) {
  ops::FeaturesBuilder b;
  FillFeatures(items, &b);
  std::string out;
  b.AppendTo(&out);
  return ToBytes(out);
}

nb::bytes SerializeFeatureList(nb::handle rows) {
  ops::FeatureListBuilder b;
  FillFeatureList(rows, &b);
  std::string out;
  b.AppendTo(&out);
  return ToBytes(out);
}

// The FeatureLists message body: a SequenceExample holding only feature
// lists, without field 2's tag and length.
nb::bytes SerializeFeatureLists(nb::handle entries) {
  nb::bytes seq = SerializeSequenceExample(nb::none(), entries);
  std::string_view s(seq.c_str(), seq.size());
  size_t pos = 1;  // the one-byte tag, then a varint length
  while (pos < s.size() && (static_cast<uint8_t>(s[pos]) & 0x80) != 0) ++pos;
  s.remove_prefix(pos + 1);
  return nb::bytes(s.data(), s.size());
}

// A serialized tf.train.Feature -> (kind, values): int64 / float32 numpy
// arrays, a list of bytes, or None for a Feature with no list.
nb::tuple DecodeFeature(nb::bytes serialized) {
  Result<ops::FeatureView> view = ops::FeatureView::Parse(std::string_view(serialized.c_str(), serialized.size()));
  const ops::FeatureView& f = ValueOrThrow(std::move(view));
  const int kind = static_cast<int>(f.kind());
  switch (f.kind()) {
    case FeatureKind::kNone:
      return nb::make_tuple(kind, nb::none());
    case FeatureKind::kInt64: {
      std::vector<int64_t> v;
      ThrowIfError(f.AppendInt64s(&v));
      return nb::make_tuple(kind, TensorToPython(Tensor::FromVector(v)));
    }
    case FeatureKind::kFloat: {
      std::vector<float> v;
      ThrowIfError(f.AppendFloats(&v));
      return nb::make_tuple(kind, TensorToPython(Tensor::FromVector(v)));
    }
    case FeatureKind::kBytes: {
      std::vector<std::string_view> v;
      ThrowIfError(f.AppendBytes(&v));
      nb::list out;
      for (std::string_view s : v) out.append(nb::bytes(s.data(), s.size()));
      return nb::make_tuple(kind, out);
    }
  }
  throw nb::value_error("invalid feature kind");
}

}  // namespace

ops::ExampleParser ExampleParserOf(nb::handle parser) {
  return nb::cast<const ExampleParserHandle&>(parser).parser;
}

void BindOps(nb::module_& m) {
  nb::class_<ExampleParserHandle>(m, "ExampleParser",
                                  "A validated Example feature spec (ops::ExampleParser). Thread-safe.")
      .def(nb::init<nb::handle>(), nb::arg("spec"))
      .def("parse_single", &ParseSingle, nb::arg("serialized"))
      .def("parse", &ParseBatch, nb::arg("serialized"), nb::arg("names") = nb::none());
  nb::class_<SequenceParserHandle>(m, "SequenceExampleParser",
                                   "Validated SequenceExample specs (ops::SequenceExampleParser). Thread-safe.")
      .def(nb::init<nb::handle, nb::handle>(), nb::arg("context_spec"), nb::arg("sequence_spec"))
      .def("parse_single", &ParseSequenceSingle, nb::arg("serialized"))
      .def("parse", &ParseSequenceBatch, nb::arg("serialized"), nb::arg("names") = nb::none());

  m.def("decode_csv", &DecodeCsv, nb::arg("records"), nb::arg("record_defaults"), nb::arg("field_delim"),
        nb::arg("use_quote_delim"), nb::arg("na_value"), nb::arg("select_cols"));
  m.def("decode_raw", &DecodeRaw, nb::arg("bytes"), nb::arg("out_type"), nb::arg("little_endian"),
        nb::arg("fixed_length") = nb::none());
  m.def("decode_compressed", &DecodeCompressed, nb::arg("bytes"), nb::arg("compression_type"));
  m.def("string_split", &StringSplit, nb::arg("strings"), nb::arg("delimiter"), nb::arg("skip_empty"));
  m.def("string_split_v2", &StringSplitV2, nb::arg("strings"), nb::arg("sep"), nb::arg("maxsplit"));

  m.def("serialize_example", &SerializeExample, nb::arg("items"), nb::arg("write_empty_features") = true);
  m.def("serialize_sequence_example", &SerializeSequenceExample, nb::arg("context").none(),
        nb::arg("feature_lists").none());
  m.def("serialize_feature", &SerializeFeature, nb::arg("kind"), nb::arg("values").none());
  m.def("serialize_features", &SerializeFeatures, nb::arg("items"));
  m.def("serialize_feature_list", &SerializeFeatureList, nb::arg("rows"));
  m.def("serialize_feature_lists", &SerializeFeatureLists, nb::arg("entries"));
  m.def("decode_feature", &DecodeFeature, nb::arg("serialized"));
}

}  // namespace sluice::python
