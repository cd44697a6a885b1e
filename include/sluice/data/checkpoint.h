// Iterator checkpoints: the position of a whole iterator tree as bytes.
//
//   auto it = ds->MakeIterator();
//   ... GetNext k times ...
//   Result<std::string> bytes = SaveIterator(*it);           // any time
//   auto it2 = MakeDataset()->MakeIterator();                 // same pipeline, maybe a new process
//   Status s = RestoreIterator(*it2, *bytes);                 // it2 continues where `it` was
//
// Each iterator writes its own state (counters, RNG states, buffered
// elements, file offsets) under its own key prefix and asks its inputs to do
// the same under child prefixes (IteratorStateWriter::Child). A restored tree
// produces exactly the elements the saved tree would have produced next
// (deterministic pipelines; with deterministic=false the set, not the order).
//
// Restore rebuilds the tree from the dataset first, so it may be called on an
// iterator that has already run. An iterator that cannot be saved (a Python
// generator, a queue) makes Save fail with Unimplemented naming it; nothing
// is written then. A checkpoint from another pipeline fails with
// InvalidArgument naming the first key it lacks or whose value is wrong.
//
// Bytes format (little-endian): magic "SLUICEIT", u32 version, u64 entry
// count, then per entry u32 key length | key | u64 value length | value,
// then u32 masked CRC32C of everything before it. A bad magic, CRC or
// truncation is DataLoss.
#ifndef SLUICE_DATA_CHECKPOINT_H_
#define SLUICE_DATA_CHECKPOINT_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/core/element.h"
#include "sluice/core/status.h"

namespace sluice::data {

class IteratorBase;

// The saved state of one iterator tree: key -> bytes. Keys are paths
// ("Batch/input/Map/input/Range/next"). A value type.
struct IteratorState {
  std::map<std::string, std::string, std::less<>> entries;

  std::string Serialize() const;
  static Result<IteratorState> Parse(std::string_view bytes);
  // Total bytes of keys and values (the size Serialize() is close to).
  size_t ByteSize() const;
};

// Writes one iterator's entries under its prefix. Cheap to copy (points into
// the state). Not thread-safe: the saving thread only.
class IteratorStateWriter {
 public:
  IteratorStateWriter(IteratorState* state, std::string prefix) : state_(state), prefix_(std::move(prefix)) {}

  // The writer for an input iterator (or a sub-part) called `name`.
  IteratorStateWriter Child(std::string_view name) const { return {state_, prefix_ + std::string(name) + "/"}; }

  void WriteInt(std::string_view key, int64_t value);
  void WriteBool(std::string_view key, bool value) { WriteInt(key, value ? 1 : 0); }
  void WriteDouble(std::string_view key, double value);
  void WriteBytes(std::string_view key, std::string_view value);
  void WriteElement(std::string_view key, const Element& element);
  // A sequence of elements (a buffer): count, then one entry each.
  template <class Container>
  void WriteElements(std::string_view key, const Container& elements) {
    WriteInt(std::string(key) + ".size", static_cast<int64_t>(elements.size()));
    int64_t i = 0;
    for (const Element& e : elements) WriteElement(std::string(key) + "." + std::to_string(i++), e);
  }

  const std::string& prefix() const { return prefix_; }

 private:
  IteratorState* state_;
  std::string prefix_;
};

// Reads what an IteratorStateWriter with the same prefix wrote. Every read of
// a missing or malformed entry is InvalidArgument naming the key.
class IteratorStateReader {
 public:
  IteratorStateReader(const IteratorState* state, std::string prefix) : state_(state), prefix_(std::move(prefix)) {}

  IteratorStateReader Child(std::string_view name) const { return {state_, prefix_ + std::string(name) + "/"}; }

  bool Contains(std::string_view key) const;
  Status ReadInt(std::string_view key, int64_t* value) const;
  Status ReadBool(std::string_view key, bool* value) const;
  Status ReadDouble(std::string_view key, double* value) const;
  Status ReadBytes(std::string_view key, std::string* value) const;
  Status ReadElement(std::string_view key, Element* element) const;
  // Appends the elements WriteElements wrote to *out (a vector or deque).
  template <class Container>
  Status ReadElements(std::string_view key, Container* out) const {
    int64_t n = 0;
    SLUICE_RETURN_IF_ERROR(ReadInt(std::string(key) + ".size", &n));
    for (int64_t i = 0; i < n; ++i) {
      Element e;
      SLUICE_RETURN_IF_ERROR(ReadElement(std::string(key) + "." + std::to_string(i), &e));
      out->push_back(std::move(e));
    }
    return Status();
  }

  const std::string& prefix() const { return prefix_; }

 private:
  Result<std::string_view> Find(std::string_view key) const;
  const IteratorState* state_;
  std::string prefix_;
};

// The state of the tree under `root` (an iterator MakeIterator returned) as
// bytes. Errors: Unimplemented naming a stage that cannot be saved.
// Not thread-safe against GetNext on the same iterator (one caller at a time).
Result<std::string> SaveIterator(IteratorBase& root);
// Puts `root` (an iterator of the same pipeline, in any process) at the
// position `bytes` holds. Errors: DataLoss for corrupt bytes, InvalidArgument
// for a checkpoint of another pipeline; on an error `root` is at the start.
Status RestoreIterator(IteratorBase& root, std::string_view bytes);

}  // namespace sluice::data

#endif  // SLUICE_DATA_CHECKPOINT_H_
