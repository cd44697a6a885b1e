// Protocol-buffer wire format, decoded by hand for tf.train.Example,
// SequenceExample and their parts (private to the ops layer).
//
// Wire format: a message is a sequence of fields; each starts with a varint
// tag = (field_number << 3) | wire_type. Wire types: 0 varint (1-10 bytes,
// 7 bits each, little-endian groups, high bit = more), 1 fixed64, 2
// length-delimited (varint length, then bytes: strings, sub-messages, packed
// repeated numbers), 3/4 start/end group (deprecated; skipped), 5 fixed32.
//
// The messages (field numbers as in tensorflow/core/example/*.proto):
//   Example         { Features features = 1; }
//   SequenceExample { Features context = 1; FeatureLists feature_lists = 2; }
//   Features        { map<string, Feature> feature = 1; }
//   FeatureLists    { map<string, FeatureList> feature_list = 1; }
//   FeatureList     { repeated Feature feature = 1; }
//   map entry       { key = 1; value = 2; }
//   Feature         { oneof kind { BytesList bytes_list = 1;
//                                  FloatList float_list = 2;
//                                  Int64List int64_list = 3; } }
//   BytesList { repeated bytes value = 1; }
//   FloatList { repeated float value = 1 [packed]; }  fixed32, or packed
//   Int64List { repeated int64 value = 1 [packed]; }  varint, or packed
//
// Protobuf rules kept here: fields may come in any order; unknown fields (and
// known field numbers with an unexpected wire type) are skipped; repeated
// numbers may be packed, unpacked, or both; a repeated message field merges,
// so `features` given twice contributes both maps; in a oneof the last field
// set wins, and repeated occurrences of the same list merge.
// Not kept: a map entry whose value field repeats keeps its last value
// (protobuf would merge the two messages); no serializer writes that.
//
// Deliberate differences from TF's fast Example parser (checked against
// tf.io.parse_example in TF 2.21), kept because this parser follows the
// protobuf rules and no serializer writes such input: TF rejects
// (InvalidArgument) a group anywhere in an Example, even at the top level,
// and an unknown field inside Features or a map entry, where we skip both
// as protobuf does; TF accepts a field numbered 0 (invalid in protobuf),
// which we reject as malformed. Tests that compare with TF avoid these inputs.
//
// Everything here works on borrowed bytes: nothing is copied or allocated
// except by the sinks the caller supplies.
#ifndef SLUICE_SRC_OPS_WIRE_FORMAT_H_
#define SLUICE_SRC_OPS_WIRE_FORMAT_H_

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "sluice/ops/example_view.h"

namespace sluice::ops::wire {

enum WireType : uint32_t {
  kVarint = 0,
  kFixed64 = 1,
  kLengthDelimited = 2,
  kStartGroup = 3,
  kEndGroup = 4,
  kFixed32 = 5,
};

// Groups nest at most this deep (protobuf's default recursion limit).
inline constexpr int kMaxGroupDepth = 100;

inline uint32_t LoadLE32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  if constexpr (std::endian::native == std::endian::big) v = __builtin_bswap32(v);
  return v;
}

// A read position in a byte range. Each Read*/Skip returns false on truncated
// or malformed input (the position is then unspecified).
class Cursor {
 public:
  Cursor() = default;
  explicit Cursor(std::string_view s)
      : p_(reinterpret_cast<const uint8_t*>(s.data())), end_(p_ + s.size()) {}

  bool done() const { return p_ >= end_; }
  size_t remaining() const { return static_cast<size_t>(end_ - p_); }
  const uint8_t* pos() const { return p_; }

  bool ReadVarint(uint64_t* v) {
    if (p_ < end_ && *p_ < 0x80) {
      *v = *p_++;
      return true;
    }
    return ReadVarintSlow(v);
  }

  // A field tag. Field number 0 and tags above 32 bits are malformed.
  bool ReadTag(uint32_t* field, WireType* wire_type) {
    uint64_t tag;
    if (!ReadVarint(&tag) || tag > 0xFFFFFFFFu) return false;
    *field = static_cast<uint32_t>(tag >> 3);
    *wire_type = static_cast<WireType>(tag & 7);
    return *field != 0;
  }

  // The payload of a length-delimited field.
  bool ReadLengthDelimited(std::string_view* out) {
    uint64_t n;
    if (!ReadVarint(&n) || n > remaining()) return false;
    *out = std::string_view(reinterpret_cast<const char*>(p_), static_cast<size_t>(n));
    p_ += n;
    return true;
  }

  bool ReadFixed32(uint32_t* v) {
    if (remaining() < 4) return false;
    *v = LoadLE32(p_);
    p_ += 4;
    return true;
  }

  // Skips the value of a field whose tag was just read.
  bool Skip(uint32_t field, WireType wire_type) { return SkipValue(field, wire_type, 0); }

 private:
  bool ReadVarintSlow(uint64_t* v);
  bool SkipValue(uint32_t field, WireType wire_type, int depth);

  const uint8_t* p_ = nullptr;
  const uint8_t* end_ = nullptr;
};

// ---------------------------------------------------------------------------
// Maps: Features and FeatureLists.

// Calls fn(key, value) for every entry of the map field 1 of `message`, in
// wire order. A missing key reads as "", a missing value as an empty message.
// Returns false if `message` is malformed.
template <class Fn>
bool ForEachMapEntry(std::string_view message, Fn&& fn) {
  Cursor c(message);
  while (!c.done()) {
    uint32_t field;
    WireType wt;
    if (!c.ReadTag(&field, &wt)) return false;
    if (field != 1 || wt != kLengthDelimited) {
      if (!c.Skip(field, wt)) return false;
      continue;
    }
    std::string_view entry;
    if (!c.ReadLengthDelimited(&entry)) return false;
    std::string_view key, value;
    Cursor e(entry);
    while (!e.done()) {
      uint32_t f;
      WireType w;
      if (!e.ReadTag(&f, &w)) return false;
      if (f == 1 && w == kLengthDelimited) {
        if (!e.ReadLengthDelimited(&key)) return false;
      } else if (f == 2 && w == kLengthDelimited) {
        if (!e.ReadLengthDelimited(&value)) return false;
      } else if (!e.Skip(f, w)) {
        return false;
      }
    }
    fn(key, value);
  }
  return true;
}

// Calls fn(sub_message) for every length-delimited field `number` of
// `message` (e.g. the `features` of an Example, the Features of a
// FeatureList). Returns false if `message` is malformed.
template <class Fn>
bool ForEachMessageField(std::string_view message, uint32_t number, Fn&& fn) {
  Cursor c(message);
  while (!c.done()) {
    uint32_t field;
    WireType wt;
    if (!c.ReadTag(&field, &wt)) return false;
    if (field == number && wt == kLengthDelimited) {
      std::string_view sub;
      if (!c.ReadLengthDelimited(&sub)) return false;
      if (!fn(sub)) return false;
    } else if (!c.Skip(field, wt)) {
      return false;
    }
  }
  return true;
}

// ---------------------------------------------------------------------------
// Feature.

// A Feature message with its oneof resolved.
struct FeatureRef {
  std::string_view data;                 // the whole Feature message
  FeatureKind kind = FeatureKind::kNone;
  uint32_t run_start = 0;                // offset of the final run's first list
};

// Finds which list the Feature holds. False if the message is malformed (the
// lists' insides are checked only when decoded).
bool ResolveFeature(std::string_view data, FeatureRef* out);

// Sinks receive decoded values:
//   void Add(int64_t) / Add(float) / Add(std::string_view)
//   void AddPackedFloats(const uint8_t* little_endian, size_t count)  (floats)

template <class Sink>
bool DecodeFloatList(std::string_view list, Sink& sink) {
  Cursor c(list);
  while (!c.done()) {
    uint32_t field;
    WireType wt;
    if (!c.ReadTag(&field, &wt)) return false;
    if (field == 1 && wt == kLengthDelimited) {
      std::string_view packed;
      if (!c.ReadLengthDelimited(&packed) || packed.size() % 4 != 0) return false;
      sink.AddPackedFloats(reinterpret_cast<const uint8_t*>(packed.data()), packed.size() / 4);
    } else if (field == 1 && wt == kFixed32) {
      uint32_t bits;
      if (!c.ReadFixed32(&bits)) return false;
      sink.Add(std::bit_cast<float>(bits));
    } else if (!c.Skip(field, wt)) {
      return false;
    }
  }
  return true;
}

template <class Sink>
bool DecodeInt64List(std::string_view list, Sink& sink) {
  Cursor c(list);
  while (!c.done()) {
    uint32_t field;
    WireType wt;
    if (!c.ReadTag(&field, &wt)) return false;
    if (field == 1 && wt == kLengthDelimited) {
      std::string_view packed;
      if (!c.ReadLengthDelimited(&packed)) return false;
      Cursor p(packed);
      while (!p.done()) {
        uint64_t v;
        if (!p.ReadVarint(&v)) return false;
        sink.Add(static_cast<int64_t>(v));
      }
    } else if (field == 1 && wt == kVarint) {
      uint64_t v;
      if (!c.ReadVarint(&v)) return false;
      sink.Add(static_cast<int64_t>(v));
    } else if (!c.Skip(field, wt)) {
      return false;
    }
  }
  return true;
}

template <class Sink>
bool DecodeBytesList(std::string_view list, Sink& sink) {
  Cursor c(list);
  while (!c.done()) {
    uint32_t field;
    WireType wt;
    if (!c.ReadTag(&field, &wt)) return false;
    if (field == 1 && wt == kLengthDelimited) {
      std::string_view v;
      if (!c.ReadLengthDelimited(&v)) return false;
      sink.Add(v);
    } else if (!c.Skip(field, wt)) {
      return false;
    }
  }
  return true;
}

// Decodes every list of the final run of `f` into `sink`. REQUIRES: f.kind ==
// K (not kNone). False if a list is malformed.
template <FeatureKind K, class Sink>
bool DecodeFeatureValues(const FeatureRef& f, Sink& sink) {
  static_assert(K != FeatureKind::kNone);
  return ForEachMessageField(f.data.substr(f.run_start), static_cast<uint32_t>(K), [&](std::string_view list) {
    if constexpr (K == FeatureKind::kBytes) {
      return DecodeBytesList(list, sink);
    } else if constexpr (K == FeatureKind::kFloat) {
      return DecodeFloatList(list, sink);
    } else {
      return DecodeInt64List(list, sink);
    }
  });
}

}  // namespace sluice::ops::wire

#endif  // SLUICE_SRC_OPS_WIRE_FORMAT_H_
