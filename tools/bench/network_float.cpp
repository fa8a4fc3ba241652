// SPDX-License-Identifier: Apache-2.0
// The float32 network of `xnorcl-bench network` (see FloatNetwork in network.hpp): CLBlast Im2col + Gemm for
// the convolutions, Gemv for the fully-connected layers, kernels/network_float.cl for batch-norm + sign and
// max-pool, all on the runtime's queue. Without CLBlast it reports itself unavailable.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <variant>

#include "bench_kernels.hpp"
#include "network.hpp"

#ifdef XNORCL_BENCH_HAVE_CLBLAST
#include <clblast.h>
#endif

namespace xnorcl_bench {

std::int64_t network_macs(const xnorcl::NetworkSpec& spec) {
  std::int64_t macs = 0;
  xnorcl::Shape in = spec.input;
  for (const auto& layer : spec.layers) {
    if (const auto* c = std::get_if<xnorcl::ConvolutionLayer>(&layer)) {
      const auto& f = c->filter.shape();
      const auto g = xnorcl::BinaryConvolution::validate(c->attributes, in, f);
      macs += g.output[0] * g.output[1] * g.output[2] * g.output[3] * f[1] * f[2] * f[3];
      in = g.output;
    } else if (const auto* p = std::get_if<xnorcl::MaxPoolLayer>(&layer)) {
      in = xnorcl::validate_pool(p->attributes, in).output;
    } else if (const auto* fc = std::get_if<xnorcl::FullyConnectedLayer>(&layer)) {
      const auto& w = fc->weights.shape();
      macs += in[0] * w[0] * w[1] * w[2] * w[3];
      in = {in[0], w[0], 1, 1};
    }
  }
  return macs;
}

#ifdef XNORCL_BENCH_HAVE_CLBLAST

namespace {

void check_status(clblast::StatusCode s, const char* call) {
  if (s != clblast::StatusCode::kSuccess) {
    throw std::runtime_error(std::string("CLBlast ") + call + " failed with status " +
                             std::to_string(static_cast<int>(s)));
  }
}

std::size_t count(const xnorcl::Shape& s) {
  return static_cast<std::size_t>(s[0] * s[1] * s[2] * s[3]);
}

// A filter's bits as +-1 floats, flat OIHW (= NCHW flatten order for FC weights).
std::vector<float> plus_minus_one(const xnorcl::Filter& f) {
  std::vector<float> w(count(f.shape()));
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = f.bit(static_cast<std::int64_t>(i)) ? 1.0f : -1.0f;
  return w;
}

float lower_median(std::vector<float> v) {
  const std::size_t mid = (v.size() - 1) / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid), v.end());
  return v[mid];
}

// Norm-wise relative error max|y - r| / max|r| (as the layers command checks CLBlast).
double relative_error(const std::vector<float>& y, const std::vector<float>& r) {
  if (y.size() != r.size()) return INFINITY;
  double worst = 0, scale = 0;
  for (std::size_t i = 0; i < y.size(); ++i) {
    const double e = std::fabs(static_cast<double>(y[i]) - r[i]);
    if (!(e <= worst)) worst = e;  // NaN included
    scale = std::max(scale, std::fabs(static_cast<double>(r[i])));
  }
  return scale > 0 ? worst / scale : worst;
}

// The float kernels' work-group size: xnorcl's own element-wise kernels (threshold_pack, binary_maxpool) run
// with 64 on every device that allows it, so both sides get the same launch shape. Left to the driver
// (NullRange), PoCL picks small groups and runs these kernels several times slower.
constexpr std::size_t kWorkGroup = 64;
std::size_t whole_groups(std::size_t n) {
  return (n + kWorkGroup - 1) / kWorkGroup * kWorkGroup;
}

enum class Kind { Convolution, Sign, Pool, FullyConnected };

struct FloatLayer {
  Kind kind = Kind::Sign;
  xnorcl::Shape in{}, out{};
  Layer conv;                   // convolution: the bench's layer descriptor (host_float_convolution)
  xnorcl::PoolAttributes pool;  // max-pool
  xnorcl::PoolGeometry geometry;
  std::vector<float> weights;      // convolution, FC: +-1
  std::vector<float> scale, bias;  // batch-norm + sign
  cl::Buffer w, col, temp, scale_buffer, bias_buffer, output;
  std::vector<FloatStageTime> names;  // filled per launch in enqueue: layer, part, kernel
  std::vector<cl::Event> events;      // parallel to names
};

// The host computation of one layer from its input (double accumulation for convolutions and FCs; fma for
// batch-norm, as the device).
std::vector<float> host_layer(const FloatLayer& l, const std::vector<float>& x) {
  switch (l.kind) {
    case Kind::Convolution: {
      Layer conv = l.conv;
      conv.input = l.in;
      return host_float_convolution(conv, x, l.weights);
    }
    case Kind::Sign: {
      std::vector<float> y(x.size());
      const std::size_t hw = static_cast<std::size_t>(l.in[2] * l.in[3]);
      const std::size_t channels = static_cast<std::size_t>(l.in[1]);
      for (std::size_t i = 0; i < x.size(); ++i) {
        const std::size_t c = (i / hw) % channels;
        y[i] = std::fma(l.scale[c], x[i], l.bias[c]) > 0.0f ? 1.0f : -1.0f;
      }
      return y;
    }
    case Kind::Pool:
      return xnorcl::reference_maxpool(x.data(), l.in, l.pool);
    case Kind::FullyConnected: {
      const std::size_t n = static_cast<std::size_t>(l.in[0]), o = static_cast<std::size_t>(l.out[1]);
      const std::size_t k = count(l.in) / n;
      std::vector<float> y(n * o);
      for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t j = 0; j < o; ++j) {
          double s = 0;
          for (std::size_t t = 0; t < k; ++t) s += double(l.weights[j * k + t]) * x[i * k + t];
          y[i * o + j] = static_cast<float>(s);
        }
      }
      return y;
    }
  }
  return {};
}

}  // namespace

struct FloatNetwork::Impl {
  cl::Context context;
  cl::CommandQueue queue;
  bool profiling = false;
  xnorcl::Shape input_shape{};
  cl::Buffer input;
  std::vector<float> input_host;
  std::vector<FloatLayer> layers;
  cl::Kernel sign_kernel, pool_kernel, pool_2x2_kernel;
};

bool FloatNetwork::available() {
  return true;
}

FloatNetwork::FloatNetwork(const xnorcl::Runtime& rt, const xnorcl::NetworkSpec& spec,
                           const std::vector<float>& x, const std::vector<float>& calibration,
                           const xnorcl::Shape& calibration_shape)
    : impl_(new Impl) {
  Impl& m = *impl_;
  try {
    m.context = rt.context();
    m.queue = rt.queue();
    m.profiling = rt.profiling_enabled();
    // CLBlast takes no wait lists: the launches are ordered by the queue itself.
    if (m.queue.getInfo<CL_QUEUE_PROPERTIES>() & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE)
      throw std::runtime_error("the float network needs an in-order queue");
    m.input_shape = spec.input;
    m.input_host = x;
    if (x.size() != count(spec.input)) throw std::runtime_error("the float network's input has a wrong size");

    // The layers, their weights, and the thresholds calibrated on a host forward pass of the calibration
    // batch (the timed input may be a single image, whose per-channel FC "median" would be the value itself).
    std::vector<float> h = calibration;
    xnorcl::Shape hs = calibration_shape, in = spec.input;
    for (std::size_t i = 0; i < spec.layers.size(); ++i) {
      FloatLayer l;
      std::visit(
          [&](const auto& s) {
            using T = std::decay_t<decltype(s)>;
            if constexpr (std::is_same_v<T, xnorcl::ConvolutionLayer>) {
              const auto& a = s.attributes;
              if (a.pads_begin != a.pads_end)
                throw std::runtime_error("the float network needs symmetric padding (CLBlast Im2col)");
              l.kind = Kind::Convolution;
              l.conv.name = "conv";
              l.conv.input = in;
              l.conv.filter = s.filter.shape();
              l.conv.strides = a.strides;
              l.conv.pads = a.pads_begin;
              l.conv.dilations = a.dilations;
              l.out = xnorcl::BinaryConvolution::validate(a, in, s.filter.shape()).output;
              l.weights = plus_minus_one(s.filter);
            } else if constexpr (std::is_same_v<T, xnorcl::ThresholdLayer>) {
              l.kind = Kind::Sign;
              l.out = in;
              const std::size_t channels = static_cast<std::size_t>(in[1]);
              const std::size_t hw = static_cast<std::size_t>(in[2] * in[3]);
              l.scale.assign(channels, 1.0f);
              l.bias.resize(channels);
              std::vector<float> values;
              for (std::size_t c = 0; c < channels; ++c) {
                values.clear();
                for (std::int64_t n = 0; n < hs[0]; ++n)
                  for (std::size_t p = 0; p < hw; ++p)
                    values.push_back(h[(static_cast<std::size_t>(n) * channels + c) * hw + p]);
                l.bias[c] = -lower_median(values);
              }
            } else if constexpr (std::is_same_v<T, xnorcl::MaxPoolLayer>) {
              l.kind = Kind::Pool;
              l.pool = s.attributes;
              l.geometry = xnorcl::validate_pool(s.attributes, in);
              l.out = l.geometry.output;
            } else if constexpr (std::is_same_v<T, xnorcl::FullyConnectedLayer>) {
              l.kind = Kind::FullyConnected;
              l.out = {in[0], s.weights.shape()[0], 1, 1};
              l.weights = plus_minus_one(s.weights);
            } else {
              throw std::runtime_error("the float network has no equivalent of layer " + std::to_string(i) +
                                       " (" + xnorcl::layer_name(spec.layers[i]) + ")");
            }
          },
          spec.layers[i]);
      // Calibration pass: the same layer on the calibration batch.
      FloatLayer c = l;
      c.in = hs;
      c.out = hs;
      c.out[1] = l.out[1];
      c.out[2] = l.out[2];
      c.out[3] = l.out[3];
      if (l.kind == Kind::Pool) c.geometry = xnorcl::validate_pool(l.pool, hs);
      h = host_layer(c, h);
      hs = c.out;
      l.in = in;
      in = l.out;
      m.layers.push_back(std::move(l));
    }

    // Device objects.
    cl::Program program(m.context, kernel_source("network_float.cl"));
    try {
      program.build({rt.device()}, kNoWarnings);  // no fast-math: fma and comparisons exact
    } catch (const cl::Error&) {
      throw std::runtime_error("building network_float.cl failed: " +
                               program.getBuildInfo<CL_PROGRAM_BUILD_LOG>(rt.device()));
    }
    m.sign_kernel = cl::Kernel(program, "batch_norm_sign");
    m.pool_kernel = cl::Kernel(program, "max_pool");
    m.pool_2x2_kernel = cl::Kernel(program, "max_pool_2x2");
    auto upload = [&](const std::vector<float>& v, cl_mem_flags flags = CL_MEM_READ_ONLY) {
      return cl::Buffer(m.context, flags | CL_MEM_COPY_HOST_PTR, v.size() * sizeof(float),
                        const_cast<float*>(v.data()));
    };
    m.input = upload(m.input_host);
    cl_command_queue q = m.queue();
    for (auto& l : m.layers) {
      // Zeroed: CLBlast's Gemm and Gemv compute alpha*A*B + beta*C even with beta = 0, so a fresh buffer's
      // garbage (a NaN pattern now and then, in small recycled allocations) would reach the output.
      l.output = upload(std::vector<float>(count(l.out), 0.0f), CL_MEM_READ_WRITE);
      if (l.kind == Kind::Convolution || l.kind == Kind::FullyConnected) l.w = upload(l.weights);
      if (l.kind == Kind::Sign) {
        l.scale_buffer = upload(l.scale);
        l.bias_buffer = upload(l.bias);
      }
      if (l.kind == Kind::Convolution) {
        const std::size_t k =
            static_cast<std::size_t>(l.conv.filter[1] * l.conv.filter[2] * l.conv.filter[3]);
        const std::size_t patches = static_cast<std::size_t>(l.out[2] * l.out[3]);
        const std::size_t o = static_cast<std::size_t>(l.out[1]);
        l.col = cl::Buffer(m.context, CL_MEM_READ_WRITE, k * patches * sizeof(float));
        // Gemm's temporary buffer once, so timed calls allocate nothing (fair to CLBlast).
        std::size_t temp_bytes = 0;
        check_status(clblast::GemmTempBufferSize<float>(clblast::Layout::kRowMajor, clblast::Transpose::kNo,
                                                        clblast::Transpose::kNo, o, patches, k, 0, k, 0,
                                                        patches, 0, patches, &q, temp_bytes),
                     "GemmTempBufferSize");
        if (temp_bytes > 0) l.temp = cl::Buffer(m.context, CL_MEM_READ_WRITE, temp_bytes);
      }
    }
  } catch (const cl::Error& e) {
    delete impl_;
    throw std::runtime_error(std::string(e.what()) + " failed with " + xnorcl::cl_error_name(e.err()));
  } catch (...) {
    delete impl_;
    throw;
  }
}

FloatNetwork::~FloatNetwork() {
  delete impl_;
}

void FloatNetwork::enqueue() {
  Impl& m = *impl_;
  cl_command_queue q = m.queue();
  const cl::Buffer* in = &m.input;
  for (std::size_t i = 0; i < m.layers.size(); ++i) {
    FloatLayer& l = m.layers[i];
    l.names.clear();
    l.events.clear();
    auto keep = [&](int part, const char* kernel, cl_event e) {
      l.names.push_back({i, part, kernel, 0});
      l.events.emplace_back(e);  // takes ownership of the event CLBlast returned
    };
    const std::size_t images = static_cast<std::size_t>(l.in[0]);
    switch (l.kind) {
      case Kind::Convolution: {
        const Layer& c = l.conv;
        const std::size_t channels = static_cast<std::size_t>(l.in[1]),
                          height = static_cast<std::size_t>(l.in[2]),
                          width = static_cast<std::size_t>(l.in[3]);
        const std::size_t o = static_cast<std::size_t>(l.out[1]);
        const std::size_t patches = static_cast<std::size_t>(l.out[2] * l.out[3]);
        const std::size_t k = static_cast<std::size_t>(c.filter[1] * c.filter[2] * c.filter[3]);
        for (std::size_t n = 0; n < images; ++n) {
          cl_event e1 = nullptr, e2 = nullptr;
          // Im2col writes the patch matrix K x P, so the convolution is filter [O x K] times it, per image.
          check_status(clblast::Im2col<float>(
                           clblast::KernelMode::kCrossCorrelation, channels, height, width,
                           static_cast<std::size_t>(c.filter[2]), static_cast<std::size_t>(c.filter[3]),
                           static_cast<std::size_t>(c.pads[0]), static_cast<std::size_t>(c.pads[1]),
                           static_cast<std::size_t>(c.strides[0]), static_cast<std::size_t>(c.strides[1]),
                           static_cast<std::size_t>(c.dilations[0]), static_cast<std::size_t>(c.dilations[1]),
                           (*in)(), n * channels * height * width, l.col(), 0, &q, &e1),
                       "Im2col");
          keep(0, "clblast Im2col", e1);
          check_status(clblast::Gemm<float>(clblast::Layout::kRowMajor, clblast::Transpose::kNo,
                                            clblast::Transpose::kNo, o, patches, k, 1.0f, l.w(), 0, k,
                                            l.col(), 0, patches, 0.0f, l.output(), n * o * patches, patches,
                                            &q, &e2, l.temp() ? l.temp() : nullptr),
                       "Gemm");
          keep(1, "clblast Gemm", e2);
        }
        break;
      }
      case Kind::FullyConnected: {
        const std::size_t o = static_cast<std::size_t>(l.out[1]);
        const std::size_t k = count(l.in) / images;
        for (std::size_t n = 0; n < images; ++n) {
          cl_event e = nullptr;
          check_status(
              clblast::Gemv<float>(clblast::Layout::kRowMajor, clblast::Transpose::kNo, o, k, 1.0f, l.w(), 0,
                                   k, (*in)(), n * k, 1, 0.0f, l.output(), n * o, 1, &q, &e),
              "Gemv");
          keep(0, "clblast Gemv", e);
        }
        break;
      }
      case Kind::Sign: {
        cl::Kernel& kn = m.sign_kernel;
        kn.setArg(0, *in);
        kn.setArg(1, l.scale_buffer);
        kn.setArg(2, l.bias_buffer);
        kn.setArg(3, l.output);
        kn.setArg(4, static_cast<cl_uint>(l.in[2] * l.in[3]));
        kn.setArg(5, static_cast<cl_uint>(l.in[1]));
        const std::size_t hw = static_cast<std::size_t>(l.in[2] * l.in[3]);
        cl::Event e;
        // Small planes (the FC outputs, 1x1) as one row of planes instead of a padded group each.
        const std::size_t planes = static_cast<std::size_t>(l.in[0] * l.in[1]);
        if (hw >= kWorkGroup) {
          m.queue.enqueueNDRangeKernel(kn, cl::NullRange, cl::NDRange(whole_groups(hw), planes),
                                       cl::NDRange(kWorkGroup, 1), nullptr, &e);
        } else {
          m.queue.enqueueNDRangeKernel(kn, cl::NullRange, cl::NDRange(hw, planes), cl::NullRange, nullptr,
                                       &e);
        }
        l.names.push_back({i, 0, "batch_norm_sign", 0});
        l.events.push_back(e);
        break;
      }
      case Kind::Pool: {
        const auto& a = l.pool;
        const auto& g = l.geometry;
        if (a.kernel == std::array<int, 2>{2, 2} && a.strides == std::array<int, 2>{2, 2} &&
            g.pads_begin == std::array<int, 2>{0, 0} && 2 * l.out[2] <= l.in[2] && 2 * l.out[3] <= l.in[3]) {
          cl::Kernel& kn = m.pool_2x2_kernel;
          kn.setArg(0, *in);
          kn.setArg(1, l.output);
          for (cl_uint j = 0; j < 4; ++j)
            kn.setArg(2 + j, static_cast<cl_uint>(j < 2 ? l.in[2 + j] : l.out[j]));
          cl::Event e;
          m.queue.enqueueNDRangeKernel(
              kn, cl::NullRange,
              cl::NDRange(static_cast<std::size_t>(l.out[3]), static_cast<std::size_t>(l.out[2]),
                          static_cast<std::size_t>(l.out[0] * l.out[1])),
              cl::NullRange, nullptr, &e);
          l.names.push_back({i, 0, "max_pool_2x2", 0});
          l.events.push_back(e);
          break;
        }
        cl::Kernel& kn = m.pool_kernel;
        kn.setArg(0, *in);
        kn.setArg(1, l.output);
        const cl_uint args[] = {static_cast<cl_uint>(l.in[2]),      static_cast<cl_uint>(l.in[3]),
                                static_cast<cl_uint>(l.out[2]),     static_cast<cl_uint>(l.out[3]),
                                static_cast<cl_uint>(a.kernel[0]),  static_cast<cl_uint>(a.kernel[1]),
                                static_cast<cl_uint>(a.strides[0]), static_cast<cl_uint>(a.strides[1])};
        for (cl_uint j = 0; j < 8; ++j) kn.setArg(2 + j, args[j]);
        kn.setArg(10, static_cast<cl_int>(l.geometry.pads_begin[0]));
        kn.setArg(11, static_cast<cl_int>(l.geometry.pads_begin[1]));
        kn.setArg(12, static_cast<cl_uint>(count(l.out)));
        cl::Event e;
        m.queue.enqueueNDRangeKernel(kn, cl::NullRange, cl::NDRange(whole_groups(count(l.out))),
                                     cl::NDRange(kWorkGroup), nullptr, &e);
        l.names.push_back({i, 0, "max_pool", 0});
        l.events.push_back(e);
        break;
      }
    }
    in = &l.output;
  }
}

std::vector<FloatStageTime> FloatNetwork::last_stage_times() const {
  std::vector<FloatStageTime> out;
  if (!impl_->profiling) return out;
  for (const auto& l : impl_->layers) {
    for (std::size_t j = 0; j < l.events.size(); ++j) {
      FloatStageTime t = l.names[j];
      t.milliseconds = static_cast<double>(l.events[j].getProfilingInfo<CL_PROFILING_COMMAND_END>() -
                                           l.events[j].getProfilingInfo<CL_PROFILING_COMMAND_START>()) *
                       1e-6;
      out.push_back(t);
    }
  }
  return out;
}

namespace {

std::vector<float> read_buffer(const cl::CommandQueue& queue, const cl::Buffer& b, std::size_t n) {
  std::vector<float> v(n);
  queue.enqueueReadBuffer(b, CL_TRUE, 0, n * sizeof(float), v.data());
  return v;
}

}  // namespace

std::string FloatNetwork::check(double tolerance, double& worst) const {
  const Impl& m = *impl_;
  worst = 0;
  std::vector<float> in = m.input_host;
  for (std::size_t i = 0; i < m.layers.size(); ++i) {
    const FloatLayer& l = m.layers[i];
    std::vector<float> got = read_buffer(m.queue, l.output, count(l.out));
    const std::vector<float> expected = host_layer(l, in);
    const std::string at = "float layer " + std::to_string(i);
    if (l.kind == Kind::Convolution || l.kind == Kind::FullyConnected) {
      const double e = relative_error(got, expected);
      worst = std::max(worst, e);
      if (!(e <= tolerance))
        return at + ": relative error " + std::to_string(e) + " above " + std::to_string(tolerance);
    } else if (got.size() != expected.size() ||
               std::memcmp(got.data(), expected.data(), got.size() * sizeof(float)) != 0) {
      return at + ": differs from the host (bitwise)";
    }
    in = std::move(got);  // the next layer is checked on the device's own input
  }
  return "";
}

std::vector<float> FloatNetwork::read_output() const {
  const FloatLayer& l = impl_->layers.back();
  return read_buffer(impl_->queue, l.output, count(l.out));
}

#else  // no CLBlast

struct FloatNetwork::Impl {};

bool FloatNetwork::available() {
  return false;
}
FloatNetwork::FloatNetwork(const xnorcl::Runtime&, const xnorcl::NetworkSpec&, const std::vector<float>&,
                           const std::vector<float>&, const xnorcl::Shape&)
    : impl_(nullptr) {
  throw std::runtime_error("xnorcl-bench was built without CLBlast (Debian: libclblast-dev)");
}
FloatNetwork::~FloatNetwork() = default;
void FloatNetwork::enqueue() {}
std::vector<FloatStageTime> FloatNetwork::last_stage_times() const {
  return {};
}
std::string FloatNetwork::check(double, double& worst) const {
  worst = 0;
  return "unavailable";
}
std::vector<float> FloatNetwork::read_output() const {
  return {};
}

#endif

}  // namespace xnorcl_bench
