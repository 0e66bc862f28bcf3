#include "hca_filter.h"

#include <cctype>

#include "error.h"

namespace alloy {
namespace verbs {
namespace {

constexpr int kMaxPort = 255;  // ibverbs passes port numbers as uint8_t

bool isSpace(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

std::string trim(const std::string& text) {
  size_t begin = 0;
  size_t end = text.size();
  while (begin < end && isSpace(text[begin])) ++begin;
  while (end > begin && isSpace(text[end - 1])) --end;
  return text.substr(begin, end - begin);
}

// Decimal digits only: "0x1", "+1" or "1 " are typos, not ports. Returns 0 when not a port number.
int parsePort(const std::string& text) {
  if (text.empty()) return 0;
  int value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return 0;
    value = value * 10 + (c - '0');
    if (value > kMaxPort) return 0;  // before it can overflow
  }
  return value <= kMaxPort ? value : 0;
}

// One trimmed, non-empty entry: name[:port].
alloyResult_t parseEntry(const std::string& entry, HcaEntry* out) {
  for (char c : entry)
    if (isSpace(c))
      return fail(alloyInvalidArgument, "ALLOY_IB_HCA: entry \"%s\" contains whitespace; expected name[:port]",
                  entry.c_str());
  const size_t colon = entry.find(':');
  if (colon != std::string::npos && entry.find(':', colon + 1) != std::string::npos)
    return fail(alloyInvalidArgument, "ALLOY_IB_HCA: entry \"%s\" has more than one ':'; expected name[:port]",
                entry.c_str());
  const std::string name = entry.substr(0, colon);
  if (name.empty())
    return fail(alloyInvalidArgument, "ALLOY_IB_HCA: entry \"%s\" has no device name; expected name[:port]",
                entry.c_str());
  if (name.find_first_of("^=") != std::string::npos)
    return fail(alloyInvalidArgument,
                "ALLOY_IB_HCA: entry \"%s\" contains '^' or '='; expected them only at the start of the value, "
                "'^' before '='",
                entry.c_str());
  int port = 0;
  if (colon != std::string::npos) {
    const std::string portText = entry.substr(colon + 1);
    port = parsePort(portText);
    if (port == 0)
      return fail(alloyInvalidArgument,
                  "ALLOY_IB_HCA: entry \"%s\" has port \"%s\"; expected name[:port] with a port number from 1 to %d",
                  entry.c_str(), portText.c_str(), kMaxPort);
  }
  out->name = name;
  out->port = port;
  return alloySuccess;
}

bool nameMatches(const HcaFilter& f, const std::string& pattern, const std::string& device) {
  if (f.exact) return device == pattern;
  return device.compare(0, pattern.size(), pattern) == 0;
}

}  // namespace

alloyResult_t parseHcaFilter(const std::string& spec, HcaFilter* out) {
  HcaFilter filter;
  std::string list = trim(spec);
  if (list.empty()) {
    *out = filter;
    return alloySuccess;
  }
  size_t at = 0;
  if (list[at] == '^') {
    filter.exclude = true;
    ++at;
  }
  if (at < list.size() && list[at] == '=') {
    filter.exact = true;
    ++at;
  }
  // "^" alone would exclude nothing, which is surely not what was meant: report it.
  if (trim(list.substr(at)).empty())
    return fail(alloyInvalidArgument, "ALLOY_IB_HCA: \"%s\" has no entry after '%s'; expected name[:port] after it",
                list.c_str(), list.substr(0, at).c_str());
  int index = 0;
  size_t begin = at;
  while (true) {
    const size_t comma = list.find(',', begin);
    const std::string entry = trim(list.substr(begin, comma == std::string::npos ? std::string::npos : comma - begin));
    ++index;
    if (entry.empty())
      return fail(alloyInvalidArgument, "ALLOY_IB_HCA: entry %d of \"%s\" is empty; expected name[:port] between commas",
                  index, list.c_str());
    HcaEntry parsed;
    ALLOY_TRY(parseEntry(entry, &parsed));
    filter.entries.push_back(parsed);
    if (comma == std::string::npos) break;
    begin = comma + 1;
  }
  *out = filter;
  return alloySuccess;
}

bool hcaSelected(const HcaFilter& f, const std::string& device, int port) {
  if (f.entries.empty()) return true;
  bool listed = false;
  for (const HcaEntry& entry : f.entries)
    if (nameMatches(f, entry.name, device) && (entry.port == 0 || entry.port == port)) listed = true;
  return listed != f.exclude;
}

}  // namespace verbs
}  // namespace alloy
