// SPDX-License-Identifier: Apache-2.0
// MatMul (OpenVINO MatMul-0) of a 2-D f32 activation [N, K] by constant f32 weights [K, M] ([M, K] with
// transpose_b): the classifier. transpose_a is refused (activations are never stored transposed here). A
// following per-column Multiply, Add and Relu by constants ([M], [1, M] or one value) run in the kernel's
// epilogue (cl_kernels/mat_mul.cl).
#include <algorithm>
#include <cctype>

#include "ops/float_conv_common.hpp"
#include "xnorcl/error.hpp"

namespace xnorcl::ops {

namespace {

// A boolean attribute as OpenVINO IR writes it ("true" / "false", any case) or as an integer 0 / 1.
bool flag(const NodeView& v, const std::string& name) {
  if (!v.has(name)) return false;
  if (std::holds_alternative<std::int64_t>(v.node->attributes.at(name))) {
    const std::int64_t i = v.integer(name);
    if (i == 0 || i == 1) return i == 1;
    throw InvalidArgument(v.where() + ": " + name + " " + std::to_string(i) + " is not a boolean (0 or 1)");
  }
  std::string s = v.text(name);
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (s == "true" || s == "false") return s == "true";
  throw InvalidArgument(v.where() + ": " + name + " '" + v.text(name) + "' is not true or false");
}

struct Product {
  std::int64_t N = 0, K = 0, M = 0;
  bool transpose_b = false;
};

Product product_of(const NodeView& v) {
  v.check_attributes({"transpose_a", "transpose_b"});
  v.check_input_count(2, 2);
  const Dims& x = v.activation(0, ElementType::Float32, 2).dims;
  const Dims& w = v.constant(1, ElementType::Float32, 2).dims;
  if (flag(v, "transpose_a"))
    throw InvalidArgument(v.where() + ": transpose_a true is not supported (the activation " + to_string(x) +
                          " is read as [N, K])");
  Product p;
  p.transpose_b = flag(v, "transpose_b");
  p.N = x[0];
  p.K = x[1];
  p.M = p.transpose_b ? w[0] : w[1];
  const std::int64_t wk = p.transpose_b ? w[1] : w[0];
  if (wk != p.K)
    throw InvalidArgument(v.where() + ": incompatible matrix dimensions: the input " + to_string(x) +
                          " has K = " + std::to_string(p.K) + ", the weights " + to_string(w) + " have " +
                          std::to_string(wk) + " at axis " +
                          (p.transpose_b ? "1 (transpose_b true: [M, K])" : "0 ([K, M])"));
  check_indexable(v, p.N * p.M, "the output " + to_string(Dims{p.N, p.M}));
  check_indexable(v, p.K * ((p.M + 7) / 8 * 8), "the weights in tiles of 8 columns");
  return p;
}

class MatMulOp final : public Op {
 public:
  const char* name() const override { return "MatMul"; }

  std::vector<TensorInfo> infer(const NodeView& v) const override {
    const Product p = product_of(v);
    return {{{p.N, p.M}, ElementType::Float32}};
  }

  std::vector<Tensor> reference(const NodeView& v, const std::vector<const Tensor*>& in) const override {
    const Product p = product_of(v);
    const std::vector<float>& x = in[0]->values;
    const std::vector<float>& w = v.constants[1]->values;
    Tensor out;
    out.dims = {p.N, p.M};
    out.values.resize(static_cast<std::size_t>(p.N * p.M));
    for (std::int64_t n = 0; n < p.N; ++n) {
      for (std::int64_t m = 0; m < p.M; ++m) {
        double sum = 0;
        for (std::int64_t k = 0; k < p.K; ++k) {
          const std::int64_t wi = p.transpose_b ? m * p.K + k : k * p.M + m;
          sum +=
              static_cast<double>(x[static_cast<std::size_t>(n * p.K + k)]) * w[static_cast<std::size_t>(wi)];
        }
        out.values[static_cast<std::size_t>(n * p.M + m)] = static_cast<float>(sum);
      }
    }
    return {out};
  }

  bool can_fuse(const NodeView& head, const std::vector<NodeView>& fused,
                const NodeView& next) const override {
    return epilogue_accepts(fused, next, infer(head)[0].dims);
  }

  std::unique_ptr<DeviceStep> plan(const Runtime& rt, const NodeView& v,
                                   const std::vector<NodeView>& fused) const override {
    const Product p = product_of(v);
    const std::int64_t m_blocks = (p.M + 7) / 8, Mp = m_blocks * 8;
    const std::vector<float>& w = v.constants[1]->values;
    FloatLaunch l;
    l.file = "mat_mul.cl";
    l.kernel = "mat_mul";
    // [Mp/8][K][8]: each tile's weights one contiguous block (see mat_mul.cl).
    const bool per_group = rt.variant() == Variant::Local;
    l.weights.assign(static_cast<std::size_t>(p.K * Mp), 0.0f);
    for (std::int64_t k = 0; k < p.K; ++k) {
      for (std::int64_t m = 0; m < p.M; ++m) {
        const std::int64_t to = (m / 8 * p.K + k) * 8 + m % 8;
        l.weights[static_cast<std::size_t>(to)] =
            w[static_cast<std::size_t>(p.transpose_b ? m * p.K + k : k * p.M + m)];
      }
    }
    l.work_group_per_item = per_group;
    l.total = static_cast<std::size_t>(p.N * m_blocks);
    l.params = {static_cast<std::int32_t>(p.K), static_cast<std::int32_t>(p.M),
                static_cast<std::int32_t>(m_blocks), static_cast<std::int32_t>(l.total)};
    l.description =
        std::string(per_group ? "mat_mul, a work-group per 8 columns" : "mat_mul 8-column tiles") + " -> " +
        to_string(Dims{p.N, p.M});
    Epilogue e = epilogue_of(fused, p.M);
    e.scale.resize(static_cast<std::size_t>(Mp), 1.0f);  // the kernel reads whole tiles
    e.bias.resize(static_cast<std::size_t>(Mp), 0.0f);
    return make_float_step(rt, std::move(l), e);
  }
};

}  // namespace

const Op& mat_mul_op() {
  static const MatMulOp op;
  return op;
}

}  // namespace xnorcl::ops
