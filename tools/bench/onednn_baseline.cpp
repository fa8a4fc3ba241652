// SPDX-License-Identifier: Apache-2.0
// The oneDNN float32 convolution of a layer on the host CPU (the stretch target: what a CPU user would
// otherwise pick). oneDNN chooses its own memory layouts (format_tag::any, e.g. nChw16c with AVX-512): the
// inputs are reordered once, outside the timed region, so the timing is the convolution primitive alone.
#include "bench.hpp"

#ifdef XNORCL_BENCH_HAVE_ONEDNN
#include <oneapi/dnnl/dnnl.hpp>
#endif

namespace xnorcl_bench {

#ifdef XNORCL_BENCH_HAVE_ONEDNN

struct OnednnBaseline::Impl {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
  dnnl::convolution_forward::primitive_desc pd;
  dnnl::convolution_forward conv;
  dnnl::memory src, weights, dst;
  dnnl::memory::dims dst_dims;
};

bool OnednnBaseline::available() {
  return true;
}

std::string OnednnBaseline::version() {
  const dnnl_version_t* v = dnnl_version();
  return std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch);
}

OnednnBaseline::OnednnBaseline(const Layer& layer, const std::vector<float>& x, const std::vector<float>& w)
    : impl_(std::make_unique<Impl>()) {
  using dnnl::memory;
  Impl& m = *impl_;
  const xnorcl::Shape out = layer.output();
  const memory::dims src_dims{layer.input[0], layer.input[1], layer.input[2], layer.input[3]};
  const memory::dims weight_dims{layer.filter[0], layer.filter[1], layer.filter[2], layer.filter[3]};
  m.dst_dims = {out[0], out[1], out[2], out[3]};
  const auto any = [](const memory::dims& d) {
    return memory::desc(d, memory::data_type::f32, memory::format_tag::any);
  };
  // oneDNN counts dilation from 0 (no dilation), OpenVINO from 1.
  const memory::dims strides{layer.strides[0], layer.strides[1]};
  const memory::dims dilations{layer.dilations[0] - 1, layer.dilations[1] - 1};
  const memory::dims pads{layer.pads[0], layer.pads[1]};
  const dnnl::convolution_forward::desc desc(
      dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, any(src_dims),
      any(weight_dims), any(m.dst_dims), strides, dilations, pads, pads);
  m.pd = dnnl::convolution_forward::primitive_desc(desc, m.engine);
  m.conv = dnnl::convolution_forward(m.pd);

  // oneDNN's API takes non-const handles; the user memories are only read by the reorders.
  memory user_src({src_dims, memory::data_type::f32, memory::format_tag::nchw}, m.engine,
                  const_cast<float*>(x.data()));
  memory user_weights({weight_dims, memory::data_type::f32, memory::format_tag::oihw}, m.engine,
                      const_cast<float*>(w.data()));
  m.src = memory(m.pd.src_desc(), m.engine);
  m.weights = memory(m.pd.weights_desc(), m.engine);
  m.dst = memory(m.pd.dst_desc(), m.engine);
  dnnl::reorder(user_src, m.src).execute(m.stream, user_src, m.src);
  dnnl::reorder(user_weights, m.weights).execute(m.stream, user_weights, m.weights);
  m.stream.wait();
}

OnednnBaseline::~OnednnBaseline() = default;

std::string OnednnBaseline::implementation() const {
  return impl_->pd.impl_info_str();
}

void OnednnBaseline::run() {
  Impl& m = *impl_;
  m.conv.execute(m.stream, {{DNNL_ARG_SRC, m.src}, {DNNL_ARG_WEIGHTS, m.weights}, {DNNL_ARG_DST, m.dst}});
  m.stream.wait();
}

std::vector<float> OnednnBaseline::read_output() {
  using dnnl::memory;
  Impl& m = *impl_;
  std::size_t count = 1;
  for (auto d : m.dst_dims) count *= static_cast<std::size_t>(d);
  std::vector<float> y(count);
  memory user_dst({m.dst_dims, memory::data_type::f32, memory::format_tag::nchw}, m.engine, y.data());
  dnnl::reorder(m.dst, user_dst).execute(m.stream, m.dst, user_dst);
  m.stream.wait();
  return y;
}

#else  // built without oneDNN: the baseline reports itself unavailable and is never constructed

struct OnednnBaseline::Impl {};

bool OnednnBaseline::available() {
  return false;
}
std::string OnednnBaseline::version() {
  return "";
}
OnednnBaseline::OnednnBaseline(const Layer&, const std::vector<float>&, const std::vector<float>&) {
  throw std::logic_error("xnorcl-bench was built without oneDNN");
}
OnednnBaseline::~OnednnBaseline() = default;
std::string OnednnBaseline::implementation() const {
  return "";
}
void OnednnBaseline::run() {}
std::vector<float> OnednnBaseline::read_output() {
  return {};
}

#endif

}  // namespace xnorcl_bench
