#include "ucx_connection.h"

#include <cinttypes>
#include <cstdio>
#include <cstring>

#include "error.h"

namespace alloy {
namespace net {
namespace {

// A Request's ticket: the slot (plus one, so that 0 means "nothing in flight") and its generation.
uint64_t ticketOf(uint32_t slot, uint32_t generation) { return (static_cast<uint64_t>(generation) << 32) | (slot + 1); }

}  // namespace

UcxConnection::UcxConnection(int peer, int maxOutstanding) : peer_(peer), ops_(maxOutstanding) {
  for (int i = maxOutstanding - 1; i >= 0; --i) {
    free_.push_back(static_cast<uint32_t>(i));
    ops_[i].connection = this;
  }
}

UcxOp* UcxConnection::acquire(const char* what, bool observed) {
  if (free_.empty()) return nullptr;
  UcxOp* op = &ops_[free_.back()];
  free_.pop_back();
  op->state = UcxOp::State::InFlight;
  op->observed = observed;
  op->what = what;
  op->status = UCS_OK;
  op->target = 0;
  ++op->generation;
  ++inFlight_;
  Count* count = countOf(what);
  op->completedCount = count != nullptr ? &count->completed : nullptr;
  if (count != nullptr) ++count->posted;
  return op;
}

UcxConnection::Count* UcxConnection::countOf(const char* what) {
  for (size_t k = 0; k < sizeof(kKinds) / sizeof(kKinds[0]); ++k)
    if (std::strcmp(kKinds[k], what) == 0) return &counts_[k];
  return nullptr;
}

std::string UcxConnection::tally() const {
  std::string text;
  for (size_t k = 0; k < sizeof(kKinds) / sizeof(kKinds[0]); ++k)
    text += std::string(k > 0 ? ", " : "") + kKinds[k] + " " + std::to_string(counts_[k].posted) + "/" +
            std::to_string(counts_[k].completed);
  for (const SignalTrace& t : lastSignals_) {
    char line[96];
    std::snprintf(line, sizeof(line), "; last signal to 0x%" PRIx64 ": 0x%" PRIx64 " replacing 0x%" PRIx64, t.target,
                  t.value, t.replaced);
    text += line;
  }
  return text + (failure != UCS_OK ? std::string(", failed: ") + ucs_status_string(failure) : "");
}

void UcxConnection::traceSignal(const UcxOp* op) {
  constexpr size_t kMostWords = 8;
  for (SignalTrace& t : lastSignals_)
    if (t.target == op->target) {
      t = SignalTrace{op->target, op->operand, op->reply};
      return;
    }
  if (lastSignals_.size() < kMostWords) lastSignals_.push_back(SignalTrace{op->target, op->operand, op->reply});
}

void UcxConnection::release(UcxOp* op) {
  op->state = UcxOp::State::Free;
  free_.push_back(static_cast<uint32_t>(op - ops_.data()));
}

ucp_request_param_t UcxConnection::paramsFor(UcxOp* op) {
  ucp_request_param_t params = {};
  params.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
  params.cb.send = &UcxConnection::onComplete;
  params.user_data = op;
  return params;
}

void UcxConnection::onComplete(void* request, ucs_status_t status, void* user) {
  ucp_request_free(request);
  UcxOp* op = static_cast<UcxOp*>(user);
  op->connection->complete(op, status);
}

void UcxConnection::complete(UcxOp* op, ucs_status_t status) {
  --inFlight_;
  if (op->completedCount != nullptr) ++*op->completedCount;
  op->status = status;
  if (status == UCS_OK && op->target != 0) traceSignal(op);
  // Unobserved, an error has nobody to tell but the connection's later calls.
  if (status != UCS_OK && failure == UCS_OK) failure = status;
  if (op->observed)
    op->state = UcxOp::State::Done;
  else
    release(op);
}

alloyResult_t UcxConnection::posted(UcxOp* op, ucs_status_ptr_t result, Request* req) {
  const uint32_t slot = static_cast<uint32_t>(op - ops_.data());
  if (req != nullptr) *req = Request{this, ticketOf(slot, op->generation)};
  if (UCS_PTR_IS_PTR(result)) return alloySuccess;  // onComplete finishes it
  const ucs_status_t status = UCS_PTR_STATUS(result);
  if (status == UCS_OK) {
    complete(op, status);
    return alloySuccess;
  }
  if (req != nullptr) *req = Request{};
  const char* what = op->what;
  op->observed = false;
  complete(op, status);
  return fail(alloyRemoteError, "peer %d: %s failed: %s", peer_, what, ucs_status_string(status));
}

alloyResult_t UcxConnection::test(Request* req, bool* done) {
  const uint64_t ticket = req->ticket;
  const uint32_t slot = static_cast<uint32_t>(ticket & 0xffffffffu) - 1;
  const uint32_t generation = static_cast<uint32_t>(ticket >> 32);
  if (slot >= ops_.size() || ops_[slot].generation != generation || !ops_[slot].observed ||
      ops_[slot].state == UcxOp::State::Free)
    return fail(alloyInvalidArgument, "req: no operation of this request is in flight to peer %d (tested done already?)",
                peer_);
  UcxOp* op = &ops_[slot];
  *done = op->state == UcxOp::State::Done;
  if (!*done) return alloySuccess;
  const ucs_status_t status = op->status;
  const char* what = op->what;
  release(op);
  *req = Request{};
  if (status != UCS_OK)
    return fail(alloyRemoteError, "peer %d: %s failed: %s", peer_, what, ucs_status_string(status));
  return alloySuccess;
}

}  // namespace net
}  // namespace alloy
