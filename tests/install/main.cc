// Built against an installed sluice, once through find_package(sluice) and
// once through pkg-config: a FIFOQueue round trip and clean close (core,
// queue), a Coordinator stop (train), and a GZIP TFRecord write (io, which
// needs zlib at link time).
//   downstream <scratch dir>
#include <cstdio>
#include <string>
#include <vector>

#include "sluice/core/element.h"
#include "sluice/core/tensor.h"
#include "sluice/io/record_writer.h"
#include "sluice/queue/queue.h"
#include "sluice/train/coordinator.h"

namespace {

int Fail(const char* what, const sluice::Status& s) {
  std::printf("%s: %s\n", what, s.ToString().c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  sluice::queue::QueueOptions options;
  options.capacity = 4;
  options.dtypes = {sluice::DType::kInt64};
  options.shapes = {sluice::PartialShape(std::vector<int64_t>{})};
  auto q = sluice::queue::NewFIFOQueue(options);
  if (!q.ok()) return Fail("create", q.status());
  for (int64_t i = 0; i < 3; ++i) {
    sluice::Status s = (*q)->Enqueue(sluice::Element{sluice::Tensor::Scalar<int64_t>(i * 10)});
    if (!s.ok()) return Fail("enqueue", s);
  }
  if (sluice::Status s = (*q)->Close(); !s.ok()) return Fail("close", s);
  int64_t sum = 0;
  while (true) {
    auto e = (*q)->Dequeue();
    if (sluice::errors::IsOutOfRange(e.status())) break;
    if (!e.ok()) return Fail("dequeue", e.status());
    sum += (*e)[0].scalar<int64_t>();
  }

  sluice::train::Coordinator coord;
  coord.RequestStop(sluice::errors::OutOfRange("end of input")).IgnoreError();
  if (!coord.should_stop() || !coord.Join().ok()) return Fail("coordinator", coord.requested_status());

  const std::string path = std::string(argc > 1 ? argv[1] : ".") + "/downstream.tfrecord.gz";
  auto writer_options = sluice::io::RecordWriterOptions::FromCompressionType("GZIP");
  if (!writer_options.ok()) return Fail("options", writer_options.status());
  auto writer = sluice::io::RecordWriter::Open(path, *writer_options);
  if (!writer.ok()) return Fail("open", writer.status());
  if (sluice::Status s = (*writer)->Write("a record"); !s.ok()) return Fail("write", s);
  if (sluice::Status s = (*writer)->Close(); !s.ok()) return Fail("close writer", s);

  std::printf("downstream: dequeued sum %lld, coordinator stopped cleanly, wrote %s\n",
              static_cast<long long>(sum), path.c_str());
  return sum == 30 ? 0 : 1;
}
