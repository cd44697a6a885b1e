// RecordSource: a file of records that can be read again at a record's byte
// offset, so that a checkpoint stores where a buffered element came from
// (file, record number, offset) instead of its bytes, and re-reads it on
// restore. Readers set it on ElementOrigin::source only for elements that
// are exactly the record they read; a transformation that changes elements
// (Map) passes its input's origin on without it.
//
// Immutable after construction: thread-safe.
#ifndef SLUICE_SRC_DATA_RECORD_SOURCE_H_
#define SLUICE_SRC_DATA_RECORD_SOURCE_H_

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/core/element.h"
#include "sluice/core/status.h"
#include "sluice/data/checkpoint.h"
#include "sluice/data/datasets.h"
#include "sluice/io/input_stream.h"

namespace sluice::data {

class RecordSource {
 public:
  enum class Format : uint8_t { kTFRecord = 0, kTextLine = 1, kFixedLength = 2 };
  struct Spec {
    Format format = Format::kTFRecord;
    io::CompressionType compression = io::CompressionType::kNone;
    FixedLengthOptions fixed;  // kFixedLength only
    std::string path;
  };

  explicit RecordSource(Spec spec) : spec_(std::move(spec)) {}

  const Spec& spec() const { return spec_; }
  const std::string& path() const { return spec_.path; }

  // The spec as bytes for a checkpoint; Decode makes an equal source.
  std::string Encode() const;
  // Errors: DataLoss for bytes Encode did not write.
  static Result<std::shared_ptr<const RecordSource>> Decode(std::string_view bytes);

  // The records that start at `offsets` (ascending; uncompressed offsets),
  // one string-scalar element each, appended to *out. A compressed file is
  // inflated once from its start up to the last offset. Errors: the file's
  // (NotFound, read errors, DataLoss for a corrupt record naming file and
  // offset); DataLoss when no record ends inside the file at an offset (the
  // file changed since the checkpoint).
  Status Read(std::span<const uint64_t> offsets, std::vector<Element>* out) const;

 private:
  const Spec spec_;
};

// Buffered elements in a checkpoint, small where possible: an element whose
// origin has a source is saved as (source, record number, byte offset,
// length) and re-read on restore, batched per file and sorted by offset;
// any other element as its bytes. Entries under `key`: ".size", ".sources"
// and ".origins" (one packed entry each), and "." + i for each element saved
// as bytes. origins[i] may be null (no origin).
void WriteBufferedElements(IteratorStateWriter* w, std::string_view key, std::span<const Element* const> elements,
                           std::span<const ElementOrigin* const> origins);
// Appends what WriteBufferedElements wrote to *elements, and to *origins
// (when not null) each element's origin (with its source where it was
// re-read, empty otherwise). Errors: InvalidArgument for missing entries,
// DataLoss for malformed ones, Read's errors, DataLoss when a re-read
// record's length differs from the saved one.
Status ReadBufferedElements(const IteratorStateReader& r, std::string_view key, std::vector<Element>* elements,
                            std::vector<ElementOrigin>* origins);

}  // namespace sluice::data

#endif  // SLUICE_SRC_DATA_RECORD_SOURCE_H_
