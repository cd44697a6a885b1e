// Sharding: which records (or files) each of `num_ranks` input pipelines
// reads in one epoch, as pure functions of (sizes, seed, epoch, policy), so
// that every rank computes its own share, and every other rank's, without a
// message.
//
// The global order of an epoch is data::IndexPermutation(n, seed, epoch): a
// Feistel bijection fully specified by integer arithmetic, so the same
// (n, seed, epoch) gives the same order on every machine, compiler and
// standard library (golden tests pin it; no std::shuffle or
// std::uniform_int_distribution, whose results are implementation-defined).
//
// Positions, not records, are dealt: rank r reads positions
// start + r, start + r + num_ranks, ... of the epoch (a "stride plan"), so
// after k synchronous steps the ranks together have read exactly the
// positions [start, start + k * num_ranks). That prefix is the whole
// checkpoint (DistributedState), and the rest of the epoch can be dealt
// again over any number of ranks (resume at a different world size) while
// every record is still read exactly once.
//
// Thread-safety: every function here is pure and thread-safe; the value
// types are plain data.
#ifndef SLUICE_DISTRIBUTE_SHARDING_H_
#define SLUICE_DISTRIBUTE_SHARDING_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sluice/core/status.h"

namespace sluice::distribute {

// tf.data.experimental.AutoShardPolicy's names and values (OFF = -1 ..
// HINT = 3), tf.data service's DYNAMIC, and sluice's RECORD.
enum class ShardingPolicy : int {
  kOff = -1,     // every rank reads everything (no guarantee, as TF)
  kAuto = 0,     // FILE when there are at least as many files as ranks, else DATA
  kFile = 1,     // the epoch's permuted file list dealt over the ranks
  kData = 2,     // element k (in file order) to rank k % num_ranks, as Dataset.shard
  kHint = 3,     // shard at this source, as DATA (the source is the hint's place)
  kDynamic = 4,  // splits handed out first-come-first-served by rank 0
  kRecord = 5,   // the epoch's global permutation of record ids, dealt by stride
};

// What to do with the n mod num_ranks records that do not divide evenly.
enum class Uneven : int {
  kDrop = 0,   // every rank reads floor(n / num_ranks); others wait for the next epoch
  kPad = 1,    // every rank reads ceil(n / num_ranks); the short ranks repeat records
  kAllow = 2,  // ranks differ by at most one record
};

// "OFF", "AUTO", ... (upper case, TF's spelling).
std::string_view ShardingPolicyName(ShardingPolicy policy);
// Accepts TF's names in any case. InvalidArgument for another name.
[[nodiscard]] Result<ShardingPolicy> ParseShardingPolicy(std::string_view name);
// "drop", "pad", "allow".
std::string_view UnevenName(Uneven uneven);
[[nodiscard]] Result<Uneven> ParseUneven(std::string_view name);

// AUTO resolved for `num_files` files over `num_ranks` ranks; other
// policies unchanged.
ShardingPolicy ResolvePolicy(ShardingPolicy policy, int64_t num_files, int num_ranks);

// The record id at position `p` of epoch `epoch` of n records: the global
// permutation. REQUIRES: p < n.
uint64_t GlobalRecordAt(uint64_t n, uint64_t seed, uint64_t epoch, uint64_t p);

// One epoch's positions [start, n) dealt by stride over num_ranks ranks.
struct StridePlan {
  uint64_t n = 0;      // positions in the epoch
  uint64_t start = 0;  // positions before it were read before a resume
  int num_ranks = 1;
  Uneven uneven = Uneven::kAllow;

  // How many positions `rank` reads. REQUIRES: 0 <= rank < num_ranks.
  uint64_t CountFor(int rank) const;
  // The position of the k-th read of `rank` (kPad wraps past n onto the
  // first remaining positions). REQUIRES: k < CountFor(rank).
  uint64_t PositionAt(int rank, uint64_t k) const;
  // The global position after every rank has done `steps` reads: where a
  // checkpoint taken then resumes (at most n).
  uint64_t PositionAfterSteps(uint64_t steps) const;
};

// FILE: the files of epoch `epoch` for every rank. The files are taken in
// the order IndexPermutation(num_files, seed, epoch); without record counts
// (empty `records_per_file`) rank r takes the r-th, (r + num_ranks)-th, ...;
// with them, each file goes to the rank with the fewest records so far
// (the lowest rank on ties), which balances record counts. Each rank's list
// keeps the permuted order. REQUIRES: records_per_file empty or of size
// num_files; num_ranks >= 1.
std::vector<std::vector<uint64_t>> AssignFiles(uint64_t num_files, int num_ranks, uint64_t seed, uint64_t epoch,
                                               const std::vector<uint64_t>& records_per_file = {});

// FILE with counts: the records each rank reads after `uneven` evens the
// ends: the minimum of the ranks' totals (kDrop), the maximum (kPad: a rank
// repeats its own records from the start), or its own total (kAllow).
uint64_t FileModeCount(const std::vector<uint64_t>& rank_totals, int rank, Uneven uneven);

// A distributed iterator's checkpoint: small, and valid at any world size.
// `position` counts the epoch's positions read by all ranks together (a
// StridePlan prefix), taken at a step where every rank has done the same
// number of reads.
struct DistributedState {
  static constexpr uint32_t kVersion = 1;
  uint64_t seed = 0;
  uint64_t epoch = 0;
  ShardingPolicy policy = ShardingPolicy::kRecord;
  int world_size = 1;
  uint64_t position = 0;
  // FILE resumed at another world size: the global position in the rest of
  // the epoch (the records world_size ranks had left after `position` reads
  // each, dealt by stride over the new ranks). 0 otherwise.
  uint64_t rest = 0;
  // DYNAMIC: the positions of the epoch's permutation that no rank had read
  // (each [begin, end), ascending, disjoint); they are handed out first on
  // resume, at any world size. nullopt: the whole epoch (a checkpoint from
  // before DYNAMIC kept this).
  std::optional<std::vector<std::pair<uint64_t, uint64_t>>> left = std::nullopt;

  // "sluice-dist v1 seed=<s> epoch=<e> policy=<P> world_size=<w> position=<p>"
  // and " rest=<r>" when rest > 0, " left=<b>-<e>,<b>-<e>..." when left is set.
  std::string Serialize() const;
  // DataLoss for bytes Serialize did not make (or of another version).
  [[nodiscard]] static Result<DistributedState> Parse(std::string_view bytes);
  bool operator==(const DistributedState&) const = default;
};

}  // namespace sluice::distribute

#endif  // SLUICE_DISTRIBUTE_SHARDING_H_
