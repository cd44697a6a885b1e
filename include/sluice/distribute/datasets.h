// Distributed datasets: the records of TFRecord files shared out over the
// ranks of a job, every record read exactly once per epoch across ranks
// (sharding.h's plans), with equal ends (Uneven), a start-up consistency
// check, and a small checkpoint valid at any world size (RECORD, DATA, FILE).
//
//   InputContext ctx = Init().value();
//   DistributeOptions opts;
//   opts.policy = ShardingPolicy::kRecord;
//   opts.seed = 1234;
//   DatasetPtr ds = ShardedRecordFiles(files, opts, ctx).value();  // collective
//   for (int epoch = 0; epoch < 90; ++epoch) {
//     auto it = ds->MakeIterator();  // each pass: the next epoch, reshuffled
//     ...
//   }
//
// Ownership and threads: as every Dataset (dataset.h). A DYNAMIC dataset on
// rank 0 also runs the dispatcher thread, which answers the other ranks'
// split and state requests from a journal of who got which split, until
// the dataset is destroyed: keep rank 0's dataset until every rank has
// finished its passes. Destroyed while a rank is still in an epoch, it tells
// the other ranks, whose next request fails with FailedPrecondition saying so
// (a rank that starts a pass later waits for an answer).
#ifndef SLUICE_DISTRIBUTE_DATASETS_H_
#define SLUICE_DISTRIBUTE_DATASETS_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sluice/data/dataset.h"
#include "sluice/distribute/communicator.h"
#include "sluice/distribute/sharding.h"

namespace sluice::distribute {

struct DistributeOptions {
  ShardingPolicy policy = ShardingPolicy::kAuto;
  // The epochs' permutations derive from it. nullopt: rank 0 draws one and
  // broadcasts it (needs a communicator when there are several ranks).
  std::optional<uint64_t> seed;
  // Pad by default, as DistributedSampler: every rank gets the same number
  // of elements, so no rank waits at an epoch end for a collective.
  Uneven uneven = Uneven::kPad;
  // RECORD: shuffle the records globally; FILE: permute the file list. False:
  // file order, the same every epoch.
  bool shuffle = true;
  // FILE: deal files to the least-loaded rank by record count (else by
  // stride: counts then differ by file sizes).
  bool balance_records = true;
  // With a communicator: one Allgather at construction comparing the file
  // list (names and record counts), seed, policy, uneven and format version.
  bool check_consistency = true;
  // DYNAMIC: records per split handed out by rank 0.
  int64_t split_records = 64;
  // Start from a checkpoint (ShardedIterator::state()): its epoch, at its
  // position. RECORD and DATA resume at any world size; FILE too: at the
  // same size each rank goes on in its files, at another the records the
  // checkpoint's ranks had left are dealt by stride over the new ranks (the
  // rest of that epoch only; later epochs plan files as usual); OFF at the
  // same world size (FailedPrecondition otherwise); DYNAMIC at any world
  // size: the positions no rank had read are handed out first (each once).
  std::optional<DistributedState> resume;
};

// The records of `files` (string scalars, TFRecordDataset's elements) that
// this rank (ctx.input_pipeline_id of ctx.num_input_pipelines) reads, per
// epoch; the k-th iterator made is epoch k (after resume's). The record
// indexes are loaded or built beside the files (io::RecordIndex).
// Collective when ctx has a communicator (seed broadcast, consistency check):
// every rank calls it at the same point.
// Errors: InvalidArgument (no files; no seed without a communicator on
// several ranks; split_records < 1; a resume of another policy);
// FailedPrecondition from the consistency check ("ranks disagree on
// <field>: rank(s) <r...> differ from rank 0 (...)"), or for an
// unsupported resume; the index build's errors (NotFound, DataLoss naming
// file and offset); the communicator's.
[[nodiscard]] Result<data::DatasetPtr> ShardedRecordFiles(std::vector<std::string> files, DistributeOptions options,
                                                         const InputContext& ctx);

// An iterator of a ShardedRecordFiles dataset that tells its checkpoint.
class ShardedIterator : public data::IteratorBase {
 public:
  // Where this pass is, as a state valid when every rank has made the same
  // number of GetNext calls (a synchronous training step). Not thread-safe
  // (as GetNext). DYNAMIC asks rank 0's dispatcher which positions are left
  // (rank 0's dataset must live): FailedPrecondition when a rank cannot have
  // made as many reads yet; the communicator's errors.
  [[nodiscard]] virtual Result<DistributedState> state() const = 0;
  // The elements this rank reads this epoch (known in advance except under
  // DYNAMIC: -1).
  virtual int64_t count() const = 0;
};

// The next epoch's pass over `dataset`, typed (as MakeIterator()). Null
// unless `dataset` was made by ShardedRecordFiles. Thread-safe.
std::unique_ptr<ShardedIterator> MakeShardedIterator(const data::DatasetPtr& dataset);

// The start-up consistency check alone: Allgathers one hash per field of
// `fields` (name -> value, the same names on every rank), and only if one
// differs the values, and fails on the first field whose value differs
// from rank 0's, naming the ranks that differ and the first differing line.
// Collective.
[[nodiscard]] Status CheckConsistency(Communicator& comm,
                                      const std::vector<std::pair<std::string, std::string>>& fields);

}  // namespace sluice::distribute

#endif  // SLUICE_DISTRIBUTE_DATASETS_H_
