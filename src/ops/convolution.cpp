// SPDX-License-Identifier: Apache-2.0
// Convolution (OpenVINO Convolution-1) on f32 NCHW with constant f32 weights [O, C, KH, KW], run as a direct
// convolution (cl_kernels/convolution.cl). A following per-channel Multiply (a folded batch-norm's scale),
// Add (its shift, or a bias) and Relu, each by a constant, run in the kernel's epilogue, and after them a
// 3x3, stride-2 MaxPool with pads before of 1, 1 in the same step (fuses_max_pool).
#include "ops/float_conv_common.hpp"

#include <algorithm>
#include <climits>
#include <cmath>

#include "ops/pool_attributes.hpp"
#include "runtime/device_profile.hpp"
#include "xnorcl/error.hpp"

namespace xnorcl::ops {

namespace {

Shape shape4(const Dims& d) {
  return Shape{d[0], d[1], d[2], d[3]};
}

}  // namespace

namespace {

// Weights [O, Cg, KH, KW] as a kernel reads them: [G][ceil(Og/B)][Cg][KH][KW][B], the B output channels of a
// work-item side by side for each tap (B = 8 for the tiles, 16 for the lanes, 6 for the split kernels), zero
// past Og.
std::vector<float> blocked_weights(const std::vector<float>& w, std::int64_t O, std::int64_t Og,
                                   std::int64_t per_channel, std::int64_t B) {
  const std::int64_t blocks = (Og + B - 1) / B;
  std::vector<float> packed(static_cast<std::size_t>(O / Og * blocks * per_channel * B), 0.0f);
  for (std::int64_t o = 0; o < O; ++o) {
    const std::int64_t block = o / Og * blocks + o % Og / B, lane = o % Og % B;
    for (std::int64_t ct = 0; ct < per_channel; ++ct)
      packed[static_cast<std::size_t>((block * per_channel + ct) * B + lane)] =
          w[static_cast<std::size_t>(o * per_channel + ct)];
  }
  return packed;
}

// The padded, phase-split copy convolution_split reads: Hp rows (the last window's last row is the
// last), and per row SW phases (lines) of Wq columns (every tap of the last 16-column block).
struct SplitCopy {
  std::int64_t rows = 0, columns = 0, lines = 0, floats = 0;
};

// col_blocks: the blocks of 16 output columns the kernel computes (0: those of the output's width).
SplitCopy split_copy(const ConvGeometry& g, const BinaryConvolution::Attributes& a, std::int64_t groups,
                     std::int64_t col_blocks = 0) {
  const std::int64_t SW = a.strides[1];
  if (col_blocks == 0) col_blocks = (g.output[3] + 15) / 16;
  SplitCopy c;
  c.rows = (g.output[2] - 1) * a.strides[0] + (g.filter[2] - 1) * a.dilations[0] + 1;
  c.columns = col_blocks * 16 + (g.filter[3] - 1) * a.dilations[1] / SW;
  // g.input holds one group's channels. Strides and pads as large as the attributes allow would overflow
  // the product: such a copy counts as too large.
  c.lines = 1;
  for (const std::int64_t factor : {g.input[0], groups, g.filter[1], c.rows, SW})
    if (__builtin_mul_overflow(c.lines, factor, &c.lines)) c.lines = INT64_MAX;
  if (__builtin_mul_overflow(c.lines, c.columns, &c.floats)) c.floats = INT64_MAX;
  return c;
}

// A 1x1 window without pads (split_allowed): convolution_1x1_split, `runs` runs of 16 positions per
// work-item (1, or 2: convolution_1x1_split_runs2), on the input plane itself at stride 1, else on a copy of
// the pixels the window reads (pointwise_sample: every SHth row, every SWth column), so that a run of
// positions is one vector load at any stride. On PoCL (AVX-512) the copy and the positions kernel ran a
// ResNet-18's 1x1/2 shortcuts faster than convolution_1x1_lanes, which broadcasts each pixel of a block
// of 6 positions to 16 channels (see docs/benchmarks.md).
FloatLaunch pointwise_split_launch(const ConvGeometry& g, const BinaryConvolution::Attributes& a,
                                   const std::vector<float>& w, std::int64_t groups, int runs) {
  const std::int64_t O = g.output[1], Og = O / groups, Cg = g.filter[1], P = g.output[2] * g.output[3];
  if (runs != 1 && runs != 2)
    throw Error("convolution_1x1_split computes 1 or 2 runs per work-item, not " + std::to_string(runs));
  if (P < 16 * runs)
    throw Error("convolution_1x1_split needs a plane of " + std::to_string(16 * runs) +
                " positions at least, not " + std::to_string(P));
  const std::int64_t channel_blocks = (Og + 5) / 6, pos_blocks = (P + 16 * runs - 1) / (16 * runs);
  const auto i32 = [](std::int64_t v) { return static_cast<std::int32_t>(v); };
  FloatLaunch l;
  l.file = "convolution.cl";
  l.kernel = runs == 2 ? "convolution_1x1_split_runs2" : "convolution_1x1_split";
  l.weights = blocked_weights(w, O, Og, Cg, 6);
  l.total = static_cast<std::size_t>(g.output[0] * groups * pos_blocks * channel_blocks);
  l.params = {i32(Cg), i32(P), i32(Og), i32(groups), i32(channel_blocks), i32(pos_blocks), i32(l.total)};
  const bool strided = a.strides[0] != 1 || a.strides[1] != 1;
  if (strided) {
    // No larger than the input (OH * OW <= H * W), whose elements an int indexes.
    const std::int64_t planes = g.output[0] * groups * Cg;
    InputCopy c;
    c.kernel = "pointwise_sample";
    c.params = {i32(g.input[2]), i32(g.input[3]), i32(g.output[2]), i32(g.output[3]),
                a.strides[0],    a.strides[1],    i32(planes)};
    c.total = static_cast<std::size_t>(planes);
    c.floats = static_cast<std::size_t>(planes * P);
    l.copy = std::move(c);
  }
  l.description = "convolution_1x1_split 6x16 lanes" + std::string(runs == 2 ? " x 2 runs" : "") +
                  (strided ? " on a copy of the strided pixels" : " on the input plane") + " -> " +
                  xnorcl::to_string(g.output);
  return l;
}

// The default band (kDefaultPoolBand, 4) computes 1 convolution row in 9 twice where 8 computes 1 in 17, but
// gives Bi-Real Net-18's stem 154 work-items where 8 gives 77. On PoCL (an Intel Xeon, 2 cores, the
// kernels in work-groups of 1), both in one process in turn: the stem kernel 3-10% less time at 4 than at 8
// in 7 runs of 8 (7% more in one), 5 and 6 3-4% more (their last band short), 2 22% more
// (docs/bench/pocl_avx512_stem_band_in_turn.txt). Earlier, in work-groups of 8, 8 had been the faster. The
// tuner tries the others (float_conv_common.cpp).

// rows: output rows per work-item (1: convolution_split, 2: convolution_split_rows2). With `pool`, the
// kernels that also max-pool (convolution_split_maxpool*): a work-item per band of `band` pooled rows.
FloatLaunch split_launch(const ConvGeometry& g, const BinaryConvolution::Attributes& a,
                         const std::vector<float>& w, std::int64_t groups, int rows, const PoolGeometry* pool,
                         int band_rows) {
  if (rows != 1 && rows != 2)
    throw Error("convolution_split computes 1 or 2 output rows per work-item, not " + std::to_string(rows));
  if (pool && (band_rows < 1 || band_rows > kMaxPoolBand))
    throw Error("convolution_split_maxpool takes bands of 1 to " + std::to_string(kMaxPoolBand) +
                " pooled rows, not " + std::to_string(band_rows));
  const std::int64_t O = g.output[1], Og = O / groups, Cg = g.filter[1], taps = g.filter[2] * g.filter[3];
  const std::int64_t OH = g.output[2], OW = g.output[3], SW = a.strides[1];
  const std::int64_t channel_blocks = (Og + 5) / 6;
  // The pooled columns in blocks of 8 (16 of the convolution's): more than the output's own blocks where the
  // pool's end pads add a column.
  const std::int64_t col_blocks = pool ? (pool->output[3] + 7) / 8 : (OW + 15) / 16;
  const SplitCopy copy = split_copy(g, a, groups, col_blocks);
  const auto i32 = [](std::int64_t v) { return static_cast<std::int32_t>(v); };
  FloatLaunch l;
  l.file = "convolution.cl";
  l.weights = blocked_weights(w, O, Og, Cg * taps, 6);
  l.params = {i32(Cg),        i32(copy.rows), i32(SW),          i32(copy.columns),   i32(Og),
              i32(OH),        i32(OW),        i32(g.filter[2]), i32(g.filter[3]),    a.strides[0],
              a.dilations[0], a.dilations[1], i32(groups),      i32(channel_blocks), i32(col_blocks)};
  // The pooling kernels' pooled rows per work-item (0 without a pool), as launched and as described.
  const std::int64_t band = pool ? std::min<std::int64_t>(pool->output[2], band_rows) : 0;
  if (pool) {
    const std::int64_t POH = pool->output[2];
    const std::int64_t bands = (POH + band - 1) / band;
    l.kernel = rows == 2 ? "convolution_split_maxpool_rows2" : "convolution_split_maxpool";
    l.total = static_cast<std::size_t>(g.output[0] * groups * channel_blocks * bands);
    l.params.insert(l.params.end(), {i32(POH), i32(pool->output[3]), i32(band), i32(bands)});
  } else {
    l.kernel = rows == 2 ? "convolution_split_rows2" : "convolution_split";
    const std::int64_t row_blocks = (OH + rows - 1) / rows;
    l.total = static_cast<std::size_t>(g.output[0] * groups * channel_blocks * row_blocks * col_blocks);
  }
  l.params.push_back(i32(l.total));
  InputCopy c;
  c.kernel = "phase_split";
  c.params = {i32(g.input[2]),   i32(g.input[3]), i32(copy.rows),  i32(SW),
              i32(copy.columns), g.pads_begin[0], g.pads_begin[1], i32(copy.lines)};
  c.total = static_cast<std::size_t>(copy.lines);
  c.floats = static_cast<std::size_t>(copy.floats);
  l.copy = std::move(c);
  const std::string banded =
      pool ? " in bands of " + std::to_string(band) + (band == 1 ? " pooled row" : " pooled rows") : "";
  l.description = std::string(pool ? "convolution_split_maxpool" : "convolution_split") + " 6x16 lanes" +
                  (rows == 2 ? " x 2 rows" : "") + banded + " on a padded copy (" + std::to_string(SW) +
                  " column phase" + (SW == 1 ? "" : "s") + ") -> " + xnorcl::to_string(g.output);
  return l;
}

}  // namespace

bool split_allowed(const ConvGeometry& g, const BinaryConvolution::Attributes& a, const std::vector<float>& w,
                   std::int64_t groups) {
  // 1x1 windows without pads (convolution_1x1_split, on the input plane or a copy of its strided pixels):
  // on planes of two runs of 16 positions at least, so that every block loads whole vectors inside the plane.
  if (is_pointwise(g)) return g.output[2] * g.output[3] >= 32;
  // The copy's floats are indexed like a tensor's (int elements, as check_int_elements allows).
  return split_copy(g, a, groups).floats <= INT_MAX &&
         std::all_of(w.begin(), w.end(), [](float v) { return std::isfinite(v); });
}

bool fuses_max_pool(const PoolAttributes& attributes, const PoolGeometry& geometry) {
  return attributes.kernel == std::array<int, 2>{3, 3} && attributes.strides == std::array<int, 2>{2, 2} &&
         geometry.pads_begin == std::array<int, 2>{1, 1};
}

bool pools_in_kernel(const ConvGeometry& g, const BinaryConvolution::Attributes& a, std::int64_t groups,
                     const PoolGeometry& pool) {
  return !is_pointwise(g) && split_copy(g, a, groups, (pool.output[3] + 7) / 8).floats <= INT_MAX;
}

FloatLaunch convolution_launch(const ConvGeometry& g, const BinaryConvolution::Attributes& a,
                               const std::vector<float>& w, std::int64_t groups, FloatConvKernel kernel,
                               int columns, int rows, const PoolGeometry* pool, int band) {
  if (pool && (kernel != FloatConvKernel::Split || !pools_in_kernel(g, a, groups, *pool)))
    throw Error("only convolution_split max-pools in its epilogue");
  if (kernel == FloatConvKernel::Split)
    return is_pointwise(g) ? pointwise_split_launch(g, a, w, groups, rows)
                           : split_launch(g, a, w, groups, rows, pool, band);
  const bool lanes = kernel == FloatConvKernel::Lanes;
  const std::int64_t O = g.output[1], Og = O / groups, Cg = g.filter[1], taps = g.filter[2] * g.filter[3];
  const std::int64_t H = g.input[2], W = g.input[3], OH = g.output[2], OW = g.output[3];
  const auto i32 = [](std::int64_t v) { return static_cast<std::int32_t>(v); };
  // The window's parameters, as convolution and convolution_lanes take them.
  const std::vector<std::int32_t> window = {
      i32(Cg),        i32(H),           i32(W),           i32(Og),         i32(OH),
      i32(OW),        i32(g.filter[2]), i32(g.filter[3]), a.strides[0],    a.strides[1],
      a.dilations[0], a.dilations[1],   g.pads_begin[0],  g.pads_begin[1], i32(groups)};
  FloatLaunch l;
  l.file = "convolution.cl";
  if (lanes && is_pointwise(g)) {  // blocks of `columns` positions along the whole output plane
    const std::int64_t lane_blocks = (Og + 15) / 16, col_blocks = (OH * OW + columns - 1) / columns;
    // Neighbouring work-items share what costs more to read again: at a stride, where a block's pixels are
    // spread over every other row and column, the input if its plane is larger than the output channels
    // and a group has several channel blocks to share it (channel blocks first); otherwise the weights
    // (position blocks first).
    const bool channels_first = (a.strides[0] > 1 || a.strides[1] > 1) && H * W > Og && lane_blocks > 1;
    l.kernel = "convolution_1x1_lanes";
    l.weights = blocked_weights(w, O, Og, Cg, 16);
    l.total = static_cast<std::size_t>(g.output[0] * groups * lane_blocks * col_blocks);
    l.params = {
        i32(Cg),    i32(OH * OW), i32(Og), i32(groups),  i32(lane_blocks), i32(col_blocks),    i32(l.total),
        i32(H * W), i32(W),       i32(OW), a.strides[0], a.strides[1],     i32(channels_first)};
    l.description = "convolution_1x1_lanes 16x" + std::to_string(columns) + " lanes, " +
                    (channels_first ? "channel" : "position") + " blocks first -> " +
                    xnorcl::to_string(g.output);
    return l;
  }
  if (lanes) {
    const std::int64_t lane_blocks = (Og + 15) / 16, col_blocks = (OW + columns - 1) / columns;
    l.kernel = "convolution_lanes";
    l.weights = blocked_weights(w, O, Og, Cg * taps, 16);
    l.total = static_cast<std::size_t>(g.output[0] * groups * lane_blocks * OH * col_blocks);
    l.params = window;
    l.params.insert(l.params.end(), {i32(lane_blocks), i32(col_blocks), i32(l.total)});
    l.description =
        "convolution_lanes 16x" + std::to_string(columns) + " lanes -> " + xnorcl::to_string(g.output);
    return l;
  }
  const std::int64_t group_blocks = (Og + 7) / 8;
  l.weights = blocked_weights(w, O, Og, Cg * taps, 8);
  if (is_pointwise(g)) {  // tiles of `columns` positions along the whole output plane, across row ends
    const std::int64_t col_blocks = (OH * OW + columns - 1) / columns;
    l.kernel = "convolution_1x1";
    l.total = static_cast<std::size_t>(g.output[0] * groups * group_blocks * col_blocks);
    l.params = {i32(Cg),      i32(OH * OW), i32(Og), i32(groups), i32(group_blocks), i32(col_blocks),
                i32(l.total), i32(H * W),   i32(W),  i32(OW),     a.strides[0],      a.strides[1]};
  } else {
    // Output columns [col_lo, col_hi) load only columns inside the row (a stride-2 tile loads one column past
    // its last tap); where a whole tile fits in them, the kernel tiles just that span, and edge work-items
    // after all the tiles compute the columns beside it, 4 each.
    const std::int64_t SW = a.strides[1], PW = g.pads_begin[1], past = SW == 2 ? 1 : 0;
    const std::int64_t col_lo = std::min(OW, (PW + SW - 1) / SW);
    const std::int64_t reach = W - 1 - past - (g.filter[3] - 1) * a.dilations[1] + PW;  // ow*SW <= reach
    const std::int64_t col_hi = reach < 0 ? 0 : std::min(OW, reach / SW + 1);
    const bool inside_tiles = col_hi - col_lo >= columns;
    const std::int64_t span = inside_tiles ? col_hi - col_lo : OW;
    const std::int64_t col_blocks = (span + columns - 1) / columns;
    const std::int64_t edge_blocks = inside_tiles ? (col_lo + OW - col_hi + 3) / 4 : 0;
    const std::int64_t rows = g.output[0] * groups * group_blocks * OH;
    l.kernel = "convolution";
    l.total = static_cast<std::size_t>(rows * (col_blocks + edge_blocks));
    l.params = window;
    l.params.insert(l.params.end(), {i32(group_blocks), i32(col_blocks), i32(rows * col_blocks),
                                     i32(edge_blocks), i32(l.total), i32(col_lo), i32(col_hi)});
  }
  if (columns != detail::kFloatConvColumns) l.options = " -DCOLS=" + std::to_string(columns);
  l.description =
      std::string(l.kernel) + " 8x" + std::to_string(columns) + " tiles -> " + xnorcl::to_string(g.output);
  return l;
}

namespace {

class ConvolutionOp final : public Op {
 public:
  const char* name() const override { return "Convolution"; }

  std::vector<TensorInfo> infer(const NodeView& v) const override {
    const ConvGeometry g = geometry(v);
    return {{Dims(g.output.begin(), g.output.end()), ElementType::Float32}};
  }

  std::vector<Tensor> reference(const NodeView& v, const std::vector<const Tensor*>& in) const override {
    const ConvGeometry g = geometry(v);
    Tensor out;
    out.dims = Dims(g.output.begin(), g.output.end());
    out.values = reference_convolution(in[0]->values, v.constants[1]->values, g, conv_attributes(v), 1);
    return {out};
  }

  // The epilogue, then a max-pool where fuses_max_pool, which ends the chain.
  bool can_fuse(const NodeView& head, const std::vector<NodeView>& fused,
                const NodeView& next) const override {
    if (!fused.empty() && fused.back().node->op == "MaxPool") return false;
    const Dims output = infer(head)[0].dims;
    if (next.node->op == "MaxPool") return fused_max_pool(next, output).has_value();
    return epilogue_accepts(fused, next, output);
  }

  std::unique_ptr<DeviceStep> plan(const Runtime& rt, const NodeView& v,
                                   const std::vector<NodeView>& fused) const override {
    const ConvGeometry g = geometry(v);
    std::vector<NodeView> epilogue = fused;
    std::optional<FusedMaxPool> pool;
    if (!epilogue.empty() && epilogue.back().node->op == "MaxPool") {
      pool = fused_max_pool(epilogue.back(), Dims(g.output.begin(), g.output.end()));
      epilogue.pop_back();
    }
    return plan_convolution(rt, g, conv_attributes(v), v.constants[1]->values, 1,
                            epilogue_of(epilogue, g.output[1]), pool);
  }

 private:
  // A MaxPool `pool` on the convolution's float output of the given dims, where fuses_max_pool.
  static std::optional<FusedMaxPool> fused_max_pool(const NodeView& pool, const Dims& output) {
    if (pool.inputs.empty() || pool.inputs[0].type != ElementType::Float32) return std::nullopt;
    FusedMaxPool p;
    p.attributes = pool_attributes(pool);
    p.geometry = validate_pool(p.attributes, shape4(output));
    if (!fuses_max_pool(p.attributes, p.geometry)) return std::nullopt;
    return p;
  }

  static ConvGeometry geometry(const NodeView& v) {
    v.check_attributes({"strides", "pads_begin", "pads_end", "dilations", "auto_pad"});
    v.check_input_count(2, 2);
    const TensorInfo& x = v.activation(0, ElementType::Float32, 4);
    const Constant& w = v.constant(1, ElementType::Float32, 4);
    if (x.dims[1] != w.dims[1])
      throw InvalidArgument(v.where() + ": data batch channel count (" + std::to_string(x.dims[1]) +
                            ") does not match filter input channel count (" + std::to_string(w.dims[1]) +
                            ") (input " + to_string(x.dims) + ", weights " + to_string(w.dims) + ")");
    return conv_geometry(v, shape4(x.dims), shape4(w.dims), 1);
  }
};

}  // namespace

const Op& convolution_op() {
  static const ConvolutionOp op;
  return op;
}

}  // namespace xnorcl::ops
