#include "verbs_datagram.h"

#include <cerrno>
#include <cstring>

#include "error.h"
#include "log.h"

namespace alloy {
namespace verbs {
namespace {

constexpr int kPollBatch = 16;
// wr_id of a send carries this bit above the slot, so that one completion queue serves both rings.
constexpr uint64_t kSendBit = 1ull << 32;

}  // namespace

alloyResult_t Datagrams::create(const VerbsLibrary& lib, const QueuePairs& pairs, ibv_context* context, ibv_pd* pd,
                                std::unique_ptr<Datagrams>* out) {
  std::unique_ptr<Datagrams> d(new Datagrams(lib));
  d->buffers_.assign((kReceives + kSends) * kSlotBytes, 0);
  d->mr_ = own(lib.regMr(pd, d->buffers_.data(), d->buffers_.size(), IBV_ACCESS_LOCAL_WRITE), lib.deregMr);
  if (!d->mr_)
    return fail(alloySystemError, "verbs: ibv_reg_mr of the %zu-byte handshake buffers failed: %s", d->buffers_.size(),
                std::strerror(errno));
  d->cq_ = own(lib.createCq(context, kReceives + kSends, nullptr, nullptr, 0), lib.destroyCq);
  if (!d->cq_)
    return fail(alloySystemError, "verbs: ibv_create_cq of %d entries (handshakes) failed: %s", kReceives + kSends,
                std::strerror(errno));
  std::string why;
  d->qp_ = pairs.createUd(d->cq_.get(), kSends, kReceives, &why);
  if (!d->qp_) return fail(alloySystemError, "verbs: the handshake queue pair: %s", why.c_str());
  for (int slot = 0; slot < kReceives; ++slot)
    if (!d->postReceive(slot))
      return fail(alloySystemError, "verbs: ibv_post_recv on the handshake queue pair failed: %s", std::strerror(errno));
  for (int slot = kSends - 1; slot >= 0; --slot) d->freeSends_.push_back(slot);
  *out = std::move(d);
  return alloySuccess;
}

bool Datagrams::postReceive(int slot) {
  ibv_sge sge{};
  sge.addr = reinterpret_cast<uintptr_t>(receiveBuffer(slot));
  sge.length = static_cast<uint32_t>(kSlotBytes);
  sge.lkey = mr_->lkey;
  ibv_recv_wr wr{};
  wr.wr_id = static_cast<uint64_t>(slot);
  wr.sg_list = &sge;
  wr.num_sge = 1;
  ibv_recv_wr* bad = nullptr;
  const int rc = ibv_post_recv(qp_.get(), &wr, &bad);
  if (rc != 0) errno = rc;
  return rc == 0;
}

bool Datagrams::send(ibv_ah* ah, uint32_t remoteQpn, const std::vector<uint8_t>& bytes) {
  if (freeSends_.empty() || bytes.size() > kMessageBytes) return false;
  const int slot = freeSends_.back();
  std::memcpy(sendBuffer(slot), bytes.data(), bytes.size());
  ibv_sge sge{};
  sge.addr = reinterpret_cast<uintptr_t>(sendBuffer(slot));
  sge.length = static_cast<uint32_t>(bytes.size());
  sge.lkey = mr_->lkey;
  ibv_send_wr wr{};
  wr.wr_id = kSendBit | static_cast<uint64_t>(slot);
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_SEND;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.wr.ud.ah = ah;
  wr.wr.ud.remote_qpn = remoteQpn;
  wr.wr.ud.remote_qkey = kHandshakeQkey;
  ibv_send_wr* bad = nullptr;
  if (ibv_post_send(qp_.get(), &wr, &bad) != 0) return false;
  freeSends_.pop_back();
  return true;
}

bool Datagrams::poll(const std::function<void(const uint8_t*, size_t)>& deliver) {
  ibv_wc wc[kPollBatch];
  bool any = false;
  int n = 0;
  while ((n = ibv_poll_cq(cq_.get(), kPollBatch, wc)) > 0) {
    any = true;
    for (int i = 0; i < n; ++i) {
      const int slot = static_cast<int>(wc[i].wr_id & 0xffffffffu);
      if (wc[i].wr_id & kSendBit) {
        freeSends_.push_back(slot);
        continue;
      }
      if (wc[i].status == IBV_WC_SUCCESS && wc[i].byte_len >= kGrhBytes)
        deliver(receiveBuffer(slot) + kGrhBytes, wc[i].byte_len - kGrhBytes);
      if (!postReceive(slot) && !warned_) {
        warned_ = true;  // one receive buffer fewer; the rest still serve
        logWarn("verbs: reposting a handshake receive failed: %s", std::strerror(errno));
      }
    }
  }
  return any;
}

}  // namespace verbs
}  // namespace alloy
