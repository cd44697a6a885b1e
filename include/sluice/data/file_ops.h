// Native element ops on files: tf.io.read_file as a NativeMap (map_ops.h),
// so that `list_files -> read_file -> decode_jpeg` runs in C++ worker threads
// without the GIL:
//
//   NativeMap read = *ReadFileMap(files->element_spec(), 0);
//   DatasetPtr contents = *MapWithIndex(files, read.fn, read.spec);
//
// Files are read through io::DefaultFileSystem() (local POSIX files).
//
// Thread-safe: the functions keep no mutable state.
#ifndef SLUICE_DATA_FILE_OPS_H_
#define SLUICE_DATA_FILE_OPS_H_

#include <cstddef>

#include "sluice/data/datasets.h"
#include "sluice/data/map_ops.h"

namespace sluice::data {

// tf.io.read_file of string scalar `component`: the whole file it names, a
// string scalar. Build errors: InvalidArgument for a component out of range,
// known not to be a string or known not to be a scalar. Errors per element:
// InvalidArgument for a non-scalar filename (TF's "Input filename tensor must
// be scalar"), and the file system's, naming the file (NotFound for a missing
// file, FailedPrecondition for a directory, PermissionDenied, ...).
Result<NativeMap> ReadFileMap(const ElementSpec& input, size_t component);

}  // namespace sluice::data

#endif  // SLUICE_DATA_FILE_OPS_H_
