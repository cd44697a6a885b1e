#include "data/element_codec.h"

#include <cstring>
#include <vector>

namespace sluice::data {
namespace {

template <class T>
void Put(std::string* out, T v) {
  out->append(reinterpret_cast<const char*>(&v), sizeof(v));
}

}  // namespace

void EncodeElement(const Element& e, std::string* out_ptr) {
  std::string& out = *out_ptr;
  Put<uint32_t>(&out, static_cast<uint32_t>(e.size()));
  for (const Tensor& t : e) {
    Put<uint8_t>(&out, static_cast<uint8_t>(t.dtype()));
    Put<uint8_t>(&out, static_cast<uint8_t>(t.rank()));
    for (int64_t d : t.shape().dims()) Put<int64_t>(&out, d);
    if (t.dtype() == DType::kString) {
      for (const std::string& s : t.flat<std::string>()) {
        Put<uint64_t>(&out, s.size());
        out += s;
      }
    } else {
      out.append(static_cast<const char*>(t.raw_data()), t.TotalBytes());
    }
  }
}

namespace {

class Decoder {
 public:
  explicit Decoder(std::string_view in) : in_(in) {}

  bool Decode(Element* out) {
    uint32_t n;
    if (!Get(&n)) return false;
    out->clear();
    for (uint32_t c = 0; c < n; ++c) {
      uint8_t dtype, rank;
      if (!Get(&dtype) || !Get(&rank) || dtype == 0 || DTypeSize(static_cast<DType>(dtype)) == 0) return false;
      std::vector<int64_t> dims(rank);
      for (int64_t& d : dims) {
        if (!Get(&d) || d < 0) return false;
      }
      Tensor t(static_cast<DType>(dtype), TensorShape(dims));
      if (t.dtype() == DType::kString) {
        for (std::string& s : t.flat<std::string>()) {
          uint64_t size;
          if (!Get(&size) || size > in_.size()) return false;
          s.assign(in_.substr(0, size));
          in_.remove_prefix(size);
        }
      } else {
        if (t.TotalBytes() > in_.size()) return false;
        std::memcpy(t.raw_data(), in_.data(), t.TotalBytes());
        in_.remove_prefix(t.TotalBytes());
      }
      out->push_back(std::move(t));
    }
    return in_.empty();
  }

 private:
  template <class T>
  bool Get(T* v) {
    if (in_.size() < sizeof(T)) return false;
    std::memcpy(v, in_.data(), sizeof(T));
    in_.remove_prefix(sizeof(T));
    return true;
  }
  std::string_view in_;
};

}  // namespace

bool DecodeElement(std::string_view in, Element* out) { return Decoder(in).Decode(out); }

}  // namespace sluice::data
