// The model of an iterator tree: counters per stage, merged Options, and the
// AUTOTUNE tuner (model.h). WithOptions, MergeOptions and IteratorStats of
// datasets.h.
//
// The tuner is a queueing model in the spirit of TF's: every kTunePeriod it
// reads, per stage, the time per element of its own work (wall and CPU) and
// how many of its elements one element of the reference stage (the root, or
// before the root has produced, the last stage that has) takes. The CPU
// budget B bounds the rate of the pipeline: R = B / (CPU time of every stage
// per reference element), and no faster than 1.25 x the consumer asks for.
// By Little's law an AUTOTUNE stage then needs wall-time-per-element x R
// calls in flight, rounded up and clamped to [1, kMaxCallsPerCore x B]: the
// CPU the stages use is R x their CPU time, within B, however many calls
// wait (for I/O, or for cores other processes hold).
#include "data/model.h"

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <utility>

#include "data/dataset_util.h"
#include "sluice/core/thread_pool.h"

namespace sluice::data {

int64_t NowNanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

int64_t ThreadCpuNanos() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

int64_t ElementBytes(const Element& e) {
  int64_t n = 0;
  for (size_t i = 0; i < e.size(); ++i) n += static_cast<int64_t>(e[i].TotalBytes());
  return n;
}

// ---- Node ----------------------------------------------------------------------------

Node::Node(std::string name_in, bool autotune_in, int64_t p) : name(std::move(name_in)), autotune(autotune_in) {
  parallelism.store(p, std::memory_order_relaxed);
}

void Node::SetParallelism(int64_t p) {
  MutexLock lock(&apply_mu_);
  if (apply_) apply_(p);
}

void Node::SetApply(std::function<void(int64_t)> apply) {
  MutexLock lock(&apply_mu_);
  apply_ = std::move(apply);
}

void Node::ClearApply() {
  MutexLock lock(&apply_mu_);
  apply_ = nullptr;
}

StageStats Node::Snapshot() const {
  StageStats s;
  s.name = name;
  s.elements = elements.load(std::memory_order_relaxed);
  s.bytes = bytes.load(std::memory_order_relaxed);
  s.busy_ns = busy_ns.load(std::memory_order_relaxed);
  s.cpu_ns = cpu_ns.load(std::memory_order_relaxed);
  s.wait_ns = wait_ns.load(std::memory_order_relaxed);
  s.buffer_size = buffer_size.load(std::memory_order_relaxed);
  // A parallel map's capacity follows its chunk size, which may have shrunk
  // since the fill was counted.
  s.buffer_fill = std::min(buffer_fill.load(std::memory_order_relaxed), s.buffer_size);
  s.parallelism = parallelism.load(std::memory_order_relaxed);
  s.autotune = autotune;
  return s;
}

std::shared_ptr<Node> NewNode(const IteratorContext& ctx, std::string name, bool autotune, int64_t parallelism) {
  if (ctx.model) return ctx.model->AddNode(std::move(name), autotune, parallelism);
  return std::make_shared<Node>(std::move(name), autotune, parallelism);
}

StartingParallelism StartParallelism(const Model* model, bool autotune, int64_t fixed) {
  if (!autotune) return {fixed, fixed};
  if (!model) return {AutotuneParallelism(), AutotuneParallelism()};
  return {model->max_parallelism(), model->cpu_budget()};
}

// ---- Options --------------------------------------------------------------------------

namespace {

template <class T>
void Over(std::optional<T>& base, const std::optional<T>& over) {
  if (over) base = over;
}

int64_t PhysicalRamBytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return int64_t{1} << 32;
  return static_cast<int64_t>(pages) * page;
}

}  // namespace

Options MergeOptions(const Options& base, const Options& over) {
  Options o = base;
  Over(o.deterministic, over.deterministic);
  Over(o.autotune.enabled, over.autotune.enabled);
  Over(o.autotune.cpu_budget, over.autotune.cpu_budget);
  Over(o.autotune.ram_budget, over.autotune.ram_budget);
  Over(o.threading.private_threadpool_size, over.threading.private_threadpool_size);
  Over(o.threading.max_intra_op_parallelism, over.threading.max_intra_op_parallelism);
  Over(o.optimization.map_and_batch_fusion, over.optimization.map_and_batch_fusion);
  Over(o.ram_budget, over.ram_budget);
  Over(o.error_policy, over.error_policy);
  return o;
}

// ---- Model ----------------------------------------------------------------------------

Model::Model() = default;

Model::~Model() { Stop(); }

std::shared_ptr<Node> Model::AddNode(std::string name, bool autotune, int64_t parallelism) {
  auto node = std::make_shared<Node>(std::move(name), autotune, parallelism);
  MutexLock lock(&mu_);
  // Drop the entries of stages that died, so that a long interleave does not
  // grow the list.
  std::erase_if(nodes_, [](const Entry& e) { return e.node.expired(); });
  nodes_.push_back(Entry{node, {}});
  if (autotune && !has_autotune_) {
    has_autotune_ = true;
    if (started_) StartTunerLocked();
  }
  return node;
}

void Model::SetRootNode(std::shared_ptr<Node> root) {
  MutexLock lock(&mu_);
  root_ = Entry{root, {}};
}

void Model::MergeOptions(const Options& options) {
  MutexLock lock(&mu_);
  if (!started_) options_ = data::MergeOptions(options_, options);
}

Options Model::options() const {
  MutexLock lock(&mu_);
  return options_;
}

void Model::PushOuterOptions(const Options& options) {
  MutexLock lock(&mu_);
  outer_options_.push_back(options);
}

void Model::PopOuterOptions() {
  MutexLock lock(&mu_);
  outer_options_.pop_back();
}

Options Model::BuildOptions() const {
  MutexLock lock(&mu_);
  Options o = options_;
  for (auto it = outer_options_.rbegin(); it != outer_options_.rend(); ++it) o = data::MergeOptions(o, *it);
  return o;
}

bool Model::autotune_enabled() const {
  MutexLock lock(&mu_);
  return options_.autotune.enabled.value_or(true);
}

int64_t Model::cpu_budget() const {
  MutexLock lock(&mu_);
  const int64_t b = options_.autotune.cpu_budget.value_or(0);
  return b > 0 ? b : AutotuneParallelism();
}

int64_t Model::ram_budget() const {
  MutexLock lock(&mu_);
  // AUTOTUNE plans within the hard budget where its own is unset.
  int64_t b = options_.autotune.ram_budget.value_or(0);
  if (b <= 0) b = options_.ram_budget.value_or(0);
  return b > 0 ? b : PhysicalRamBytes() / 2;
}

bool Model::deterministic(std::optional<bool> op_value) const {
  if (op_value) return *op_value;
  MutexLock lock(&mu_);
  return options_.deterministic.value_or(true);
}

void Model::Start() {
  MutexLock lock(&mu_);
  if (started_) return;
  started_ = true;
  memory_->SetLimit(options_.ram_budget.value_or(0));
  if (has_autotune_) StartTunerLocked();
}

void Model::StartTunerLocked() {
  mu_.AssertHeld();
  if (stopping_ || tuner_.joinable() || !options_.autotune.enabled.value_or(true)) return;
  tuner_ = std::thread([this] {
    SetCurrentThreadName("sluice_autotune");
    TunerLoop();
  });
}

void Model::Stop() {
  std::thread t;
  {
    MutexLock lock(&mu_);
    stopping_ = true;
    stop_cv_.SignalAll();
    t = std::move(tuner_);
  }
  if (t.joinable()) t.join();
}

void Model::TunerLoop() {
  // The first step comes early: a cold pipeline runs at its starting guess.
  auto next = std::chrono::steady_clock::now() + kTunePeriod / 2;
  while (true) {
    {
      MutexLock lock(&mu_);
      while (!stopping_ && stop_cv_.WaitUntil(&mu_, next)) {
      }
      if (stopping_) return;
    }
    TuneOnce();
    next = std::chrono::steady_clock::now() + kTunePeriod;
  }
}

bool Model::TryReserveBytes(int64_t bytes) {
  const int64_t budget = ram_budget();
  MutexLock lock(&mu_);
  if (reserved_bytes_ + bytes > budget) return false;
  reserved_bytes_ += bytes;
  return true;
}

void Model::ReleaseBytes(int64_t bytes) {
  MutexLock lock(&mu_);
  reserved_bytes_ -= bytes;
}

int64_t Model::reserved_bytes() const {
  MutexLock lock(&mu_);
  return reserved_bytes_;
}

std::vector<StageStats> Model::Snapshot() const {
  std::vector<std::shared_ptr<Node>> live;
  {
    MutexLock lock(&mu_);
    for (const Entry& e : nodes_) {
      if (auto n = e.node.lock()) live.push_back(std::move(n));
    }
    if (auto r = root_.node.lock()) live.push_back(std::move(r));
  }
  std::vector<StageStats> out;
  out.reserve(live.size());
  for (const auto& n : live) out.push_back(n->Snapshot());
  return out;
}

namespace {

// Per-element times of one window, smoothed with the previous ones.
void UpdateWindow(const Node& n, bool has_cpu, TuneWindow& w) {
  const int64_t e = n.elements.load(std::memory_order_relaxed);
  const int64_t busy = n.busy_ns.load(std::memory_order_relaxed);
  const int64_t cpu = n.cpu_ns.load(std::memory_order_relaxed);
  const int64_t de = e - w.elements;
  // Sequential stages time one element in kSampleEvery: a window without a
  // timed element waits for the next (its elements are counted then).
  if (busy == w.busy_ns) return;
  if (de > 0) {
    const double wall = static_cast<double>(busy - w.busy_ns) / static_cast<double>(de);
    const double c = has_cpu ? static_cast<double>(cpu - w.cpu_ns) / static_cast<double>(de) : wall;
    const bool first = w.wall_per_element <= 0;
    w.wall_per_element = first ? wall : 0.5 * w.wall_per_element + 0.5 * wall;
    w.cpu_per_element = first ? c : 0.5 * w.cpu_per_element + 0.5 * c;
  }
  w.elements = e;
  w.busy_ns = busy;
  w.cpu_ns = cpu;
}

}  // namespace

void Model::TuneOnce() {
  MutexLock tune_lock(&tune_mu_);
  const int64_t budget = cpu_budget();
  const int64_t most = max_parallelism();
  struct Live {
    std::shared_ptr<Node> node;
    TuneWindow* window;
  };
  std::vector<Live> live;
  std::shared_ptr<Node> root;
  std::vector<std::pair<std::shared_ptr<Node>, int64_t>> changes;
  {
    MutexLock lock(&mu_);
    for (Entry& e : nodes_) {
      if (auto n = e.node.lock()) live.push_back({std::move(n), &e.last});
    }
    root = root_.node.lock();
    for (Live& l : live) UpdateWindow(*l.node, l.node->cpu_ns.load(std::memory_order_relaxed) > 0, *l.window);
    if (root) UpdateWindow(*root, false, root_.last);
    // The reference stage: the root once it has produced, else the last
    // stage (the furthest downstream) that has.
    int64_t ref_elements = root ? root->elements.load(std::memory_order_relaxed) : 0;
    if (ref_elements == 0) {
      for (const Live& l : live) {
        const int64_t e = l.node->elements.load(std::memory_order_relaxed);
        if (e > 0) ref_elements = e;
      }
    }
    if (ref_elements == 0) return;
    double cpu_per_ref = 0;
    for (const Live& l : live) {
      const double ratio = static_cast<double>(l.node->elements.load(std::memory_order_relaxed)) / ref_elements;
      cpu_per_ref += l.window->cpu_per_element * ratio;
    }
    if (cpu_per_ref <= 0) return;
    double rate = static_cast<double>(budget) / cpu_per_ref;  // reference elements per ns
    if (root && root->elements.load(std::memory_order_relaxed) > 0 && root_.last.wall_per_element > 0) {
      rate = std::min(rate, 1.25 / root_.last.wall_per_element);
    }
    for (const Live& l : live) {
      if (!l.node->autotune || l.window->wall_per_element <= 0) continue;
      const double ratio = static_cast<double>(l.node->elements.load(std::memory_order_relaxed)) / ref_elements;
      const double want = std::ceil(l.window->wall_per_element * ratio * rate);
      const int64_t p = std::clamp<int64_t>(static_cast<int64_t>(std::min(want, 1e9)), 1, most);
      const int64_t current = l.node->parallelism.load(std::memory_order_relaxed);
      // Up at once; down only by a clear margin, so that noise does not
      // make the stage oscillate.
      if (p > current || p < current * 4 / 5) changes.emplace_back(l.node, p);
    }
  }
  for (auto& [node, p] : changes) node->SetParallelism(p);
}

// ---- WithOptions ------------------------------------------------------------------------

namespace {

class OptionsDataset : public DatasetBase {
 public:
  OptionsDataset(DatasetPtr input, Options options)
      : DatasetBase(input->element_spec()), input_(std::move(input)), options_(std::move(options)) {}

  int64_t cardinality() const override { return input_->cardinality(); }
  std::string DebugName() const override { return "Options"; }
  std::unique_ptr<IteratorBase> MakeIteratorInternal(const IteratorContext& ctx) const override {
    // The input first: its options are merged first, and these win.
    if (ctx.model) ctx.model->PushOuterOptions(options_);
    std::unique_ptr<IteratorBase> it = input_->MakeIteratorInternal(ctx);
    if (ctx.model) {
      ctx.model->PopOuterOptions();
      ctx.model->MergeOptions(options_);
    }
    return it;
  }

 private:
  const DatasetPtr input_;
  const Options options_;
};

}  // namespace

Result<DatasetPtr> WithOptions(DatasetPtr input, Options options) {
  SLUICE_RETURN_IF_ERROR(CheckInput(input, "with_options"));
  if (options.autotune.cpu_budget && *options.autotune.cpu_budget < 0) {
    return InvalidArgument("autotune.cpu_budget must be >= 0");
  }
  if (options.autotune.ram_budget && *options.autotune.ram_budget < 0) {
    return InvalidArgument("autotune.ram_budget must be >= 0");
  }
  if (options.ram_budget && *options.ram_budget < 0) return InvalidArgument("ram_budget must be >= 0");
  return DatasetPtr(std::make_shared<OptionsDataset>(std::move(input), std::move(options)));
}

std::vector<StageStats> IteratorStats(const IteratorBase& root) {
  std::shared_ptr<Model> m = root.model();
  return m ? m->Snapshot() : std::vector<StageStats>{};
}

Options IteratorOptions(const IteratorBase& root) {
  std::shared_ptr<Model> m = root.model();
  return m ? m->options() : Options{};
}

}  // namespace sluice::data
