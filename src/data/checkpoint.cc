#include "sluice/data/checkpoint.h"

#include <cstring>

#include "data/element_codec.h"
#include "sluice/data/dataset.h"
#include "sluice/io/crc32c.h"

namespace sluice::data {
namespace {

constexpr char kMagic[8] = {'S', 'L', 'U', 'I', 'C', 'E', 'I', 'T'};
constexpr uint32_t kVersion = 1;

template <class T>
void Put(std::string* out, T v) {
  out->append(reinterpret_cast<const char*>(&v), sizeof(v));
}

template <class T>
bool Get(std::string_view* in, T* v) {
  if (in->size() < sizeof(T)) return false;
  std::memcpy(v, in->data(), sizeof(T));
  in->remove_prefix(sizeof(T));
  return true;
}

Status Corrupt(std::string_view what) {
  return Status(Code::kDataLoss, "Corrupted iterator checkpoint: " + std::string(what));
}

}  // namespace

std::string IteratorState::Serialize() const {
  std::string out(kMagic, sizeof(kMagic));
  Put<uint32_t>(&out, kVersion);
  Put<uint64_t>(&out, entries.size());
  for (const auto& [key, value] : entries) {
    Put<uint32_t>(&out, static_cast<uint32_t>(key.size()));
    out += key;
    Put<uint64_t>(&out, value.size());
    out += value;
  }
  Put<uint32_t>(&out, io::crc32c::Mask(io::crc32c::Value(out)));
  return out;
}

Result<IteratorState> IteratorState::Parse(std::string_view bytes) {
  if (bytes.size() < sizeof(kMagic) + 4 + 8 + 4 || std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0) {
    return Corrupt("not a sluice iterator checkpoint (bad magic or too short)");
  }
  uint32_t stored_crc;
  std::memcpy(&stored_crc, bytes.data() + bytes.size() - 4, 4);
  std::string_view body = bytes.substr(0, bytes.size() - 4);
  if (io::crc32c::Unmask(stored_crc) != io::crc32c::Value(body)) return Corrupt("CRC mismatch");
  std::string_view in = body.substr(sizeof(kMagic));
  uint32_t version;
  uint64_t n;
  if (!Get(&in, &version) || !Get(&in, &n)) return Corrupt("truncated header");
  if (version != kVersion) {
    return Status(Code::kInvalidArgument, "iterator checkpoint version " + std::to_string(version) +
                                              " is not supported (this sluice reads version " +
                                              std::to_string(kVersion) + ")");
  }
  IteratorState state;
  for (uint64_t i = 0; i < n; ++i) {
    uint32_t key_size;
    uint64_t value_size;
    if (!Get(&in, &key_size) || key_size > in.size()) return Corrupt("truncated key");
    std::string key(in.substr(0, key_size));
    in.remove_prefix(key_size);
    if (!Get(&in, &value_size) || value_size > in.size()) return Corrupt("truncated value of '" + key + "'");
    state.entries.emplace(std::move(key), std::string(in.substr(0, value_size)));
    in.remove_prefix(value_size);
  }
  if (!in.empty()) return Corrupt("trailing bytes");
  return state;
}

size_t IteratorState::ByteSize() const {
  size_t n = 0;
  for (const auto& [key, value] : entries) n += key.size() + value.size();
  return n;
}

void IteratorStateWriter::WriteInt(std::string_view key, int64_t value) {
  std::string v;
  Put<int64_t>(&v, value);
  state_->entries[prefix_ + std::string(key)] = std::move(v);
}

void IteratorStateWriter::WriteDouble(std::string_view key, double value) {
  std::string v;
  Put<double>(&v, value);
  state_->entries[prefix_ + std::string(key)] = std::move(v);
}

void IteratorStateWriter::WriteBytes(std::string_view key, std::string_view value) {
  state_->entries[prefix_ + std::string(key)] = std::string(value);
}

void IteratorStateWriter::WriteElement(std::string_view key, const Element& element) {
  std::string v;
  EncodeElement(element, &v);
  state_->entries[prefix_ + std::string(key)] = std::move(v);
}

Result<std::string_view> IteratorStateReader::Find(std::string_view key) const {
  const std::string full = prefix_ + std::string(key);
  auto it = state_->entries.find(full);
  if (it == state_->entries.end()) {
    return Status(Code::kInvalidArgument, "the iterator checkpoint has no entry '" + full +
                                              "': it was saved from a different pipeline");
  }
  return std::string_view(it->second);
}

bool IteratorStateReader::Contains(std::string_view key) const {
  return state_->entries.count(prefix_ + std::string(key)) > 0;
}

Status IteratorStateReader::ReadInt(std::string_view key, int64_t* value) const {
  SLUICE_ASSIGN_OR_RETURN(std::string_view v, Find(key));
  if (v.size() != sizeof(int64_t)) {
    return Status(Code::kInvalidArgument, "iterator checkpoint entry '" + prefix_ + std::string(key) + "' is not an integer");
  }
  std::memcpy(value, v.data(), sizeof(int64_t));
  return Status();
}

Status IteratorStateReader::ReadBool(std::string_view key, bool* value) const {
  int64_t v = 0;
  SLUICE_RETURN_IF_ERROR(ReadInt(key, &v));
  *value = v != 0;
  return Status();
}

Status IteratorStateReader::ReadDouble(std::string_view key, double* value) const {
  SLUICE_ASSIGN_OR_RETURN(std::string_view v, Find(key));
  if (v.size() != sizeof(double)) {
    return Status(Code::kInvalidArgument, "iterator checkpoint entry '" + prefix_ + std::string(key) + "' is not a number");
  }
  std::memcpy(value, v.data(), sizeof(double));
  return Status();
}

Status IteratorStateReader::ReadBytes(std::string_view key, std::string* value) const {
  SLUICE_ASSIGN_OR_RETURN(std::string_view v, Find(key));
  value->assign(v);
  return Status();
}

Status IteratorStateReader::ReadElement(std::string_view key, Element* element) const {
  SLUICE_ASSIGN_OR_RETURN(std::string_view v, Find(key));
  if (!DecodeElement(v, element)) {
    return Status(Code::kDataLoss, "iterator checkpoint entry '" + prefix_ + std::string(key) + "' is not an element");
  }
  return Status();
}

Result<std::string> SaveIterator(IteratorBase& root) {
  IteratorState state;
  IteratorStateWriter w(&state, "");
  SLUICE_RETURN_IF_ERROR(root.Save(&w));
  return state.Serialize();
}

Status RestoreIterator(IteratorBase& root, std::string_view bytes) {
  SLUICE_ASSIGN_OR_RETURN(IteratorState state, IteratorState::Parse(bytes));
  IteratorStateReader r(&state, "");
  return root.Restore(&r);
}

}  // namespace sluice::data
