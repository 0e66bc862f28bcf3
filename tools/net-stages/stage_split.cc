#include "stage_split.h"

#include <algorithm>

namespace {

double median(std::vector<double> values) {
  if (values.empty()) return -1;
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

double us(int64_t from, int64_t to) { return static_cast<double>(to - from) / 1000.0; }

}  // namespace

StageSplit splitStages(const std::vector<CallTimes>& calls, const std::vector<alloy::NetStages>& stages) {
  std::vector<double> enqueue, toRung, rungToPosted, rungToSent, rungToIn, network, afterRelease, total;
  size_t operations = 0;
  for (const CallTimes& c : calls) {
    const alloy::NetStages* first = nullptr;
    const alloy::NetStages* last = nullptr;
    size_t mine = 0;
    for (const alloy::NetStages& s : stages) {
      if (s.rung < c.start || s.rung > c.done) continue;
      if (first == nullptr || s.rung < first->rung) first = &s;
      if (last == nullptr || s.released > last->released) last = &s;
      ++mine;
    }
    if (first == nullptr) continue;
    operations += mine;
    enqueue.push_back(us(c.start, c.enqueued));
    toRung.push_back(us(c.start, first->rung));
    if (first->posted != 0) rungToPosted.push_back(us(first->rung, first->posted));
    if (first->sent != 0) rungToSent.push_back(us(first->rung, first->sent));
    if (first->in != 0) rungToIn.push_back(us(first->rung, first->in));
    network.push_back(us(first->rung, last->released));
    afterRelease.push_back(us(last->released, c.done));
    total.push_back(us(c.start, c.done));
  }
  StageSplit out;
  out.calls = total.size();
  out.opsPerCall = out.calls > 0 ? static_cast<double>(operations) / static_cast<double>(out.calls) : 0;
  out.enqueue = median(enqueue);
  out.toRung = median(toRung);
  out.rungToPosted = median(rungToPosted);
  out.rungToSent = median(rungToSent);
  out.rungToIn = median(rungToIn);
  out.network = median(network);
  out.afterRelease = median(afterRelease);
  out.total = median(total);
  return out;
}

TransferSplit splitTransfers(const std::vector<RankedOperation>& senders, const std::vector<RankedOperation>& receivers) {
  std::vector<double> ringToProxy, proxyToPosted, postedToIn, inToReleased, releasedToSeen, total;
  for (size_t k = 0; k < senders.size() && k < receivers.size(); ++k) {
    const RankedOperation& s = senders[k];
    const RankedOperation& r = receivers[k];
    if (s.stages.posted == 0 || r.stages.in == 0) continue;
    ringToProxy.push_back(us(s.rang, s.stages.rung));
    proxyToPosted.push_back(us(s.stages.rung, s.stages.posted));
    postedToIn.push_back(us(s.stages.posted, r.stages.in));
    inToReleased.push_back(us(r.stages.in, r.stages.released));
    releasedToSeen.push_back(us(r.stages.released, r.seen));
    total.push_back(us(s.rang, r.seen));
  }
  TransferSplit out;
  out.transfers = total.size();
  out.ringToProxy = median(ringToProxy);
  out.proxyToPosted = median(proxyToPosted);
  out.postedToIn = median(postedToIn);
  out.inToReleased = median(inToReleased);
  out.releasedToSeen = median(releasedToSeen);
  out.total = median(total);
  return out;
}
