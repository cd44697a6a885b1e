// Preprocessing ranks: Serve (workers) and FromService (trainers), and the
// element wire format (see service.h).
#include "sluice/distribute/service.h"

#include <algorithm>
#include <cstring>
#include <atomic>
#include <set>
#include <span>
#include <vector>

namespace sluice::distribute {
namespace {

constexpr char kElementMagic[4] = {'S', 'L', 'E', 'L'};
constexpr std::string_view kEndOfStream = "SLEN";
constexpr std::string_view kErrorMagic = "SLER";
constexpr size_t kAlign = TensorBuffer::kAlignment;

size_t AlignUp(size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

template <class T>
void Put(std::string* out, size_t* at, T v) {
  std::memcpy(out->data() + *at, &v, sizeof v);
  *at += sizeof v;
}

// Reads a T at *at of `bytes`; false past the end.
template <class T>
bool Get(std::string_view bytes, size_t* at, T* v) {
  if (*at > bytes.size() || bytes.size() - *at < sizeof(T)) return false;
  std::memcpy(v, bytes.data() + *at, sizeof(T));
  *at += sizeof(T);
  return true;
}

// The payload of a component: raw bytes (numeric) or length-prefixed strings.
size_t PayloadBytes(const Tensor& t) {
  if (t.dtype() != DType::kString) return t.TotalBytes();
  size_t n = 0;
  for (const std::string& s : t.flat<std::string>()) n += 8 + s.size();
  return n;
}

void WritePayload(const Tensor& t, char* dst) {
  if (t.dtype() != DType::kString) {
    if (t.TotalBytes() > 0) std::memcpy(dst, t.raw_data(), t.TotalBytes());
    return;
  }
  for (const std::string& s : t.flat<std::string>()) {
    const uint64_t len = s.size();
    std::memcpy(dst, &len, 8);
    std::memcpy(dst + 8, s.data(), s.size());
    dst += 8 + s.size();
  }
}

Status Malformed(const Message& m, std::string_view why) {
  return errors::DataLoss("malformed element message from rank ", m.source, ": ", why);
}

std::string EncodeError(const Status& s) {
  std::string out(kErrorMagic);
  const uint32_t code = static_cast<uint32_t>(s.code());
  out.append(reinterpret_cast<const char*>(&code), sizeof code);
  out += s.message();
  return out;
}

Status CheckOptions(const ServiceOptions& o, int size) {
  if (o.workers.empty() || o.trainers.empty()) {
    return errors::InvalidArgument("a service needs at least one worker and one trainer rank");
  }
  std::set<int> seen;
  for (int r : o.workers) seen.insert(r);
  for (int r : o.trainers) {
    if (seen.count(r)) return errors::InvalidArgument("rank ", r, " is both a worker and a trainer");
    seen.insert(r);
  }
  for (int r : seen) {
    if (r < 0 || r >= size) return errors::InvalidArgument("rank ", r, " is not in [0, ", size, ")");
  }
  if (o.max_outstanding_requests < 1) {
    return errors::InvalidArgument("max_outstanding_requests must be >= 1, got ", o.max_outstanding_requests);
  }
  return Status();
}

class FromServiceIterator : public data::IteratorBase {
 public:
  FromServiceIterator(std::shared_ptr<Communicator> comm, ServiceOptions options, bool first)
      : comm_(std::move(comm)), o_(std::move(options)), first_(first) {}

  Status GetNext(Element* out, bool* end_of_sequence) override {
    if (!first_) return errors::FailedPrecondition("a service stream is read by one pass only");
    if (!started_) {
      started_ = true;
      // Every worker gets at least one credit, or it could never send its end.
      const int credits = std::max<int>(o_.max_outstanding_requests, static_cast<int>(o_.workers.size()));
      for (int i = 0; i < credits; ++i) {
        SLUICE_RETURN_IF_ERROR(comm_->Send(o_.workers[static_cast<size_t>(i) % o_.workers.size()], o_.tag + 1, ""));
      }
    }
    while (ended_.size() < o_.workers.size()) {
      SLUICE_ASSIGN_OR_RETURN(Message m, comm_->Recv(kAnySource, o_.tag));
      const std::string_view bytes = m.bytes();
      if (bytes == kEndOfStream) {
        ended_.insert(m.source);
        continue;
      }
      if (bytes.substr(0, 4) == kErrorMagic && bytes.size() >= 8) {
        uint32_t code = 0;
        std::memcpy(&code, bytes.data() + 4, 4);
        return Status(static_cast<Code>(code),
                      StrCat(bytes.substr(8), " (on preprocessing rank ", m.source, ")"));
      }
      SLUICE_RETURN_IF_ERROR(DecodeElement(m, out));
      // The credit goes back to the worker that used it.
      SLUICE_RETURN_IF_ERROR(comm_->Send(m.source, o_.tag + 1, ""));
      *end_of_sequence = false;
      return Status();
    }
    *end_of_sequence = true;
    return Status();
  }

 private:
  const std::shared_ptr<Communicator> comm_;
  const ServiceOptions o_;
  const bool first_;
  bool started_ = false;
  std::set<int> ended_;
};

// A probe pass (a Python function's tracing) takes neither the stream's one
// pass nor an element of it: it sees one element of zeros (unknown
// dimensions 0, strings empty), as FromQueue's probe does.
class FromServiceProbeIterator : public data::IteratorBase {
 public:
  explicit FromServiceProbeIterator(const data::ElementSpec& spec) : spec_(spec) {}

  Status GetNext(Element* out, bool* end_of_sequence) override {
    *end_of_sequence = done_;
    if (done_) return Status();
    done_ = true;
    Element e;
    for (size_t i = 0; i < spec_.size(); ++i) {
      std::vector<int64_t> dims;
      if (spec_.shapes[i].rank_known()) {
        for (int64_t d : spec_.shapes[i].dims()) dims.push_back(d < 0 ? 0 : d);
      }
      e.push_back(Tensor::Zeros(spec_.dtypes[i], TensorShape(std::span<const int64_t>(dims))));
    }
    *out = std::move(e);
    return Status();
  }

 private:
  const data::ElementSpec spec_;
  bool done_ = false;
};

class FromServiceDataset : public data::DatasetBase {
 public:
  FromServiceDataset(std::shared_ptr<Communicator> comm, ServiceOptions options, data::ElementSpec spec)
      : data::DatasetBase(std::move(spec)), comm_(std::move(comm)), options_(std::move(options)) {}
  int64_t cardinality() const override { return data::kUnknownCardinality; }
  std::string DebugName() const override { return "FromService"; }
  std::unique_ptr<data::IteratorBase> MakeIteratorInternal(const data::IteratorContext& ctx) const override {
    if (ctx.probe) return std::make_unique<FromServiceProbeIterator>(element_spec());
    return std::make_unique<FromServiceIterator>(comm_, options_, !passes_.exchange(true));
  }

 private:
  const std::shared_ptr<Communicator> comm_;
  const ServiceOptions options_;
  mutable std::atomic<bool> passes_{false};
};

}  // namespace

std::string EncodeElement(const Element& element) {
  size_t header = 8;
  for (const Tensor& t : element) header += 8 + 8 * static_cast<size_t>(t.rank()) + 16;
  std::vector<size_t> offsets;
  size_t total = AlignUp(header);
  for (const Tensor& t : element) {
    offsets.push_back(total);
    total = AlignUp(total + PayloadBytes(t));
  }
  std::string out(total, '\0');
  std::memcpy(out.data(), kElementMagic, 4);
  size_t at = 4;
  Put<uint32_t>(&out, &at, static_cast<uint32_t>(element.size()));
  for (size_t i = 0; i < element.size(); ++i) {
    const Tensor& t = element[i];
    Put<int32_t>(&out, &at, static_cast<int32_t>(t.dtype()));
    Put<int32_t>(&out, &at, t.rank());
    for (int64_t d : t.shape().dims()) Put<int64_t>(&out, &at, d);
    Put<uint64_t>(&out, &at, offsets[i]);
    Put<uint64_t>(&out, &at, PayloadBytes(t));
    WritePayload(t, out.data() + offsets[i]);
  }
  return out;
}

Status DecodeElement(const Message& message, Element* out) {
  const std::string_view bytes = message.bytes();
  if (bytes.size() < 8 || std::memcmp(bytes.data(), kElementMagic, 4) != 0) return Malformed(message, "bad magic");
  size_t at = 4;
  uint32_t n = 0;
  Get(bytes, &at, &n);
  Element e;
  for (uint32_t i = 0; i < n; ++i) {
    int32_t dtype = 0, rank = 0;
    if (!Get(bytes, &at, &dtype) || !Get(bytes, &at, &rank) || rank < 0 || rank > 64) {
      return Malformed(message, "truncated header");
    }
    std::vector<int64_t> dims(static_cast<size_t>(rank));
    for (int64_t& d : dims) {
      if (!Get(bytes, &at, &d) || d < 0) return Malformed(message, "bad dimension");
    }
    uint64_t offset = 0, length = 0;
    if (!Get(bytes, &at, &offset) || !Get(bytes, &at, &length) || offset > bytes.size() ||
        length > bytes.size() - offset || offset % kAlign != 0) {
      return Malformed(message, "component outside the message");
    }
    const DType dt = static_cast<DType>(dtype);
    TensorShape shape{std::span<const int64_t>(dims)};
    char* data = static_cast<char*>(message.data.raw_data()) + offset;
    if (dt == DType::kString) {
      Tensor t(dt, shape);
      size_t p = 0;
      for (std::string& s : t.flat<std::string>()) {
        uint64_t len = 0;
        if (length - p < 8) return Malformed(message, "truncated string");
        std::memcpy(&len, data + p, 8);
        p += 8;
        if (len > length - p) return Malformed(message, "truncated string");
        s.assign(data + p, len);
        p += len;
      }
      e.push_back(std::move(t));
      continue;
    }
    if (DTypeSize(dt) == 0 || static_cast<uint64_t>(shape.num_elements()) * DTypeSize(dt) != length) {
      return Malformed(message, StrCat("component ", i, " has ", length, " bytes for its dtype and shape"));
    }
    // A view into the message's aligned buffer, which it keeps alive.
    e.push_back(Tensor::Wrap(dt, std::move(shape), data, [keep = message.data]() {}));
  }
  *out = std::move(e);
  return Status();
}

ServiceOptions ServiceOptionsFromRoles(const std::vector<std::string>& roles) {
  ServiceOptions o;
  for (size_t r = 0; r < roles.size(); ++r) {
    (roles[r] == "preprocess" ? o.workers : o.trainers).push_back(static_cast<int>(r));
  }
  return o;
}

Status Serve(const data::DatasetPtr& dataset, std::shared_ptr<Communicator> comm, const ServiceOptions& options) {
  SLUICE_RETURN_IF_ERROR(CheckOptions(options, comm->size()));
  if (std::find(options.workers.begin(), options.workers.end(), comm->rank()) == options.workers.end()) {
    return errors::InvalidArgument("rank ", comm->rank(), " is not one of the service's workers");
  }
  std::unique_ptr<data::IteratorBase> it = dataset->MakeIterator();
  Status failed;
  while (true) {
    // The element first, so that it is ready when a credit comes.
    Element e;
    bool end = false;
    failed = it->GetNext(&e, &end);
    if (end && failed.ok()) break;
    SLUICE_ASSIGN_OR_RETURN(Message credit, comm->Recv(kAnySource, options.tag + 1));
    SLUICE_RETURN_IF_ERROR(comm->Send(credit.source, options.tag, failed.ok() ? EncodeElement(e) : EncodeError(failed)));
    if (!failed.ok()) break;
  }
  for (int t : options.trainers) SLUICE_RETURN_IF_ERROR(comm->Send(t, options.tag, kEndOfStream));
  return failed;
}

Result<data::DatasetPtr> FromService(std::shared_ptr<Communicator> comm, const ServiceOptions& options,
                                     data::ElementSpec spec) {
  SLUICE_RETURN_IF_ERROR(CheckOptions(options, comm->size()));
  if (std::find(options.trainers.begin(), options.trainers.end(), comm->rank()) == options.trainers.end()) {
    return errors::InvalidArgument("rank ", comm->rank(), " is not one of the service's trainers");
  }
  return data::DatasetPtr(std::make_shared<FromServiceDataset>(std::move(comm), options, std::move(spec)));
}

}  // namespace sluice::distribute
