// Randomized Conv and ConvTranspose against the plain double references of reference.hpp ("dequantize, float
// convolution in double written as plain loops, quantize"), within the documented bounds:
//   quantized: at most 1 LSB (proof in docs/numerics.md "Convolution": |rq - acc M| <= 3/4, M's relative error
//              <= 2^-31, round half to even of the exact value is within 1/2: two integers within 1.25 + tiny);
//   float32:   |y - exact| <= (K + 2) * 2^-24 * sum |terms| (K terms plus the bias, one rounding each).
// and scalar (OpContext{.simd = false}) vs SIMD bit identity on every case. Set JANUS_CONV_STATS=1 to print the
// observed maxima (recorded in docs/numerics.md).
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "reference.hpp"

using namespace convtest;

namespace {

struct Stats {
    int cases = 0, outputs = 0, off_by_one = 0, max_diff = 0, unsaturated = 0;
    double float_max_ratio = 0.0;  // observed |error| / bound (float cases)
    void print(const char* name) const {
        if (!std::getenv("JANUS_CONV_STATS")) return;
        std::printf("%s: %d cases, %d outputs (%d unsaturated), max |diff| %d LSB, %d outputs off by 1; float: max "
                    "error / bound = %.3g\n",
                    name, cases, outputs, unsaturated, max_diff, off_by_one, float_max_ratio);
    }
};

template <class T>
int qlo() { return std::is_same_v<T, std::int8_t> ? -128 : 0; }
template <class T>
int qhi() { return std::is_same_v<T, std::int8_t> ? 127 : 255; }

/// Random quantized operands. kind bits: 1 = uint8 x, 2 = uint8 w, 4 = uint8 y, 8 = per-channel w, 16 = bias.
struct QOperands {
    Tensor x, w, b;
    bool has_bias = false;
    TensorType out;
    std::vector<float> s_w;  // per weight-quant channel
};

template <class Tx, class Tw>
void fill_q(std::mt19937& rng, QOperands& o, const Shape& xs, const Shape& ws, int waxis, bool per_channel) {
    std::uniform_real_distribution<float> us(0.005f, 0.05f);
    std::vector<int> xv(static_cast<std::size_t>(element_count(xs))), wv(static_cast<std::size_t>(element_count(ws)));
    std::uniform_int_distribution<int> dx(qlo<Tx>(), qhi<Tx>()), dw(qlo<Tw>(), qhi<Tw>());
    for (auto& v : xv) v = dx(rng);
    for (auto& v : wv) v = dw(rng);
    const int zx = std::uniform_int_distribution<int>(qlo<Tx>() / 4 + qhi<Tx>() / 4, qhi<Tx>() / 2 + 20)(rng);
    o.x = tq<Tx>(xs, xv, us(rng), zx);
    const std::int64_t ch = ws[waxis];
    if (per_channel) {
        std::vector<float> sc;
        std::vector<std::int32_t> zp;
        for (std::int64_t c = 0; c < ch; ++c) {
            sc.push_back(us(rng));
            zp.push_back(std::uniform_int_distribution<int>(qlo<Tw>() / 8 + qhi<Tw>() / 2 - 10,
                                                            qlo<Tw>() / 8 + qhi<Tw>() / 2 + 10)(rng));
        }
        o.s_w = sc;
        o.w = tq_axis<Tw>(ws, wv, sc, zp, waxis);
    } else {
        const float s = us(rng);
        o.s_w.assign(static_cast<std::size_t>(ch), s);
        o.w = tq<Tw>(ws, wv, s, std::is_same_v<Tw, std::int8_t> ? 0 : 128);
    }
}

QOperands random_q(std::mt19937& rng, int kind, const Shape& xs, const Shape& ws, int waxis, std::int64_t cout) {
    QOperands o;
    const bool pc = (kind & 8) != 0;
    if (kind & 1) {
        if (kind & 2) fill_q<std::uint8_t, std::uint8_t>(rng, o, xs, ws, waxis, pc);
        else fill_q<std::uint8_t, std::int8_t>(rng, o, xs, ws, waxis, pc);
    } else {
        if (kind & 2) fill_q<std::int8_t, std::uint8_t>(rng, o, xs, ws, waxis, pc);
        else fill_q<std::int8_t, std::int8_t>(rng, o, xs, ws, waxis, pc);
    }
    o.has_bias = (kind & 16) != 0;
    if (o.has_bias) {
        std::vector<std::int32_t> b;
        for (std::int64_t c = 0; c < cout; ++c) b.push_back(std::uniform_int_distribution<int>(-20000, 20000)(rng));
        o.b = bias_i32(b);
    }
    // Output scale: about 1/60 of the accumulator's typical magnitude per LSB, so most outputs are not saturated.
    double mean_sw = 0;
    for (auto s : o.s_w) mean_sw += s;
    mean_sw /= static_cast<double>(o.s_w.size());
    const double terms = static_cast<double>(waxis == 0 ? element_count(ws) / ws[0] : element_count(ws) / ws[1]);
    const double sy = o.x.quant->scale() * mean_sw * std::sqrt(terms) * 10000.0 / 60.0 *
                      std::uniform_real_distribution<double>(0.15, 2.0)(rng);
    const DType dy = (kind & 4) ? DType::u8 : DType::i8;
    o.out = TensorType{dy, {}, numeric::make_quant(dy, static_cast<float>(sy), dy == DType::u8 ? 128 : 0).value()};
    return o;
}

/// Compare a quantized result with the reference real values; accumulate statistics.
void compare_q(const Tensor& y, const std::vector<double>& ref, Stats& st) {
    const auto& q = *y.quant;
    const int lo = y.dtype == DType::u8 ? 0 : -128, hi = y.dtype == DType::u8 ? 255 : 127;
    const std::vector<int> got = y.dtype == DType::u8 ? ints<std::uint8_t>(y) : ints<std::int8_t>(y);
    REQUIRE(got.size() == ref.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
        const int want = quantize_ref(ref[i], q.scale(), q.zero_point(), lo, hi);
        const int d = std::abs(got[i] - want);
        st.max_diff = std::max(st.max_diff, d);
        st.off_by_one += d == 1;
        st.unsaturated += want != lo && want != hi;
        ++st.outputs;
        if (d > 1) FAIL_CHECK("output " << i << ": got " << got[i] << ", reference " << want << " (real " << ref[i] << ")");
    }
}

/// call<Op> when the output storage type is infer's proposal (the input's); otherwise the op's run directly, which
/// accepts int8/uint8 outputs of either type (QLinearConv's y_zero_point type is independent of x's).
template <class O>
Result<Tensor> run_q(const std::vector<Tensor>& in, const typename O::Attrs& a, const TensorType& out,
                     const OpContext& ctx = {}) {
    if (out.dtype == in[0].dtype) return call<O>(std::span<const Tensor>(in), a, out, ctx);
    return O::run(in, a, out, ctx);
}

/// Scalar and SIMD paths must agree bit for bit.
void check_simd_identity(const Tensor& a, const Tensor& b) {
    REQUIRE(a.dtype == b.dtype);
    REQUIRE(a.shape() == b.shape());
    const auto n = static_cast<std::size_t>(a.elements()) * dtype_size(a.dtype);
    CHECK(std::memcmp(a.data(), b.data(), n) == 0);
}

std::vector<double> bias_reals(const QOperands& o, std::int64_t cout, std::int64_t cout_g, bool transpose) {
    std::vector<double> b;
    if (!o.has_bias) return b;
    const auto bv = o.b.to_vector<std::int32_t>();
    for (std::int64_t oc = 0; oc < cout; ++oc)
        b.push_back(static_cast<double>(bv[static_cast<std::size_t>(oc)]) * static_cast<double>(o.x.quant->scale()) *
                    static_cast<double>(o.s_w[static_cast<std::size_t>(transpose ? oc % cout_g : oc)]));
    return b;
}

std::vector<float> to_floats(const std::vector<double>& v) { return std::vector<float>(v.begin(), v.end()); }

std::vector<double> absv(std::vector<double> v) {
    for (auto& x : v) x = std::abs(x);
    return v;
}

}  // namespace

TEST_CASE("Conv random: quantized within 1 LSB of dequantize-double-quantize, float within the rounding bound, "
          "scalar == SIMD") {
    std::mt19937 rng(2024);
    auto U = [&](int a, int b) { return std::uniform_int_distribution<int>(a, b)(rng); };
    Stats st;
    for (int it = 0; it < 160; ++it) {
        const std::int64_t G = U(1, 3), cin_g = U(1, 3), cout_g = U(1, 3), N = U(1, 2);
        const std::int64_t H = U(1, 7), W = U(1, 7), KH = U(1, 3), KW = U(1, 3);
        Geo g;
        g.group = G;
        g.sh = U(1, 3), g.sw = U(1, 3), g.dh = U(1, 2), g.dw = U(1, 2);
        g.pt = U(0, 2), g.pb = U(0, 2), g.pl = U(0, 2), g.pr = U(0, 2);
        if (H + g.pt + g.pb < (KH - 1) * g.dh + 1 || W + g.pl + g.pr < (KW - 1) * g.dw + 1) continue;
        ConvAttrs a;
        a.group = G;
        a.strides = {g.sh, g.sw};
        a.dilations = {g.dh, g.dw};
        a.pads = {g.pt, g.pl, g.pb, g.pr};
        const Shape xs{N, G * cin_g, H, W}, ws{G * cout_g, cin_g, KH, KW};
        const int kind = U(0, 31);
        QOperands o = random_q(rng, kind, xs, ws, 0, G * cout_g);
        std::vector<Tensor> in{o.x, o.w};
        if (o.has_bias) in.push_back(o.b);
        Shape ys;
        const auto ref = conv2d_ref(reals(o.x), xs, reals(o.w), ws, bias_reals(o, G * cout_g, 0, false), g, ys);
        o.out.shape = ys;
        auto y = run_q<Conv>(in, a, o.out);
        if (!y.ok()) FAIL(y.error().message());
        auto ys_scalar = run_q<Conv>(in, a, o.out, OpContext{.simd = false});
        REQUIRE(ys_scalar.ok());
        check_simd_identity(*y, *ys_scalar);
        compare_q(*y, ref, st);
        ++st.cases;

        // float32 on the dequantized values
        const Tensor xf = tf(xs, to_floats(reals(o.x)));
        const Tensor wf = tf(ws, to_floats(reals(o.w)));
        const auto br = bias_reals(o, G * cout_g, 0, false);
        std::vector<Tensor> inf{xf, wf};
        if (o.has_bias) inf.push_back(tf({G * cout_g}, std::vector<float>(br.begin(), br.end())));
        auto yf = call<Conv>(std::span<const Tensor>(inf), a);
        REQUIRE(yf.ok());
        auto yf_scalar = call<Conv>(std::span<const Tensor>(inf), a, std::nullopt, OpContext{.simd = false});
        REQUIRE(yf_scalar.ok());
        check_simd_identity(*yf, *yf_scalar);
        Shape ys2;
        const auto exact = conv2d_ref(reals(xf), xs, reals(wf), ws, br, g, ys2);
        const auto mag = conv2d_ref(absv(reals(xf)), xs, absv(reals(wf)), ws, absv(br), g, ys2);
        const auto got = yf->to_vector<float>();
        const double terms = static_cast<double>(cin_g * KH * KW);
        for (std::size_t i = 0; i < got.size(); ++i) {
            const double bound = (terms + 2.0) * 0x1p-24 * mag[i];
            const double err = std::abs(static_cast<double>(got[i]) - exact[i]);
            if (bound > 0) st.float_max_ratio = std::max(st.float_max_ratio, err / bound);
            CHECK(err <= bound);
        }
    }
    CHECK(st.cases >= 100);
    CHECK(st.unsaturated * 2 > st.outputs);  // the comparison is informative: most outputs are not clamped
    st.print("Conv");
}

TEST_CASE("ConvTranspose random: quantized within 1 LSB of the scatter reference, float within the bound, "
          "scalar == SIMD") {
    std::mt19937 rng(77);
    auto U = [&](int a, int b) { return std::uniform_int_distribution<int>(a, b)(rng); };
    Stats st;
    for (int it = 0; it < 160; ++it) {
        const std::int64_t G = U(1, 3), cin_g = U(1, 3), cout_g = U(1, 3), N = U(1, 2);
        const std::int64_t H = U(1, 5), W = U(1, 5), KH = U(1, 3), KW = U(1, 3);
        Geo g;
        g.group = G;
        g.sh = U(1, 3), g.sw = U(1, 3), g.dh = U(1, 2), g.dw = U(1, 2);
        ConvTransposeAttrs a;
        a.group = G;
        a.strides = {g.sh, g.sw};
        a.dilations = {g.dh, g.dw};
        const std::int64_t oph = U(0, static_cast<int>(std::max(g.sh, g.dh)) - 1);
        const std::int64_t opw = U(0, static_cast<int>(std::max(g.sw, g.dw)) - 1);
        a.output_padding = {oph, opw};
        const std::int64_t full_h = g.sh * (H - 1) + oph + (KH - 1) * g.dh + 1;
        const std::int64_t full_w = g.sw * (W - 1) + opw + (KW - 1) * g.dw + 1;
        std::int64_t OH = 0, OW = 0;
        const int mode = U(0, 2);  // 0: pads, 1: output_shape (NOTSET), 2: auto_pad SAME_UPPER / SAME_LOWER
        if (mode == 0) {
            g.pt = U(0, 2), g.pb = U(0, 2), g.pl = U(0, 2), g.pr = U(0, 2);
            if (full_h - g.pt - g.pb < 1 || full_w - g.pl - g.pr < 1) continue;
            a.pads = {g.pt, g.pl, g.pb, g.pr};
            OH = full_h - g.pt - g.pb;
            OW = full_w - g.pl - g.pr;
        } else {
            const bool upper = mode == 2 && U(0, 1) == 1;
            if (mode == 1) {
                OH = std::max<std::int64_t>(1, full_h - U(0, 3));
                OW = std::max<std::int64_t>(1, full_w - U(0, 3));
                a.output_shape = {OH, OW};
            } else {
                OH = H * g.sh, OW = W * g.sw;
                if (OH > full_h || OW > full_w) continue;
                a.auto_pad = upper ? "SAME_UPPER" : "SAME_LOWER";
            }
            const std::int64_t th = full_h - OH, tw = full_w - OW;  // the ONNX spec formula
            g.pt = upper ? th / 2 : th - th / 2;
            g.pl = upper ? tw / 2 : tw - tw / 2;
        }
        const Shape xs{N, G * cin_g, H, W}, ws{G * cin_g, cout_g, KH, KW};
        const int kind = U(0, 31);
        QOperands o = random_q(rng, kind, xs, ws, 1, G * cout_g);
        std::vector<Tensor> in{o.x, o.w};
        if (o.has_bias) in.push_back(o.b);
        const auto br = bias_reals(o, G * cout_g, cout_g, true);
        const auto ref = conv_transpose2d_ref(reals(o.x), xs, reals(o.w), ws, br, g, OH, OW);
        o.out.shape = Shape{N, G * cout_g, OH, OW};
        auto y = run_q<ConvTranspose>(in, a, o.out);
        if (!y.ok()) FAIL(y.error().message());
        auto y_scalar = run_q<ConvTranspose>(in, a, o.out, OpContext{.simd = false});
        REQUIRE(y_scalar.ok());
        check_simd_identity(*y, *y_scalar);
        compare_q(*y, ref, st);
        ++st.cases;

        const Tensor xf = tf(xs, to_floats(reals(o.x)));
        const Tensor wf = tf(ws, to_floats(reals(o.w)));
        std::vector<Tensor> inf{xf, wf};
        if (o.has_bias) inf.push_back(tf({G * cout_g}, std::vector<float>(br.begin(), br.end())));
        auto yf = call<ConvTranspose>(std::span<const Tensor>(inf), a);
        REQUIRE(yf.ok());
        auto yf_scalar = call<ConvTranspose>(std::span<const Tensor>(inf), a, std::nullopt, OpContext{.simd = false});
        REQUIRE(yf_scalar.ok());
        check_simd_identity(*yf, *yf_scalar);
        const auto exact = conv_transpose2d_ref(reals(xf), xs, reals(wf), ws, br, g, OH, OW);
        const auto mag = conv_transpose2d_ref(absv(reals(xf)), xs, absv(reals(wf)), ws, absv(br), g, OH, OW);
        const auto got = yf->to_vector<float>();
        REQUIRE(got.size() == exact.size());
        const double terms = static_cast<double>(cin_g * KH * KW);
        for (std::size_t i = 0; i < got.size(); ++i) {
            const double bound = (terms + 2.0) * 0x1p-24 * mag[i];
            const double err = std::abs(static_cast<double>(got[i]) - exact[i]);
            if (bound > 0) st.float_max_ratio = std::max(st.float_max_ratio, err / bound);
            CHECK(err <= bound);
        }
    }
    CHECK(st.cases >= 100);
    CHECK(st.unsaturated * 2 > st.outputs);
    st.print("ConvTranspose");
}
