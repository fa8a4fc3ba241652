// SPDX-License-Identifier: Apache-2.0
#include "xnorcl/version.hpp"

namespace xnorcl {

const char* version() noexcept {
  return XNORCL_VERSION_STRING;
}

}  // namespace xnorcl
