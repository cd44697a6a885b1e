// Built against an installed sluice through find_package(sluice COMPONENTS
// core) and sluice::core alone: proves that one layer links on its own
// (libsluice_core.a, no queue, io or image library, no zlib or codecs).
// Sums tensors on a ThreadPool.
//   downstream_core
#include <atomic>
#include <cstdint>
#include <cstdio>

#include "sluice/core/element.h"
#include "sluice/core/status.h"
#include "sluice/core/tensor.h"
#include "sluice/core/thread_pool.h"

int main() {
  std::atomic<int64_t> sum{0};
  {
    sluice::ThreadPool pool("downstream", 2);
    for (int64_t i = 1; i <= 4; ++i) {
      pool.Schedule([&sum, i] {
        const sluice::Element e{sluice::Tensor::Scalar<int64_t>(i * 10)};
        sum += e[0].scalar<int64_t>();
      });
    }
  }  // the destructor runs what was scheduled, then joins
  const sluice::Status status = sluice::errors::OutOfRange("end of input");
  std::printf("downstream_core: sum %lld, %s\n", static_cast<long long>(sum.load()), status.ToString().c_str());
  return sum == 100 && sluice::errors::IsOutOfRange(status) ? 0 : 1;
}
