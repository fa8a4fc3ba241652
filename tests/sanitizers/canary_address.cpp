// SPDX-License-Identifier: Apache-2.0
// Expected to fail: proves AddressSanitizer is live in the sanitizer job (CTest WILL_FAIL).
#include <cstdio>
#include <vector>

int main(int argc, char**) {
  std::vector<int> v(4);
  int* p = v.data();
  std::printf("%d\n", p[4 + argc]);  // heap-buffer-overflow
  return 0;
}
