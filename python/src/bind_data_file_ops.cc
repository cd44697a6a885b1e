// sluice._core.data's file ops (sluice/_io_files.py): tf.io.read_file and
// tf.io.matching_files, eager; the native read_file map step is in
// bind_data_native_ops.cc (sluice/data/file_ops.h).
//
//   read_file(path) -> bytes            the whole file; the GIL is released while reading
//   matching_files([pattern]) -> [str]  each pattern's matches, sorted, in pattern order
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <string>
#include <vector>

#include "bind_data.h"
#include "sluice/io/file_system.h"

namespace sluice::python {
namespace {

nb::bytes ReadFile(nb::handle path_obj) {
  const std::string path = PathArg(path_obj);
  Result<std::string> contents = [&] {
    nb::gil_scoped_release release;
    return io::ReadFileToString(nullptr, path);
  }();
  const std::string bytes = ValueOrThrow(std::move(contents));
  return nb::bytes(bytes.data(), bytes.size());
}

nb::list MatchingFiles(const nb::list& patterns) {
  std::vector<std::string> paths;
  for (nb::handle p : patterns) paths.push_back(PathArg(p));
  std::vector<std::string> matches;
  Status status;
  {
    nb::gil_scoped_release release;
    for (const std::string& pattern : paths) {
      Result<std::vector<std::string>> got = io::DefaultFileSystem()->GetMatchingPaths(pattern);
      if (!got.ok()) {
        status = got.status();
        break;
      }
      matches.insert(matches.end(), got->begin(), got->end());
    }
  }
  ThrowIfError(status);
  nb::list out;
  for (const std::string& m : matches) out.append(PathToPython(m));
  return out;
}

}  // namespace

void BindDataFileOps(nb::module_& d) {
  d.def("read_file", &ReadFile, nb::arg("path"));
  d.def("matching_files", &MatchingFiles, nb::arg("patterns"));
}

}  // namespace sluice::python
