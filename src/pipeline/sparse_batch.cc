#include "sluice/pipeline/sparse_batch.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sluice/core/element.h"
#include "sluice/core/shape.h"

namespace sluice::train {
namespace {

// The format is little-endian and written with memcpy of host values.
static_assert(std::endian::native == std::endian::little, "the packed SparseTensor format assumes little-endian");

constexpr size_t kI64 = sizeof(int64_t);

// ---- Checks of a SparseTensor's parts (TF's AddSparseToTensorsMap) ---------------

Status CheckParts(const Tensor& indices, const Tensor& values, const Tensor& dense_shape) {
  if (indices.rank() != 2) {
    return errors::InvalidArgument("Input indices should be a matrix but received shape ",
                                   indices.shape().DebugString());
  }
  if (values.rank() != 1) {
    return errors::InvalidArgument("Input values should be a vector but received shape ",
                                   values.shape().DebugString());
  }
  if (dense_shape.rank() != 1) {
    return errors::InvalidArgument("Input shape should be a vector but received shape ",
                                   dense_shape.shape().DebugString());
  }
  if (indices.dtype() != DType::kInt64) {
    return errors::InvalidArgument("indices must be type int64 but got: ", DTypeName(indices.dtype()));
  }
  if (dense_shape.dtype() != DType::kInt64) {
    return errors::InvalidArgument("dense_shape must be type int64 but got: ", DTypeName(dense_shape.dtype()));
  }
  if (values.dtype() != DType::kString && !IsPlainDType(values.dtype())) {
    return errors::InvalidArgument("values have no valid dtype");
  }
  if (indices.shape().dim(0) != values.shape().dim(0)) {
    return errors::InvalidArgument("indices and values rows (indexing dimension) must match. (indices = ",
                                   indices.shape().dim(0), ", values = ", values.shape().dim(0), ")");
  }
  if (indices.shape().dim(1) != dense_shape.shape().dim(0)) {
    return errors::InvalidArgument("Shape rank must be SparseTensor rank.");
  }
  if (dense_shape.shape().dim(0) > std::numeric_limits<uint16_t>::max()) {
    return errors::InvalidArgument("a packed SparseTensor has rank at most ", std::numeric_limits<uint16_t>::max(),
                                   ", not ", dense_shape.shape().dim(0));
  }
  for (int64_t d : dense_shape.flat<int64_t>()) {
    if (d < 0) return errors::InvalidArgument("Dimension ", d, " must be >= 0");
  }
  return Status();
}

// ---- Writing ------------------------------------------------------------------------

// The part of a SparseTensor that one packed string holds: `n` entries whose
// indices are rows of `stride` int64 starting at `indices` (the first
// `stride - rank` columns skipped), and values [value_begin, value_begin + n)
// of `values`.
struct SparseRun {
  std::span<const int64_t> dense_shape;
  const int64_t* indices;
  int64_t stride;
  int64_t n;
  const Tensor* values;
  int64_t value_begin;
};

size_t PackedSize(const SparseRun& run) {
  const auto rank = static_cast<size_t>(run.dense_shape.size());
  const auto n = static_cast<size_t>(run.n);
  size_t bytes = kPackedSparseHeaderBytes + kI64 * (rank + 1 + n * rank);
  if (run.values->dtype() == DType::kString) {
    const std::string* v = run.values->data<std::string>() + run.value_begin;
    for (size_t i = 0; i < n; ++i) bytes += sizeof(uint64_t) + v[i].size();
  } else {
    bytes += n * DTypeSize(run.values->dtype());
  }
  return bytes;
}

char* Put(char* out, const void* data, size_t bytes) {
  if (bytes != 0) std::memcpy(out, data, bytes);
  return out + bytes;
}

void AppendPacked(const SparseRun& run, std::string* out) {
  const size_t start = out->size();
  out->resize(start + PackedSize(run));
  char* p = out->data() + start;
  const auto rank = static_cast<uint16_t>(run.dense_shape.size());
  const auto dtype = static_cast<uint8_t>(run.values->dtype());
  const uint32_t reserved = 0;
  p = Put(p, &kPackedSparseVersion, 1);
  p = Put(p, &dtype, 1);
  p = Put(p, &rank, sizeof(rank));
  p = Put(p, &reserved, sizeof(reserved));
  p = Put(p, run.dense_shape.data(), kI64 * rank);
  p = Put(p, &run.n, kI64);
  const int64_t skip = run.stride - rank;
  if (skip == 0) {
    p = Put(p, run.indices, kI64 * rank * static_cast<size_t>(run.n));
  } else {
    for (int64_t i = 0; i < run.n; ++i) p = Put(p, run.indices + i * run.stride + skip, kI64 * rank);
  }
  if (run.values->dtype() == DType::kString) {
    const std::string* v = run.values->data<std::string>() + run.value_begin;
    for (int64_t i = 0; i < run.n; ++i) {
      const uint64_t length = v[i].size();
      p = Put(p, &length, sizeof(length));
      p = Put(p, v[i].data(), v[i].size());
    }
  } else {
    const size_t size = DTypeSize(run.values->dtype());
    p = Put(p, static_cast<const char*>(run.values->raw_data()) + run.value_begin * size,
            size * static_cast<size_t>(run.n));
  }
}

// ---- Rows of a batch (TF's AddManySparseToTensorsMap) ----------------------------------

// "a,b,c"
std::string Joined(std::span<const int64_t> values) {
  std::string s;
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) s += ',';
    s += std::to_string(values[i]);
  }
  return s;
}

std::string IndexString(const int64_t* index, int64_t rank, int64_t n) {
  return StrCat("indices[", n, "] = [", Joined({index, static_cast<size_t>(rank)}), "]");
}

// TF's SparseTensor::IndicesValid in standard order: in bounds, strictly
// increasing in row-major order.
Status CheckIndicesValid(const Tensor& indices, std::span<const int64_t> shape) {
  const int64_t n = indices.shape().dim(0);
  const auto rank = static_cast<int64_t>(shape.size());
  const int64_t* ix = indices.data<int64_t>();
  for (int64_t i = 0; i < n; ++i) {
    const int64_t* index = ix + i * rank;
    for (int64_t d = 0; d < rank; ++d) {
      if (index[d] < 0 || index[d] >= shape[static_cast<size_t>(d)]) {
        return errors::InvalidArgument(IndexString(index, rank, i), " is out of bounds: need 0 <= index < [",
                                       Joined(shape), "]");
      }
    }
    if (i == 0) continue;
    const int64_t* prev = index - rank;
    int64_t d = 0;
    while (d < rank && prev[d] == index[d]) ++d;
    if (d < rank && prev[d] > index[d]) {
      return errors::InvalidArgument(IndexString(index, rank, i),
                                     " is out of order. Many sparse ops require sorted indices. "
                                     "Use `tf.sparse.reorder` to create a correctly ordered copy.");
    }
    if (d == rank) return errors::InvalidArgument(IndexString(index, rank, i), " is repeated");
  }
  return Status();
}

// ---- Reading ----------------------------------------------------------------------------

// One packed SparseTensor, checked: pointers into the string.
struct PackedView {
  DType dtype = DType::kInvalid;
  int rank = 0;
  const char* dense_shape = nullptr;  // int64[rank], unaligned
  int64_t n = 0;
  const char* indices = nullptr;  // int64[n * rank], unaligned
  const char* values = nullptr;   // see the format
};

Status Corrupt(size_t i, const std::string& why) {
  return errors::InvalidArgument("Corrupt packed SparseTensor[", i, "]: ", why);
}

int64_t LoadI64(const char* p) {
  int64_t v;
  std::memcpy(&v, p, kI64);
  return v;
}

uint64_t LoadU64(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

// Checks that the string values of `view` fill exactly `left` bytes.
Status CheckStrings(const PackedView& view, size_t left, size_t i) {
  const char* p = view.values;
  for (int64_t k = 0; k < view.n; ++k) {
    if (left < sizeof(uint64_t)) return Corrupt(i, "truncated in the length of value " + std::to_string(k));
    const uint64_t length = LoadU64(p);
    left -= sizeof(uint64_t);
    p += sizeof(uint64_t);
    if (length > left) {
      return Corrupt(i, "value " + std::to_string(k) + " has " + std::to_string(length) + " bytes but only " +
                            std::to_string(left) + " remain");
    }
    left -= length;
    p += length;
  }
  if (left != 0) return Corrupt(i, std::to_string(left) + " bytes follow the values");
  return Status();
}

Result<PackedView> ParsePacked(std::string_view s, size_t i) {
  if (s.size() < kPackedSparseHeaderBytes) {
    return Corrupt(i, "only " + std::to_string(s.size()) + " bytes, less than the header");
  }
  const auto* bytes = reinterpret_cast<const uint8_t*>(s.data());
  if (bytes[0] != kPackedSparseVersion) {
    return Corrupt(i, "version " + std::to_string(bytes[0]) + ", expected " + std::to_string(kPackedSparseVersion));
  }
  PackedView view;
  view.dtype = static_cast<DType>(bytes[1]);
  if (view.dtype != DType::kString && !IsPlainDType(view.dtype)) {
    return Corrupt(i, "unknown dtype " + std::to_string(bytes[1]));
  }
  uint16_t rank;
  std::memcpy(&rank, s.data() + 2, sizeof(rank));
  view.rank = rank;
  size_t left = s.size() - kPackedSparseHeaderBytes;
  if (left / kI64 < static_cast<size_t>(rank) + 1) return Corrupt(i, "truncated in dense_shape");
  view.dense_shape = s.data() + kPackedSparseHeaderBytes;
  for (int d = 0; d < rank; ++d) {
    const int64_t dim = LoadI64(view.dense_shape + d * kI64);
    if (dim < 0) return Corrupt(i, "dense_shape[" + std::to_string(d) + "] = " + std::to_string(dim));
  }
  view.n = LoadI64(view.dense_shape + rank * kI64);
  left -= kI64 * (rank + 1u);
  if (view.n < 0) return Corrupt(i, "negative number of values " + std::to_string(view.n));
  const auto n = static_cast<uint64_t>(view.n);
  if (rank > 0 && n > left / (kI64 * rank)) return Corrupt(i, "truncated in indices");
  view.indices = view.dense_shape + kI64 * (rank + 1u);
  left -= kI64 * rank * n;
  view.values = view.indices + kI64 * rank * n;
  if (view.dtype == DType::kString) {
    SLUICE_RETURN_IF_ERROR(CheckStrings(view, left, i));
    return view;
  }
  const size_t size = DTypeSize(view.dtype);
  if (n > left / size) return Corrupt(i, "truncated in values");
  if (left != n * size) return Corrupt(i, std::to_string(left - n * size) + " bytes follow the values");
  return view;
}

// Copies the values of `view` to `out` from position `at` on.
void CopyValues(const PackedView& view, const Tensor& out, int64_t at) {
  if (view.dtype != DType::kString) {
    const size_t size = DTypeSize(view.dtype);
    Put(static_cast<char*>(out.raw_data()) + at * size, view.values, size * static_cast<size_t>(view.n));
    return;
  }
  std::string* dst = out.data<std::string>() + at;
  const char* p = view.values;
  for (int64_t k = 0; k < view.n; ++k) {
    const uint64_t length = LoadU64(p);
    p += sizeof(uint64_t);
    dst[k].assign(p, length);
    p += length;
  }
}

// ---- The stage ---------------------------------------------------------------------------

Status BuildError(const std::string& why) { return errors::InvalidArgument("map_pack_sparse: ", why); }

std::string ComponentName(size_t c) { return "component " + std::to_string(c); }

Status CheckSparseSignature(const TypedProducer& input, const SparseComponents& s, bool enqueue_many) {
  for (size_t c : {s.indices, s.values, s.dense_shape}) {
    if (c >= input.size()) {
      return BuildError(ComponentName(c) + " is out of range (the input has " + std::to_string(input.size()) +
                        " components)");
    }
  }
  if (input.dtypes[s.indices] != DType::kInt64) {
    return BuildError("indices (" + ComponentName(s.indices) + ") must be int64, not " +
                      std::string(DTypeName(input.dtypes[s.indices])));
  }
  if (input.dtypes[s.dense_shape] != DType::kInt64) {
    return BuildError("dense_shape (" + ComponentName(s.dense_shape) + ") must be int64, not " +
                      std::string(DTypeName(input.dtypes[s.dense_shape])));
  }
  if (enqueue_many) return Status();  // the signature describes rows, which sparse parts have none of
  const PartialShape& ix = input.shapes[s.indices];
  const PartialShape& values = input.shapes[s.values];
  const PartialShape& shape = input.shapes[s.dense_shape];
  if (ix.rank_known() && ix.rank() != 2) {
    return BuildError("indices (" + ComponentName(s.indices) + ") must have rank 2, not " + ix.DebugString());
  }
  if (values.rank_known() && values.rank() != 1) {
    return BuildError("values (" + ComponentName(s.values) + ") must have rank 1, not " + values.DebugString());
  }
  if (shape.rank_known() && shape.rank() != 1) {
    return BuildError("dense_shape (" + ComponentName(s.dense_shape) + ") must have rank 1, not " +
                      shape.DebugString());
  }
  if (ix.rank_known() && shape.rank_known() && ix.dim(1) >= 0 && shape.dim(0) >= 0 && ix.dim(1) != shape.dim(0)) {
    return BuildError("indices " + ix.DebugString() + " and dense_shape " + shape.DebugString() +
                      " disagree on the rank");
  }
  return Status();
}

std::string PackedName(const TypedProducer& input, size_t indices) {
  if (input.names.empty()) return "";
  std::string name = input.names[indices];
  constexpr std::string_view kSuffix = "/indices";
  if (name.size() > kSuffix.size() && name.ends_with(kSuffix)) name.resize(name.size() - kSuffix.size());
  return name;
}

// One output component of the stage: an input component passed through, or
// sparse[triple] packed.
struct Slot {
  size_t component = 0;
  std::optional<size_t> triple;
};

}  // namespace

Result<std::string> PackSparse(const Tensor& indices, const Tensor& values, const Tensor& dense_shape) {
  SLUICE_RETURN_IF_ERROR(CheckParts(indices, values, dense_shape));
  std::string out;
  AppendPacked(SparseRun{dense_shape.flat<int64_t>(), indices.data<int64_t>(), indices.shape().dim(1),
                         indices.shape().dim(0), &values, 0},
               &out);
  return out;
}

Result<Tensor> PackSparseRows(const Tensor& indices, const Tensor& values, const Tensor& dense_shape) {
  SLUICE_RETURN_IF_ERROR(CheckParts(indices, values, dense_shape));
  const std::span<const int64_t> shape = dense_shape.flat<int64_t>();
  if (shape.size() < 2) {
    return errors::InvalidArgument("Rank of input SparseTensor should be > 1, but saw rank: ", shape.size());
  }
  SLUICE_RETURN_IF_ERROR(CheckIndicesValid(indices, shape));
  const int64_t rows = shape[0];
  const auto rank = static_cast<int64_t>(shape.size());
  const int64_t n = indices.shape().dim(0);
  const int64_t* ix = indices.data<int64_t>();
  Tensor out(DType::kString, TensorShape({rows}));
  std::string* packed = out.data<std::string>();
  int64_t begin = 0;
  for (int64_t b = 0; b < rows; ++b) {
    int64_t end = begin;
    while (end < n && ix[end * rank] == b) ++end;
    AppendPacked(SparseRun{shape.subspan(1), ix + begin * rank, rank, end - begin, &values, begin}, &packed[b]);
    begin = end;
  }
  return out;
}

Result<ops::SparseTensor> UnpackSparseBatch(std::span<const std::string_view> packed, std::optional<DType> dtype) {
  if (packed.empty()) {
    return errors::InvalidArgument("Must have at least 1 serialized SparseTensor, but input matrix has 0 rows");
  }
  std::vector<PackedView> views;
  views.reserve(packed.size());
  for (size_t i = 0; i < packed.size(); ++i) {
    SLUICE_ASSIGN_OR_RETURN(PackedView view, ParsePacked(packed[i], i));
    views.push_back(view);
  }
  const DType want = dtype.value_or(views[0].dtype);
  const int rank = views[0].rank;
  std::vector<int64_t> shape(static_cast<size_t>(rank) + 1, 0);
  shape[0] = static_cast<int64_t>(packed.size());
  int64_t total = 0;
  for (size_t i = 0; i < views.size(); ++i) {
    const PackedView& v = views[i];
    if (v.dtype != want) {
      return errors::InvalidArgument("Requested SparseTensor of type ", DTypeName(want), " but SparseTensor[", i,
                                     "].values.dtype() == ", DTypeName(v.dtype));
    }
    if (v.rank != rank) {
      return errors::InvalidArgument("Inconsistent rank across SparseTensors: rank prior to SparseTensor[", i,
                                     "] was: ", rank + 1, " but rank of SparseTensor[", i, "] is: ", v.rank + 1);
    }
    if (v.n > std::numeric_limits<int64_t>::max() - total) {
      return errors::ResourceExhausted("Too many sparse entries");
    }
    total += v.n;
    for (int d = 0; d < rank; ++d) shape[d + 1] = std::max(shape[d + 1], LoadI64(v.dense_shape + d * kI64));
  }
  ops::SparseTensor out{Tensor(DType::kInt64, TensorShape({total, rank + 1})), Tensor(want, TensorShape({total})),
                        Tensor::FromVector(shape)};
  int64_t* ix = out.indices.data<int64_t>();
  int64_t at = 0;
  for (size_t i = 0; i < views.size(); ++i) {
    const PackedView& v = views[i];
    for (int64_t k = 0; k < v.n; ++k) {
      int64_t* row = ix + (at + k) * (rank + 1);
      row[0] = static_cast<int64_t>(i);
      Put(reinterpret_cast<char*>(row + 1), v.indices + k * rank * kI64, kI64 * static_cast<size_t>(rank));
    }
    CopyValues(v, out.values, at);
    at += v.n;
  }
  return out;
}

Result<ops::SparseTensor> UnpackSparseBatch(const Tensor& packed, std::optional<DType> dtype) {
  if (packed.dtype() != DType::kString || packed.rank() != 1) {
    return errors::InvalidArgument("sparse_handles should be a string vector but received ", DTypeName(packed.dtype()),
                                   " ", packed.shape().DebugString());
  }
  std::vector<std::string_view> views(packed.flat<std::string>().begin(), packed.flat<std::string>().end());
  return UnpackSparseBatch(views, dtype);
}

Result<TypedProducer> MapPackSparse(TypedProducer input, std::vector<SparseComponents> sparse, bool enqueue_many) {
  if (!input.producer) return BuildError("the input producer is empty");
  if (sparse.empty()) return BuildError("at least one SparseTensor is required");
  std::vector<std::optional<size_t>> owner(input.size());  // the triple each component belongs to
  for (size_t t = 0; t < sparse.size(); ++t) {
    SLUICE_RETURN_IF_ERROR(CheckSparseSignature(input, sparse[t], enqueue_many));
    for (size_t c : {sparse[t].indices, sparse[t].values, sparse[t].dense_shape}) {
      if (owner[c]) return BuildError(ComponentName(c) + " is named twice");
      owner[c] = t;
    }
  }
  TypedProducer out;
  std::vector<Slot> slots;
  std::vector<bool> placed(sparse.size(), false);
  for (size_t c = 0; c < input.size(); ++c) {
    if (!owner[c]) {
      slots.push_back(Slot{c, std::nullopt});
      out.dtypes.push_back(input.dtypes[c]);
      out.shapes.push_back(input.shapes[c]);
      if (!input.names.empty()) out.names.push_back(input.names[c]);
      continue;
    }
    const size_t t = *owner[c];
    if (placed[t]) continue;  // the first of its three parts placed it
    placed[t] = true;
    slots.push_back(Slot{c, t});
    out.dtypes.push_back(DType::kString);
    out.shapes.push_back(PartialShape(TensorShape({})));
    if (!input.names.empty()) out.names.push_back(PackedName(input, sparse[t].indices));
  }
  const size_t needed = input.size();
  out.producer = [in = std::move(input.producer), sparse = std::move(sparse), slots = std::move(slots), needed,
                  enqueue_many]() -> Result<Element> {
    Result<Element> e = in();
    if (!e.ok()) return e.status();
    if (e->size() < needed) return errors::InvalidArgument("map_pack_sparse: the input returned too few components");
    std::vector<Tensor> components;
    components.reserve(slots.size());
    for (const Slot& slot : slots) {
      if (!slot.triple) {
        components.push_back(std::move((*e)[slot.component]));
        continue;
      }
      const SparseComponents& s = sparse[*slot.triple];
      const Tensor& ix = (*e)[s.indices];
      const Tensor& values = (*e)[s.values];
      const Tensor& shape = (*e)[s.dense_shape];
      if (enqueue_many) {
        SLUICE_ASSIGN_OR_RETURN(Tensor rows, PackSparseRows(ix, values, shape));
        components.push_back(std::move(rows));
      } else {
        SLUICE_ASSIGN_OR_RETURN(std::string packed, PackSparse(ix, values, shape));
        Tensor scalar(DType::kString, TensorShape({}));
        scalar.scalar<std::string>() = std::move(packed);
        components.push_back(std::move(scalar));
      }
    }
    return Element(std::move(components));
  };
  return out;
}

}  // namespace sluice::train
