#include "sluice/core/tensor.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "core/tensor_internal.h"
#include "sluice/core/dtype.h"

namespace sluice {
namespace {

// ---------------------------------------------------------------------------
// DType (no file of its own: tested here, beside its main user)

TEST(DTypeTest, NumbersAreTensorFlowsDataTypeEnum) {
  EXPECT_EQ(static_cast<int>(DType::kInvalid), 0);
  EXPECT_EQ(static_cast<int>(DType::kFloat32), 1);      // DT_FLOAT
  EXPECT_EQ(static_cast<int>(DType::kFloat64), 2);      // DT_DOUBLE
  EXPECT_EQ(static_cast<int>(DType::kInt32), 3);        // DT_INT32
  EXPECT_EQ(static_cast<int>(DType::kUInt8), 4);        // DT_UINT8
  EXPECT_EQ(static_cast<int>(DType::kInt16), 5);        // DT_INT16
  EXPECT_EQ(static_cast<int>(DType::kInt8), 6);         // DT_INT8
  EXPECT_EQ(static_cast<int>(DType::kString), 7);       // DT_STRING
  EXPECT_EQ(static_cast<int>(DType::kComplex64), 8);    // DT_COMPLEX64
  EXPECT_EQ(static_cast<int>(DType::kInt64), 9);        // DT_INT64
  EXPECT_EQ(static_cast<int>(DType::kBool), 10);        // DT_BOOL
  EXPECT_EQ(static_cast<int>(DType::kBFloat16), 14);    // DT_BFLOAT16
  EXPECT_EQ(static_cast<int>(DType::kUInt16), 17);      // DT_UINT16
  EXPECT_EQ(static_cast<int>(DType::kComplex128), 18);  // DT_COMPLEX128
  EXPECT_EQ(static_cast<int>(DType::kFloat16), 19);     // DT_HALF
  EXPECT_EQ(static_cast<int>(DType::kUInt32), 22);      // DT_UINT32
  EXPECT_EQ(static_cast<int>(DType::kUInt64), 23);      // DT_UINT64
}

struct DTypeCase {
  DType dtype;
  const char* name;
  size_t size;
};

const DTypeCase kDTypes[] = {
    {DType::kFloat32, "float32", 4},     {DType::kFloat64, "float64", 8},
    {DType::kInt32, "int32", 4},         {DType::kUInt8, "uint8", 1},
    {DType::kInt16, "int16", 2},         {DType::kInt8, "int8", 1},
    {DType::kString, "string", sizeof(std::string)},
    {DType::kComplex64, "complex64", 8}, {DType::kInt64, "int64", 8},
    {DType::kBool, "bool", 1},           {DType::kBFloat16, "bfloat16", 2},
    {DType::kUInt16, "uint16", 2},       {DType::kComplex128, "complex128", 16},
    {DType::kFloat16, "float16", 2},     {DType::kUInt32, "uint32", 4},
    {DType::kUInt64, "uint64", 8},
};

TEST(DTypeTest, NamesAndSizesOfEveryDType) {
  for (const DTypeCase& c : kDTypes) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(DTypeName(c.dtype), c.name);
    EXPECT_EQ(DTypeSize(c.dtype), c.size);
    EXPECT_EQ(DTypeFromName(c.name), c.dtype);
    EXPECT_EQ(IsPlainDType(c.dtype), c.dtype != DType::kString);
  }
}

TEST(DTypeTest, InvalidHasNoSizeAndIsNotPlain) {
  EXPECT_EQ(DTypeName(DType::kInvalid), "invalid");
  EXPECT_EQ(DTypeSize(DType::kInvalid), 0u);
  EXPECT_FALSE(IsPlainDType(DType::kInvalid));
  EXPECT_EQ(DTypeSize(static_cast<DType>(11)), 0u);  // a number TF gives to a type we lack
}

TEST(DTypeTest, FromNameAcceptsNumpyAliases) {
  EXPECT_EQ(DTypeFromName("half"), DType::kFloat16);
  EXPECT_EQ(DTypeFromName("float"), DType::kFloat32);
  EXPECT_EQ(DTypeFromName("double"), DType::kFloat64);
  EXPECT_EQ(DTypeFromName("bytes"), DType::kString);
  EXPECT_EQ(DTypeFromName("str"), DType::kString);
  EXPECT_EQ(DTypeFromName("bool_"), DType::kBool);
  EXPECT_EQ(DTypeFromName("complex"), DType::kComplex128);
}

TEST(DTypeTest, FromNameRejectsUnknownNames) {
  EXPECT_EQ(DTypeFromName("invalid"), std::nullopt);
  EXPECT_EQ(DTypeFromName("float128"), std::nullopt);
  EXPECT_EQ(DTypeFromName(""), std::nullopt);
  EXPECT_EQ(DTypeFromName("Float32"), std::nullopt);  // case matters
}

TEST(DTypeTest, DTypeOfMapsCxxTypes) {
  static_assert(DTypeOf<float>() == DType::kFloat32);
  static_assert(DTypeOf<double>() == DType::kFloat64);
  static_assert(DTypeOf<int64_t>() == DType::kInt64);
  static_assert(DTypeOf<uint8_t>() == DType::kUInt8);
  static_assert(DTypeOf<bool>() == DType::kBool);
  static_assert(DTypeOf<std::string>() == DType::kString);
  static_assert(DTypeOf<float16_t>() == DType::kFloat16);
  static_assert(DTypeOf<bfloat16_t>() == DType::kBFloat16);
  static_assert(DTypeOf<std::complex<double>>() == DType::kComplex128);
  EXPECT_EQ(DTypeSize(DTypeOf<std::complex<float>>()), sizeof(std::complex<float>));
}

// ---------------------------------------------------------------------------
// Helpers

Tensor Iota(const TensorShape& shape, int32_t start = 0) {
  Tensor t(DType::kInt32, shape);
  std::iota(t.flat<int32_t>().begin(), t.flat<int32_t>().end(), start);
  return t;
}

std::vector<int32_t> Values(const Tensor& t) {
  auto f = t.flat<int32_t>();
  return {f.begin(), f.end()};
}

uintptr_t Address(const void* p) { return reinterpret_cast<uintptr_t>(p); }

// Counts calls of a Wrap release function.
struct ReleaseProbe {
  std::atomic<int> calls{0};
  std::atomic<std::thread::id> thread{};
  std::function<void()> Fn() {
    return [this] {
      thread.store(std::this_thread::get_id());
      calls.fetch_add(1);
    };
  }
};

// ---------------------------------------------------------------------------
// Allocation

TEST(TensorTest, DefaultIsInvalid) {
  Tensor t;
  EXPECT_FALSE(t.valid());
  EXPECT_EQ(t.dtype(), DType::kInvalid);
  EXPECT_EQ(t.raw_data(), nullptr);
  EXPECT_EQ(t.buffer(), nullptr);
  EXPECT_EQ(t.TotalBytes(), 0u);
  EXPECT_FALSE(t.SharesBufferWith(Tensor()));
  EXPECT_EQ(t.DebugString(), "Tensor<invalid>");
}

TEST(TensorTest, AllocatesDTypeAndShape) {
  Tensor t(DType::kFloat32, TensorShape{2, 3});
  EXPECT_TRUE(t.valid());
  EXPECT_EQ(t.dtype(), DType::kFloat32);
  EXPECT_EQ(t.shape(), TensorShape({2, 3}));
  EXPECT_EQ(t.rank(), 2);
  EXPECT_EQ(t.num_elements(), 6);
  EXPECT_EQ(t.TotalBytes(), 24u);
  ASSERT_NE(t.buffer(), nullptr);
  EXPECT_EQ(t.buffer()->size(), 24u);
  EXPECT_TRUE(t.buffer()->owns_memory());
  EXPECT_TRUE(t.buffer()->RefCountIsOne());
}

TEST(TensorTest, BuffersAre64ByteAligned) {
  for (DType dtype : {DType::kUInt8, DType::kInt32, DType::kFloat64, DType::kString, DType::kBool}) {
    for (int64_t n : {0, 1, 3, 63, 64, 65, 1000}) {
      Tensor t(dtype, TensorShape{n});
      SCOPED_TRACE(t.DebugString(0));
      ASSERT_NE(t.raw_data(), nullptr);
      EXPECT_EQ(Address(t.raw_data()) % TensorBuffer::kAlignment, 0u);
    }
  }
  static_assert(TensorBuffer::kAlignment == 64);
}

TEST(TensorTest, ZerosClearsEveryByte) {
  Tensor f = Tensor::Zeros(DType::kFloat64, TensorShape{3, 5});
  for (double v : f.flat<double>()) EXPECT_EQ(v, 0.0);
  Tensor b = Tensor::Zeros(DType::kBool, TensorShape{7});
  for (bool v : b.flat<bool>()) EXPECT_FALSE(v);
  Tensor s = Tensor::Zeros(DType::kString, TensorShape{4});
  for (const std::string& v : s.flat<std::string>()) EXPECT_EQ(v, "");
}

TEST(TensorTest, NewStringTensorsHoldEmptyStrings) {
  Tensor s(DType::kString, TensorShape{3, 2});
  ASSERT_EQ(s.flat<std::string>().size(), 6u);
  for (const std::string& v : s.flat<std::string>()) EXPECT_TRUE(v.empty());
  s.flat<std::string>()[5] = std::string(1000, 'x');  // heap-allocated string freed with the buffer
}

TEST(TensorTest, ScalarFactories) {
  Tensor i = Tensor::Scalar<int64_t>(-7);
  EXPECT_EQ(i.dtype(), DType::kInt64);
  EXPECT_EQ(i.rank(), 0);
  EXPECT_EQ(i.scalar<int64_t>(), -7);

  Tensor f = Tensor::Scalar(2.5f);
  EXPECT_EQ(f.dtype(), DType::kFloat32);
  EXPECT_EQ(f.scalar<float>(), 2.5f);

  Tensor s = Tensor::String("bytes\0here");
  EXPECT_EQ(s.dtype(), DType::kString);
  EXPECT_EQ(s.shape(), TensorShape());
  EXPECT_EQ(s.scalar<std::string>(), "bytes");

  std::string with_nul("a\0b", 3);
  EXPECT_EQ(Tensor::String(with_nul).scalar<std::string>().size(), 3u);
}

TEST(TensorTest, VectorFactories) {
  Tensor v = Tensor::FromVector<int32_t>({1, 2, 3});
  EXPECT_EQ(v.dtype(), DType::kInt32);
  EXPECT_EQ(v.shape(), TensorShape({3}));
  EXPECT_EQ(Values(v), (std::vector<int32_t>{1, 2, 3}));

  Tensor s = Tensor::FromStrings({"a", "", "ccc"});
  EXPECT_EQ(s.shape(), TensorShape({3}));
  EXPECT_EQ(s.flat<std::string>()[0], "a");
  EXPECT_EQ(s.flat<std::string>()[1], "");
  EXPECT_EQ(s.flat<std::string>()[2], "ccc");

  Tensor empty = Tensor::FromVector<double>({});
  EXPECT_EQ(empty.shape(), TensorShape({0}));
  EXPECT_EQ(empty.TotalBytes(), 0u);
}

// ---------------------------------------------------------------------------
// Sharing

TEST(TensorTest, CopySharesTheBuffer) {
  Tensor a = Iota({4});
  Tensor b = a;
  EXPECT_TRUE(a.SharesBufferWith(b));
  EXPECT_EQ(a.raw_data(), b.raw_data());
  EXPECT_FALSE(a.buffer()->RefCountIsOne());
  a.flat<int32_t>()[0] = 100;
  EXPECT_EQ(b.flat<int32_t>()[0], 100);
  b = Tensor();
  EXPECT_TRUE(a.buffer()->RefCountIsOne());
}

TEST(TensorTest, CopyAssignmentReleasesTheOldBuffer) {
  ReleaseProbe probe;
  int32_t storage[2] = {1, 2};
  Tensor wrapped = Tensor::Wrap(DType::kInt32, TensorShape{2}, storage, probe.Fn());
  Tensor other = Iota({3});
  wrapped = other;
  EXPECT_EQ(probe.calls.load(), 1);
  EXPECT_TRUE(wrapped.SharesBufferWith(other));
  Tensor& alias = other;
  other = alias;  // self-assignment keeps the reference
  EXPECT_EQ(Values(other), (std::vector<int32_t>{0, 1, 2}));
}

TEST(TensorTest, MoveLeavesTheSourceInvalid) {
  Tensor a = Iota({2, 2});
  const void* data = a.raw_data();
  Tensor b = std::move(a);
  EXPECT_FALSE(a.valid());  // NOLINT(bugprone-use-after-move): documented state
  EXPECT_EQ(a.buffer(), nullptr);
  EXPECT_EQ(b.raw_data(), data);
  EXPECT_TRUE(b.buffer()->RefCountIsOne());

  Tensor c = Iota({1});
  c = std::move(b);
  EXPECT_EQ(c.raw_data(), data);
  EXPECT_EQ(c.shape(), TensorShape({2, 2}));
  EXPECT_FALSE(b.valid());  // NOLINT(bugprone-use-after-move)
}

TEST(TensorTest, SliceOfOneRowSharesTheBuffer) {
  Tensor batch = Iota({3, 4});
  Tensor row = batch.Slice(1);
  EXPECT_TRUE(row.SharesBufferWith(batch));
  EXPECT_EQ(row.shape(), TensorShape({4}));
  EXPECT_EQ(Address(row.raw_data()), Address(batch.raw_data()) + 4 * sizeof(int32_t));
  EXPECT_EQ(Values(row), (std::vector<int32_t>{4, 5, 6, 7}));

  Tensor scalar = Iota({5}).Slice(3);
  EXPECT_EQ(scalar.shape(), TensorShape());
  EXPECT_EQ(scalar.scalar<int32_t>(), 3);
}

TEST(TensorTest, SliceKeepsTheBufferAliveAfterTheBatchGoes) {
  Tensor row;
  {
    Tensor batch = Iota({2, 3}, 10);
    row = batch.Slice(1);
  }
  EXPECT_EQ(Values(row), (std::vector<int32_t>{13, 14, 15}));
  EXPECT_TRUE(row.buffer()->RefCountIsOne());
}

// A container that paid for its views' references in bulk (Ref(n)) hands
// each one over with TensorAttorney::SliceAdoptingRef, which adds none: the counts stay
// exact, and the last view frees the buffer.
TEST(TensorTest, SliceAdoptingRefTakesOverAReferencePaidInBulk) {
  Tensor row0, rows;
  {
    Tensor batch = Iota({4, 2}, 10);
    batch.buffer()->Ref(2);  // one for each view below
    row0 = internal::TensorAttorney::SliceAdoptingRef(batch, 0);
    rows = internal::TensorAttorney::SliceAdoptingRef(batch, 1, 3);
    EXPECT_TRUE(row0.SharesBufferWith(batch));
    EXPECT_EQ(row0.shape(), TensorShape({2}));
    EXPECT_EQ(rows.shape(), TensorShape({2, 2}));
  }
  EXPECT_EQ(Values(row0), (std::vector<int32_t>{10, 11}));
  EXPECT_EQ(Values(rows), (std::vector<int32_t>{12, 13, 14, 15}));
  EXPECT_FALSE(rows.buffer()->RefCountIsOne());
  row0 = Tensor();
  EXPECT_TRUE(rows.buffer()->RefCountIsOne());
}

TEST(TensorTest, BulkReferencesCountLikeSingleOnes) {
  Tensor t = Iota({2});
  const TensorBuffer* b = t.buffer();
  b->Ref(5);
  EXPECT_FALSE(b->RefCountIsOne());
  b->Unref(3);
  b->Unref();
  EXPECT_FALSE(b->RefCountIsOne());
  b->Unref(1);
  EXPECT_TRUE(b->RefCountIsOne());
  EXPECT_EQ(Values(t), (std::vector<int32_t>{0, 1}));
}

TEST(TensorTest, GatherCopiesTheRowsInTheOrderAsked) {
  Tensor batch = Iota({5, 2});
  Tensor picked = batch.Gather(std::vector<int64_t>{4, 1, 1});
  EXPECT_FALSE(picked.SharesBufferWith(batch));
  EXPECT_EQ(picked.shape(), TensorShape({3, 2}));
  EXPECT_EQ(Values(picked), (std::vector<int32_t>{8, 9, 2, 3, 2, 3}));
  EXPECT_EQ(batch.Gather(std::vector<int64_t>{}).shape(), TensorShape({0, 2}));
  Tensor strings = Tensor::FromStrings({"a", "bb", "ccc"});
  Tensor two = strings.Gather(std::vector<int64_t>{2, 0});
  EXPECT_EQ(two.data<std::string>()[0], "ccc");
  EXPECT_EQ(two.data<std::string>()[1], "a");
}

TEST(TensorTest, SliceOfARangeSharesTheBuffer) {
  Tensor batch = Iota({5, 2});
  Tensor mid = batch.Slice(1, 4);
  EXPECT_TRUE(mid.SharesBufferWith(batch));
  EXPECT_EQ(mid.shape(), TensorShape({3, 2}));
  EXPECT_EQ(Values(mid), (std::vector<int32_t>{2, 3, 4, 5, 6, 7}));
  Tensor none = batch.Slice(2, 2);
  EXPECT_EQ(none.shape(), TensorShape({0, 2}));
  EXPECT_EQ(none.num_elements(), 0);
  Tensor all = batch.Slice(0, 5);
  EXPECT_EQ(all.raw_data(), batch.raw_data());
}

TEST(TensorTest, SliceOfAnEmptyBatch) {
  Tensor empty(DType::kFloat32, TensorShape{0, 3});
  Tensor s = empty.Slice(0, 0);
  EXPECT_EQ(s.shape(), TensorShape({0, 3}));
}

TEST(TensorTest, SliceOfStrings) {
  Tensor s = Tensor::FromStrings({"a", "b", "c"});
  EXPECT_EQ(s.Slice(2).scalar<std::string>(), "c");
  Tensor tail = s.Slice(1, 3);
  EXPECT_EQ(tail.flat<std::string>()[0], "b");
  EXPECT_TRUE(tail.SharesBufferWith(s));
}

// ---------------------------------------------------------------------------
// Stack and Concat

TEST(TensorTest, StackCopiesSeparateParts) {
  std::vector<Tensor> parts = {Iota({2}, 0), Iota({2}, 10), Iota({2}, 20)};
  Result<Tensor> r = Tensor::Stack(parts, DType::kInt32, TensorShape{2});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->shape(), TensorShape({3, 2}));
  EXPECT_EQ(Values(*r), (std::vector<int32_t>{0, 1, 10, 11, 20, 21}));
  for (const Tensor& p : parts) EXPECT_FALSE(r->SharesBufferWith(p));
  EXPECT_EQ(Address(r->raw_data()) % 64, 0u);
}

TEST(TensorTest, StackOfAdjacentSlicesIsZeroCopy) {
  Tensor batch = Iota({4, 3});
  std::vector<Tensor> parts = {batch.Slice(1), batch.Slice(2), batch.Slice(3)};
  Result<Tensor> r = Tensor::Stack(parts, DType::kInt32, TensorShape{3});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->SharesBufferWith(batch));
  EXPECT_EQ(r->raw_data(), parts[0].raw_data());
  EXPECT_EQ(r->shape(), TensorShape({3, 3}));
  EXPECT_EQ(Values(*r), (std::vector<int32_t>{3, 4, 5, 6, 7, 8, 9, 10, 11}));
}

TEST(TensorTest, StackOfSlicesOutOfOrderCopies) {
  Tensor batch = Iota({3, 2});
  std::vector<Tensor> parts = {batch.Slice(2), batch.Slice(0)};
  Result<Tensor> r = Tensor::Stack(parts, DType::kInt32, TensorShape{2});
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->SharesBufferWith(batch));
  EXPECT_EQ(Values(*r), (std::vector<int32_t>{4, 5, 0, 1}));
}

TEST(TensorTest, StackOfSlicesWithAGapCopies) {
  Tensor batch = Iota({4});
  std::vector<Tensor> parts = {batch.Slice(0), batch.Slice(2)};
  Result<Tensor> r = Tensor::Stack(parts, DType::kInt32, TensorShape{});
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->SharesBufferWith(batch));
  EXPECT_EQ(Values(*r), (std::vector<int32_t>{0, 2}));
}

TEST(TensorTest, StackOfNothingIsAnEmptyBatch) {
  Result<Tensor> r = Tensor::Stack({}, DType::kFloat32, TensorShape{4, 4});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->dtype(), DType::kFloat32);
  EXPECT_EQ(r->shape(), TensorShape({0, 4, 4}));
}

TEST(TensorTest, StackRejectsAWrongDType) {
  std::vector<Tensor> parts = {Iota({2}), Tensor(DType::kInt64, TensorShape{2})};
  Result<Tensor> r = Tensor::Stack(parts, DType::kInt32, TensorShape{2});
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
  EXPECT_EQ(r.status().message(), "Cannot stack part 1 of int64 [2] with parts of int32 [2]");
}

TEST(TensorTest, StackRejectsAWrongShape) {
  std::vector<Tensor> parts = {Iota({2}), Iota({3})};
  Result<Tensor> r = Tensor::Stack(parts, DType::kInt32, TensorShape{2});
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
}

TEST(TensorTest, StackCopiesStrings) {
  std::vector<Tensor> parts = {Tensor::String("x"), Tensor::String("yy")};
  Result<Tensor> r = Tensor::Stack(parts, DType::kString, TensorShape{});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->shape(), TensorShape({2}));
  EXPECT_EQ(r->flat<std::string>()[0], "x");
  EXPECT_EQ(r->flat<std::string>()[1], "yy");
  parts[0].scalar<std::string>() = "changed";
  EXPECT_EQ(r->flat<std::string>()[0], "x");
}

TEST(TensorTest, ConcatJoinsAlongTheFirstDimension) {
  std::vector<Tensor> parts = {Iota({2, 3}, 0), Iota({1, 3}, 100), Iota({0, 3})};
  Result<Tensor> r = Tensor::Concat(parts);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->shape(), TensorShape({3, 3}));
  EXPECT_EQ(Values(*r), (std::vector<int32_t>{0, 1, 2, 3, 4, 5, 100, 101, 102}));
  EXPECT_FALSE(r->SharesBufferWith(parts[0]));
}

TEST(TensorTest, ConcatOfStrings) {
  std::vector<Tensor> parts = {Tensor::FromStrings({"a"}), Tensor::FromStrings({"b", "c"})};
  Result<Tensor> r = Tensor::Concat(parts);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->shape(), TensorShape({3}));
  EXPECT_EQ(r->flat<std::string>()[2], "c");
}

TEST(TensorTest, ConcatRejectsBadInput) {
  EXPECT_EQ(Tensor::Concat({}).status().code(), Code::kInvalidArgument);
  std::vector<Tensor> scalars = {Tensor::Scalar<int32_t>(1)};
  EXPECT_EQ(Tensor::Concat(scalars).status().code(), Code::kInvalidArgument);
  std::vector<Tensor> rows = {Iota({1, 3}), Iota({1, 4})};
  EXPECT_EQ(Tensor::Concat(rows).status().code(), Code::kInvalidArgument);
  std::vector<Tensor> dtypes = {Iota({1}), Tensor::FromVector<int64_t>({1})};
  Result<Tensor> r = Tensor::Concat(dtypes);
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
  EXPECT_EQ(r.status().message(), "Cannot concatenate int64 [1] with int32 [1]");
}

// ---------------------------------------------------------------------------
// Copies

TEST(TensorTest, CopyToCopiesValues) {
  Tensor src = Iota({2, 2}, 5);
  Tensor dst(DType::kInt32, TensorShape{4});  // same count, other shape
  src.CopyTo(dst);
  EXPECT_EQ(Values(dst), (std::vector<int32_t>{5, 6, 7, 8}));
  EXPECT_FALSE(dst.SharesBufferWith(src));
}

Tensor Filled(const TensorShape& shape, int32_t value) {
  Tensor t(DType::kInt32, shape);
  for (int32_t& v : t.flat<int32_t>()) v = value;
  return t;
}

TEST(TensorTest, CopyPaddedToFillsTheTopLeftCorner) {
  Tensor src = Iota({2, 3}, 1);  // 1 2 3 / 4 5 6
  Tensor dst = Filled({3, 4}, -1);
  src.CopyPaddedTo(dst);
  EXPECT_EQ(Values(dst), (std::vector<int32_t>{1, 2, 3, -1,    //
                                               4, 5, 6, -1,    //
                                               -1, -1, -1, -1}));
}

TEST(TensorTest, CopyPaddedToRankOneAndThree) {
  Tensor v = Iota({2}, 7);
  Tensor vd = Filled({4}, 0);
  v.CopyPaddedTo(vd);
  EXPECT_EQ(Values(vd), (std::vector<int32_t>{7, 8, 0, 0}));

  Tensor cube = Iota({2, 1, 2}, 1);  // [[[1,2]],[[3,4]]]
  Tensor cd = Filled({2, 2, 3}, 0);
  cube.CopyPaddedTo(cd);
  EXPECT_EQ(Values(cd), (std::vector<int32_t>{1, 2, 0, 0, 0, 0,  //
                                              3, 4, 0, 0, 0, 0}));
}

TEST(TensorTest, CopyPaddedToSameShapeOrScalarIsAPlainCopy) {
  Tensor src = Iota({2, 2}, 3);
  Tensor dst = Filled({2, 2}, 0);
  src.CopyPaddedTo(dst);
  EXPECT_EQ(Values(dst), (std::vector<int32_t>{3, 4, 5, 6}));
  Tensor s = Tensor::Scalar<int32_t>(9);
  Tensor sd = Tensor::Scalar<int32_t>(0);
  s.CopyPaddedTo(sd);
  EXPECT_EQ(sd.scalar<int32_t>(), 9);
}

TEST(TensorTest, CopyPaddedToFromAnEmptySourceLeavesTheDestination) {
  Tensor src(DType::kInt32, TensorShape{0, 3});
  Tensor dst = Filled({2, 3}, 4);
  src.CopyPaddedTo(dst);
  EXPECT_EQ(Values(dst), (std::vector<int32_t>(6, 4)));
}

TEST(TensorTest, CopyPaddedToCopiesStrings) {
  Tensor src = Tensor::FromStrings({"ab", "c"});
  Tensor dst = Tensor::FromStrings({"", "", "pad"});
  src.CopyPaddedTo(dst);
  EXPECT_EQ(dst.flat<std::string>()[0], "ab");
  EXPECT_EQ(dst.flat<std::string>()[1], "c");
  EXPECT_EQ(dst.flat<std::string>()[2], "pad");
}

TEST(TensorTest, DeepCopyOwnsItsBuffer) {
  Tensor a = Iota({3});
  Tensor b = a.DeepCopy();
  EXPECT_FALSE(b.SharesBufferWith(a));
  EXPECT_TRUE(ValuesEqual(a, b));
  b.flat<int32_t>()[0] = 99;
  EXPECT_EQ(a.flat<int32_t>()[0], 0);
}

TEST(TensorTest, DeepCopyOfASliceCopiesOnlyTheSlice) {
  Tensor batch = Iota({3, 2});
  Tensor row = batch.Slice(2).DeepCopy();
  EXPECT_FALSE(row.SharesBufferWith(batch));
  EXPECT_EQ(row.buffer()->size(), 2 * sizeof(int32_t));
  EXPECT_EQ(Values(row), (std::vector<int32_t>{4, 5}));
}

TEST(TensorTest, DeepCopyCopiesStringsAndKeepsInvalidInvalid) {
  Tensor s = Tensor::FromStrings({"x", "y"});
  Tensor d = s.DeepCopy();
  d.flat<std::string>()[0] = "changed";
  EXPECT_EQ(s.flat<std::string>()[0], "x");
  EXPECT_FALSE(Tensor().DeepCopy().valid());
}

// ---------------------------------------------------------------------------
// Wrap

TEST(TensorTest, WrapViewsForeignMemoryWithoutCopying) {
  ReleaseProbe probe;
  std::vector<float> storage = {1, 2, 3, 4, 5, 6};
  Tensor t = Tensor::Wrap(DType::kFloat32, TensorShape{2, 3}, storage.data(), probe.Fn());
  EXPECT_EQ(t.raw_data(), storage.data());
  EXPECT_FALSE(t.buffer()->owns_memory());
  EXPECT_EQ(t.buffer()->size(), 24u);
  EXPECT_EQ(t.flat<float>()[5], 6.0f);
  storage[5] = 60;
  EXPECT_EQ(t.flat<float>()[5], 60.0f);
}

TEST(TensorTest, WrapReleaseRunsOnceWhenTheLastReferenceGoes) {
  ReleaseProbe probe;
  int64_t storage[4] = {0, 1, 2, 3};
  {
    Tensor t = Tensor::Wrap(DType::kInt64, TensorShape{4}, storage, probe.Fn());
    Tensor copy = t;
    Tensor slice = t.Slice(2);
    t = Tensor();
    EXPECT_EQ(probe.calls.load(), 0);
    copy = Tensor();
    EXPECT_EQ(probe.calls.load(), 0);
    EXPECT_EQ(slice.scalar<int64_t>(), 2);
  }
  EXPECT_EQ(probe.calls.load(), 1);
}

TEST(TensorTest, WrapReleaseRunsOnTheThreadThatDropsTheLastReference) {
  ReleaseProbe probe;
  int32_t storage[8] = {};
  Tensor t = Tensor::Wrap(DType::kInt32, TensorShape{8}, storage, probe.Fn());
  std::thread::id dropper;
  std::thread th([moved = std::move(t), &dropper]() mutable {
    dropper = std::this_thread::get_id();
    moved = Tensor();
  });
  th.join();
  EXPECT_EQ(probe.calls.load(), 1);
  EXPECT_EQ(probe.thread.load(), dropper);
  EXPECT_NE(probe.thread.load(), std::this_thread::get_id());
}

TEST(TensorTest, WrapReleaseRunsExactlyOnceUnderConcurrentDrops) {
  ReleaseProbe probe;
  std::vector<uint8_t> storage(4096);
  constexpr int kThreads = 8;
  constexpr int kCopiesPerThread = 1000;
  {
    Tensor t = Tensor::Wrap(DType::kUInt8, TensorShape{4096}, storage.data(), probe.Fn());
    std::vector<std::thread> threads;
    for (int i = 0; i < kThreads; ++i) {
      threads.emplace_back([t] {  // each thread holds its own reference
        for (int j = 0; j < kCopiesPerThread; ++j) {
          Tensor a = t;
          Tensor b = a.Slice(j % 4096);
          Tensor c = std::move(a);
        }
      });
    }
    for (auto& th : threads) th.join();
    EXPECT_EQ(probe.calls.load(), 0);
    EXPECT_TRUE(t.buffer()->RefCountIsOne());
  }
  EXPECT_EQ(probe.calls.load(), 1);
}

TEST(TensorTest, WrapWithoutReleaseFunction) {
  double storage[2] = {1.5, 2.5};
  { Tensor t = Tensor::Wrap(DType::kFloat64, TensorShape{2}, storage, nullptr); }
  EXPECT_EQ(storage[1], 2.5);
}

TEST(TensorTest, WrapOfNoElementsMayHaveNullData) {
  ReleaseProbe probe;
  {
    Tensor t = Tensor::Wrap(DType::kFloat32, TensorShape{0, 4}, nullptr, probe.Fn());
    EXPECT_EQ(t.TotalBytes(), 0u);
    Tensor copy = t.DeepCopy();
    EXPECT_EQ(copy.shape(), TensorShape({0, 4}));
    EXPECT_TRUE(ValuesEqual(t, copy));
  }
  EXPECT_EQ(probe.calls.load(), 1);
}

// ---------------------------------------------------------------------------
// Printing and comparing

TEST(TensorTest, DebugStringShowsDTypeShapeAndValues) {
  EXPECT_EQ(Iota({2, 3}, 1).DebugString(), "Tensor<int32 [2,3]: 1 2 3 4 5 6>");
  EXPECT_EQ(Iota({10}).DebugString(), "Tensor<int32 [10]: 0 1 2 3 4 5 6 7 ...>");
  EXPECT_EQ(Iota({10}).DebugString(2), "Tensor<int32 [10]: 0 1 ...>");
  EXPECT_EQ(Tensor::FromStrings({"a", "b"}).DebugString(), "Tensor<string [2]: \"a\" \"b\">");
  EXPECT_EQ(Tensor::Scalar(true).DebugString(), "Tensor<bool []: true>");
  EXPECT_EQ(Tensor::Scalar<uint8_t>(200).DebugString(), "Tensor<uint8 []: 200>");
  EXPECT_EQ(Tensor::Scalar<int8_t>(-3).DebugString(), "Tensor<int8 []: -3>");
  EXPECT_EQ(Tensor::Scalar(0.5).DebugString(), "Tensor<float64 []: 0.5>");
}

TEST(TensorTest, ValuesEqualComparesDTypeShapeAndValues) {
  EXPECT_TRUE(ValuesEqual(Iota({2, 2}), Iota({2, 2})));
  EXPECT_FALSE(ValuesEqual(Iota({2, 2}), Iota({2, 2}, 1)));
  EXPECT_FALSE(ValuesEqual(Iota({2, 2}), Iota({4})));
  EXPECT_FALSE(ValuesEqual(Iota({1}), Tensor::FromVector<uint32_t>({0})));
  EXPECT_TRUE(ValuesEqual(Tensor::FromStrings({"a"}), Tensor::FromStrings({"a"})));
  EXPECT_FALSE(ValuesEqual(Tensor::FromStrings({"a"}), Tensor::FromStrings({"b"})));
  EXPECT_TRUE(ValuesEqual(Iota({0, 3}), Iota({0, 3})));
}

TEST(TensorTest, InvalidTensorsAreValuesEqual) { EXPECT_TRUE(ValuesEqual(Tensor(), Tensor())); }

}  // namespace
}  // namespace sluice
