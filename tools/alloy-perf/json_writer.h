// A minimal streaming JSON writer: enough for the results file, with commas and string escaping handled
// in one place. Non-finite numbers become null (JSON has no NaN).
#ifndef ALLOY_PERF_JSON_WRITER_H_
#define ALLOY_PERF_JSON_WRITER_H_

#include <string>
#include <vector>

namespace alloyperf {

class JsonWriter {
 public:
  JsonWriter& beginObject();
  JsonWriter& endObject();
  JsonWriter& beginArray();
  JsonWriter& endArray();
  JsonWriter& key(const std::string& k);  // inside an object, before each value
  JsonWriter& value(const std::string& s);
  JsonWriter& value(const char* s) { return value(std::string(s)); }
  JsonWriter& value(double v);
  JsonWriter& value(long long v);
  JsonWriter& value(int v) { return value(static_cast<long long>(v)); }
  JsonWriter& value(size_t v);
  JsonWriter& value(bool v);
  JsonWriter& null();

  const std::string& text() const { return out_; }

 private:
  void separate();  // comma and newline-indent before an element, unless it follows a key or an opener
  void open(char c);
  void close(char c);

  std::string out_;
  std::vector<bool> hasElements_;  // per open container
  bool afterKey_ = false;
};

}  // namespace alloyperf

#endif  // ALLOY_PERF_JSON_WRITER_H_
