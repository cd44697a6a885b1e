// _core.data's record-indexed files and global shuffle (datasets.h's
// FromRecordFiles), for sluice/_data_global_shuffle.py.
//
//   from_record_files(...)            a Dataset handle
//   global_shuffle(ds, seed, reshuffle)  its records in a global shuffle
//   RecordFilesIterator(ds)           one pass: next(), position() (seed, epoch,
//                                     position), save(), restore(bytes), close()
//
// Building the dataset loads or builds the indexes: it runs without the GIL.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <memory>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "bind_data.h"
#include "sluice/data/checkpoint.h"

namespace sluice::python {
namespace {

struct RecordFilesIteratorHandle {
  std::unique_ptr<data::RecordFilesIterator> it;
};

data::RecordIndexPolicy IndexPolicy(const std::string& name) {
  if (name == "auto") return data::RecordIndexPolicy::kLoadOrBuild;
  if (name == "no_save") return data::RecordIndexPolicy::kLoadOrBuildNoSave;
  if (name == "require") return data::RecordIndexPolicy::kRequireFresh;
  throw nb::value_error(("index must be 'auto', 'no_save' or 'require', not '" + name + "'").c_str());
}

}  // namespace

void BindDataGlobalShuffle(nb::module_& d) {
  d.def("from_record_files", [](std::vector<std::string> files, const std::string& compression,
                                const std::string& index, bool shuffle, uint64_t seed, bool reshuffle,
                                int64_t read_ahead_records, int64_t read_ahead_bytes, bool use_mmap) {
    data::RecordFilesOptions options;
    options.compression_type = compression;
    options.index = IndexPolicy(index);
    if (shuffle) options.shuffle = data::GlobalShuffleOptions{seed, reshuffle};
    options.read_ahead_records = read_ahead_records;
    options.read_ahead_bytes = read_ahead_bytes;
    options.use_mmap = use_mmap;
    Result<data::DatasetPtr> r = [&] {
      GilRelease release;
      return data::FromRecordFiles(std::move(files), std::move(options));
    }();
    return Wrap(std::move(r));
  }, nb::arg("filenames"), nb::arg("compression_type"), nb::arg("index"), nb::arg("shuffle"), nb::arg("seed"),
     nb::arg("reshuffle_each_iteration"), nb::arg("read_ahead_records"), nb::arg("read_ahead_bytes"), nb::arg("use_mmap"));
  d.def("global_shuffle", [](const DataDatasetHandle& h, uint64_t seed, bool reshuffle) {
    return Wrap(data::GlobalShuffle(h.ds, data::GlobalShuffleOptions{seed, reshuffle}));
  }, nb::arg("dataset"), nb::arg("seed"), nb::arg("reshuffle_each_iteration"));
  // No threads and no waits on other threads: a plain handle, not a DataPass.
  nb::class_<RecordFilesIteratorHandle>(d, "RecordFilesIterator",
                                        "One pass over a from_record_files dataset. One thread at a time.")
      .def("__init__", [](RecordFilesIteratorHandle* self, const DataDatasetHandle& h) {
        std::unique_ptr<data::RecordFilesIterator> it = data::MakeRecordFilesIterator(h.ds);
        if (!it) throw nb::type_error("not a dataset of from_record_files");
        new (self) RecordFilesIteratorHandle{std::move(it)};
      })
      .def("next", [](RecordFilesIteratorHandle& h) { return NextOrNone(h.it.get()); })
      .def("position", [](const RecordFilesIteratorHandle& h) {
        if (!h.it) throw nb::value_error("the iterator is closed");
        data::GlobalShufflePosition p = h.it->position();
        return std::make_tuple(p.seed, p.epoch, p.position);
      })
      // Iterator checkpoints (data/checkpoint.h's bytes) of this root iterator: a position, no waits.
      .def("save", [](RecordFilesIteratorHandle& h) {
        if (!h.it) throw nb::value_error("the iterator is closed");
        std::string bytes = ValueOrThrow(data::SaveIterator(*h.it));
        return nb::bytes(bytes.data(), bytes.size());
      })
      .def("restore", [](RecordFilesIteratorHandle& h, nb::bytes state) {
        if (!h.it) throw nb::value_error("the iterator is closed");
        ThrowIfError(data::RestoreIterator(*h.it, std::string_view(state.c_str(), state.size())));
      }, nb::arg("state"))
      .def("close", [](RecordFilesIteratorHandle& h) { h.it.reset(); });
}

}  // namespace sluice::python
