// ListFiles, and the file readers over a dataset of file names (TF's
// readers take a dataset as well as a list: the files are opened one after
// the other as the name dataset yields them, or num_parallel_reads at once).
#include <algorithm>
#include <utility>

#include "data/dataset_util.h"
#include "sluice/data/datasets.h"
#include "sluice/train/producer.h"

namespace sluice::data {
namespace {

const ElementSpec& StringScalar() {
  static const ElementSpec* spec = new ElementSpec{{DType::kString}, {PartialShape({})}, {}};
  return *spec;
}

Status CheckFilenames(const DatasetPtr& filenames) {
  SLUICE_RETURN_IF_ERROR(CheckInput(filenames, "filenames"));
  const ElementSpec& spec = filenames->element_spec();
  if (spec.size() != 1 || spec.dtypes[0] != DType::kString ||
      (spec.shapes[0].rank_known() && spec.shapes[0].rank() != 0)) {
    return InvalidArgument("`filenames` must be a `tf.data.Dataset` of scalar `tf.string` elements.");
  }
  return Status();
}

using OpenOne = std::function<Result<DatasetPtr>(std::string filename)>;

// filenames' files opened in order by `open` (flat_map), or
// num_parallel_reads at a time with their records interleaved one by one.
Result<DatasetPtr> ReadEach(DatasetPtr filenames, std::optional<int64_t> num_parallel_reads, OpenOne open) {
  SLUICE_RETURN_IF_ERROR(CheckFilenames(filenames));
  InterleaveOptions options{.cycle_length = 1, .block_length = 1, .num_parallel_calls = std::nullopt};
  if (num_parallel_reads.has_value()) {
    int64_t n = *num_parallel_reads;
    if (n == kAutotune) n = AutotuneParallelism();
    if (n < 1) return InvalidArgument("num_parallel_reads must be positive or AUTOTUNE, not " + std::to_string(n));
    options.cycle_length = n;
    options.num_parallel_calls = n;
  }
  InterleaveFn fn = [open = std::move(open)](Element e) -> Result<DatasetPtr> {
    return open(e[0].scalar<std::string>());
  };
  return Interleave(std::move(filenames), std::move(fn), StringScalar(), options);
}

RecordDatasetOptions OneFileOptions(RecordDatasetOptions options) {
  options.num_parallel_reads.reset();
  return options;
}

std::string JoinPatterns(const std::vector<std::string>& patterns) {
  std::string out;
  for (const std::string& p : patterns) out += (out.empty() ? "" : ", ") + p;
  return out;
}

}  // namespace

Result<DatasetPtr> ListFiles(std::vector<std::string> patterns, bool shuffle, int64_t seed, int64_t seed2) {
  SLUICE_ASSIGN_OR_RETURN(std::vector<std::string> files, train::MatchFilenamesOnce(patterns));
  if (files.empty()) {
    // TF's eager Assert message.
    return InvalidArgument("Expected 'tf.Tensor(False, shape=(), dtype=bool)' to be true. Summarized data: "
                           "b'No files matched pattern: " + JoinPatterns(patterns) + "'");
  }
  const int64_t n = static_cast<int64_t>(files.size());
  SLUICE_ASSIGN_OR_RETURN(DatasetPtr names, FromTensorSlices(Element{Tensor::FromStrings(files)}));
  if (!shuffle) return names;
  return Shuffle(std::move(names), std::max<int64_t>(n, 1), seed, seed2, /*reshuffle_each_iteration=*/true);
}

Result<DatasetPtr> TFRecordDatasetOf(DatasetPtr filenames, RecordDatasetOptions options) {
  SLUICE_RETURN_IF_ERROR(TFRecordDataset({}, OneFileOptions(options)).status());  // checks the options now
  return ReadEach(std::move(filenames), options.num_parallel_reads, [options](std::string f) {
    return TFRecordDataset({std::move(f)}, OneFileOptions(options));
  });
}

Result<DatasetPtr> TextLineDatasetOf(DatasetPtr filenames, RecordDatasetOptions options) {
  SLUICE_RETURN_IF_ERROR(TextLineDataset({}, OneFileOptions(options)).status());
  return ReadEach(std::move(filenames), options.num_parallel_reads, [options](std::string f) {
    return TextLineDataset({std::move(f)}, OneFileOptions(options));
  });
}

Result<DatasetPtr> FixedLengthRecordDatasetOf(DatasetPtr filenames, FixedLengthOptions fixed,
                                              RecordDatasetOptions options) {
  SLUICE_RETURN_IF_ERROR(FixedLengthRecordDataset({}, fixed, OneFileOptions(options)).status());
  return ReadEach(std::move(filenames), options.num_parallel_reads, [fixed, options](std::string f) {
    return FixedLengthRecordDataset({std::move(f)}, fixed, OneFileOptions(options));
  });
}

}  // namespace sluice::data
