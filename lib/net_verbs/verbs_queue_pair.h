// Creating the verbs transport's queue pairs and taking them through INIT, RTR and RTS: the RC queue
// pairs that carry data (one per pair of transports, verbs_pairing.h) and the UD queue pair that carries
// handshakes. Attribute values come from qp_attributes.h (ALLOY_IB_TIMEOUT, ALLOY_IB_RETRY_CNT,
// ALLOY_IB_SL, ALLOY_IB_TC) and the port (verbs_port.h).
#pragma once

#include <cstdint>
#include <string>

#include "qp_attributes.h"
#include "verbs_handles.h"
#include "verbs_port.h"
#include "verbs_wire.h"

namespace alloy {
namespace verbs {

// The Q_Key of every handshake datagram: a datagram with another key is dropped by the HCA.
constexpr uint32_t kHandshakeQkey = 0x414c4f59u;

class QueuePairs {
 public:
  QueuePairs(const VerbsLibrary& lib, const VerbsPort& port, ibv_pd* pd, const QpSettings& settings)
      : lib_(lib), port_(port), pd_(pd), settings_(settings) {}

  // An RC queue pair in INIT that accepts peers' RDMA WRITE and READ; sendDepth work requests, each with
  // one scatter entry and up to 8 inline bytes (the signal's value). Null, with the reason, on failure.
  VerbsPtr<ibv_qp> createRc(ibv_cq* cq, int sendDepth, std::string* why) const;
  // INIT -> RTR -> RTS, connected to the peer's queue pair `remoteQpn` starting at `remotePsn`.
  bool connectRc(ibv_qp* qp, const VerbsAddress& remote, uint32_t remoteQpn, uint32_t remotePsn, uint32_t localPsn,
                 std::string* why) const;
  // A UD queue pair in RTS.
  VerbsPtr<ibv_qp> createUd(ibv_cq* cq, int sends, int receives, std::string* why) const;
  // The address handle of a peer's port, for datagrams to it.
  VerbsPtr<ibv_ah> createAh(const VerbsAddress& remote, std::string* why) const;

 private:
  // A queue pair in RESET, with one scatter entry per work request.
  VerbsPtr<ibv_qp> create(ibv_cq* cq, ibv_qp_type type, int sends, int receives, uint32_t inlineBytes,
                          std::string* why) const;
  ibv_ah_attr pathTo(const VerbsAddress& remote) const;
  bool modify(ibv_qp* qp, ibv_qp_attr* attr, int mask, const char* step, std::string* why) const;

  const VerbsLibrary& lib_;
  const VerbsPort& port_;
  ibv_pd* pd_;
  QpSettings settings_;
};

}  // namespace verbs
}  // namespace alloy
