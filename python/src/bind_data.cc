// sluice._core.data: the tf.data engine (sluice::data) for sluice/data.py.
//
//   _core.data.Dataset        a data::DatasetPtr (element_spec, cardinality, make_iterator)
//   _core.data.Iterator       one pass; next() -> list of numpy arrays, or None at the end
//   _core.data.range/...      the sources and transformations of datasets.h
//   _core.data.map_py/...     Python functions as map, filter and interleave functions
//   _core.data.map_parse_example/...  the native map functions of map_ops.h
//
// Threads: next() runs GetNext without the GIL, its waits answering Ctrl-C
// (bind_data_pass.h). Python functions run on the iterator's worker threads
// (or the consumer's, for a sequential map), each
// call taking the GIL; an exception becomes the element's error status (an
// OpError keeps its code, anything else is Unknown) and so reaches the
// caller at that element. Closing an iterator releases the GIL, then cancels
// and joins its workers (which may need the GIL to finish a Python call); an
// atexit hook closes the iterators still alive when the interpreter exits.
#include <nanobind/nanobind.h>
#if defined(__GLIBCXX__)
#include <cxxabi.h>  // abi::__forced_unwind
#endif
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <set>
#include <thread>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bind_common.h"
#include "bind_data.h"
#include "bind_data_pass.h"
#include "bind_data_autotune.h"
#include "bind_data_native_ops.h"
#include "sluice/core/mutex.h"
#include "sluice/data/datasets.h"
#include "sluice/data/map_ops.h"
#include "sluice/image/random_resized_crop.h"
#include "sluice/image/resize.h"
#include "sluice/ops/parse_example.h"

namespace sluice::python {

using data::DatasetPtr;

bool InterpreterFinalizing() {
#if PY_VERSION_HEX >= 0x030D0000
  return !Py_IsInitialized() || Py_IsFinalizing();
#else
  return !Py_IsInitialized() || _Py_IsFinalizing();
#endif
}

namespace {

// The live iterators, so that an atexit hook can stop their threads while
// the interpreter still runs (a worker may need the GIL to finish a call).
Mutex g_iterators_mu;
std::set<DataIteratorHandle*> g_iterators SLUICE_GUARDED_BY(g_iterators_mu);

// The atexit hook: closes every live iterator (cancels and joins its
// threads) before the interpreter finalizes. REQUIRES: the GIL is held.
void CloseAllIterators() {
  std::vector<DataIteratorHandle*> live;
  {
    MutexLock lock(&g_iterators_mu);
    live.assign(g_iterators.begin(), g_iterators.end());
  }
  for (DataIteratorHandle* h : live) h->Close();
}

}  // namespace

DataIteratorHandle::DataIteratorHandle(std::unique_ptr<DataPass> pass) : it(std::move(pass)) {
  MutexLock lock(&g_iterators_mu);
  g_iterators.insert(this);
}

DataIteratorHandle::~DataIteratorHandle() {
  {
    MutexLock lock(&g_iterators_mu);
    g_iterators.erase(this);
  }
  Close();
}

void DataIteratorHandle::Close() {
  if (!it) return;
  if (InterpreterFinalizing()) {
    (void)it.release();  // the process is ending; a worker may hold the GIL for ever
    return;
  }
  GilRelease release;
  it.reset();
}

// The status of the Python exception being handled. REQUIRES: the GIL.
Status StatusOfPythonError(nb::python_error& e) {
  nb::object value = nb::borrow(e.value());
  Code code = Code::kUnknown;
  if (nb::hasattr(value, "error_code")) {
    try {
      code = static_cast<Code>(nb::cast<int>(value.attr("error_code")));
    } catch (...) {
    }
  }
  std::string message = e.what();
  if (nb::hasattr(value, "message")) {
    try {
      message = nb::cast<std::string>(value.attr("message"));
    } catch (...) {
    }
  }
  return Status(code == Code::kOk ? Code::kUnknown : code, message);
}

// fn returns (values, dtype numbers), each value already converted to its
// dtype's storage by the Python layer.
Result<Element> ElementFromPython(nb::handle result) {
  nb::tuple pair = nb::cast<nb::tuple>(result);
  std::vector<DType> dtypes;
  for (nb::handle d : nb::cast<nb::list>(pair[1])) dtypes.push_back(static_cast<DType>(nb::cast<int>(d)));
  return PythonToElement(pair[0], dtypes);
}

data::ElementSpec SpecOf(const std::vector<int>& dtypes, const std::vector<std::optional<std::vector<int64_t>>>& shapes,
                   std::vector<std::string> names) {
  data::ElementSpec spec;
  for (size_t i = 0; i < dtypes.size(); ++i) {
    spec.dtypes.push_back(static_cast<DType>(dtypes[i]));
    spec.shapes.push_back(i < shapes.size() && shapes[i] ? PartialShape(*shapes[i]) : PartialShape());
  }
  spec.names = std::move(names);
  return spec;
}

// None -> nullopt (top-level std::optional arguments would need nb::arg().none()).
std::optional<int64_t> OptInt(nb::handle h) {
  if (h.is_none()) return std::nullopt;
  return nb::cast<int64_t>(h);
}

std::vector<DType> DTypesOf(const std::vector<int>& numbers) {
  std::vector<DType> out;
  for (int t : numbers) out.push_back(static_cast<DType>(t));
  return out;
}

DataDatasetHandle Wrap(Result<DatasetPtr> r) { return DataDatasetHandle{ValueOrThrow(std::move(r))}; }

nb::object NextOrNone(data::IteratorBase* it) {
  if (it == nullptr) throw nb::value_error("the iterator is closed");
  Element e;
  bool end = false;
  Status s;
  {
    GilRelease release;
    s = it->GetNext(&e, &end);
  }
  ThrowIfError(s);
  if (end) return nb::none();
  return ElementToPython(std::move(e));
}

namespace {

std::vector<DatasetPtr> Unwrap(const std::vector<const DataDatasetHandle*>& handles) {
  std::vector<DatasetPtr> out;
  for (const DataDatasetHandle* h : handles) out.push_back(h->ds);
  return out;
}

data::MapOptions MapOptionsOf(std::optional<int64_t> num_parallel_calls, std::optional<bool> deterministic) {
  return data::MapOptions{.num_parallel_calls = num_parallel_calls, .deterministic = deterministic};
}

}  // namespace

nb::tuple SpecToPython(const data::ElementSpec& spec) {
  nb::list dtypes, shapes;
  for (size_t i = 0; i < spec.size(); ++i) {
    dtypes.append(static_cast<int>(spec.dtypes[i]));
    if (spec.shapes[i].rank_known()) {
      shapes.append(nb::cast(spec.shapes[i].dims()));
    } else {
      shapes.append(nb::none());
    }
  }
  return nb::make_tuple(dtypes, shapes, nb::cast(spec.names));
}

namespace {

data::RecordDatasetOptions RecordOptions(const std::string& compression_type, int64_t buffer_size,
                                         std::optional<int64_t> num_parallel_reads) {
  return data::RecordDatasetOptions{compression_type, buffer_size, num_parallel_reads};
}

DataDatasetHandle MapNative(const DataDatasetHandle& in, Result<data::NativeMap> map, std::optional<int64_t> npc,
                        std::optional<bool> deterministic) {
  data::NativeMap m = ValueOrThrow(std::move(map));
  return Wrap(data::MapWithIndex(in.ds, std::move(m.fn), std::move(m.spec), MapOptionsOf(npc, deterministic)));
}

// Dataset.from_generator on data::FromProbeAwareGenerator: make(probe)
// (Python, with the GIL) returns a step callable per iterator; each step()
// returns (values, dtypes), or None at the end. Unknown cardinality.
Result<DatasetPtr> PyFromGenerator(std::shared_ptr<DataPyFn> make, data::ElementSpec spec) {
  data::ProbeAwareGeneratorFactory factory = [make](bool probe) -> Result<data::GeneratorFn> {
    Result<std::shared_ptr<DataPyFn>> step = WithGil<std::shared_ptr<DataPyFn>>(
        [&]() -> Result<std::shared_ptr<DataPyFn>> { return std::make_shared<DataPyFn>(make->get()(probe)); });
    if (!step.ok()) return step.status();
    return data::GeneratorFn([step = std::move(*step)]() {
      return CallPython<std::optional<Element>>(*step, Element{}, [](nb::handle r) -> Result<std::optional<Element>> {
        if (r.is_none()) return std::optional<Element>();
        Result<Element> e = ElementFromPython(r);
        if (!e.ok()) return e.status();
        return std::optional<Element>(std::move(*e));
      });
    });
  };
  return data::FromProbeAwareGenerator(std::move(factory), std::move(spec));
}

void BindSources(nb::module_& d) {
  d.def("range", [](int64_t start, int64_t stop, int64_t step, int dtype) {
    return Wrap(data::Range(start, stop, step, static_cast<DType>(dtype)));
  });
  d.def("from_tensors", [](nb::handle values, const std::vector<int>& dtypes, std::vector<std::string> names) {
    return Wrap(data::FromTensors(PythonToElement(values, DTypesOf(dtypes)), std::move(names)));
  });
  d.def("from_tensor_slices", [](nb::handle values, const std::vector<int>& dtypes, std::vector<std::string> names) {
    return Wrap(data::FromTensorSlices(PythonToElement(values, DTypesOf(dtypes)), std::move(names)));
  });
  d.def("from_generator", [](nb::handle make, const std::vector<int>& dtypes,
                             const std::vector<std::optional<std::vector<int64_t>>>& shapes) {
    return Wrap(PyFromGenerator(std::make_shared<DataPyFn>(make), SpecOf(dtypes, shapes, {})));
  });
  d.def("tfrecord", [](std::vector<std::string> files, const std::string& compression, int64_t buffer_size,
                       nb::handle npr_obj) {
    return Wrap(data::TFRecordDataset(std::move(files), RecordOptions(compression, buffer_size, OptInt(npr_obj))));
  }, nb::arg("filenames"), nb::arg("compression_type"), nb::arg("buffer_size"), nb::arg("num_parallel_reads").none());
  d.def("text_line", [](std::vector<std::string> files, const std::string& compression, int64_t buffer_size,
                        nb::handle npr_obj) {
    return Wrap(data::TextLineDataset(std::move(files), RecordOptions(compression, buffer_size, OptInt(npr_obj))));
  }, nb::arg("filenames"), nb::arg("compression_type"), nb::arg("buffer_size"), nb::arg("num_parallel_reads").none());
  d.def("fixed_length", [](std::vector<std::string> files, int64_t record_bytes, int64_t header_bytes,
                           int64_t footer_bytes, const std::string& compression, int64_t buffer_size,
                           nb::handle npr_obj) {
    return Wrap(data::FixedLengthRecordDataset(
        std::move(files), data::FixedLengthOptions{record_bytes, header_bytes, footer_bytes},
        RecordOptions(compression, buffer_size, OptInt(npr_obj))));
  }, nb::arg("filenames"), nb::arg("record_bytes"), nb::arg("header_bytes"), nb::arg("footer_bytes"), nb::arg("compression_type"), nb::arg("buffer_size"), nb::arg("num_parallel_reads").none());
}

void BindTransformations(nb::module_& d) {
  d.def("batch", [](const DataDatasetHandle& in, int64_t n, bool drop) { return Wrap(data::Batch(in.ds, n, drop)); });
  d.def("padded_batch", [](const DataDatasetHandle& in, int64_t n,
                           nb::handle shapes_obj,
                           nb::handle padding_values, const std::vector<int>& dtypes, bool drop) {
    std::vector<PartialShape> padded;
    if (!shapes_obj.is_none()) {
      for (nb::handle s : shapes_obj) {
        padded.push_back(s.is_none() ? PartialShape() : PartialShape(nb::cast<std::vector<int64_t>>(s)));
      }
    }
    Element values;
    if (!padding_values.is_none()) {
      values = PythonToElement(padding_values, DTypesOf(dtypes));
    }
    return Wrap(data::PaddedBatch(in.ds, n, std::move(padded), std::move(values), drop));
  }, nb::arg("dataset"), nb::arg("batch_size"), nb::arg("padded_shapes").none(), nb::arg("padding_values").none(), nb::arg("dtypes"), nb::arg("drop_remainder"));
  d.def("unbatch", [](const DataDatasetHandle& in) { return Wrap(data::Unbatch(in.ds)); });
  d.def("shuffle", [](const DataDatasetHandle& in, int64_t n, int64_t seed, int64_t seed2, bool reshuffle) {
    return Wrap(data::Shuffle(in.ds, n, seed, seed2, reshuffle));
  });
  d.def("prefetch", [](const DataDatasetHandle& in, int64_t n) { return Wrap(data::Prefetch(in.ds, n)); });
  d.def("repeat", [](const DataDatasetHandle& in, int64_t n) { return Wrap(data::Repeat(in.ds, n)); });
  d.def("take", [](const DataDatasetHandle& in, int64_t n) { return Wrap(data::Take(in.ds, n)); });
  d.def("skip", [](const DataDatasetHandle& in, int64_t n) { return Wrap(data::Skip(in.ds, n)); });
  d.def("shard", [](const DataDatasetHandle& in, int64_t n, int64_t i) { return Wrap(data::Shard(in.ds, n, i)); });
  d.def("zip", [](const std::vector<const DataDatasetHandle*>& ins) { return Wrap(data::Zip(Unwrap(ins))); });
  d.def("concatenate",
        [](const DataDatasetHandle& a, const DataDatasetHandle& b) { return Wrap(data::Concatenate(a.ds, b.ds)); });
  d.def("enumerate", [](const DataDatasetHandle& in, int64_t start) { return Wrap(data::Enumerate(in.ds, start)); });
  d.def("cache", [](const DataDatasetHandle& in) { return Wrap(data::Cache(in.ds)); });
}

void BindPythonFunctions(nb::module_& d) {
  // fn(components) -> (values, dtypes); out_* the output signature (dtype 0: unknown).
  d.def("map_py", [](const DataDatasetHandle& in, nb::handle fn, const std::vector<int>& out_dtypes,
                     const std::vector<std::optional<std::vector<int64_t>>>& out_shapes,
                     nb::handle npc_obj, std::optional<bool> deterministic) {
    auto ref = std::make_shared<DataPyFn>(fn);
    data::MapFn f = [ref](Element e) { return CallPython<Element>(*ref, std::move(e), ElementFromPython); };
    return Wrap(data::Map(in.ds, std::move(f), SpecOf(out_dtypes, out_shapes, {}), MapOptionsOf(OptInt(npc_obj), deterministic)));
  }, nb::arg("dataset"), nb::arg("fn"), nb::arg("out_dtypes"), nb::arg("out_shapes"), nb::arg("num_parallel_calls").none(), nb::arg("deterministic").none());
  d.def("filter_py", [](const DataDatasetHandle& in, nb::handle fn) {
    auto ref = std::make_shared<DataPyFn>(fn);
    data::PredicateFn f = [ref](const Element& e) {
      return CallPython<bool>(*ref, e, [](nb::handle r) -> Result<bool> { return nb::cast<bool>(r); });
    };
    return Wrap(data::Filter(in.ds, std::move(f)));
  });
  // fn(components) -> a _core.data.Dataset.
  d.def("interleave_py", [](const DataDatasetHandle& in, nb::handle fn, const std::vector<int>& out_dtypes,
                            const std::vector<std::optional<std::vector<int64_t>>>& out_shapes, int64_t cycle_length,
                            int64_t block_length, nb::handle npc_obj, std::optional<bool> deterministic) {
    auto ref = std::make_shared<DataPyFn>(fn);
    data::InterleaveFn f = [ref](Element e) {
      return CallPython<DatasetPtr>(*ref, std::move(e), [](nb::handle r) -> Result<DatasetPtr> {
        return nb::cast<const DataDatasetHandle&>(r).ds;
      });
    };
    return Wrap(data::Interleave(in.ds, std::move(f), SpecOf(out_dtypes, out_shapes, {}),
                                 data::InterleaveOptions{cycle_length, block_length, OptInt(npc_obj), deterministic}));
  }, nb::arg("dataset"), nb::arg("fn"), nb::arg("out_dtypes"), nb::arg("out_shapes"), nb::arg("cycle_length"), nb::arg("block_length"), nb::arg("num_parallel_calls").none(), nb::arg("deterministic").none());
}

void BindNativeMaps(nb::module_& d) {
  d.def("map_parse_example", [](const DataDatasetHandle& in, nb::handle parser, int value_index,
                                nb::handle npc_obj, std::optional<bool> deterministic) {
    return MapNative(in, data::ParseExampleMap(in.ds->element_spec(), ExampleParserOf(parser), value_index), OptInt(npc_obj), deterministic);
  }, nb::arg("dataset"), nb::arg("parser"), nb::arg("value_index"), nb::arg("num_parallel_calls").none(), nb::arg("deterministic").none());
  d.def("map_decode_jpeg", [](const DataDatasetHandle& in, int component, int channels, int ratio, bool fancy_upscaling,
                              bool try_recover_truncated, float acceptable_fraction, const std::string& dct_method,
                              nb::handle npc_obj, std::optional<bool> deterministic) {
    image::DecodeJpegOptions o;
    o.channels = channels;
    o.ratio = ratio;
    o.fancy_upscaling = fancy_upscaling;
    o.try_recover_truncated = try_recover_truncated;
    o.acceptable_fraction = acceptable_fraction;
    o.dct_method = dct_method;
    return MapNative(in, data::DecodeJpegMap(in.ds->element_spec(), component, o), OptInt(npc_obj), deterministic);
  }, nb::arg("dataset"), nb::arg("component"), nb::arg("channels"), nb::arg("ratio"), nb::arg("fancy_upscaling"), nb::arg("try_recover_truncated"), nb::arg("acceptable_fraction"), nb::arg("dct_method"), nb::arg("num_parallel_calls").none(), nb::arg("deterministic").none());
  // `options`: a _core.RandomResizedCropOptions (bind_crop_options.cc).
  d.def("map_random_resized_crop", [](const DataDatasetHandle& in, int component,
                                      const image::RandomResizedCropOptions& options, uint64_t seed,
                                      nb::handle npc_obj, std::optional<bool> deterministic) {
    return MapNative(in, data::RandomResizedCropMap(in.ds->element_spec(), component, options, seed), OptInt(npc_obj), deterministic);
  }, nb::arg("dataset"), nb::arg("component"), nb::arg("options"), nb::arg("seed"), nb::arg("num_parallel_calls").none(), nb::arg("deterministic").none());
}

}  // namespace

void BindData(nb::module_& m) {
  nb::module_ d = m.def_submodule("data", "sluice::data, the tf.data engine (see sluice/data.py).");
  nb::class_<DataDatasetHandle>(d, "Dataset", "An immutable dataset (data::DatasetBase). Thread-safe.")
      .def("element_spec", [](const DataDatasetHandle& h) { return SpecToPython(h.ds->element_spec()); })
      .def("cardinality", [](const DataDatasetHandle& h) { return h.ds->cardinality(); })
      .def("debug_name", [](const DataDatasetHandle& h) { return h.ds->DebugName(); })
      .def("make_iterator", [](const DataDatasetHandle& h) { return new DataIteratorHandle(std::make_unique<DataPass>(h.ds)); },
           nb::rv_policy::take_ownership)
      .def("make_probe_iterator",
           [](const DataDatasetHandle& h) { return new DataIteratorHandle(std::make_unique<DataPass>(h.ds, true)); },
           nb::rv_policy::take_ownership, "A probe pass (IteratorContext::probe): for tracing a map function.");
  nb::class_<DataIteratorHandle>(d, "Iterator", "One pass over a dataset. One thread at a time.")
      .def("next", [](DataIteratorHandle& h) -> nb::object {
        if (!h.it) throw nb::value_error("the iterator is closed");
        Element e;
        bool end = false;
        ThrowIfError(h.it->Next(&e, &end));  // releases the GIL; Ctrl-C raises KeyboardInterrupt
        if (end) return nb::none();
        return ElementToPython(std::move(e));
      })
      .def("close", [](DataIteratorHandle& h) { h.Close(); });
  d.attr("AUTOTUNE") = data::kAutotune;
  d.attr("INFINITE_CARDINALITY") = data::kInfiniteCardinality;
  d.attr("UNKNOWN_CARDINALITY") = data::kUnknownCardinality;
  nb::module_::import_("atexit").attr("register")(nb::cpp_function(&CloseAllIterators));
  BindSources(d);
  BindTransformations(d);
  BindPythonFunctions(d);
  BindNativeMaps(d);
  BindDataXforms(d);
  BindDataSources(d);
  BindDataFrameworks(d);
  BindDataGlobalShuffle(d);
  BindDataAutotune(d);
  BindDataCheckpoint(d);
  BindDataNativeOps(d);
  BindDataDistribute(d);
  BindDataBudget(d);
  BindDataFileOps(d);
  BindDataTfapi(d);
}

}  // namespace sluice::python
