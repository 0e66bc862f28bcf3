// One UCX connection (a ucp endpoint to one peer) and its operations in flight. The operations live in a
// fixed table of maxOutstanding slots: UCX's completion callbacks point into it (so it never moves), it
// is the back-pressure bound, and a caller's Request names a slot and its generation, so that a stale or
// dropped Request can neither reach a reused slot nor leak one.
#pragma once

#include <ucp/api/ucp.h>

#include <cstdint>
#include <string>
#include <vector>

#include "transport.h"

namespace alloy {
namespace net {

class UcxConnection;

struct UcxOp {
  enum class State { Free, InFlight, Done };
  State state = State::Free;
  bool observed = false;  // posted with a Request: the slot stays until test() reads the result
  uint32_t generation = 0;
  const char* what = "";  // "put", "signal", "flush": for messages
  uint64_t* completedCount = nullptr;  // the connection's tally of this kind (UcxConnection::tally)
  ucs_status_t status = UCS_OK;
  uint64_t operand = 0;  // the signal's value, and the old value UCX's atomic swap returns: they must
  uint64_t reply = 0;    // stay in place until the operation completes
  uint64_t header[4] = {};  // putSignal's active-message header (the same rule)
  uint64_t target = 0;      // a signal's remote address (0 for other kinds), for the stall report
  UcxConnection* connection = nullptr;
};

class UcxConnection : public Connection {
 public:
  UcxConnection(int peer, int maxOutstanding);
  ~UcxConnection() override = default;

  int peer() const { return peer_; }
  // Operations UCX has not completed yet (they may still read sources and use keys).
  int inFlight() const { return inFlight_; }

  ucp_ep_h ep = nullptr;
  ucs_status_t failure = UCS_OK;  // set by the endpoint's error handler or a failed operation
  bool detectsFailure = true;     // the endpoint has UCX's peer error handling

  // A free slot for an operation, or nullptr when maxOutstanding are taken.
  UcxOp* acquire(const char* what, bool observed);
  // Parameters for a ucp_*_nbx call whose completion lands in op.
  static ucp_request_param_t paramsFor(UcxOp* op);
  // Takes what a ucp_*_nbx call returned for op: fills *req (when given) and releases what completed
  // unobserved. An immediate failure fails the connection and returns alloyRemoteError.
  alloyResult_t posted(UcxOp* op, ucs_status_ptr_t result, Request* req);
  // test() of a Request of this connection.
  alloyResult_t test(Request* req, bool* done);
  // Operations posted and completed so far, by kind ("put 12/12, signal 5/4, ..."), for a stall report:
  // one posted but never completed is still inside UCX on this side. Then, per remote word signalled,
  // the last value completed there and the value the swap replaced: a word the peer reads as older than
  // what it was last given was overwritten after the signal landed, and a replaced value newer than the
  // signal's shows signals applied out of order.
  std::string tally() const;

 private:
  static void onComplete(void* request, ucs_status_t status, void* user);
  void complete(UcxOp* op, ucs_status_t status);
  void release(UcxOp* op);
  void traceSignal(const UcxOp* op);

  // The kinds an op's `what` names, and per kind the operations posted and completed.
  static constexpr const char* kKinds[] = {"put", "signal", "put+signal", "flush"};
  struct Count {
    uint64_t posted = 0;
    uint64_t completed = 0;
  };
  Count counts_[sizeof(kKinds) / sizeof(kKinds[0])];
  // The tally of `what`'s kind, looked up once per operation (at acquire).
  Count* countOf(const char* what);

  struct SignalTrace {
    uint64_t target, value, replaced;
  };
  std::vector<SignalTrace> lastSignals_;  // one per remote word (a channel signals two per peer)

  int peer_;
  std::vector<UcxOp> ops_;
  std::vector<uint32_t> free_;
  int inFlight_ = 0;
};

}  // namespace net
}  // namespace alloy
