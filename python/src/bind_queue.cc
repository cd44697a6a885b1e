// Queue bindings: sluice._core.Queue (any of the four kinds) and new_queue().
//
// Low level on purpose: values arrive already converted by sluice/queue.py
// (one numpy array or bytes object per component, in component order) and
// leave as a list of components; argument checking, dicts for named queues
// and TensorFlow's Python-side errors live in sluice/queue.py.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

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

void Enqueue(Queue& q, nb::handle values, Timeout timeout) {
  Element e = PythonToElement(values, q.dtypes());
  BlockingCall call(timeout);
  RunBlocking(call, [&] { return q.Enqueue(std::move(e), call.wait<WaitOptions>()); });
}

void EnqueueMany(Queue& q, nb::handle values, Timeout timeout) {
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

void Close(Queue& q, bool cancel_pending_enqueues, Timeout timeout) {
  BlockingCall call(timeout);
  RunBlocking(call, [&] { return q.Close(cancel_pending_enqueues, call.wait<WaitOptions>()); });
}

std::shared_ptr<Queue> NewQueue(const std::string& kind, int32_t capacity, const std::vector<int>& dtypes,
                                const ShapeList& shapes, const std::vector<std::string>& names,
                                const std::string& name, const std::string& shared_name,
                                int32_t min_after_dequeue, int64_t seed, int64_t seed2) {
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
  return ValueOrThrow(std::move(q));
}

}  // namespace

void BindQueue(nb::module_& m) {
  nb::class_<Queue>(m, "Queue",
                    "A sluice queue (C++). Use sluice.queue.FIFOQueue & co., which wrap it.")
      .def("enqueue", &Enqueue, nb::arg("values"), nb::arg("timeout") = nb::none())
      .def("enqueue_many", &EnqueueMany, nb::arg("values"), nb::arg("timeout") = nb::none())
      .def(
          "dequeue",
          [](Queue& q, Timeout timeout) {
            return DequeueWith(timeout, [&](const WaitOptions& w) { return q.Dequeue(w); });
          },
          nb::arg("timeout") = nb::none())
      .def(
          "dequeue_many",
          [](Queue& q, int64_t n, Timeout timeout) {
            return DequeueWith(timeout, [&](const WaitOptions& w) { return q.DequeueMany(n, w); });
          },
          nb::arg("n"), nb::arg("timeout") = nb::none())
      .def(
          "dequeue_up_to",
          [](Queue& q, int64_t n, Timeout timeout) {
            return DequeueWith(timeout, [&](const WaitOptions& w) { return q.DequeueUpTo(n, w); });
          },
          nb::arg("n"), nb::arg("timeout") = nb::none())
      .def("close", &Close, nb::arg("cancel_pending_enqueues") = false, nb::arg("timeout") = nb::none())
      .def("is_closed", &Queue::is_closed)
      .def("size", &Queue::size)
      .def("stats",
           [](const Queue& q) {
             queue::QueueStats s = q.stats();
             return nb::make_tuple(s.enqueued, s.dequeued);
           })
      .def_prop_ro("type_name", [](const Queue& q) { return std::string(q.type_name()); })
      .def_prop_ro("name", &Queue::name)
      .def_prop_ro("capacity", &Queue::capacity)
      .def_prop_ro("dtypes",
                   [](const Queue& q) {
                     std::vector<int> out;
                     for (DType d : q.dtypes()) out.push_back(static_cast<int>(d));
                     return out;
                   })
      .def_prop_ro("shapes",
                   [](const Queue& q) {
                     nb::list out;
                     for (const PartialShape& s : q.shapes()) out.append(ShapeToPython(s));
                     return out;
                   })
      .def_prop_ro("names", &Queue::names);

  m.def("new_queue", &NewQueue, nb::arg("kind"), nb::arg("capacity"), nb::arg("dtypes"),
        nb::arg("shapes"), nb::arg("names"), nb::arg("name"), nb::arg("shared_name") = "",
        nb::arg("min_after_dequeue") = 0, nb::arg("seed") = 0, nb::arg("seed2") = 0,
        "Creates a queue. kind: 'fifo', 'random_shuffle', 'padding_fifo' or 'priority'. "
        "dtypes: TensorFlow DataType numbers. shapes: [] (undeclared) or one entry per "
        "component: None (unknown rank) or a list of dims (-1 unknown).");
}

}  // namespace sluice::python
