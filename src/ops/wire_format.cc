#include "wire_format.h"

namespace sluice::ops::wire {

bool Cursor::ReadVarintSlow(uint64_t* v) {
  uint64_t result = 0;
  for (int i = 0; i < 10; ++i) {
    if (p_ >= end_) return false;
    const uint8_t b = *p_++;
    result |= static_cast<uint64_t>(b & 0x7f) << (7 * i);  // bits past 64 drop, as in protobuf
    if (b < 0x80) {
      *v = result;
      return true;
    }
  }
  return false;  // more than 10 bytes
}

bool Cursor::SkipValue(uint32_t field, WireType wire_type, int depth) {
  switch (wire_type) {
    case kVarint: {
      uint64_t v;
      return ReadVarint(&v);
    }
    case kFixed64:
      if (remaining() < 8) return false;
      p_ += 8;
      return true;
    case kLengthDelimited: {
      std::string_view s;
      return ReadLengthDelimited(&s);
    }
    case kFixed32:
      if (remaining() < 4) return false;
      p_ += 4;
      return true;
    case kStartGroup: {
      if (depth >= kMaxGroupDepth) return false;
      while (!done()) {
        uint32_t f;
        WireType w;
        if (!ReadTag(&f, &w)) return false;
        if (w == kEndGroup) return f == field;
        if (!SkipValue(f, w, depth + 1)) return false;
      }
      return false;  // no end-group tag
    }
    case kEndGroup:  // without a start
    default:         // wire types 6 and 7 do not exist
      return false;
  }
}

bool ResolveFeature(std::string_view data, FeatureRef* out) {
  Cursor c(data);
  const uint8_t* begin = c.pos();
  FeatureKind kind = FeatureKind::kNone;
  uint32_t run_start = 0;
  while (!c.done()) {
    const uint8_t* field_start = c.pos();
    uint32_t field;
    WireType wt;
    if (!c.ReadTag(&field, &wt)) return false;
    if (wt == kLengthDelimited && field >= 1 && field <= 3) {
      std::string_view list;
      if (!c.ReadLengthDelimited(&list)) return false;
      const auto k = static_cast<FeatureKind>(field);
      if (k != kind) {  // the oneof switches: earlier lists are dropped
        kind = k;
        run_start = static_cast<uint32_t>(field_start - begin);
      }
    } else if (!c.Skip(field, wt)) {
      return false;
    }
  }
  out->data = data;
  out->kind = kind;
  out->run_start = run_start;
  return true;
}

}  // namespace sluice::ops::wire
