// SPDX-License-Identifier: Apache-2.0
// Expected to fail: proves ThreadSanitizer is live in the thread job (CTest WILL_FAIL).
#include <cstdio>
#include <thread>

int shared_counter = 0;

int main() {
  std::thread a([] {
    for (int i = 0; i < 100000; ++i) ++shared_counter;  // data race
  });
  std::thread b([] {
    for (int i = 0; i < 100000; ++i) ++shared_counter;
  });
  a.join();
  b.join();
  std::printf("%d\n", shared_counter);
  return 0;
}
