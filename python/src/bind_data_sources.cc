// sluice._core.data: list_files, the readers over a dataset of file names,
// CsvDataset, cache(filename), choose/sample_from_datasets and the
// SparseTensor-aware from_tensor_slices / batch / unbatch (the factories of
// datasets.h's "File lists, CSV, file cache, sampling, sparse components").
// bind_data.cc owns the Dataset class; it passes the two conversions.
#include <nanobind/nanobind.h>
#include <nanobind/stl/function.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bind_common.h"
#include "sluice/data/datasets.h"

namespace sluice::python {

using DatasetOfHandle = std::function<data::DatasetPtr(nb::handle)>;
using HandleOfDataset = std::function<nb::object(data::DatasetPtr)>;

namespace {

std::optional<int64_t> OptionalInt(nb::handle h) {
  if (h.is_none()) return std::nullopt;
  return nb::cast<int64_t>(h);
}

std::vector<DType> DTypesFrom(const std::vector<int>& numbers) {
  std::vector<DType> out;
  for (int t : numbers) out.push_back(static_cast<DType>(t));
  return out;
}

}  // namespace

void BindDataSources(nb::module_& d, DatasetOfHandle ds_of, HandleOfDataset wrap) {
  auto out = [wrap](Result<data::DatasetPtr> r) { return wrap(ValueOrThrow(std::move(r))); };
  d.def("list_files", [out](std::vector<std::string> patterns, bool shuffle, int64_t seed, int64_t seed2) {
    return out(data::ListFiles(std::move(patterns), shuffle, seed, seed2));
  });
  // kind: "tfrecord", "text_line" or "fixed_length" (then record/header/footer bytes).
  d.def("reader_of", [out, ds_of](const std::string& kind, nb::handle filenames, const std::string& compression,
                                  int64_t buffer_size, nb::handle npr, int64_t record_bytes, int64_t header_bytes,
                                  int64_t footer_bytes) {
    data::RecordDatasetOptions o{compression, buffer_size, OptionalInt(npr)};
    data::DatasetPtr names = ds_of(filenames);
    if (kind == "tfrecord") return out(data::TFRecordDatasetOf(names, o));
    if (kind == "text_line") return out(data::TextLineDatasetOf(names, o));
    return out(data::FixedLengthRecordDatasetOf(
        names, data::FixedLengthOptions{record_bytes, header_bytes, footer_bytes}, o));
  }, nb::arg("kind"), nb::arg("filenames"), nb::arg("compression_type"), nb::arg("buffer_size"),
     nb::arg("num_parallel_reads").none(), nb::arg("record_bytes"), nb::arg("header_bytes"), nb::arg("footer_bytes"));
  // defaults: one list per column, holding 0 or 1 value of dtypes[i].
  d.def("csv", [out](std::vector<std::string> files, nb::list defaults, const std::vector<int>& dtypes,
                     const std::string& compression, int64_t buffer_size, bool header, const std::string& delim,
                     bool use_quote_delim, const std::string& na_value, std::vector<int64_t> select_cols,
                     std::vector<int64_t> exclude_cols, bool ignore_errors) {
    std::vector<Tensor> record_defaults;
    for (size_t i = 0; i < dtypes.size(); ++i) {
      nb::list one;
      one.append(defaults[i]);
      record_defaults.push_back(PythonToElement(one, {static_cast<DType>(dtypes[i])})[0]);
    }
    data::CsvDatasetOptions o{compression, buffer_size, header, delim, use_quote_delim, na_value,
                              std::move(select_cols), std::move(exclude_cols), ignore_errors, nullptr};
    return out(data::CsvDataset(std::move(files), std::move(record_defaults), std::move(o)));
  });
  d.def("cache_file", [out, ds_of](nb::handle in, std::string filename) {
    return out(data::CacheToFile(ds_of(in), std::move(filename)));
  });
  d.def("choose_from_datasets", [out, ds_of](nb::list datasets, nb::handle choice, bool stop_on_empty) {
    std::vector<data::DatasetPtr> inputs;
    for (nb::handle h : datasets) inputs.push_back(ds_of(h));
    return out(data::ChooseFromDatasets(std::move(inputs), ds_of(choice), stop_on_empty));
  });
  d.def("sample_from_datasets", [out, ds_of](nb::list datasets, std::vector<double> weights, int64_t seed,
                                             int64_t seed2, bool stop_on_empty, bool rerandomize) {
    std::vector<data::DatasetPtr> inputs;
    for (nb::handle h : datasets) inputs.push_back(ds_of(h));
    return out(data::SampleFromDatasets(std::move(inputs), std::move(weights), seed, seed2, stop_on_empty,
                                        rerandomize));
  });
  // The components of each element in `order` (a change of structure, no copy).
  d.def("select", [out, ds_of](nb::handle in, std::vector<size_t> order) {
    data::DatasetPtr ds = ds_of(in);
    const data::ElementSpec& from = ds->element_spec();
    data::ElementSpec spec;
    for (size_t i : order) {
      if (i >= from.size()) throw nb::index_error("component index out of range");
      spec.dtypes.push_back(from.dtypes[i]);
      spec.shapes.push_back(from.shapes[i]);
    }
    data::MapFn fn = [order](Element e) -> Result<Element> {
      Element selected;
      for (size_t i : order) selected.push_back(e[i]);
      return selected;
    };
    return out(data::Map(std::move(ds), std::move(fn), std::move(spec)));
  });
  d.def("sample_from_datasets_weighted_by", [out, ds_of](nb::list datasets, nb::handle weights, int64_t seed,
                                                         int64_t seed2, bool stop_on_empty, bool rerandomize) {
    std::vector<data::DatasetPtr> inputs;
    for (nb::handle h : datasets) inputs.push_back(ds_of(h));
    return out(data::SampleFromDatasetsWithWeightDataset(std::move(inputs), ds_of(weights), seed, seed2,
                                                         stop_on_empty, rerandomize));
  });
  d.def("from_tensor_slices_sparse", [out](nb::handle values, const std::vector<int>& dtypes,
                                           std::vector<size_t> sparse) {
    return out(data::FromTensorSlicesWithSparse(PythonToElement(values, DTypesFrom(dtypes)), std::move(sparse)));
  });
  d.def("batch_sparse", [out, ds_of](nb::handle in, int64_t n, bool drop, std::vector<size_t> sparse) {
    return out(data::BatchWithSparse(ds_of(in), n, drop, std::move(sparse)));
  });
  d.def("unbatch_sparse", [out, ds_of](nb::handle in, std::vector<size_t> sparse) {
    return out(data::UnbatchWithSparse(ds_of(in), std::move(sparse)));
  });
}

}  // namespace sluice::python
