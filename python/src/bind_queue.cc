// Queue bindings: sluice._core.Queue (any of the four kinds) and new_queue().
//
// Low level on purpose: values arrive already converted by sluice/queue.py
// (one numpy array or bytes object per component, in component order) and
// leave as a list of components; argument checking, dicts for named queues
// and TensorFlow's Python-side errors live in sluice/queue.py.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bind_common.h"
#include "sluice/queue/queue.h"

namespace sluice::python {
namespace {

using queue::Queue;
using queue::WaitOptions;
using Timeout = std::optional<double>;
using ShapeList = std::vector<std::optional<std::vector<int64_t>>>;

std::vector<DType> ToDTypes(const std::vector<int>& ints) {
  std::vector<DType> out;
  for (int d : ints) out.push_back(static_cast<DType>(d));
  return out;
}

// None: unknown rank; a list with -1 for unknown dims.
std::vector<PartialShape> ToShapes(const ShapeList& shapes) {
  std::vector<PartialShape> out;
  for (const auto& s : shapes) out.push_back(s ? PartialShape(*s) : PartialShape::UnknownRank());
  return out;
}

nb::object ShapeToPython(const PartialShape& shape) {
  if (!shape.rank_known()) return nb::none();
  nb::list dims;
  for (int64_t d : shape.dims()) {
    if (d < 0) {
      dims.append(nb::none());
    } else {
      dims.append(d);
    }
  }
  return nb::tuple(dims);
}

void Enqueue(QueueHandle& h, nb::handle values, Timeout timeout) {
  Queue& q = *h.queue;
  Element e = PythonToElement(values, q.dtypes());
  BlockingCall call(timeout);
  RunBlocking(call, [&] { return q.Enqueue(std::move(e), call.wait<WaitOptions>()); });
}

void EnqueueMany(QueueHandle& h, nb::handle values, Timeout timeout) {
  Queue& q = *h.queue;
  Element e = PythonToElement(values, q.dtypes());
  BlockingCall call(timeout);
  RunBlocking(call, [&] { return q.EnqueueMany(std::move(e), call.wait<WaitOptions>()); });
}

// Runs a Result<Element>-returning queue call without the GIL.
template <class F>
nb::list DequeueWith(Timeout timeout, F&& fn) {
  BlockingCall call(timeout);
  Result<Element> result = call.Run([&] { return fn(call.wait<WaitOptions>()); });
  return ElementToPython(ValueOrThrow(std::move(result)));
}

nb::list Dequeue(QueueHandle& h, Timeout timeout) {
  return DequeueWith(timeout, [&](const WaitOptions& w) { return h.queue->Dequeue(w); });
}

nb::list DequeueMany(QueueHandle& h, int64_t n, Timeout timeout) {
  return DequeueWith(timeout, [&](const WaitOptions& w) { return h.queue->DequeueMany(n, w); });
}

nb::list DequeueUpTo(QueueHandle& h, int64_t n, Timeout timeout) {
  return DequeueWith(timeout, [&](const WaitOptions& w) { return h.queue->DequeueUpTo(n, w); });
}

void Close(QueueHandle& h, bool cancel_pending_enqueues, Timeout timeout) {
  BlockingCall call(timeout);
  RunBlocking(call, [&] { return h.queue->Close(cancel_pending_enqueues, call.wait<WaitOptions>()); });
}

QueueHandle NewQueue(const std::string& kind, int32_t capacity, const std::vector<int>& dtypes,
                     const ShapeList& shapes, const std::vector<std::string>& names, const std::string& name,
                     const std::string& shared_name, int32_t min_after_dequeue, int64_t seed, int64_t seed2) {
  queue::RandomShuffleQueueOptions o;
  o.capacity = capacity;
  o.dtypes = ToDTypes(dtypes);
  o.shapes = ToShapes(shapes);
  o.names = names;
  o.name = name;
  o.shared_name = shared_name;
  Result<std::shared_ptr<Queue>> q = errors::InvalidArgument("unknown queue kind '", kind, "'");
  if (kind == "fifo") {
    q = queue::NewFIFOQueue(o);
  } else if (kind == "padding_fifo") {
    q = queue::NewPaddingFIFOQueue(o);
  } else if (kind == "priority") {
    q = queue::NewPriorityQueue(o);
  } else if (kind == "random_shuffle") {
    o.min_after_dequeue = min_after_dequeue;
    o.seed = seed;
    o.seed2 = seed2;
    q = queue::NewRandomShuffleQueue(o);
  }
  return QueueHandle{ValueOrThrow(std::move(q))};
}

std::vector<int> DTypesOf(const QueueHandle& h) {
  std::vector<int> out;
  for (DType d : h.queue->dtypes()) out.push_back(static_cast<int>(d));
  return out;
}

nb::list ShapesOf(const QueueHandle& h) {
  nb::list out;
  for (const PartialShape& s : h.queue->shapes()) out.append(ShapeToPython(s));
  return out;
}

}  // namespace

void BindQueue(nb::module_& m) {
  nb::class_<QueueHandle>(m, "Queue", "A sluice queue (C++). Use sluice.queue.FIFOQueue & co., which wrap it.")
      .def("enqueue", &Enqueue, nb::arg("values"), nb::arg("timeout") = nb::none())
      .def("enqueue_many", &EnqueueMany, nb::arg("values"), nb::arg("timeout") = nb::none())
      .def("dequeue", &Dequeue, nb::arg("timeout") = nb::none())
      .def("dequeue_many", &DequeueMany, nb::arg("n"), nb::arg("timeout") = nb::none())
      .def("dequeue_up_to", &DequeueUpTo, nb::arg("n"), nb::arg("timeout") = nb::none())
      .def("close", &Close, nb::arg("cancel_pending_enqueues") = false, nb::arg("timeout") = nb::none())
      .def("is_closed", [](const QueueHandle& h) { return h.queue->is_closed(); })
      .def("size", [](const QueueHandle& h) { return h.queue->size(); })
      .def("stats",
           [](const QueueHandle& h) {
             queue::QueueStats s = h.queue->stats();
             return nb::make_tuple(s.enqueued, s.dequeued);
           })
      .def_prop_ro("type_name", [](const QueueHandle& h) { return std::string(h.queue->type_name()); })
      .def_prop_ro("name", [](const QueueHandle& h) { return h.queue->name(); })
      .def_prop_ro("capacity", [](const QueueHandle& h) { return h.queue->capacity(); })
      .def_prop_ro("dtypes", &DTypesOf)
      .def_prop_ro("shapes", &ShapesOf)
      .def_prop_ro("names", [](const QueueHandle& h) { return h.queue->names(); })
      .def("__eq__", [](const QueueHandle& a, const QueueHandle& b) { return a.queue == b.queue; })
      .def("__hash__", [](const QueueHandle& h) { return std::hash<Queue*>()(h.queue.get()); });

  m.def("new_queue", &NewQueue, nb::arg("kind"), nb::arg("capacity"), nb::arg("dtypes"),
        nb::arg("shapes"), nb::arg("names"), nb::arg("name"), nb::arg("shared_name") = "",
        nb::arg("min_after_dequeue") = 0, nb::arg("seed") = 0, nb::arg("seed2") = 0,
        "Creates a queue. kind: 'fifo', 'random_shuffle', 'padding_fifo' or 'priority'. "
        "dtypes: TensorFlow DataType numbers. shapes: [] (undeclared) or one entry per "
        "component: None (unknown rank) or a list of dims (-1 unknown).");
}

}  // namespace sluice::python
