// How two verbs transports agree on one RC queue pair per pair of transports, without a NIC so that the
// rules are unit-tested. Either side may start (connect() sends a request over the UD queue pair), both
// may start at once (their requests cross), and a side may stop serving handshakes as soon as its own
// connections are up (communicator creation goes on into MPI calls, which do not progress the transport):
//
// - A request is accepted when this side has no pairing with the sender yet: the queue pair is created,
//   connected to the sender's, and the reply carries its number.
// - Crossing requests: the request of the transport with the lower instance wins. The higher side
//   accepts it with the queue pair it had created for its own request (so it is ready at once, and the
//   lower side needs nothing more from it than the reply); the lower side ignores the higher's request
//   and completes with the reply.
// - A request repeated after it was accepted (its reply was lost) is answered again with the same
//   reply; any other request for a pairing that is ready is a loser's, and is ignored.
// - A reply completes a pairing only while this side waits for it, and only with the cookie of its own
//   request.
// One queue pair per pair of transports, not per direction: both sides post on it.
#pragma once

#include <cstdint>

namespace alloy {
namespace verbs {

enum class PairState {
  None,        // no pairing with that transport yet
  Requesting,  // this side's request is out, its queue pair waits in INIT
  Ready,       // connected (RTS)
  Failed       // setting the queue pair up failed
};

enum class RequestAction { Accept, ResendReply, Ignore };

// What to do with a request from the transport `theirs` (its instance), carrying `cookie`, while the
// pairing with it is in `state`. acceptedCookie: the cookie of the request this side accepted for the
// pairing (0: none; this side's own request completed it, or nothing did yet).
RequestAction onRequest(PairState state, uint64_t mine, uint64_t theirs, uint64_t acceptedCookie, uint64_t cookie);

// Whether a reply carrying `cookie` completes the pairing (the caller then connects its queue pair).
bool replyCompletes(PairState state, uint64_t requestCookie, uint64_t cookie);

}  // namespace verbs
}  // namespace alloy
