// PaddingFIFOQueue: a FIFOQueue whose component shapes may have unknown
// dimensions; dequeue_many pads every element of a batch to the largest size
// of each unknown dimension in that batch (0, "" or false).
#include <algorithm>

#include "queue/fifo_queue.h"
#include "queue/shared_queues.h"

namespace sluice::queue {
namespace {

class PaddingFIFOQueue : public FIFOQueue {
 public:
  using FIFOQueue::FIFOQueue;

  std::string_view type_name() const override { return "PaddingFIFOQueue"; }

 protected:
  Result<Element> AssembleBatch(std::vector<Piece>&& pieces, int64_t n) const override {
    if (pieces.size() == 1 && pieces[0].batched) return std::move(pieces[0].data);  // one shape: no padding
    Element out;
    for (size_t c = 0; c < dtypes().size(); ++c) {
      // Each unknown dim: the largest in this batch. A batched piece's rows
      // all share its shape (less the leading dimension).
      std::vector<int64_t> dims = shapes()[c].dims();
      for (size_t d = 0; d < dims.size(); ++d) {
        if (dims[d] >= 0) continue;
        dims[d] = 0;
        for (const Piece& p : pieces) {
          const int axis = static_cast<int>(d) + (p.batched ? 1 : 0);
          dims[d] = std::max(dims[d], p.data[c].shape().dim(axis));
        }
      }
      const TensorShape part_shape{std::span<const int64_t>(dims)};
      Tensor batch = Tensor::Zeros(dtypes()[c], part_shape.WithFirstDim(n));
      int64_t row = 0;
      for (const Piece& p : pieces) {
        if (!p.batched) {
          p.data[c].CopyPaddedTo(batch.Slice(row++));
          continue;
        }
        for (int64_t i = 0; i < p.rows; ++i) p.data[c].Slice(i).CopyPaddedTo(batch.Slice(row++));
      }
      out.push_back(std::move(batch));
    }
    return out;
  }
};

}  // namespace

Result<std::shared_ptr<Queue>> NewPaddingFIFOQueue(QueueOptions o) {
  if (o.shapes.size() != o.dtypes.size()) {
    return errors::InvalidArgument("Shapes must be provided for all components, but received ", o.dtypes.size(),
                                   " dtypes and ", o.shapes.size(), " shapes.");
  }
  for (const PartialShape& s : o.shapes) {
    if (!s.rank_known()) return errors::InvalidArgument("All shapes must have a defined rank");
  }
  QueueSignature sig{"PaddingFIFOQueue", o.capacity < 0 ? Queue::kUnbounded : o.capacity, o.dtypes, o.shapes};
  return CreateOrShare(o.shared_name, sig, [&]() -> Result<std::shared_ptr<Queue>> {
    auto q = std::make_shared<PaddingFIFOQueue>(o.name.empty() ? "padding_fifo_queue" : o.name, o.capacity,
                                                o.dtypes, o.shapes, o.names);
    SLUICE_RETURN_IF_ERROR(q->Initialize());
    return std::shared_ptr<Queue>(std::move(q));
  });
}

}  // namespace sluice::queue
