#include "sluice/ops/example_view.h"

#include "example_plan.h"
#include "record_errors.h"
#include "value_buffer.h"
#include "wire_format.h"

namespace sluice::ops {
namespace {

wire::FeatureRef Ref(std::string_view data, FeatureKind kind, uint32_t run_start) {
  wire::FeatureRef f;
  f.data = data;
  f.kind = kind;
  f.run_start = run_start;
  return f;
}

Status Malformed() { return errors::InvalidArgument("Can't parse serialized Feature."); }

template <FeatureKind K, class T>
Status Append(std::string_view data, FeatureKind kind, uint32_t run_start, std::vector<T>* out) {
  if (kind == FeatureKind::kNone) return Status();
  if (kind != K) {
    return errors::InvalidArgument("Data types don't match. Expected type: ",
                                   internal::TfTypeName(internal::KindDType(K)),
                                   ", Actual type: ", internal::TfTypeName(internal::KindDType(kind)));
  }
  internal::VectorSink<T> sink{out};
  if (!wire::DecodeFeatureValues<K>(Ref(data, kind, run_start), sink)) return Malformed();
  return Status();
}

struct CountSink {
  int64_t n = 0;
  void Add(int64_t) { ++n; }
  void Add(float) { ++n; }
  void Add(std::string_view) { ++n; }
  void AddPackedFloats(const uint8_t*, size_t k) { n += static_cast<int64_t>(k); }
};

}  // namespace

Result<FeatureView> FeatureView::Parse(std::string_view serialized) {
  wire::FeatureRef f;
  if (!wire::ResolveFeature(serialized, &f)) return Malformed();
  FeatureView v;
  v.data_ = f.data;
  v.kind_ = f.kind;
  v.run_start_ = f.run_start;
  return v;
}

Status FeatureView::AppendBytes(std::vector<std::string_view>* out) const {
  return Append<FeatureKind::kBytes>(data_, kind_, run_start_, out);
}
Status FeatureView::AppendFloats(std::vector<float>* out) const {
  return Append<FeatureKind::kFloat>(data_, kind_, run_start_, out);
}
Status FeatureView::AppendInt64s(std::vector<int64_t>* out) const {
  return Append<FeatureKind::kInt64>(data_, kind_, run_start_, out);
}

Result<int64_t> FeatureView::NumValues() const {
  CountSink sink;
  const wire::FeatureRef f = Ref(data_, kind_, run_start_);
  bool ok = true;
  switch (kind_) {
    case FeatureKind::kBytes:
      ok = wire::DecodeFeatureValues<FeatureKind::kBytes>(f, sink);
      break;
    case FeatureKind::kFloat:
      ok = wire::DecodeFeatureValues<FeatureKind::kFloat>(f, sink);
      break;
    case FeatureKind::kInt64:
      ok = wire::DecodeFeatureValues<FeatureKind::kInt64>(f, sink);
      break;
    case FeatureKind::kNone:
      break;
  }
  if (!ok) return Malformed();
  return sink.n;
}

Result<ExampleView> ExampleView::Parse(std::string_view serialized) {
  ExampleView view;
  bool features_ok = true;
  const bool ok = wire::ForEachMessageField(serialized, 1, [&](std::string_view features) {
    return wire::ForEachMapEntry(features, [&](std::string_view key, std::string_view value) {
      Result<FeatureView> f = FeatureView::Parse(value);
      if (!f.ok()) {
        features_ok = false;
        return;
      }
      view.entries_.emplace_back(key, *f);
    });
  });
  if (!ok || !features_ok) return internal::UnparsableRecord("<unknown>", 0, serialized);
  return view;
}

std::optional<FeatureView> ExampleView::Find(std::string_view key) const {
  for (auto it = entries_.rbegin(); it != entries_.rend(); ++it) {
    if (it->first == key) return it->second;
  }
  return std::nullopt;
}

}  // namespace sluice::ops
