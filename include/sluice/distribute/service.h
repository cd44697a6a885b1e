// Preprocessing ranks (tf.data service's job, on a Communicator): some
// ranks run the input pipeline (Serve) and stream its ready elements
// (batches) to the training ranks, which read them as a dataset
// (FromService).
//
// Flow control is by credits: a trainer keeps max_outstanding_requests
// credits out with the workers; a worker sends an element only against a
// credit, and the trainer returns one credit to that worker per element it
// receives. So a trainer never holds more than max_outstanding_requests
// elements it has not asked for, and each worker serves whichever trainer's
// credit comes first (DYNAMIC: first come, first served; a fast worker gets
// more credits back). Each worker ends its stream with one end-of-stream
// message to every trainer.
//
// Wire format of an element message: a header, then each component's bytes
// at a 64-byte aligned offset (numeric tensors; a string tensor is its
// strings, each an 8-byte little-endian length and the bytes):
//   u32 magic "SLEL", u32 components,
//   per component: i32 dtype, i32 rank, i64 dims[rank], u64 offset, u64 bytes.
// The receiver gets the message into one 64-byte aligned buffer
// (Communicator::Recv) and wraps the numeric components as tensors over it,
// without a copy. An end-of-stream message is the 4 bytes "SLEN"; an error
// "SLER" followed by the code (u32) and the message.
//
// Blocking: Serve and FromService's GetNext wait for messages; a dead peer
// ends the MPI job (mpirun names it), and Communicator::Cancel wakes them.
// Thread-safety: Serve blocks its caller; FromService's datasets are as
// every Dataset.
#ifndef SLUICE_DISTRIBUTE_SERVICE_H_
#define SLUICE_DISTRIBUTE_SERVICE_H_

#include <vector>

#include "sluice/data/dataset.h"
#include "sluice/distribute/communicator.h"

namespace sluice::distribute {

struct ServiceOptions {
  // The ranks running Serve and the ranks reading FromService; disjoint,
  // non-empty, the same on every rank.
  std::vector<int> workers;
  std::vector<int> trainers;
  // Credits each trainer keeps out (tf.data service's name).
  int max_outstanding_requests = 8;
  // Tags of the stream's messages: tag (elements, ends) and tag + 1
  // (credits). Two services running at once need different tags.
  int tag = 30000;
};

// The ranks of `roles` (one entry per rank, "train" or "preprocess", as
// InputContext::role) split into options' workers and trainers.
ServiceOptions ServiceOptionsFromRoles(const std::vector<std::string>& roles);

// Worker side: iterates `dataset` once and sends each element to the
// trainer whose credit arrived first; then one end-of-stream to every
// trainer. Blocks until done. An element's error is sent to the trainer
// that would have received it (which raises it) and ends this worker's
// stream. Errors: InvalidArgument for bad options or a rank that is not a
// worker; the communicator's (Unavailable naming the peer).
[[nodiscard]] Status Serve(const data::DatasetPtr& dataset, std::shared_ptr<Communicator> comm,
                           const ServiceOptions& options);

// Trainer side: a dataset of the elements the workers send this rank, in
// arrival order, until every worker has ended its stream. One pass per
// dataset (a second iterator's GetNext is FailedPrecondition). `spec` is the
// elements' signature (for element_spec; not checked). Errors of GetNext:
// a worker's error; DataLoss for a malformed message (naming the worker);
// the communicator's.
[[nodiscard]] Result<data::DatasetPtr> FromService(std::shared_ptr<Communicator> comm, const ServiceOptions& options,
                                                  data::ElementSpec spec);

// The wire format above (exposed for tests and for other transports).
std::string EncodeElement(const Element& element);
[[nodiscard]] Status DecodeElement(const Message& message, Element* out);

}  // namespace sluice::distribute

#endif  // SLUICE_DISTRIBUTE_SERVICE_H_
