// The README's example: one producer thread fills a FIFOQueue; the main
// thread dequeues batches until the OutOfRange cascade ends the input.
#include <cstdio>

#include "sluice/queue/queue.h"
#include "sluice/train/coordinator.h"
#include "sluice/train/queue_runner.h"
using namespace sluice;

int main() {
  queue::QueueOptions opts;
  opts.capacity = 100;
  opts.dtypes = {DType::kFloat32};
  opts.shapes = {PartialShape{4}};
  std::shared_ptr<queue::Queue> q = *queue::NewFIFOQueue(opts);

  train::QueueRunnerOptions producer;  // one thread per enqueue op, one call per step
  producer.queue = q;
  producer.enqueue_ops = {[q, next = 0]() mutable -> Status {
    if (next == 1000) return errors::OutOfRange("no more records");  // ends the thread, closes q
    return q->Enqueue(Element{Tensor::FromVector<float>({0, 1, 2, float(next++)})});
  }};
  auto runner = *train::QueueRunner::Create(producer);
  auto coord = std::make_shared<train::Coordinator>();
  auto threads = runner->CreateThreads(coord, /*start=*/true);

  int64_t n = 0;
  while (true) {
    Result<Element> batch = q->DequeueUpTo(32);  // [<=32, 4]; OutOfRange once closed and drained
    if (!batch.ok()) break;
    n += (*batch)[0].shape().dim(0);
  }
  coord->RequestStop();  // the input is exhausted: a clean stop
  std::printf("moved %lld records, join: %s\n", (long long)n, coord->Join(threads).ToString().c_str());
  return n == 1000 ? 0 : 1;
}
