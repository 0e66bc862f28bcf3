// The process's proxy threads: two threads drive the network channels of every communicator of the
// process. The proxy thread runs each channel's protocol and its own operations (NetChannel::progress);
// the inbound thread serves what peers do to the process's staging memory (NetChannel::progressInbound),
// so that receiving runs beside sending instead of after it (transport.h says what that is worth). While
// any channel has an operation in hand both poll without pause; once idle for ALLOY_PROXY_SPIN_US they
// sleep between polls, doubling the pause up to ALLOY_PROXY_SLEEP_US, so an idle process does not hold
// a core (nccl#374). The threads start with the first channel and stop at process exit.
#pragma once

namespace alloy {
namespace net {

class NetChannel;

class ProxyThread {
 public:
  // The proxy thread starts calling channel->progress(), and the inbound thread (started with the first
  // channel that needs it: NetChannel::separateInbound()) channel->progressInbound().
  static void add(NetChannel* channel);
  // Returns once neither thread touches channel.
  static void remove(NetChannel* channel);
  // Whether ALLOY_NET_INBOUND_THREAD asks for the inbound thread (and the transports' second worker that
  // it serves): 1 yes, 0 no, auto (default) where this process may run on 4 or more CPUs (its affinity
  // mask). A per-process choice: ranks that chose differently still reach each other.
  static bool inboundRequested();
};

}  // namespace net
}  // namespace alloy
