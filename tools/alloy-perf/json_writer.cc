#include "json_writer.h"

#include <cmath>
#include <cstdio>

namespace alloyperf {

void JsonWriter::separate() {
  if (afterKey_) {
    afterKey_ = false;
    return;
  }
  if (!hasElements_.empty()) {
    if (hasElements_.back()) out_ += ',';
    hasElements_.back() = true;
    out_ += '\n';
    out_.append(2 * hasElements_.size(), ' ');
  }
}

void JsonWriter::open(char c) {
  separate();
  out_ += c;
  hasElements_.push_back(false);
}

void JsonWriter::close(char c) {
  const bool had = hasElements_.back();
  hasElements_.pop_back();
  if (had) {
    out_ += '\n';
    out_.append(2 * hasElements_.size(), ' ');
  }
  out_ += c;
  if (hasElements_.empty()) out_ += '\n';
}

JsonWriter& JsonWriter::beginObject() { open('{'); return *this; }
JsonWriter& JsonWriter::endObject() { close('}'); return *this; }
JsonWriter& JsonWriter::beginArray() { open('['); return *this; }
JsonWriter& JsonWriter::endArray() { close(']'); return *this; }

JsonWriter& JsonWriter::key(const std::string& k) {
  value(k);
  out_ += ": ";
  afterKey_ = true;
  return *this;
}

JsonWriter& JsonWriter::value(const std::string& s) {
  separate();
  out_ += '"';
  for (const unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out_ += '\\';
      out_ += static_cast<char>(c);
    } else if (c < 0x20) {
      char esc[8];
      snprintf(esc, sizeof esc, "\\u%04x", c);
      out_ += esc;
    } else {
      out_ += static_cast<char>(c);
    }
  }
  out_ += '"';
  return *this;
}

JsonWriter& JsonWriter::value(double v) {
  if (!std::isfinite(v)) return null();
  separate();
  char buf[32];
  snprintf(buf, sizeof buf, "%.9g", v);
  out_ += buf;
  return *this;
}

JsonWriter& JsonWriter::value(long long v) {
  separate();
  out_ += std::to_string(v);
  return *this;
}

JsonWriter& JsonWriter::value(size_t v) {
  separate();
  out_ += std::to_string(v);
  return *this;
}

JsonWriter& JsonWriter::value(bool v) {
  separate();
  out_ += v ? "true" : "false";
  return *this;
}

JsonWriter& JsonWriter::null() {
  separate();
  out_ += "null";
  return *this;
}

}  // namespace alloyperf
