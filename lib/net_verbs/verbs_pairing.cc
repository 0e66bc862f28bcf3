#include "verbs_pairing.h"

namespace alloy {
namespace verbs {

RequestAction onRequest(PairState state, uint64_t mine, uint64_t theirs, uint64_t acceptedCookie, uint64_t cookie) {
  switch (state) {
    case PairState::None:
      return RequestAction::Accept;
    case PairState::Requesting:
      return theirs < mine ? RequestAction::Accept : RequestAction::Ignore;
    case PairState::Ready:
      return acceptedCookie != 0 && acceptedCookie == cookie ? RequestAction::ResendReply : RequestAction::Ignore;
    case PairState::Failed:
      return RequestAction::Ignore;
  }
  return RequestAction::Ignore;
}

bool replyCompletes(PairState state, uint64_t requestCookie, uint64_t cookie) {
  return state == PairState::Requesting && requestCookie != 0 && cookie == requestCookie;
}

}  // namespace verbs
}  // namespace alloy
