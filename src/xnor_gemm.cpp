#include "xnor_gemm.hpp"

#include "cl_call.hpp"
#include "launch.hpp"

namespace xnorcl::detail {

XnorGemmLauncher::XnorGemmLauncher(const RuntimeState& state) : config_(state.gemm) {
  kernel_ = make_kernel(state.xnor_gemm, kernel_name(), state.device, config_.work_group_size());
}

Plan::Launch XnorGemmLauncher::launch(int M_pad, const Chunk& c) const {
  Plan::Launch l;
  l.kernel = kernel_name();
  l.global = {static_cast<std::size_t>(c.P_pad / config_.tn), static_cast<std::size_t>(M_pad / config_.tm)};
  l.local = {static_cast<std::size_t>(config_.wg), static_cast<std::size_t>(config_.wg)};
  return l;
}

cl::Event XnorGemmLauncher::enqueue(const cl::CommandQueue& queue, const cl::Buffer& filters,
                                    const cl::Buffer& patches, const cl::Buffer& output, const LayerDims& d,
                                    int M_pad, const Chunk& c, const std::vector<cl::Event>* wait) {
  const Plan::Launch l = launch(M_pad, c);
  return cl_call(
      [&] {
        cl_uint i = 0;
        kernel_.setArg(i++, filters);
        kernel_.setArg(i++, patches);
        kernel_.setArg(i++, output);
        for (int v : {d.C_OUT, M_pad, d.Kw, d.K, c.P, c.P_pad, c.rows * d.OW, c.n0}) {
          kernel_.setArg(i++, static_cast<cl_int>(v));
        }
        kernel_.setArg(i++, static_cast<cl_ulong>(d.output_plane()));
        kernel_.setArg(i++, static_cast<cl_ulong>(std::uint64_t(c.oy0) * std::uint64_t(d.OW)));
        cl::Event e;
        queue.enqueueNDRangeKernel(kernel_, cl::NullRange, cl::NDRange(l.global[0], l.global[1]),
                                   cl::NDRange(l.local[0], l.local[1]), wait, &e);
        return e;
      },
      "enqueueing xnor_gemm");
}

}  // namespace xnorcl::detail
