#pragma once
// Test-only helpers of tests/ops_conv: tensor builders and the plain double-precision references.
//
// The references share nothing with include/janus/ops/conv.hpp: Conv is the textbook gather (7 nested loops over
// explicit coordinates, padding tested per position), ConvTranspose the textbook SCATTER (each input element adds
// x * w to y[i s - b + j d]), not the zero-stuffing + flipped-kernel Conv that the op runs. Both work on real values
// (dequantized operands) in double; quantize_ref rounds half to even and saturates, as ONNX QuantizeLinear.
#include <cmath>
#include <cstdint>
#include <optional>
#include <random>
#include <vector>

#include <janus/ops/conv.hpp>

namespace convtest {

using namespace janus;
using namespace janus::ops;

inline Tensor tf(const Shape& s, const std::vector<float>& v) { return Tensor::from<float>(s, v); }

template <class T>
Tensor tq(const Shape& s, const std::vector<int>& v, float scale, std::int32_t zp) {
    std::vector<T> q(v.begin(), v.end());
    return Tensor::from<T>(s, q, numeric::make_quant(dtype_v<T>, scale, zp).value());
}

template <class T>
Tensor tq_axis(const Shape& s, const std::vector<int>& v, std::vector<float> scales, std::vector<std::int32_t> zps,
               int axis) {
    std::vector<T> q(v.begin(), v.end());
    return Tensor::from<T>(s, q, numeric::make_quant_per_axis(dtype_v<T>, std::move(scales), std::move(zps), axis, s).value());
}

inline Tensor bias_i32(const std::vector<std::int32_t>& v) {
    return Tensor::from<std::int32_t>(Shape{static_cast<std::int64_t>(v.size())}, v);
}

inline std::vector<double> reals(const Tensor& t) {
    std::vector<double> r;
    for_each_index(t.shape(), [&](const Dims& i) { r.push_back(real_value_at(t, i)); });
    return r;
}

template <class T>
std::vector<int> ints(const Tensor& t) {
    std::vector<int> r;
    for (auto v : t.to_vector<T>()) r.push_back(static_cast<int>(v));
    return r;
}

/// Resolved 2-D geometry for the references (strides, dilations, pads b/e per axis, group).
struct Geo {
    std::int64_t sh = 1, sw = 1, dh = 1, dw = 1, pt = 0, pl = 0, pb = 0, pr = 0, group = 1;
};

/// Plain Conv2D: y[n, oc, oh, ow] = b[oc] + sum x[n, g Cin_g + ci, oh sh - pt + kh dh, ow sw - pl + kw dw] w[oc, ci, kh, kw].
inline std::vector<double> conv2d_ref(const std::vector<double>& x, const Shape& xs, const std::vector<double>& w,
                                      const Shape& ws, const std::vector<double>& b, const Geo& g, Shape& ys) {
    const std::int64_t N = xs[0], C = xs[1], H = xs[2], W = xs[3], CO = ws[0], CIg = ws[1], KH = ws[2], KW = ws[3];
    const std::int64_t OH = (H + g.pt + g.pb - (KH - 1) * g.dh - 1) / g.sh + 1;
    const std::int64_t OW = (W + g.pl + g.pr - (KW - 1) * g.dw - 1) / g.sw + 1;
    const std::int64_t COg = CO / g.group;
    ys = Shape{N, CO, OH, OW};
    std::vector<double> y;
    for (std::int64_t n = 0; n < N; ++n)
        for (std::int64_t oc = 0; oc < CO; ++oc)
            for (std::int64_t oh = 0; oh < OH; ++oh)
                for (std::int64_t ow = 0; ow < OW; ++ow) {
                    double acc = b.empty() ? 0.0 : b[static_cast<std::size_t>(oc)];
                    for (std::int64_t ci = 0; ci < CIg; ++ci)
                        for (std::int64_t kh = 0; kh < KH; ++kh)
                            for (std::int64_t kw = 0; kw < KW; ++kw) {
                                const std::int64_t ih = oh * g.sh - g.pt + kh * g.dh, iw = ow * g.sw - g.pl + kw * g.dw;
                                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                                const std::int64_t c = (oc / COg) * CIg + ci;
                                acc += x[static_cast<std::size_t>(((n * C + c) * H + ih) * W + iw)] *
                                       w[static_cast<std::size_t>(((oc * CIg + ci) * KH + kh) * KW + kw)];
                            }
                    y.push_back(acc);
                }
    (void)C;
    return y;
}

/// Plain ConvTranspose2D by scatter: W is [C_in, Cout_g, KH, KW]; output extents OH, OW given.
inline std::vector<double> conv_transpose2d_ref(const std::vector<double>& x, const Shape& xs,
                                                const std::vector<double>& w, const Shape& ws,
                                                const std::vector<double>& b, const Geo& g, std::int64_t OH,
                                                std::int64_t OW) {
    const std::int64_t N = xs[0], C = xs[1], H = xs[2], W = xs[3], COg = ws[1], KH = ws[2], KW = ws[3];
    const std::int64_t CIg = C / g.group, CO = COg * g.group;
    std::vector<double> y(static_cast<std::size_t>(N * CO * OH * OW), 0.0);
    for (std::int64_t n = 0; n < N; ++n)
        for (std::int64_t c = 0; c < C; ++c)
            for (std::int64_t ih = 0; ih < H; ++ih)
                for (std::int64_t iw = 0; iw < W; ++iw)
                    for (std::int64_t co = 0; co < COg; ++co)
                        for (std::int64_t kh = 0; kh < KH; ++kh)
                            for (std::int64_t kw = 0; kw < KW; ++kw) {
                                const std::int64_t oh = ih * g.sh - g.pt + kh * g.dh, ow = iw * g.sw - g.pl + kw * g.dw;
                                if (oh < 0 || oh >= OH || ow < 0 || ow >= OW) continue;
                                const std::int64_t oc = (c / CIg) * COg + co;
                                y[static_cast<std::size_t>(((n * CO + oc) * OH + oh) * OW + ow)] +=
                                    x[static_cast<std::size_t>(((n * C + c) * H + ih) * W + iw)] *
                                    w[static_cast<std::size_t>(((c * COg + co) * KH + kh) * KW + kw)];
                            }
    if (!b.empty())
        for (std::size_t i = 0; i < y.size(); ++i)
            y[i] += b[(i / static_cast<std::size_t>(OH * OW)) % static_cast<std::size_t>(CO)];
    return y;
}

/// ONNX QuantizeLinear of a real value: round half to even, + zp, saturate to [lo, hi].
inline int quantize_ref(double v, double scale, int zp, int lo, int hi) {
    const double r = std::nearbyint(v / scale);  // default FE_TONEAREST: half to even
    const double q = r + zp;
    return static_cast<int>(q < lo ? lo : q > hi ? hi : q);
}

}  // namespace convtest
