#include "im2col_pack.hpp"

#include "cl_call.hpp"
#include "launch.hpp"

namespace xnorcl::detail {

Im2colPackLauncher::Im2colPackLauncher(const RuntimeState& state) : work_group_(state.pack_work_group) {
  f32_ = make_kernel(state.im2col_pack, kernel_name(false), state.device, work_group_);
  u8_ = make_kernel(state.im2col_pack, kernel_name(true), state.device, work_group_);
}

const char* Im2colPackLauncher::kernel_name(bool uint8_input) {
  return uint8_input ? "im2col_pack_u8" : "im2col_pack_f32";
}

Plan::Launch Im2colPackLauncher::launch(const LayerDims& d, const Chunk& c, bool uint8_input) const {
  Plan::Launch l;
  l.kernel = kernel_name(uint8_input);
  l.global = {static_cast<std::size_t>(round_up(c.P_pad, static_cast<std::int64_t>(work_group_))),
              static_cast<std::size_t>(d.Kw)};
  l.local = {work_group_, 1};
  return l;
}

cl::Event Im2colPackLauncher::enqueue(const cl::CommandQueue& queue, bool uint8_input,
                                      const cl::Buffer& input, const cl::Buffer& patches,
                                      const cl::Buffer& threshold_keys, const LayerDims& d, const Chunk& c,
                                      cl_uint pad_bit, const std::vector<cl::Event>* wait) {
  cl::Kernel& k = uint8_input ? u8_ : f32_;
  const Plan::Launch l = launch(d, c, uint8_input);
  return cl_call(
      [&] {
        cl_uint i = 0;
        k.setArg(i++, input);
        k.setArg(i++, patches);
        k.setArg(i++, threshold_keys);
        for (int v : {d.C_IN, d.H, d.W, d.KH, d.KW, d.stride_y, d.stride_x, d.dilation_y, d.dilation_x,
                      d.pad_top, d.pad_left, d.OW, d.K, c.n0, c.oy0, c.rows, c.P, c.P_pad}) {
          k.setArg(i++, static_cast<cl_int>(v));
        }
        k.setArg(i++, pad_bit);
        cl::Event e;
        queue.enqueueNDRangeKernel(k, cl::NullRange, cl::NDRange(l.global[0], l.global[1]),
                                   cl::NDRange(l.local[0], l.local[1]), wait, &e);
        return e;
      },
      std::string("enqueueing ") + l.kernel);
}

}  // namespace xnorcl::detail
