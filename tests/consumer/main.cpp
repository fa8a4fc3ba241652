// SPDX-License-Identifier: Apache-2.0
// Uses the installed package: the umbrella header, a device run and the host reference must agree.
#include <xnorcl/xnorcl.hpp>

#include <cstdio>
#include <cstring>

int main() {
  try {
    const xnorcl::Shape x_shape{1, 2, 6, 5}, f_shape{3, 2, 3, 3};
    std::vector<float> x(2 * 6 * 5);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 7) % 3 == 0);
    const std::uint8_t bytes[] = {0x5a, 0xc3, 0x99, 0x0f, 0xf0, 0x3c, 0xa5};
    const auto filter = xnorcl::Filter::from_packed(bytes, sizeof bytes, f_shape, xnorcl::BitOrder::LsbFirst);
    xnorcl::BinaryConvolution::Attributes a;
    a.pads_begin = a.pads_end = {1, 1};
    auto runtime = xnorcl::Runtime::create();
    xnorcl::BinaryConvolution conv(runtime, a, x_shape, filter);
    const auto y = conv.run(x.data());
    const auto r = xnorcl::reference_binary_convolution(x.data(), x_shape, filter, a);
    const bool same = y.size() == r.size() && std::memcmp(y.data(), r.data(), y.size() * sizeof(float)) == 0;
    std::printf("xnorcl %s on %s: %s\n", xnorcl::version(), runtime.device_name().c_str(),
                same ? "PASS" : "FAIL");
    return same ? 0 : 1;
  } catch (const xnorcl::Error& e) {
    std::printf("xnorcl error: %s\n", e.what());
    return 1;
  }
}
