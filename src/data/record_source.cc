#include "data/record_source.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <utility>

#include "data/dataset_util.h"
#include "io/buffered_input.h"
#include "sluice/io/file_system.h"
#include "sluice/io/record_iterator.h"
#include "sluice/io/record_reader.h"

namespace sluice::data {
namespace {

void PutVarint(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

bool GetVarint(std::string_view* in, uint64_t* v) {
  uint64_t result = 0;
  for (int shift = 0; shift <= 63 && !in->empty(); shift += 7) {
    const auto byte = static_cast<uint8_t>(in->front());
    in->remove_prefix(1);
    result |= static_cast<uint64_t>(byte & 0x7F) << shift;
    if (byte < 0x80) {
      *v = result;
      return true;
    }
  }
  return false;
}

void PutBytes(std::string* out, std::string_view s) {
  PutVarint(out, s.size());
  out->append(s);
}

bool GetBytes(std::string_view* in, std::string_view* s) {
  uint64_t n = 0;
  if (!GetVarint(in, &n) || n > in->size()) return false;
  *s = in->substr(0, n);
  in->remove_prefix(n);
  return true;
}

Status Malformed(std::string_view what) {
  return Status(Code::kDataLoss, "malformed iterator checkpoint: " + std::string(what));
}

Status Changed(const std::string& path, uint64_t offset, std::string_view what) {
  return Status(Code::kDataLoss, "cannot re-read the record at offset " + std::to_string(offset) + " of \"" + path +
                                     "\" that the checkpoint refers to: " + std::string(what) +
                                     " (was the file changed since the checkpoint?)")
      .WithPayload("file", path)
      .WithPayload("offset", std::to_string(offset));
}

size_t RecordLength(const Element& e) { return e[0].scalar<std::string>().size(); }

bool IsRecord(const Element& e) {
  return e.size() == 1 && e[0].dtype() == DType::kString && e[0].rank() == 0;
}

}  // namespace

std::string RecordSource::Encode() const {
  std::string out;
  out.push_back(static_cast<char>(spec_.format));
  out.push_back(static_cast<char>(spec_.compression));
  PutVarint(&out, static_cast<uint64_t>(spec_.fixed.record_bytes));
  PutVarint(&out, static_cast<uint64_t>(spec_.fixed.header_bytes));
  PutVarint(&out, static_cast<uint64_t>(spec_.fixed.footer_bytes));
  out += spec_.path;
  return out;
}

Result<std::shared_ptr<const RecordSource>> RecordSource::Decode(std::string_view in) {
  if (in.size() < 2) return Malformed("record source too short");
  Spec spec;
  const auto format = static_cast<uint8_t>(in[0]);
  const auto compression = static_cast<uint8_t>(in[1]);
  if (format > 2 || compression > 2) return Malformed("unknown record source format");
  spec.format = static_cast<Format>(format);
  spec.compression = static_cast<io::CompressionType>(compression);
  in.remove_prefix(2);
  uint64_t record = 0, header = 0, footer = 0;
  if (!GetVarint(&in, &record) || !GetVarint(&in, &header) || !GetVarint(&in, &footer)) {
    return Malformed("truncated record source");
  }
  spec.fixed = {static_cast<int64_t>(record), static_cast<int64_t>(header), static_cast<int64_t>(footer)};
  spec.path = std::string(in);
  return std::make_shared<const RecordSource>(std::move(spec));
}

Status RecordSource::Read(std::span<const uint64_t> offsets, std::vector<Element>* out) const {
  const std::string& path = spec_.path;
  switch (spec_.format) {
    case Format::kTFRecord: {
      io::RecordReaderOptions options;
      options.compression_type = spec_.compression;
      SLUICE_ASSIGN_OR_RETURN(auto reader, io::RecordReader::Open(path, options));
      for (uint64_t offset : offsets) {
        uint64_t at = offset;
        std::string record;
        Status s = reader->ReadRecord(&at, &record);
        if (errors::IsOutOfRange(s)) return Changed(path, offset, "the file ends there");
        SLUICE_RETURN_IF_ERROR(s);
        out->push_back(Element{Tensor::String(record)});
      }
      return Status();
    }
    case Format::kTextLine: {
      io::LineIteratorOptions options;
      options.compression_type = spec_.compression;
      SLUICE_ASSIGN_OR_RETURN(auto lines, io::LineIterator::Open(path, options));
      for (uint64_t offset : offsets) {
        SLUICE_RETURN_IF_ERROR(lines->Seek(offset, 0));
        std::string_view line;
        bool end = false;
        SLUICE_RETURN_IF_ERROR(lines->GetNext(&line, &end));
        if (end) return Changed(path, offset, "the file ends there");
        out->push_back(Element{Tensor::String(line)});
      }
      return Status();
    }
    case Format::kFixedLength: {
      SLUICE_ASSIGN_OR_RETURN(auto file, io::DefaultFileSystem()->NewRandomAccessFile(path));
      SLUICE_ASSIGN_OR_RETURN(auto stream, io::NewInputStream(std::move(file), spec_.compression));
      io::BufferedInput input(std::move(stream));
      const auto n = static_cast<size_t>(spec_.fixed.record_bytes);
      for (uint64_t offset : offsets) {
        SLUICE_RETURN_IF_ERROR(input.Seek(offset));
        SLUICE_ASSIGN_OR_RETURN(size_t got, input.Ensure(n));
        if (got < n) return Changed(path, offset, "the file ends there");
        out->push_back(Element{Tensor::String(std::string_view(input.data(), n))});
      }
      return Status();
    }
  }
  return Malformed("unknown record source format");
}

void WriteBufferedElements(IteratorStateWriter* w, std::string_view key, std::span<const Element* const> elements,
                           std::span<const ElementOrigin* const> origins) {
  const std::string k(key);
  std::map<const RecordSource*, uint64_t> index;  // source -> position in `sources`
  std::string sources, packed;
  for (size_t i = 0; i < elements.size(); ++i) {
    const ElementOrigin* o = i < origins.size() ? origins[i] : nullptr;
    if (o == nullptr || o->source == nullptr || !IsRecord(*elements[i])) {
      PutVarint(&packed, 0);  // kept as bytes
      w->WriteElement(k + "." + std::to_string(i), *elements[i]);
      continue;
    }
    auto [it, added] = index.emplace(o->source.get(), index.size());
    if (added) PutBytes(&sources, o->source->Encode());
    PutVarint(&packed, it->second + 1);
    PutVarint(&packed, static_cast<uint64_t>(o->record));
    PutVarint(&packed, o->offset);
    PutVarint(&packed, RecordLength(*elements[i]));
  }
  w->WriteInt(k + ".size", static_cast<int64_t>(elements.size()));
  w->WriteBytes(k + ".sources", sources);
  w->WriteBytes(k + ".origins", packed);
}

Status ReadBufferedElements(const IteratorStateReader& r, std::string_view key, std::vector<Element>* elements,
                            std::vector<ElementOrigin>* origins) {
  const std::string k(key);
  int64_t n = 0;
  std::string sources_bytes, packed_bytes;
  SLUICE_RETURN_IF_ERROR(r.ReadInt(k + ".size", &n));
  if (n < 0) return Malformed(k + ".size is negative");
  if (!r.Contains(k + ".origins")) {  // written before origins were saved: every element as bytes
    packed_bytes.assign(static_cast<size_t>(n), '\0');
  } else {
    SLUICE_RETURN_IF_ERROR(r.ReadBytes(k + ".sources", &sources_bytes));
    SLUICE_RETURN_IF_ERROR(r.ReadBytes(k + ".origins", &packed_bytes));
  }

  std::vector<std::shared_ptr<const RecordSource>> sources;
  std::vector<std::shared_ptr<const std::string>> names;
  for (std::string_view in = sources_bytes; !in.empty();) {
    std::string_view one;
    if (!GetBytes(&in, &one)) return Malformed(k + ".sources");
    SLUICE_ASSIGN_OR_RETURN(auto source, RecordSource::Decode(one));
    names.push_back(std::make_shared<const std::string>(source->path()));
    sources.push_back(std::move(source));
  }

  // Per element: its origin (re-read below) or its bytes.
  struct Wanted {
    uint64_t record, offset, length;
    size_t slot;
  };
  std::vector<std::vector<Wanted>> wanted(sources.size());
  const size_t first = elements->size();
  elements->resize(first + static_cast<size_t>(n));
  std::vector<ElementOrigin> found(static_cast<size_t>(n));
  std::string_view in = packed_bytes;
  for (size_t i = 0; i < static_cast<size_t>(n); ++i) {
    uint64_t kind = 0;
    if (!GetVarint(&in, &kind) || kind > sources.size()) return Malformed(k + ".origins");
    if (kind == 0) {
      SLUICE_RETURN_IF_ERROR(r.ReadElement(k + "." + std::to_string(i), &(*elements)[first + i]));
      continue;
    }
    Wanted want{0, 0, 0, i};
    if (!GetVarint(&in, &want.record) || !GetVarint(&in, &want.offset) || !GetVarint(&in, &want.length)) {
      return Malformed(k + ".origins");
    }
    wanted[kind - 1].push_back(want);
  }
  if (!in.empty()) return Malformed(k + ".origins has trailing bytes");

  for (size_t s = 0; s < sources.size(); ++s) {
    std::vector<Wanted>& wants = wanted[s];
    std::sort(wants.begin(), wants.end(), [](const Wanted& a, const Wanted& b) { return a.offset < b.offset; });
    std::vector<uint64_t> offsets(wants.size());
    for (size_t j = 0; j < wants.size(); ++j) offsets[j] = wants[j].offset;
    std::vector<Element> records;
    records.reserve(wants.size());
    SLUICE_RETURN_IF_ERROR(sources[s]->Read(offsets, &records));
    for (size_t j = 0; j < wants.size(); ++j) {
      const Wanted& want = wants[j];
      if (RecordLength(records[j]) != want.length) {
        return Changed(sources[s]->path(), want.offset,
                       "its length is " + std::to_string(RecordLength(records[j])) + " bytes, not " +
                           std::to_string(want.length));
      }
      (*elements)[first + want.slot] = std::move(records[j]);
      found[want.slot] = ElementOrigin{names[s], static_cast<int64_t>(want.record), want.offset, sources[s]};
    }
  }
  if (origins != nullptr) origins->insert(origins->end(), found.begin(), found.end());
  return Status();
}

}  // namespace sluice::data
