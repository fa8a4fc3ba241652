// SPDX-License-Identifier: Apache-2.0
// A minimal streaming JSON writer: enough for the bench report, no dependency.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <ostream>
#include <string>
#include <vector>

namespace xnorcl_bench {

class JsonWriter {
 public:
  explicit JsonWriter(std::ostream& out) : out_(out) {}
  JsonWriter& begin_object(const char* key = nullptr) { return open(key, '{'); }
  JsonWriter& end_object() { return close('}'); }
  JsonWriter& begin_array(const char* key = nullptr) { return open(key, '['); }
  JsonWriter& end_array() { return close(']'); }
  JsonWriter& value(const char* key, const std::string& v);
  JsonWriter& value(const char* key, const char* v) { return value(key, std::string(v)); }
  JsonWriter& value(const char* key, double v);  // NaN and infinities become null
  JsonWriter& value(const char* key, std::int64_t v);
  JsonWriter& value(const char* key, int v) { return value(key, static_cast<std::int64_t>(v)); }
  JsonWriter& value(const char* key, std::size_t v) { return value(key, static_cast<std::int64_t>(v)); }
  JsonWriter& value(const char* key, bool v);
  JsonWriter& null(const char* key);

 private:
  JsonWriter& open(const char* key, char bracket);
  JsonWriter& close(char bracket);
  void prefix(const char* key);
  std::ostream& out_;
  std::vector<bool> first_{true};  // per nesting level: nothing written yet
};

std::string json_escape(const std::string& s);

struct NoiseVerdict;
// The run's "noise" object (report.cpp), shared by the layers and network reports.
void json_noise(JsonWriter& j, const NoiseVerdict& noise);

}  // namespace xnorcl_bench
