// How two verbs transports agree on one RC queue pair (lib/net_verbs/verbs_pairing.h): the rules alone,
// then a simulated exchange of two sides whose requests cross, arrive late or get lost.
#include <gtest/gtest.h>

#include <cstdint>
#include <deque>

#include "verbs_pairing.h"

namespace {

using alloy::verbs::onRequest;
using alloy::verbs::PairState;
using alloy::verbs::replyCompletes;
using alloy::verbs::RequestAction;

constexpr uint64_t kLow = 100, kHigh = 200;

TEST(VerbsPairing, AFirstRequestIsAccepted) {
  EXPECT_EQ(onRequest(PairState::None, kLow, kHigh, 0, 7), RequestAction::Accept);
  EXPECT_EQ(onRequest(PairState::None, kHigh, kLow, 0, 7), RequestAction::Accept);
}

TEST(VerbsPairing, CrossingRequestsTheLowerInstanceWins) {
  EXPECT_EQ(onRequest(PairState::Requesting, kHigh, kLow, 0, 7), RequestAction::Accept);
  EXPECT_EQ(onRequest(PairState::Requesting, kLow, kHigh, 0, 7), RequestAction::Ignore);
}

TEST(VerbsPairing, ARepeatOfTheAcceptedRequestIsAnsweredAgain) {
  EXPECT_EQ(onRequest(PairState::Ready, kLow, kHigh, 7, 7), RequestAction::ResendReply);
  // A loser's request, or any other, for a pairing that is up changes nothing.
  EXPECT_EQ(onRequest(PairState::Ready, kLow, kHigh, 7, 8), RequestAction::Ignore);
  EXPECT_EQ(onRequest(PairState::Ready, kLow, kHigh, 0, 7), RequestAction::Ignore);
  EXPECT_EQ(onRequest(PairState::Failed, kLow, kHigh, 0, 7), RequestAction::Ignore);
}

TEST(VerbsPairing, OnlyTheReplyToThisSidesRequestCompletesIt) {
  EXPECT_TRUE(replyCompletes(PairState::Requesting, 5, 5));
  EXPECT_FALSE(replyCompletes(PairState::Requesting, 5, 6));
  EXPECT_FALSE(replyCompletes(PairState::Ready, 5, 5)) << "a duplicate reply";
  EXPECT_FALSE(replyCompletes(PairState::None, 0, 0)) << "no request was sent";
}

// Two sides as the transport drives them, with the network a queue per direction that a test may drop
// from. Each side counts how often its queue pair was taken to RTR/RTS: exactly once, or two queue pairs
// (or a reconnected one) would exist for the pair.
struct Side {
  uint64_t instance;
  PairState state = PairState::None;
  uint64_t requestCookie = 0;
  uint64_t acceptedCookie = 0;
  int connects = 0;  // times its queue pair went to RTR/RTS
};

struct Message {
  bool request;
  uint64_t cookie;
};

// Delivers `m` to `to`, answering through `back` as the transport does.
void deliver(Side* to, const Message& m, uint64_t from, std::deque<Message>* back) {
  if (m.request) {
    const RequestAction action = onRequest(to->state, to->instance, from, to->acceptedCookie, m.cookie);
    if (action == RequestAction::Ignore) return;
    if (action == RequestAction::Accept) {
      ++to->connects;
      to->state = PairState::Ready;
      to->acceptedCookie = m.cookie;
    }
    back->push_back(Message{false, m.cookie});
    return;
  }
  if (!replyCompletes(to->state, to->requestCookie, m.cookie)) return;
  ++to->connects;
  to->state = PairState::Ready;
}

void request(Side* s, uint64_t cookie, std::deque<Message>* out) {
  s->state = PairState::Requesting;
  s->requestCookie = cookie;
  out->push_back(Message{true, cookie});
}

// Delivers everything queued, `low`'s messages first or `high`'s, until nothing is left.
void exchange(Side* low, Side* high, std::deque<Message>* toLow, std::deque<Message>* toHigh, bool lowFirst) {
  while (!toLow->empty() || !toHigh->empty()) {
    for (int turn = 0; turn < 2; ++turn) {
      const bool lowTurn = (turn == 0) == lowFirst;
      std::deque<Message>* in = lowTurn ? toLow : toHigh;
      while (!in->empty()) {
        const Message m = in->front();
        in->pop_front();
        if (lowTurn) deliver(low, m, high->instance, toHigh);
        else deliver(high, m, low->instance, toLow);
      }
    }
  }
}

TEST(VerbsPairing, CrossingRequestsEndWithOneQueuePairEach) {
  for (bool lowFirst : {true, false}) {
    Side low{kLow}, high{kHigh};
    std::deque<Message> toLow, toHigh;
    request(&low, 1, &toHigh);
    request(&high, 1, &toLow);  // the same cookie value on both sides must not confuse them
    exchange(&low, &high, &toLow, &toHigh, lowFirst);
    EXPECT_EQ(low.state, PairState::Ready);
    EXPECT_EQ(high.state, PairState::Ready);
    EXPECT_EQ(low.connects, 1) << "lowFirst=" << lowFirst;
    EXPECT_EQ(high.connects, 1) << "lowFirst=" << lowFirst;
    EXPECT_EQ(high.acceptedCookie, 1u) << "the higher side accepted the lower's request";
    EXPECT_EQ(low.acceptedCookie, 0u) << "the lower side completed with the reply";
  }
}

// One side connects, the other only answers (it never calls connect, or calls it later): the answering
// side is ready as soon as it accepted, and a later connect() of its own finds the pairing ready.
TEST(VerbsPairing, OneSidedConnectReadiesBoth) {
  Side a{kHigh}, b{kLow};
  std::deque<Message> toA, toB;
  request(&a, 9, &toB);
  deliver(&b, toB.front(), kHigh, &toA);
  toB.pop_front();
  EXPECT_EQ(b.state, PairState::Ready) << "ready without sending a request";
  deliver(&a, toA.front(), kLow, &toB);
  toA.pop_front();
  EXPECT_EQ(a.state, PairState::Ready);
  EXPECT_TRUE(toA.empty() && toB.empty());
}

// The reply is lost; the requester repeats its request and the answering side, ready already, sends the
// same reply again instead of setting up a second queue pair.
TEST(VerbsPairing, ALostReplyIsSentAgainOnTheRepeatedRequest) {
  Side a{kLow}, b{kHigh};
  std::deque<Message> toA, toB;
  request(&a, 3, &toB);
  deliver(&b, toB.front(), kLow, &toA);
  toB.pop_front();
  toA.clear();  // lost
  toB.push_back(Message{true, 3});  // the repeat
  deliver(&b, toB.front(), kLow, &toA);
  toB.pop_front();
  ASSERT_EQ(toA.size(), 1u);
  EXPECT_EQ(b.connects, 1);
  deliver(&a, toA.front(), kHigh, &toB);
  EXPECT_EQ(a.state, PairState::Ready);
  EXPECT_EQ(a.connects, 1);
}

}  // namespace
