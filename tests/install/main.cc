// Built against an installed sluice, once through find_package(sluice) and
// once through pkg-config: a FIFOQueue round trip and a clean close.
#include <cstdio>

#include "sluice/core/element.h"
#include "sluice/core/tensor.h"
#include "sluice/queue/queue.h"

int main() {
  sluice::queue::QueueOptions options;
  options.capacity = 4;
  options.dtypes = {sluice::DType::kInt64};
  options.shapes = {sluice::PartialShape(std::vector<int64_t>{})};
  auto q = sluice::queue::NewFIFOQueue(options);
  if (!q.ok()) return std::printf("create: %s\n", q.status().ToString().c_str()), 1;
  for (int64_t i = 0; i < 3; ++i) {
    sluice::Status s = (*q)->Enqueue(sluice::Element{sluice::Tensor::Scalar<int64_t>(i * 10)});
    if (!s.ok()) return std::printf("enqueue: %s\n", s.ToString().c_str()), 1;
  }
  if (!(*q)->Close().ok()) return 1;
  int64_t sum = 0;
  while (true) {
    auto e = (*q)->Dequeue();
    if (sluice::errors::IsOutOfRange(e.status())) break;
    if (!e.ok()) return std::printf("dequeue: %s\n", e.status().ToString().c_str()), 1;
    sum += (*e)[0].scalar<int64_t>();
  }
  std::printf("downstream: dequeued sum %lld from an installed sluice\n", static_cast<long long>(sum));
  return sum == 30 ? 0 : 1;
}
