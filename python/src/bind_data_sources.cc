// sluice._core.data: list_files, the readers over a dataset of file names,
// CsvDataset, cache(filename), choose/sample_from_datasets and the
// SparseTensor-aware from_tensor_slices / batch / unbatch (the factories of
// datasets.h's "File lists, CSV, file cache, sampling, sparse components"),
// for sluice/_data_sources.py.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <string>
#include <utility>
#include <vector>

#include "bind_data.h"

namespace sluice::python {

namespace {

std::vector<data::DatasetPtr> DatasetsOf(nb::list handles) {
  std::vector<data::DatasetPtr> out;
  for (nb::handle h : handles) out.push_back(nb::cast<const DataDatasetHandle&>(h).ds);
  return out;
}

}  // namespace

void BindDataSources(nb::module_& d) {
  d.def("list_files", [](std::vector<std::string> patterns, bool shuffle, int64_t seed, int64_t seed2) {
    return Wrap(data::ListFiles(std::move(patterns), shuffle, seed, seed2));
  });
  // kind: "tfrecord", "text_line" or "fixed_length" (then record/header/footer bytes).
  d.def("reader_of", [](const std::string& kind, const DataDatasetHandle& filenames, const std::string& compression,
                        int64_t buffer_size, nb::handle npr, int64_t record_bytes, int64_t header_bytes,
                        int64_t footer_bytes) {
    data::RecordDatasetOptions o{compression, buffer_size, OptInt(npr)};
    const data::DatasetPtr& names = filenames.ds;
    if (kind == "tfrecord") return Wrap(data::TFRecordDatasetOf(names, o));
    if (kind == "text_line") return Wrap(data::TextLineDatasetOf(names, o));
    return Wrap(data::FixedLengthRecordDatasetOf(
        names, data::FixedLengthOptions{record_bytes, header_bytes, footer_bytes}, o));
  }, nb::arg("kind"), nb::arg("filenames"), nb::arg("compression_type"), nb::arg("buffer_size"),
     nb::arg("num_parallel_reads").none(), nb::arg("record_bytes"), nb::arg("header_bytes"), nb::arg("footer_bytes"));
  // defaults: one list per column, holding 0 or 1 value of dtypes[i].
  d.def("csv", [](std::vector<std::string> files, nb::list defaults, const std::vector<int>& dtypes,
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
    return Wrap(data::CsvDataset(std::move(files), std::move(record_defaults), std::move(o)));
  });
  d.def("cache_file", [](const DataDatasetHandle& in, std::string filename) {
    return Wrap(data::CacheToFile(in.ds, std::move(filename)));
  });
  d.def("choose_from_datasets", [](nb::list datasets, const DataDatasetHandle& choice, bool stop_on_empty) {
    return Wrap(data::ChooseFromDatasets(DatasetsOf(datasets), choice.ds, stop_on_empty));
  });
  d.def("sample_from_datasets", [](nb::list datasets, std::vector<double> weights, int64_t seed,
                                   int64_t seed2, bool stop_on_empty, bool rerandomize) {
    return Wrap(data::SampleFromDatasets(DatasetsOf(datasets), std::move(weights), seed, seed2, stop_on_empty,
                                        rerandomize));
  });
  // The components of each element in `order` (a change of structure, no copy).
  d.def("select", [](const DataDatasetHandle& in, std::vector<size_t> order) {
    data::DatasetPtr ds = in.ds;
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
    return Wrap(data::Map(std::move(ds), std::move(fn), std::move(spec)));
  });
  d.def("sample_from_datasets_weighted_by", [](nb::list datasets, const DataDatasetHandle& weights, int64_t seed,
                                               int64_t seed2, bool stop_on_empty, bool rerandomize) {
    return Wrap(data::SampleFromDatasetsWithWeightDataset(DatasetsOf(datasets), weights.ds, seed, seed2,
                                                         stop_on_empty, rerandomize));
  });
  d.def("from_tensor_slices_sparse", [](nb::handle values, const std::vector<int>& dtypes,
                                        std::vector<size_t> sparse) {
    return Wrap(data::FromTensorSlicesWithSparse(PythonToElement(values, DTypesOf(dtypes)), std::move(sparse)));
  });
  d.def("batch_sparse", [](const DataDatasetHandle& in, int64_t n, bool drop, std::vector<size_t> sparse) {
    return Wrap(data::BatchWithSparse(in.ds, n, drop, std::move(sparse)));
  });
  d.def("unbatch_sparse", [](const DataDatasetHandle& in, std::vector<size_t> sparse) {
    return Wrap(data::UnbatchWithSparse(in.ds, std::move(sparse)));
  });
}

}  // namespace sluice::python
