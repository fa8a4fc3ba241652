// SPDX-License-Identifier: Apache-2.0
#include "json.hpp"

#include <iomanip>
#include <sstream>

namespace xnorcl_bench {

std::string json_escape(const std::string& s) {
  std::string r = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        r += "\\\"";
        break;
      case '\\':
        r += "\\\\";
        break;
      case '\n':
        r += "\\n";
        break;
      case '\t':
        r += "\\t";
        break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          r += buf;
        } else {
          r += static_cast<char>(c);
        }
    }
  }
  return r + "\"";
}

void JsonWriter::prefix(const char* key) {
  if (!first_.back()) out_ << ",";
  first_.back() = false;
  out_ << "\n" << std::string(2 * (first_.size() - 1), ' ');
  if (key) out_ << json_escape(key) << ": ";
}

JsonWriter& JsonWriter::open(const char* key, char bracket) {
  if (first_.size() > 1 || !first_.back()) prefix(key);  // the top-level value needs no separator
  first_.back() = false;
  out_ << bracket;
  first_.push_back(true);
  return *this;
}

JsonWriter& JsonWriter::close(char bracket) {
  const bool empty = first_.back();
  first_.pop_back();
  if (!empty) out_ << "\n" << std::string(2 * (first_.size() - 1), ' ');
  out_ << bracket;
  if (first_.size() == 1) out_ << "\n";
  return *this;
}

JsonWriter& JsonWriter::value(const char* key, const std::string& v) {
  prefix(key);
  out_ << json_escape(v);
  return *this;
}

JsonWriter& JsonWriter::value(const char* key, double v) {
  prefix(key);
  if (!std::isfinite(v)) {
    out_ << "null";
  } else {
    std::ostringstream s;
    s << std::setprecision(9) << v;  // enough for every figure; round-trips floats
    out_ << s.str();
  }
  return *this;
}

JsonWriter& JsonWriter::value(const char* key, std::int64_t v) {
  prefix(key);
  out_ << v;
  return *this;
}

JsonWriter& JsonWriter::value(const char* key, bool v) {
  prefix(key);
  out_ << (v ? "true" : "false");
  return *this;
}

JsonWriter& JsonWriter::null(const char* key) {
  prefix(key);
  out_ << "null";
  return *this;
}

}  // namespace xnorcl_bench
