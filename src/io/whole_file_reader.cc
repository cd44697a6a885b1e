// WholeFileReader and IdentityReader (TensorFlow
// core/kernels/whole_file_read_ops.cc, identity_reader_op.cc): one record
// per work unit, and the only readers whose state can be saved.
#include <memory>
#include <string>

#include "sluice/io/readers.h"

namespace sluice::io {
namespace {

// Shared by both: state save/restore through the base format.
class SerializableReader : public ReaderBase {
 public:
  bool supports_serialize() const override { return true; }

 protected:
  using ReaderBase::ReaderBase;

  Status SerializeStateLocked(std::string* state) override SLUICE_REQUIRES(mu_) {
    *state = SaveBaseStateLocked();
    return Status::OK();
  }

  Status RestoreStateLocked(std::string_view state) override SLUICE_REQUIRES(mu_) { return RestoreBaseStateLocked(state); }
};

class IdentityReader : public SerializableReader {
 public:
  explicit IdentityReader(const ReaderOptions& options) : SerializableReader("IdentityReader", options.name) {}

 private:
  Status ReadLocked(std::string* key, std::string* value, bool* produced, bool* at_end) override SLUICE_REQUIRES(mu_) {
    *key = current_work();
    *value = current_work();
    *produced = true;
    *at_end = true;
    return Status::OK();
  }
};

class WholeFileReader : public SerializableReader {
 public:
  explicit WholeFileReader(const ReaderOptions& options)
      : SerializableReader("WholeFileReader", options.name), fs_(OrDefault(options.file_system)) {}

 private:
  Status OnWorkStartedLocked() override SLUICE_REQUIRES(mu_) {
    SLUICE_ASSIGN_OR_RETURN(contents_, ReadFileToString(fs_, current_work()));
    return Status::OK();
  }

  Status ReadLocked(std::string* key, std::string* value, bool* produced, bool* at_end) override SLUICE_REQUIRES(mu_) {
    *key = current_work();
    *value = std::move(contents_);
    contents_.clear();
    *produced = true;
    *at_end = true;
    return Status::OK();
  }

  Status ResetLocked() override SLUICE_REQUIRES(mu_) {
    contents_.clear();
    return ReaderBase::ResetLocked();
  }

  FileSystem* const fs_;
  std::string contents_ SLUICE_GUARDED_BY(mu_);
};

}  // namespace

Result<std::unique_ptr<ReaderBase>> NewIdentityReader(const ReaderOptions& options) {
  return std::unique_ptr<ReaderBase>(new IdentityReader(options));
}

Result<std::unique_ptr<ReaderBase>> NewWholeFileReader(const ReaderOptions& options) {
  return std::unique_ptr<ReaderBase>(new WholeFileReader(options));
}

}  // namespace sluice::io
