// The process's proxy thread: one thread drives the network channels of every communicator of the
// process (NetChannel::progress). While any channel has work under way it polls without pause; once all
// have been idle for ALLOY_PROXY_SPIN_US it sleeps between polls, doubling the pause up to
// ALLOY_PROXY_SLEEP_US, so an idle process does not hold a core (nccl#374). The thread starts with the
// first channel and stops at process exit.
#pragma once

namespace alloy {
namespace net {

class NetChannel;

class ProxyThread {
 public:
  // The thread starts calling channel->progress().
  static void add(NetChannel* channel);
  // Returns once the thread no longer touches channel.
  static void remove(NetChannel* channel);
};

}  // namespace net
}  // namespace alloy
