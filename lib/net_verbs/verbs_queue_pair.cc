#include "verbs_queue_pair.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace alloy {
namespace verbs {
namespace {

// RDMA READs (flushes) one side may have outstanding at the other: enough for one flush per connection at
// a time with room to spare, within what the device allows.
constexpr int kMaxReads = 16;
// Receiver-not-ready back-off (the RTR attribute's code 12: 0.64 ms). Only matters for receives, which
// the transport does not use; the field must be set.
constexpr int kMinRnrTimer = 12;
constexpr int kHopLimit = 255;
constexpr uint32_t kInlineBytes = 8;

// ibv_modify_qp returns the errno value; the creating calls return null and set errno.
std::string errnoText(int rc) { return std::strerror(rc); }

}  // namespace

ibv_ah_attr QueuePairs::pathTo(const VerbsAddress& remote) const {
  ibv_ah_attr attr{};
  attr.dlid = remote.lid;
  attr.sl = static_cast<uint8_t>(settings_.serviceLevel);
  attr.port_num = port_.port;
  // RoCE routes by GID, so every packet carries a global route header; InfiniBand within one subnet
  // routes by LID and needs none.
  attr.is_global = port_.link == LinkLayer::Ethernet ? 1 : 0;
  if (attr.is_global) {
    std::memcpy(attr.grh.dgid.raw, remote.gid.data(), remote.gid.size());
    attr.grh.sgid_index = static_cast<uint8_t>(port_.gidIndex);
    attr.grh.hop_limit = kHopLimit;
    attr.grh.traffic_class = static_cast<uint8_t>(settings_.trafficClass);
  }
  return attr;
}

bool QueuePairs::modify(ibv_qp* qp, ibv_qp_attr* attr, int mask, const char* step, std::string* why) const {
  const int rc = lib_.modifyQp(qp, attr, mask);
  if (rc == 0) return true;
  *why = std::string("ibv_modify_qp to ") + step + " failed: " + errnoText(rc);
  return false;
}

VerbsPtr<ibv_qp> QueuePairs::create(ibv_cq* cq, ibv_qp_type type, int sends, int receives, uint32_t inlineBytes,
                                    std::string* why) const {
  ibv_qp_init_attr init{};
  init.send_cq = cq;
  init.recv_cq = cq;
  init.qp_type = type;
  init.cap.max_send_wr = static_cast<uint32_t>(sends);
  init.cap.max_recv_wr = static_cast<uint32_t>(receives);
  init.cap.max_send_sge = 1;
  init.cap.max_recv_sge = 1;
  init.cap.max_inline_data = inlineBytes;
  VerbsPtr<ibv_qp> qp = own(lib_.createQp(pd_, &init), lib_.destroyQp);
  if (!qp)
    *why = std::string("ibv_create_qp (") + (type == IBV_QPT_RC ? "RC" : "UD") + ", " + std::to_string(sends) +
           " send work requests) failed: " + errnoText(errno);
  return qp;
}

VerbsPtr<ibv_qp> QueuePairs::createRc(ibv_cq* cq, int sendDepth, std::string* why) const {
  // No receives are posted, but some providers refuse a receive queue of 0.
  VerbsPtr<ibv_qp> qp = create(cq, IBV_QPT_RC, sendDepth, 1, kInlineBytes, why);
  if (!qp) return qp;
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_INIT;
  attr.pkey_index = 0;
  attr.port_num = port_.port;
  attr.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
  if (!modify(qp.get(), &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS, "INIT", why))
    qp.reset();
  return qp;
}

bool QueuePairs::connectRc(ibv_qp* qp, const VerbsAddress& remote, uint32_t remoteQpn, uint32_t remotePsn,
                           uint32_t localPsn, std::string* why) const {
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_RTR;
  attr.path_mtu = static_cast<ibv_mtu>(pathMtu(port_.activeMtu, remote.mtu));
  attr.dest_qp_num = remoteQpn;
  attr.rq_psn = remotePsn;
  attr.max_dest_rd_atomic = static_cast<uint8_t>(std::min(kMaxReads, port_.deviceAttr.max_qp_rd_atom));
  attr.min_rnr_timer = kMinRnrTimer;
  attr.ah_attr = pathTo(remote);
  if (!modify(qp, &attr,
              IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER,
              "RTR", why))
    return false;
  attr = ibv_qp_attr{};
  attr.qp_state = IBV_QPS_RTS;
  attr.timeout = static_cast<uint8_t>(settings_.timeout);
  attr.retry_cnt = static_cast<uint8_t>(settings_.retryCount);
  attr.rnr_retry = static_cast<uint8_t>(settings_.rnrRetry);
  attr.sq_psn = localPsn;
  attr.max_rd_atomic = static_cast<uint8_t>(std::min(kMaxReads, port_.deviceAttr.max_qp_init_rd_atom));
  return modify(qp, &attr,
                IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
                    IBV_QP_MAX_QP_RD_ATOMIC,
                "RTS", why);
}

VerbsPtr<ibv_qp> QueuePairs::createUd(ibv_cq* cq, int sends, int receives, std::string* why) const {
  VerbsPtr<ibv_qp> qp = create(cq, IBV_QPT_UD, sends, receives, 0, why);
  if (!qp) return qp;
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_INIT;
  attr.pkey_index = 0;
  attr.port_num = port_.port;
  attr.qkey = kHandshakeQkey;
  bool ok = modify(qp.get(), &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY, "INIT", why);
  attr = ibv_qp_attr{};
  attr.qp_state = IBV_QPS_RTR;
  ok = ok && modify(qp.get(), &attr, IBV_QP_STATE, "RTR", why);
  attr = ibv_qp_attr{};
  attr.qp_state = IBV_QPS_RTS;
  attr.sq_psn = 0;  // datagrams have no sequence shared with anyone
  ok = ok && modify(qp.get(), &attr, IBV_QP_STATE | IBV_QP_SQ_PSN, "RTS", why);
  if (!ok) qp.reset();
  return qp;
}

VerbsPtr<ibv_ah> QueuePairs::createAh(const VerbsAddress& remote, std::string* why) const {
  ibv_ah_attr attr = pathTo(remote);
  VerbsPtr<ibv_ah> ah = own(lib_.createAh(pd_, &attr), lib_.destroyAh);
  if (!ah) *why = "ibv_create_ah failed: " + errnoText(errno);
  return ah;
}

}  // namespace verbs
}  // namespace alloy
