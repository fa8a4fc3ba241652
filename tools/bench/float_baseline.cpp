// SPDX-License-Identifier: Apache-2.0
// The bench's float32 baseline: CLBlast's own Im2col + Gemm on xnorcl's context and queue, and the
// host convolution that checks it. Without CLBlast (XNORCL_BENCH_HAVE_CLBLAST unset) the baseline reports
// itself unavailable; nothing is estimated in its place.
#include <cmath>
#include <stdexcept>
#include <string>

#include "bench.hpp"

#ifdef XNORCL_BENCH_HAVE_CLBLAST
#include <clblast.h>
#endif

namespace xnorcl_bench {

std::vector<float> host_float_convolution(const Layer& l, const std::vector<float>& x,
                                          const std::vector<float>& w) {
  const xnorcl::Shape o = l.output();
  const std::int64_t N = l.input[0], C = l.input[1], H = l.input[2], W = l.input[3];
  const std::int64_t O = l.filter[0], KH = l.filter[2], KW = l.filter[3];
  const std::int64_t OH = o[2], OW = o[3];
  std::vector<float> y(static_cast<std::size_t>(N * O * OH * OW));
  std::vector<double> plane(static_cast<std::size_t>(OH * OW));
  // Loop order keeps the innermost loop over contiguous output columns; double accumulation makes the host
  // result the exact one up to a final rounding.
  for (std::int64_t n = 0; n < N; ++n) {
    for (std::int64_t oc = 0; oc < O; ++oc) {
      std::fill(plane.begin(), plane.end(), 0.0);
      for (std::int64_t c = 0; c < C; ++c) {
        const float* xc = &x[static_cast<std::size_t>((n * C + c) * H * W)];
        for (std::int64_t ky = 0; ky < KH; ++ky) {
          for (std::int64_t kx = 0; kx < KW; ++kx) {
            const double wv = w[static_cast<std::size_t>(((oc * C + c) * KH + ky) * KW + kx)];
            for (std::int64_t oy = 0; oy < OH; ++oy) {
              const std::int64_t iy = oy * l.strides[0] - l.pads[0] + ky * l.dilations[0];
              if (iy < 0 || iy >= H) continue;  // zero padding
              double* row = &plane[static_cast<std::size_t>(oy * OW)];
              for (std::int64_t ox = 0; ox < OW; ++ox) {
                const std::int64_t ix = ox * l.strides[1] - l.pads[1] + kx * l.dilations[1];
                if (ix >= 0 && ix < W) row[ox] += wv * xc[iy * W + ix];
              }
            }
          }
        }
      }
      float* out = &y[static_cast<std::size_t>((n * O + oc) * OH * OW)];
      for (std::int64_t i = 0; i < OH * OW; ++i)
        out[i] = static_cast<float>(plane[static_cast<std::size_t>(i)]);
    }
  }
  return y;
}

#ifdef XNORCL_BENCH_HAVE_CLBLAST

namespace {

std::string status_name(clblast::StatusCode s) {
  const int code = static_cast<int>(s);
  switch (s) {
    case clblast::StatusCode::kNotImplemented:
      return "kNotImplemented";
    case clblast::StatusCode::kInvalidDimension:
      return "kInvalidDimension";
    case clblast::StatusCode::kInsufficientMemoryTemp:
      return "kInsufficientMemoryTemp";
    case clblast::StatusCode::kInvalidLocalMemUsage:
      return "kInvalidLocalMemUsage";
    case clblast::StatusCode::kDatabaseError:
      return "kDatabaseError";
    case clblast::StatusCode::kUnknownError:
      return "kUnknownError";
    case clblast::StatusCode::kUnexpectedError:
      return "kUnexpectedError";
    default:
      break;
  }
  // Codes above -1000 are OpenCL's own.
  if (code > -1000) return xnorcl::cl_error_name(code);
  return "CLBlast status " + std::to_string(code);
}

void check(clblast::StatusCode s, const char* call) {
  if (s != clblast::StatusCode::kSuccess) {
    throw std::runtime_error(std::string("CLBlast ") + call + " failed: " + status_name(s));
  }
}

double event_ms(const cl::Event& e) {
  return static_cast<double>(e.getProfilingInfo<CL_PROFILING_COMMAND_END>() -
                             e.getProfilingInfo<CL_PROFILING_COMMAND_START>()) *
         1e-6;
}

}  // namespace

struct FloatBaseline::Impl {
  Layer layer;
  std::size_t channels, height, width, kh, kw, out_channels, patches, k;
  cl::CommandQueue queue;
  bool profiling = false;
  cl::Buffer x, w, col, y, temp;
  std::vector<cl::Event> im2col_events, gemm_events;
};

bool FloatBaseline::available() {
  return true;
}

FloatBaseline::FloatBaseline(const xnorcl::Runtime& rt, const Layer& l, const std::vector<float>& x,
                             const std::vector<float>& w)
    : impl_(new Impl) {
  Impl& m = *impl_;
  try {
    const xnorcl::Shape o = l.output();
    m.layer = l;
    m.channels = static_cast<std::size_t>(l.input[1]);
    m.height = static_cast<std::size_t>(l.input[2]);
    m.width = static_cast<std::size_t>(l.input[3]);
    m.out_channels = static_cast<std::size_t>(l.filter[0]);
    m.kh = static_cast<std::size_t>(l.filter[2]);
    m.kw = static_cast<std::size_t>(l.filter[3]);
    m.patches = static_cast<std::size_t>(o[2] * o[3]);
    m.k = m.channels * m.kh * m.kw;
    m.queue = rt.queue();
    m.profiling = rt.profiling_enabled();
    const cl::Context ctx = rt.context();
    m.x = cl::Buffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, x.size() * sizeof(float),
                     const_cast<float*>(x.data()));
    m.w = cl::Buffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, w.size() * sizeof(float),
                     const_cast<float*>(w.data()));
    m.col = cl::Buffer(ctx, CL_MEM_READ_WRITE, m.k * m.patches * sizeof(float));
    // Zero-filled: CLBlast's Gemm computes beta*C even with beta 0, so a NaN left in recycled memory would
    // reach the output.
    std::vector<float> zeros(static_cast<std::size_t>(l.input[0]) * m.out_channels * m.patches, 0.0f);
    m.y =
        cl::Buffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, zeros.size() * sizeof(float), zeros.data());
    // Hand Gemm its temporary buffer once, so the timed calls do not allocate one each (fair to CLBlast).
    std::size_t temp_bytes = 0;
    cl_command_queue q = m.queue();
    check(clblast::GemmTempBufferSize<float>(clblast::Layout::kRowMajor, clblast::Transpose::kNo,
                                             clblast::Transpose::kNo, m.out_channels, m.patches, m.k, 0, m.k,
                                             0, m.patches, 0, m.patches, &q, temp_bytes),
          "GemmTempBufferSize");
    if (temp_bytes > 0) m.temp = cl::Buffer(ctx, CL_MEM_READ_WRITE, temp_bytes);
  } catch (const cl::Error& e) {
    delete impl_;
    throw std::runtime_error(std::string(e.what()) + " failed with " + xnorcl::cl_error_name(e.err()));
  } catch (...) {
    delete impl_;
    throw;
  }
}

FloatBaseline::~FloatBaseline() {
  delete impl_;
}

void FloatBaseline::enqueue() {
  Impl& m = *impl_;
  cl_command_queue q = m.queue();
  m.im2col_events.clear();
  m.gemm_events.clear();
  const auto& l = m.layer;
  for (std::int64_t n = 0; n < l.input[0]; ++n) {
    cl_event e1 = nullptr, e2 = nullptr;
    // CLBlast's im2col writes the patch matrix K x P (row (c, ky, kx), column output position), so the
    // convolution is filter [C_OUT x K] times patches [K x P], row-major, per image.
    check(clblast::Im2col<float>(
              clblast::KernelMode::kCrossCorrelation, m.channels, m.height, m.width, m.kh, m.kw,
              static_cast<std::size_t>(l.pads[0]), static_cast<std::size_t>(l.pads[1]),
              static_cast<std::size_t>(l.strides[0]), static_cast<std::size_t>(l.strides[1]),
              static_cast<std::size_t>(l.dilations[0]), static_cast<std::size_t>(l.dilations[1]), m.x(),
              static_cast<std::size_t>(n) * m.channels * m.height * m.width, m.col(), 0, &q, &e1),
          "Im2col");
    m.im2col_events.emplace_back(e1);  // takes ownership of the event CLBlast returned
    check(clblast::Gemm<float>(clblast::Layout::kRowMajor, clblast::Transpose::kNo, clblast::Transpose::kNo,
                               m.out_channels, m.patches, m.k, 1.0f, m.w(), 0, m.k, m.col(), 0, m.patches,
                               0.0f, m.y(), static_cast<std::size_t>(n) * m.out_channels * m.patches,
                               m.patches, &q, &e2, m.temp() ? m.temp() : nullptr),
          "Gemm");
    m.gemm_events.emplace_back(e2);
  }
}

void FloatBaseline::stage_times(double& im2col_ms, double& gemm_ms) {
  Impl& m = *impl_;
  im2col_ms = gemm_ms = 0;
  if (!m.profiling) return;
  for (auto& e : m.im2col_events) im2col_ms += event_ms(e);
  for (auto& e : m.gemm_events) gemm_ms += event_ms(e);
}

std::vector<float> FloatBaseline::read_output() {
  Impl& m = *impl_;
  std::vector<float> y(static_cast<std::size_t>(m.layer.input[0]) * m.out_channels * m.patches);
  m.queue.enqueueReadBuffer(m.y, CL_TRUE, 0, y.size() * sizeof(float), y.data());
  return y;
}

#else  // no CLBlast

struct FloatBaseline::Impl {};

bool FloatBaseline::available() {
  return false;
}
FloatBaseline::FloatBaseline(const xnorcl::Runtime&, const Layer&, const std::vector<float>&,
                             const std::vector<float>&)
    : impl_(nullptr) {
  throw std::runtime_error("xnorcl-bench was built without CLBlast (Debian: libclblast-dev)");
}
FloatBaseline::~FloatBaseline() = default;
void FloatBaseline::enqueue() {}
void FloatBaseline::stage_times(double& im2col_ms, double& gemm_ms) {
  im2col_ms = gemm_ms = 0;
}
std::vector<float> FloatBaseline::read_output() {
  return {};
}

#endif

}  // namespace xnorcl_bench
