// _core.data's memory budget and error policies (datasets.h, "Error policy"
// and "Memory budget and error reports"):
//
//   with_budget_options(ds, ram_budget, error_policy)   Options.ram_budget / error_policy
//   with_error_policy(ds, policy, replacement)          a map's or reader's own policy
//   iterator_memory(iterator) -> dict                   the tree's byte account
//   iterator_errors(iterator) -> list of dicts          what the policies handled
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <optional>
#include <string>

#include "bind_common.h"
#include "bind_data.h"
#include "bind_data_pass.h"
#include "sluice/data/datasets.h"

namespace sluice::python {
namespace {

namespace nb = nanobind;

data::ErrorPolicy PolicyOf(const std::string& name) {
  Result<data::ErrorPolicy> p = data::ParseErrorPolicy(name);
  if (!p.ok()) ThrowStatus(p.status());
  return *p;
}

nb::dict MemoryToPython(const data::MemoryStats& m) {
  nb::dict d;
  d["limit"] = m.limit;
  d["bytes"] = m.bytes;
  d["peak_bytes"] = m.peak_bytes;
  d["reserve_bytes"] = m.reserve_bytes;
  d["waits"] = m.waits;
  d["wait_ns"] = m.wait_ns;
  return d;
}

nb::dict KindToPython(const data::ErrorKindStats& k) {
  nb::dict d;
  d["stage"] = k.stage;
  d["code"] = std::string(CodeName(k.code));
  d["policy"] = std::string(data::ErrorPolicyName(k.policy));
  d["count"] = k.count;
  nb::list examples;
  for (const data::ErrorExample& e : k.examples) {
    nb::dict x;
    x["file"] = e.file;
    x["record"] = e.record;
    x["offset"] = e.offset;
    x["element"] = e.element;
    x["message"] = e.message;
    examples.append(x);
  }
  d["examples"] = examples;
  return d;
}

}  // namespace

void BindDataBudget(nb::module_& d) {
  d.def(
      "with_budget_options",
      [](const DataDatasetHandle& dataset, nb::handle ram_budget, nb::handle error_policy) {
        data::Options o;
        if (!ram_budget.is_none()) o.ram_budget = nb::cast<int64_t>(ram_budget);
        if (!error_policy.is_none()) o.error_policy = PolicyOf(nb::cast<std::string>(error_policy));
        return Wrap(data::WithOptions(dataset.ds, o));
      },
      nb::arg("dataset"), nb::arg("ram_budget").none(), nb::arg("error_policy").none(),
      "dataset with Options.ram_budget and Options.error_policy merged over its own (None: not set).");
  d.def(
      "with_error_policy",
      [](const DataDatasetHandle& dataset, const std::string& policy, nb::handle replacement) {
        data::StageErrorPolicy p{PolicyOf(policy), std::nullopt};
        if (!replacement.is_none()) p.replacement = PythonToElement(replacement, dataset.ds->element_spec().dtypes);
        return Wrap(data::WithStageErrorPolicy(dataset.ds, std::move(p)));
      },
      nb::arg("dataset"), nb::arg("policy"), nb::arg("replacement").none(),
      "dataset (a map or a reader) with its own error policy; replacement: component values or None.");
  d.def(
      "iterator_memory",
      [](const DataIteratorHandle& iterator) -> nb::object {
        if (!iterator.it) return nb::none();  // closed
        return MemoryToPython(data::IteratorMemory(iterator.it->iterator()));
      },
      nb::arg("iterator"), "The tree's byte account (a dict), or None once closed.");
  d.def(
      "iterator_errors",
      [](const DataIteratorHandle& iterator) {
        nb::list out;
        if (!iterator.it) return out;
        for (const data::ErrorKindStats& k : data::IteratorErrors(iterator.it->iterator())) {
          out.append(KindToPython(k));
        }
        return out;
      },
      nb::arg("iterator"), "What the error policies handled, one dict per kind; [] once closed.");
}

}  // namespace sluice::python
