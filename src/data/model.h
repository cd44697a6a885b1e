// The performance model of one iterator tree (one MakeIterator call): a Node
// of counters per stage, the tree's merged Options, the RAM accounting of
// AUTOTUNE buffers, and the AUTOTUNE thread that sets the parallelism of
// AUTOTUNE parallel stages from the counters. Private to src/data.
//
// Thread-safety: Model and Node are thread-safe. Counters are relaxed
// atomics: each is exact, a snapshot of several may mix moments.
// Ownership: the root iterator owns the Model (shared with the
// IteratorContext); each stage owns its Node, which the Model sees through a
// weak_ptr, so a stage that dies (an interleave's finished input) leaves the
// snapshots.
#ifndef SLUICE_SRC_DATA_MODEL_H_
#define SLUICE_SRC_DATA_MODEL_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "sluice/core/element.h"
#include "data/error_policy.h"
#include "data/memory_budget.h"
#include "sluice/core/mutex.h"
#include "sluice/data/datasets.h"

namespace sluice::data {

int64_t NowNanos();
// CPU time of the calling thread.
int64_t ThreadCpuNanos();
// Bytes of tensor data in `e` (strings count sizeof(std::string) each).
int64_t ElementBytes(const Element& e);

// One stage's counters and, for an AUTOTUNE stage, its parallelism knob.
class Node {
 public:
  Node(std::string name, bool autotune, int64_t parallelism);
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  // Counters: Bump* for a single writer (no atomic read-modify-write),
  // Add* for several.
  static void Bump(std::atomic<int64_t>& c, int64_t n) {
    c.store(c.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }
  static void Add(std::atomic<int64_t>& c, int64_t n) { c.fetch_add(n, std::memory_order_relaxed); }
  static void Set(std::atomic<int64_t>& c, int64_t v) { c.store(v, std::memory_order_relaxed); }

  // A sequential stage times one element in kSampleEvery (and counts its
  // time that many times over), so that counting costs little per element.
  static constexpr int64_t kSampleEvery = 32;
  bool SampleNext() const { return elements.load(std::memory_order_relaxed) % kSampleEvery == 0; }

  // The tuner's request: runs the stage's apply function (under apply_mu_,
  // which ClearApply waits for). The stage clamps and stores parallelism.
  void SetParallelism(int64_t p) SLUICE_EXCLUDES(apply_mu_);
  void SetApply(std::function<void(int64_t)> apply) SLUICE_EXCLUDES(apply_mu_);
  // Before the stage dies: no apply runs after this returns.
  void ClearApply() SLUICE_EXCLUDES(apply_mu_);

  StageStats Snapshot() const;

  const std::string name;
  const bool autotune;

  std::atomic<int64_t> elements{0};
  std::atomic<int64_t> bytes{0};
  std::atomic<int64_t> busy_ns{0};
  std::atomic<int64_t> cpu_ns{0};
  std::atomic<int64_t> wait_ns{0};
  std::atomic<int64_t> buffer_size{0};
  std::atomic<int64_t> buffer_fill{0};
  std::atomic<int64_t> parallelism{1};

 private:
  Mutex apply_mu_;
  std::function<void(int64_t)> apply_ SLUICE_GUARDED_BY(apply_mu_);
};

// A stage's counters at the previous tuning step, and its smoothed times.
struct TuneWindow {
  int64_t elements = 0;
  int64_t busy_ns = 0;
  int64_t cpu_ns = 0;
  double wall_per_element = 0;  // ns
  double cpu_per_element = 0;   // ns
};

class Model {
 public:
  Model();
  ~Model();
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

  // A node for a new stage, listed in snapshots from now on (in creation
  // order: a stage's inputs are made first, so sources come first).
  std::shared_ptr<Node> AddNode(std::string name, bool autotune = false, int64_t parallelism = 1)
      SLUICE_EXCLUDES(mu_);

  // While the tree is built: `options` (a WithOptions stage's) override what
  // was merged so far, as TF merges an outer options dataset over its
  // inputs'. Ignored once the root has started (Start).
  void MergeOptions(const Options& options) SLUICE_EXCLUDES(mu_);
  Options options() const SLUICE_EXCLUDES(mu_);
  // While a WithOptions stage makes its input: its options, which stages
  // below that choose their form when made (MapAndBatch) read through
  // BuildOptions: those merged so far with the pushed ones over them.
  void PushOuterOptions(const Options& options) SLUICE_EXCLUDES(mu_);
  void PopOuterOptions() SLUICE_EXCLUDES(mu_);
  Options BuildOptions() const SLUICE_EXCLUDES(mu_);
  bool autotune_enabled() const SLUICE_EXCLUDES(mu_);
  // Options' budgets with TF's defaults: the number of cores; half of RAM.
  int64_t cpu_budget() const SLUICE_EXCLUDES(mu_);
  int64_t ram_budget() const SLUICE_EXCLUDES(mu_);
  // `deterministic` of an op whose own argument is unset.
  bool deterministic(std::optional<bool> op_value) const SLUICE_EXCLUDES(mu_);

  // The root's first GetNext: options are final; the tuner starts (now, or
  // when the first AUTOTUNE node is added) if autotune is enabled.
  void Start() SLUICE_EXCLUDES(mu_);
  // Stops and joins the tuner; before the tree is destroyed.
  void Stop() SLUICE_EXCLUDES(mu_);

  // RAM for AUTOTUNE buffers: false (reserving nothing) if `bytes` more
  // would exceed the RAM budget.
  bool TryReserveBytes(int64_t bytes) SLUICE_EXCLUDES(mu_);
  void ReleaseBytes(int64_t bytes) SLUICE_EXCLUDES(mu_);
  int64_t reserved_bytes() const SLUICE_EXCLUDES(mu_);

  // The live stages, in creation order; the root's node ("Root": the
  // consumer's side) last.
  std::vector<StageStats> Snapshot() const SLUICE_EXCLUDES(mu_);

  // One tuning step over the counters since the previous one (the tuner
  // thread's body; public for tests).
  void TuneOnce() SLUICE_EXCLUDES(mu_);

  void SetRootNode(std::shared_ptr<Node> root) SLUICE_EXCLUDES(mu_);

  // The tree's byte account (Options.ram_budget) and error report.
  const std::shared_ptr<MemoryBudget>& memory() const { return memory_; }
  const std::shared_ptr<ErrorReport>& errors() const { return errors_; }

  // How often the tuner re-tunes.
  static constexpr std::chrono::milliseconds kTunePeriod{100};
  // An AUTOTUNE stage's calls in flight are at most this many per core of
  // the CPU budget: more calls than cores pay off only while calls wait
  // (I/O, or cores taken by other processes), and the CPU they use stays
  // within the budget by the model.
  static constexpr int64_t kMaxCallsPerCore = 2;
  // The most calls in flight of an AUTOTUNE stage (threads it starts).
  int64_t max_parallelism() const SLUICE_EXCLUDES(mu_) { return kMaxCallsPerCore * cpu_budget(); }

 private:
  struct Entry {
    std::weak_ptr<Node> node;
    TuneWindow last;
  };

  void StartTunerLocked() SLUICE_REQUIRES(mu_);
  void TunerLoop() SLUICE_EXCLUDES(mu_);

  mutable Mutex mu_;
  CondVar stop_cv_;
  Options options_ SLUICE_GUARDED_BY(mu_);
  std::vector<Options> outer_options_ SLUICE_GUARDED_BY(mu_);  // outermost first
  bool started_ SLUICE_GUARDED_BY(mu_) = false;
  bool stopping_ SLUICE_GUARDED_BY(mu_) = false;
  bool has_autotune_ SLUICE_GUARDED_BY(mu_) = false;
  std::vector<Entry> nodes_ SLUICE_GUARDED_BY(mu_);
  Entry root_ SLUICE_GUARDED_BY(mu_);
  int64_t reserved_bytes_ SLUICE_GUARDED_BY(mu_) = 0;
  std::thread tuner_ SLUICE_GUARDED_BY(mu_);
  Mutex tune_mu_ SLUICE_ACQUIRED_BEFORE(mu_);  // one TuneOnce at a time
  const std::shared_ptr<MemoryBudget> memory_ = std::make_shared<MemoryBudget>();
  const std::shared_ptr<ErrorReport> errors_ = std::make_shared<ErrorReport>();
};

// A node for a stage of ctx's tree; without a model, one nobody reads.
std::shared_ptr<Node> NewNode(const IteratorContext& ctx, std::string name, bool autotune = false,
                              int64_t parallelism = 1);

// How a parallel stage starts: `threads` workers, of which `calls` work at
// once. AUTOTUNE: Model::max_parallelism() threads (AutotuneParallelism()
// without a model) and one call per core of the budget (TF starts at its
// runner pool's size; the tuner lowers it where the stage needs less).
// Otherwise `fixed` of both.
struct StartingParallelism {
  int64_t threads;
  int64_t calls;
};
StartingParallelism StartParallelism(const Model* model, bool autotune, int64_t fixed);

}  // namespace sluice::data

#endif  // SLUICE_SRC_DATA_MODEL_H_
