// Helpers for the queue tests: status assertions, tensor builders, a probe
// that proves a call is blocked, and queues whose elements carry an int64 id
// so that one test body can run against all four queue types.
//
// Blocking without sleeps: a call made with BlockedProbe::Options() runs the
// probe's interrupt_check while (and only while) it waits, so
// BlockedProbe::WaitBlocked() returns once the call is parked in the queue's
// line. Every blocking call in these tests also carries a safety deadline
// (kSafety), so a broken queue fails a test instead of hanging the binary.
#ifndef SLUICE_QUEUE_QUEUE_TEST_UTIL_H_
#define SLUICE_QUEUE_QUEUE_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "sluice/core/cancellation.h"
#include "sluice/core/element.h"
#include "sluice/core/status.h"
#include "sluice/core/tensor.h"
#include "sluice/queue/queue.h"

namespace sluice::queue::testing {

using namespace std::chrono_literals;  // NOLINT: test helpers

// Bound on any wait that should end. Reached only when the code under test is
// broken (or the machine is hopelessly overloaded), never on the happy path.
inline constexpr std::chrono::seconds kSafety{10};

// A deadline far enough away that only a hang reaches it.
inline WaitOptions Safe(CancellationManager* cm = nullptr) {
  WaitOptions o = WaitOptions::Timeout(kSafety);
  o.cancellation = cm;
  return o;
}

// ---------------------------------------------------------------------------
// Status assertions.

inline ::testing::AssertionResult IsOk(const Status& s) {
  if (s.ok()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "expected OK, got " << s;
}
template <class T>
::testing::AssertionResult IsOk(const Result<T>& r) {
  return IsOk(r.status());
}

// `s` has exactly `code` and its message contains `fragment`.
inline ::testing::AssertionResult StatusIs(const Status& s, Code code,
                                           std::string_view fragment = {}) {
  if (s.code() == code && s.message().find(fragment) != std::string::npos) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure()
         << "expected " << CodeName(code) << " containing \"" << fragment << "\", got " << s;
}
template <class T>
::testing::AssertionResult StatusIs(const Result<T>& r, Code code, std::string_view fragment = {}) {
  if (r.ok()) return ::testing::AssertionFailure() << "expected " << CodeName(code) << ", got a value";
  return StatusIs(r.status(), code, fragment);
}

#define SLUICE_QT_CONCAT_INNER_(a, b) a##b
#define SLUICE_QT_CONCAT_(a, b) SLUICE_QT_CONCAT_INNER_(a, b)
#define ASSERT_OK(expr) ASSERT_TRUE(::sluice::queue::testing::IsOk(expr))
#define EXPECT_OK(expr) EXPECT_TRUE(::sluice::queue::testing::IsOk(expr))
// `lhs = value of expr` (a Result), or fails the test.
#define ASSERT_OK_AND_ASSIGN(lhs, expr) \
  ASSERT_OK_AND_ASSIGN_IMPL_(SLUICE_QT_CONCAT_(_qt_result_, __LINE__), lhs, expr)
#define ASSERT_OK_AND_ASSIGN_IMPL_(tmp, lhs, expr)       \
  auto tmp = (expr);                                     \
  ASSERT_TRUE(::sluice::queue::testing::IsOk(tmp.status())); \
  lhs = std::move(tmp).value()

// ---------------------------------------------------------------------------
// Tensors and elements.

inline Tensor F32(float v) { return Tensor::Scalar<float>(v); }
inline Tensor I32(int32_t v) { return Tensor::Scalar<int32_t>(v); }
inline Tensor I64(int64_t v) { return Tensor::Scalar<int64_t>(v); }
inline Tensor Str(std::string_view v) { return Tensor::String(v); }
template <class T>
Tensor Vec(const std::vector<T>& values) {
  return Tensor::FromVector<T>(values);
}
// A tensor of `shape` holding `values` in row-major order.
template <class T>
Tensor Make(TensorShape shape, const std::vector<T>& values) {
  Tensor t(DTypeOf<T>(), std::move(shape));
  EXPECT_EQ(static_cast<size_t>(t.num_elements()), values.size()) << "Make: wrong value count";
  T* out = t.data<T>();
  for (size_t i = 0; i < values.size() && i < static_cast<size_t>(t.num_elements()); ++i) {
    out[i] = values[i];
  }
  return t;
}
// A tensor of `shape` whose every value is `value`.
template <class T>
Tensor Filled(TensorShape shape, T value) {
  Tensor t(DTypeOf<T>(), std::move(shape));
  for (T& v : t.flat<T>()) v = value;
  return t;
}
template <class T>
std::vector<T> Values(const Tensor& t) {
  EXPECT_EQ(t.dtype(), DTypeOf<T>());
  if (t.dtype() != DTypeOf<T>()) return {};
  auto f = t.flat<T>();
  return std::vector<T>(f.begin(), f.end());
}
template <class T>
T ScalarOf(const Tensor& t) {
  EXPECT_EQ(t.dtype(), DTypeOf<T>());
  EXPECT_EQ(t.num_elements(), 1);
  if (t.dtype() != DTypeOf<T>() || t.num_elements() != 1) return T{};
  return t.scalar<T>();
}
inline std::vector<int64_t> Dims(const Tensor& t) {
  return std::vector<int64_t>(t.shape().dims().begin(), t.shape().dims().end());
}

// ---------------------------------------------------------------------------
// Options.

// The shape [] (careful: PartialShape{} is the unknown rank, not a scalar).
inline PartialShape ScalarShape() { return PartialShape(std::vector<int64_t>{}); }

// Capacity, dtypes and shapes; the queue's name is "q" so that messages read
// "FIFOQueue 'q' is closed.".
inline QueueOptions Opts(int32_t capacity, std::vector<DType> dtypes,
                         std::vector<PartialShape> shapes = {}) {
  QueueOptions o;
  o.capacity = capacity;
  o.dtypes = std::move(dtypes);
  o.shapes = std::move(shapes);
  o.name = "q";
  return o;
}
inline RandomShuffleQueueOptions RsqOpts(int32_t capacity, int32_t min_after_dequeue,
                                         std::vector<DType> dtypes,
                                         std::vector<PartialShape> shapes = {},
                                         int64_t seed = 0, int64_t seed2 = 0) {
  RandomShuffleQueueOptions o;
  static_cast<QueueOptions&>(o) = Opts(capacity, std::move(dtypes), std::move(shapes));
  o.min_after_dequeue = min_after_dequeue;
  o.seed = seed;
  o.seed2 = seed2;
  return o;
}

// ---------------------------------------------------------------------------
// Threads.

// Runs `f` on a new thread. The future's destructor joins it.
template <class F>
auto Async(F&& f) {
  return std::async(std::launch::async, std::forward<F>(f));
}
template <class T>
bool IsDone(const std::future<T>& f) {
  return f.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
}
// Waits (up to kSafety) for `f` to finish; false if it does not.
template <class T>
bool Finishes(const std::future<T>& f) {
  return f.wait_for(kSafety) == std::future_status::ready;
}
// Polls `pred` until it holds (true) or kSafety passes (false). The poll
// interval does not matter for correctness: this waits for a condition, it
// does not sleep in place of one.
inline bool Eventually(const std::function<bool()>& pred) {
  const auto deadline = std::chrono::steady_clock::now() + kSafety;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  return true;
}

// Proves that a call is blocked: pass Options() to the call, then
// WaitBlocked() returns true once the call's interrupt_check has run, which
// happens only while the call waits in the queue. Must outlive the call.
class BlockedProbe {
 public:
  BlockedProbe() = default;
  BlockedProbe(const BlockedProbe&) = delete;
  BlockedProbe& operator=(const BlockedProbe&) = delete;

  WaitOptions Options(CancellationManager* cm = nullptr) {
    WaitOptions o = Safe(cm);
    o.interrupt_check = [this] {
      {
        std::lock_guard<std::mutex> l(mu_);
        blocked_ = true;
      }
      cv_.notify_all();
      return Status();
    };
    o.interrupt_check_interval = std::chrono::milliseconds(1);
    return o;
  }
  bool WaitBlocked() {
    std::unique_lock<std::mutex> l(mu_);
    return cv_.wait_for(l, kSafety, [this] { return blocked_; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool blocked_ = false;
};

// ---------------------------------------------------------------------------
// Id queues: one body, four queue types.

enum class Kind { kFIFO, kRandomShuffle, kPaddingFIFO, kPriority };

inline std::string KindName(Kind k) {
  switch (k) {
    case Kind::kFIFO: return "FIFOQueue";
    case Kind::kRandomShuffle: return "RandomShuffleQueue";
    case Kind::kPaddingFIFO: return "PaddingFIFOQueue";
    case Kind::kPriority: return "PriorityQueue";
  }
  return "?";
}
// Whether ids enqueued in ascending order come out in that order.
inline bool KeepsOrder(Kind k) { return k != Kind::kRandomShuffle; }
// Index of the first user component (PriorityQueue prepends the priority).
inline size_t FirstValue(Kind k) { return k == Kind::kPriority ? 1 : 0; }

// A queue of `kind` whose elements are one int64 id of shape [] (declared
// unless `with_shapes` is false; PaddingFIFOQueue always declares it).
// PriorityQueue elements are (priority = id, id). RandomShuffleQueue has
// min_after_dequeue 0.
inline Result<std::shared_ptr<Queue>> NewIdQueue(Kind kind, int32_t capacity,
                                                 bool with_shapes = true,
                                                 std::string shared_name = "") {
  std::vector<PartialShape> shapes;
  if (with_shapes || kind == Kind::kPaddingFIFO) shapes = {ScalarShape()};
  QueueOptions o = Opts(capacity, {DType::kInt64}, shapes);
  o.shared_name = std::move(shared_name);
  switch (kind) {
    case Kind::kFIFO: return NewFIFOQueue(o);
    case Kind::kPaddingFIFO: return NewPaddingFIFOQueue(o);
    case Kind::kPriority: return NewPriorityQueue(o);
    case Kind::kRandomShuffle: {
      RandomShuffleQueueOptions r;
      static_cast<QueueOptions&>(r) = o;
      return NewRandomShuffleQueue(r);
    }
  }
  return errors::Internal("bad kind");
}

inline Element IdElement(Kind kind, int64_t id) {
  if (kind == Kind::kPriority) return Element{I64(id), I64(id)};
  return Element{I64(id)};
}
inline Element IdBatch(Kind kind, const std::vector<int64_t>& ids) {
  if (kind == Kind::kPriority) return Element{Vec<int64_t>(ids), Vec<int64_t>(ids)};
  return Element{Vec<int64_t>(ids)};
}
inline int64_t IdOf(Kind kind, const Element& e) {
  EXPECT_EQ(e.size(), FirstValue(kind) + 1);
  if (e.size() != FirstValue(kind) + 1) return -1;
  return ScalarOf<int64_t>(e[FirstValue(kind)]);
}
inline std::vector<int64_t> IdsOf(Kind kind, const Element& batch) {
  EXPECT_EQ(batch.size(), FirstValue(kind) + 1);
  if (batch.size() != FirstValue(kind) + 1) return {};
  return Values<int64_t>(batch[FirstValue(kind)]);
}
inline std::vector<int64_t> Iota(int64_t begin, int64_t end) {
  std::vector<int64_t> v;
  for (int64_t i = begin; i < end; ++i) v.push_back(i);
  return v;
}

}  // namespace sluice::queue::testing

#endif  // SLUICE_QUEUE_QUEUE_TEST_UTIL_H_
