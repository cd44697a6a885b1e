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
  Result<Element> AssembleBatch(std::vector<Element> elements) const override {
    Element out;
    const int64_t n = static_cast<int64_t>(elements.size());
    for (size_t c = 0; c < dtypes().size(); ++c) {
      std::vector<int64_t> dims = shapes()[c].dims();
      bool padded = false;
      for (size_t d = 0; d < dims.size(); ++d) {
        if (dims[d] >= 0) continue;
        padded = true;
        dims[d] = 0;
        for (const Element& e : elements) dims[d] = std::max(dims[d], e[c].shape().dim(static_cast<int>(d)));
      }
      const TensorShape part_shape{std::span<const int64_t>(dims)};
      if (!padded) {
        std::vector<Tensor> parts;
        parts.reserve(elements.size());
        for (Element& e : elements) parts.push_back(std::move(e[c]));
        SLUICE_ASSIGN_OR_RETURN(Tensor batch, Tensor::Stack(parts, dtypes()[c], part_shape));
        out.push_back(std::move(batch));
        continue;
      }
      Tensor batch = Tensor::Zeros(dtypes()[c], part_shape.WithFirstDim(n));
      for (int64_t i = 0; i < n; ++i) elements[i][c].CopyPaddedTo(batch.Slice(i));
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
