// SPDX-License-Identifier: Apache-2.0
// The generated version header agrees with the library it is linked to.
#include <catch2/catch.hpp>
#include <string>

#include "xnorcl/xnorcl.hpp"

TEST_CASE("version macros and xnorcl::version() agree", "[version]") {
  const std::string composed = std::to_string(XNORCL_VERSION_MAJOR) + "." +
                               std::to_string(XNORCL_VERSION_MINOR) + "." +
                               std::to_string(XNORCL_VERSION_PATCH);
  CHECK(composed == XNORCL_VERSION_STRING);
  CHECK(std::string(xnorcl::version()) == XNORCL_VERSION_STRING);
  CHECK(XNORCL_VERSION == XNORCL_VERSION_MAJOR * 10000 + XNORCL_VERSION_MINOR * 100 + XNORCL_VERSION_PATCH);
  static_assert(XNORCL_VERSION >= 100, "0.1.0 or later");
}
