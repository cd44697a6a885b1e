#include "sluice/train/input_producers.h"

#include <limits>
#include <numeric>
#include <random>
#include <utility>

#include "core/philox.h"
#include "sluice/core/mutex.h"
#include "train/name_scope.h"

namespace sluice::train {
namespace {

// Yields the rows of `rows` (one component, dimension 0) in a fresh random
// order on every call: TF's RandomShuffle op, bit for bit. Its Philox
// generator persists across calls; each call with n > 1 rows reserves
// ceil((n - 1) / 4) blocks (n - 1 samples) and swaps row i with row
// i + sample_i % (n - i), i = 0 .. n-2. An input of at most one row or one
// element is passed through and draws nothing. Thread-safe.
class Shuffler {
 public:
  Shuffler(Tensor rows, uint64_t seed, uint64_t seed2) : rows_(std::move(rows)), rng_(seed, seed2) {}

  Result<Element> Next() SLUICE_EXCLUDES(mu_) {
    const int64_t n = rows_.shape().dim(0);
    if (n <= 1 || rows_.num_elements() <= 1) return Element{rows_};
    Philox4x32 rng = Reserve((static_cast<uint64_t>(n) - 1 + 3) / 4);
    std::vector<int64_t> order(static_cast<size_t>(n));
    std::iota(order.begin(), order.end(), int64_t{0});
    for (int64_t i = 0; i < n - 1; ++i) {
      // TF's uniform(n) takes a uint32 bound.
      const int64_t j = i + rng.Next() % static_cast<uint32_t>(n - i);
      std::swap(order[static_cast<size_t>(i)], order[static_cast<size_t>(j)]);
    }
    std::vector<Tensor> parts;
    parts.reserve(order.size());
    for (int64_t i : order) parts.push_back(rows_.Slice(i));  // views; Stack copies once
    SLUICE_ASSIGN_OR_RETURN(Tensor shuffled,
                            Tensor::Stack(parts, rows_.dtype(), rows_.shape().WithoutFirstDim()));
    return Element{std::move(shuffled)};
  }

 private:
  // A generator for the next `blocks` blocks, which the shared one skips
  // (TF's GuardedPhiloxRandom::ReserveSamples128).
  Philox4x32 Reserve(uint64_t blocks) SLUICE_EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    Philox4x32 local = rng_;
    rng_.Skip(blocks);
    return local;
  }

  const Tensor rows_;
  Mutex mu_;
  Philox4x32 rng_ SLUICE_GUARDED_BY(mu_);  // never sampled: always at a block boundary
};

// The RandomShuffle op's seeds: (0, 0) draws both from a non-deterministic
// source, as TF's GuardedPhiloxRandom::Init.
std::pair<uint64_t, uint64_t> ShuffleSeeds(const ProducerOptions& o) {
  if (o.seed != 0 || o.seed2 != 0) return {static_cast<uint64_t>(o.seed), static_cast<uint64_t>(o.seed2)};
  std::random_device rd;
  const uint64_t seed = (uint64_t{rd()} << 32) | rd();
  const uint64_t seed2 = (uint64_t{rd()} << 32) | rd();
  return {seed, seed2};
}

Status ValidateProducerOptions(const ProducerOptions& o) {
  if (o.num_epochs.has_value() && *o.num_epochs <= 0) {
    return errors::InvalidArgument("num_epochs must be > 0 not ", *o.num_epochs, ".");
  }
  if (o.capacity <= 0) return errors::InvalidArgument("capacity must be > 0 not ", o.capacity, ".");
  return Status();
}

// TF's input_producer body: limit_epochs -> (shuffle) -> enqueue_many into a
// FIFOQueue of rows, one epoch per run, one runner thread.
Result<ProducerQueue> MakeInputProducer(Tensor rows, std::string_view fn, ProducerOptions o) {
  SLUICE_RETURN_IF_ERROR(ValidateProducerOptions(o));
  if (rows.shape().dim(0) == 0) {
    // TF would spin enqueueing empty epochs (string_input_producer asserts
    // at run time); an input with no rows is refused up front.
    return errors::InvalidArgument(fn, " requires a non-empty input tensor");
  }
  const std::string scope = internal::UniqueScope(o.name.empty() ? "input_producer" : o.name);
  queue::QueueOptions qo;
  qo.capacity = o.capacity;
  qo.dtypes = {rows.dtype()};
  qo.shapes = {PartialShape(rows.shape().WithoutFirstDim())};
  qo.name = scope + "/fifo_queue";
  qo.shared_name = o.shared_name;
  SLUICE_ASSIGN_OR_RETURN(std::shared_ptr<queue::Queue> q, queue::NewFIFOQueue(std::move(qo)));

  Producer epoch;
  if (o.shuffle) {
    const auto [seed, seed2] = ShuffleSeeds(o);
    auto shuffler = std::make_shared<Shuffler>(std::move(rows), seed, seed2);
    epoch = [shuffler] { return shuffler->Next(); };
  } else {
    epoch = [rows = Element{std::move(rows)}]() -> Result<Element> { return rows; };
  }
  SLUICE_ASSIGN_OR_RETURN(epoch, LimitEpochs(std::move(epoch), o.num_epochs));

  QueueRunnerOptions ro;
  ro.queue = q;
  ro.enqueue_ops = {[q, epoch = std::move(epoch)]() -> Status {
    SLUICE_ASSIGN_OR_RETURN(Element batch, epoch());
    return q->EnqueueMany(std::move(batch));
  }};
  ro.cancel_op = std::move(o.cancel_op);
  SLUICE_ASSIGN_OR_RETURN(std::shared_ptr<QueueRunner> runner, QueueRunner::Create(std::move(ro)));
  AddQueueRunner(runner, o.registry);
  return ProducerQueue{std::move(q), std::move(runner)};
}

}  // namespace

SeedPair TfSeedPair(int64_t op_seed, std::optional<int64_t> graph_seed) {
  constexpr int64_t kMaxInt32 = 2147483647;
  constexpr int64_t kDefaultGraphSeed = 87654321;
  auto truncate = [](int64_t s) {  // Python's %: never negative
    const int64_t r = s % kMaxInt32;
    return r < 0 ? r + kMaxInt32 : r;
  };
  SeedPair p{graph_seed.has_value() ? truncate(*graph_seed) : kDefaultGraphSeed, truncate(op_seed)};
  if (p.seed == 0 && p.seed2 == 0) p.seed2 = kMaxInt32;  // (0, 0) would mean "random"
  return p;
}

Result<ProducerQueue> InputProducer(Tensor input_tensor, InputProducerOptions options) {
  if (!input_tensor.valid()) return errors::InvalidArgument("input_producer: input_tensor is not set");
  if (input_tensor.rank() < 1) {
    return errors::InvalidArgument("input_producer: input_tensor must have rank >= 1, got shape ",
                                   input_tensor.shape().DebugString());
  }
  if (options.element_shape.has_value()) {
    const TensorShape row = input_tensor.shape().WithoutFirstDim();
    const PartialShape& want = *options.element_shape;
    if (!want.IsCompatibleWith(row)) {
      return errors::InvalidArgument("Shapes ", row.DebugString(), " and ", want.DebugString(),
                                     " are not compatible");
    }
  }
  return MakeInputProducer(std::move(input_tensor), "input_producer", std::move(options));
}

Result<ProducerQueue> StringInputProducer(const std::vector<std::string>& strings, ProducerOptions options) {
  if (strings.empty()) {
    return errors::InvalidArgument("string_input_producer requires a non-null input tensor");
  }
  return MakeInputProducer(Tensor::FromStrings(strings), "string_input_producer", std::move(options));
}

Result<ProducerQueue> RangeInputProducer(int32_t limit, ProducerOptions options) {
  if (limit < 0) return errors::InvalidArgument("range_input_producer: limit must be >= 0 not ", limit);
  Tensor range(DType::kInt32, TensorShape{limit});
  std::iota(range.data<int32_t>(), range.data<int32_t>() + limit, 0);
  return MakeInputProducer(std::move(range), "range_input_producer", std::move(options));
}

Result<Producer> SliceInputProducer(std::vector<Tensor> tensor_list, ProducerOptions options) {
  if (tensor_list.empty()) {
    return errors::InvalidArgument("Expected at least one tensor in slice_input_producer().");
  }
  for (size_t i = 0; i < tensor_list.size(); ++i) {
    const Tensor& t = tensor_list[i];
    if (!t.valid() || t.rank() < 1) {
      return errors::InvalidArgument("slice_input_producer: tensor ", i, " must have rank >= 1");
    }
  }
  const int64_t rows = tensor_list[0].shape().dim(0);
  if (rows > std::numeric_limits<int32_t>::max()) {
    return errors::InvalidArgument("slice_input_producer: too many rows (", rows, ") for an int32 index");
  }
  SLUICE_ASSIGN_OR_RETURN(ProducerQueue range,
                          RangeInputProducer(static_cast<int32_t>(rows), std::move(options)));
  return Producer([q = std::move(range.queue), tensors = std::move(tensor_list)]() -> Result<Element> {
    SLUICE_ASSIGN_OR_RETURN(Element index, q->Dequeue(CurrentProducerWait()));
    const int64_t i = index[0].scalar<int32_t>();
    Element slices;
    for (const Tensor& t : tensors) {
      const int64_t n = t.shape().dim(0);
      if (i >= n) return errors::InvalidArgument("indices[0] = ", i, " is not in [0, ", n, ")");
      slices.push_back(t.Slice(i));
    }
    return slices;
  });
}

}  // namespace sluice::train
