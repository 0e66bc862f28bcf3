#include "net_setup.h"

#include <cstring>

#include "env.h"
#include "error.h"
#include "log.h"
#include "net_channel.h"
#include "net_probe.h"
#include "proxy_thread.h"
#include "ucx_transport.h"
#include "verbs_transport.h"

namespace alloy {
namespace {

// ALLOY_NET=verbs or auto: the verbs transport where a usable RDMA device exists. *whyNot says why there
// is none (the probe's finding, or why the transport failed to start), for auto's log line.
alloyResult_t createVerbs(const std::string& choice, std::unique_ptr<net::Transport>* out, std::string* whyNot) {
  const NetProbe probe = probeVerbs();
  if (!probe.usable) {
    *whyNot = probe.built ? "no RDMA device with an active port was found (" + probe.detail + ")" : probe.detail;
    return fail(alloyNotSupported, "ALLOY_NET=%s: %s; use ALLOY_NET=ucx or auto", choice.c_str(), whyNot->c_str());
  }
  const alloyResult_t r = net::createVerbsTransport(net::VerbsOptions{}, out);
  if (r != alloySuccess) {
    *whyNot = std::string("the verbs transport failed to start: ") + lastError();
    // A device that is there but does not work deserves a warning even where auto goes on with UCX.
    if (choice == "auto") logWarn("ALLOY_NET=auto: %s; trying UCX", whyNot->c_str());
  }
  return r;
}

// ALLOY_NET's backend as a transport, or why there is none. auto takes verbs where a device is usable and
// the transport starts, else UCX; either way it logs (INFO) which it took and why.
alloyResult_t createBackend(const std::string& choice, std::unique_ptr<net::Transport>* out, std::string* unavailable) {
  if (choice == "none") {
    *unavailable = "ALLOY_NET=none turns the path between hosts off";
    return alloySuccess;
  }
  std::string whyNotVerbs;
  if (choice == "verbs" || choice == "auto") {
    const alloyResult_t r = createVerbs(choice, out, &whyNotVerbs);
    if (r == alloySuccess) {
      logInfo("ALLOY_NET=%s: verbs carries the traffic between hosts", choice.c_str());
      return alloySuccess;
    }
    if (choice == "verbs") return r;
    clearLastError();
  }
  net::UcxOptions options;
  options.inboundWorker = net::ProxyThread::inboundRequested();
  const alloyResult_t r = net::createUcxTransport(options, out);
  if (r == alloySuccess) {
    if (choice == "auto")
      logInfo("ALLOY_NET=auto: UCX carries the traffic between hosts, not verbs: %s", whyNotVerbs.c_str());
    else
      logInfo("ALLOY_NET=ucx: UCX carries the traffic between hosts; probes: %s", netProbeSummary().c_str());
    return alloySuccess;
  }
  if (choice == "ucx") return r;
  *unavailable = std::string("ALLOY_NET=auto found no transport between hosts: ") + lastError() + "; not verbs: " +
                 whyNotVerbs;
  clearLastError();
  return alloySuccess;
}

alloyResult_t copyInto(const std::vector<uint8_t>& bytes, uint8_t* field, size_t capacity, uint32_t* size,
                       const char* what) {
  if (bytes.size() > capacity)
    return fail(alloyInternalError, "the transport's %s has %zu bytes; the endpoint blob holds %zu", what, bytes.size(),
                capacity);
  std::memcpy(field, bytes.data(), bytes.size());
  *size = static_cast<uint32_t>(bytes.size());
  return alloySuccess;
}

}  // namespace

NetSetup prepareNet(int rank, const std::vector<uint64_t>& hostOf, int cudaDevice, long long timeoutMs,
                    EndpointBlob* blob) {
  NetSetup setup;
  // A word that is none of these fails creation instead of falling back to auto: a user who asked for a
  // transport by a misspelt name (or "UCX") would otherwise get another one, or none, without noticing.
  const std::string choice = envString("ALLOY_NET", "auto");
  if (choice != "auto" && choice != "ucx" && choice != "verbs" && choice != "none") {
    setup.result = fail(alloyInvalidArgument, "ALLOY_NET=%s: expected auto, ucx, verbs or none", choice.c_str());
    return setup;
  }
  std::unique_ptr<net::Transport> transport;
  setup.result = createBackend(choice, &transport, &setup.unavailable);
  if (setup.result != alloySuccess || !transport) return setup;
  net::NetChannelConfig config;
  config.rank = rank;
  config.nranks = static_cast<int>(hostOf.size());
  config.hostOf = hostOf;
  config.cudaDevice = cudaDevice;
  config.timeoutMs = timeoutMs;
  config.geometry = net::netGeometry(hostOf, rank == 0);
  std::vector<uint8_t> address, key;
  setup.result = net::NetChannel::prepare(config, std::move(transport), &address, &key, &setup.channel);
  if (setup.result == alloySuccess)
    setup.result = copyInto(address, blob->netAddress, kNetAddressBytes, &blob->netAddressBytes, "address");
  if (setup.result == alloySuccess)
    setup.result = copyInto(key, blob->netKey, kNetKeyBytes, &blob->netKeyBytes, "packed key");
  return setup;
}

alloyResult_t connectNet(net::NetChannel* channel, const std::vector<EndpointBlob>& blobs,
                         const std::vector<uint64_t>& hostOf, int rank) {
  if (blobs.size() != hostOf.size() || rank < 0 || static_cast<size_t>(rank) >= blobs.size())
    return fail(alloyInternalError, "connectNet: %zu blobs, %zu host entries, rank %d", blobs.size(), hostOf.size(),
                rank);
  std::vector<std::vector<uint8_t>> addresses(blobs.size()), keys(blobs.size());
  for (size_t r = 0; r < blobs.size(); ++r) {
    if (hostOf[r] == hostOf[rank]) continue;
    const EndpointBlob& b = blobs[r];
    if (b.netAddressBytes == 0 || b.netKeyBytes == 0 || b.netAddressBytes > kNetAddressBytes ||
        b.netKeyBytes > kNetKeyBytes)
      return fail(alloyRemoteError, "rank %zu on another host offers no transport between hosts (host-only, "
                  "ALLOY_NET=none, or its backend failed); rank %d cannot reach it", r, rank);
    addresses[r].assign(b.netAddress, b.netAddress + b.netAddressBytes);
    keys[r].assign(b.netKey, b.netKey + b.netKeyBytes);
  }
  return channel->connect(addresses, keys);
}

}  // namespace alloy
