// The statistics of a sequential stage's GetNext in its Node: every element
// counted, one call in Node::kSampleEvery timed (its time in input GetNext
// calls as wait, the rest as the stage's own work) and its bytes counted,
// each sample standing for kSampleEvery elements, as map and batch count.
// Private to src/data.
//
// Thread-safety: one StageTimer per GetNext call, on the calling thread (a
// sequential stage's node has a single writer).
#ifndef SLUICE_SRC_DATA_STAGE_TIMER_H_
#define SLUICE_SRC_DATA_STAGE_TIMER_H_

#include <cstdint>

#include "data/model.h"
#include "sluice/core/element.h"
#include "sluice/core/status.h"
#include "sluice/data/dataset.h"

namespace sluice::data {

class StageTimer {
 public:
  explicit StageTimer(Node& node) : node_(node), sample_(node.SampleNext()) {}
  StageTimer(const StageTimer&) = delete;
  StageTimer& operator=(const StageTimer&) = delete;

  // input->GetNext, its time counted as waiting for the input.
  [[gnu::always_inline]] Status Input(IteratorBase* input, Element* out, bool* end_of_sequence) {
    if (!sample_) [[likely]] return input->GetNext(out, end_of_sequence);
    return SampledInput(input, out, end_of_sequence);
  }

  // read() (which reads from the input), its time counted as waiting.
  template <class Read>
  Status Inputs(Read&& read) {
    if (!sample_) [[likely]] return read();
    // The clock is read at the first input call, not at the start of the
    // call: the stage's work before its first read is a few instructions.
    const int64_t t0 = last_ns_ != 0 ? NowNanos() : (start_ns_ = NowNanos());
    Status s = read();
    last_ns_ = NowNanos();
    wait_ns_ += last_ns_ - t0;
    return s;
  }

  // The call hands out `out`: counts it (and, if sampled, its times and bytes).
  [[gnu::always_inline]] void Produced(const Element& out) {
    if (sample_) [[unlikely]] RecordSample(out);
    Node::Bump(node_.elements, 1);
  }

  // Ends a call: counts `out` if the call produced it (`s` OK, not the end).
  [[gnu::always_inline]] Status Finish(Status s, const Element& out, bool end_of_sequence) {
    if (s.ok() && !end_of_sequence) Produced(out);
    return s;
  }

 private:
  [[gnu::noinline]] Status SampledInput(IteratorBase* input, Element* out, bool* end_of_sequence) {
    return Inputs([&] { return input->GetNext(out, end_of_sequence); });
  }
  [[gnu::noinline]] void RecordSample(const Element& out) {
    const int64_t own = start_ns_ != 0 ? NowNanos() - start_ns_ - wait_ns_ : 0;
    Node::Bump(node_.wait_ns, wait_ns_ * Node::kSampleEvery);
    Node::Bump(node_.busy_ns, own * Node::kSampleEvery);
    Node::Bump(node_.bytes, ElementBytes(out) * Node::kSampleEvery);
  }

  Node& node_;
  const bool sample_;
  int64_t start_ns_ = 0;  // at the first input call (0: none yet)
  int64_t last_ns_ = 0;   // when the last input call returned
  int64_t wait_ns_ = 0;
};

}  // namespace sluice::data

#endif  // SLUICE_SRC_DATA_STAGE_TIMER_H_
