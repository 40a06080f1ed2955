// The `window` primitive: output extents (floor/ceil, dropped last window), denominators under each policy,
// padding that never wins, dilation, asymmetric pads, int8 and float, range proofs and parameter errors.
// Expected values are hand-computed (and cross-checked with a separate Python script while writing the test).
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include <janus/ops/quant_expr.hpp>
#include <janus/ops/window.hpp>
#include <support/check_rule.hpp>
#include <support/small_windows.hpp>

using namespace janus;
using namespace janus::ops;

namespace {

std::vector<float> iota_f(int n, float sign = 1.0f) {
    std::vector<float> v(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = sign * static_cast<float>(i + 1);
    return v;
}

WindowParams params2(Dims k, Dims s, Dims d, Dims pb, Dims pe, bool ceil = false) {
    return WindowParams{k, s, d, pb, pe, ceil};
}

/// Float max pool: pre identity, init -inf, post identity.
std::vector<float> max_pool(const Tensor& x, const WindowParams& p, bool simd = true) {
    const Shape os = window_output_shape(x.shape(), p).value();
    Tensor y = Tensor::zeros(DType::f32, os);
    auto st = run_window<expr::BinOp::max>(expr::In<0, float>{}, -std::numeric_limits<float>::infinity(),
                                           expr::In<0, float>{}, x, p, DenominatorPolicy::fixed, y,
                                           WindowOptions{simd, -1});
    REQUIRE(st.ok());
    return y.to_vector<float>();
}

/// Float sum pool (post = acc) and the counts it reports.
std::pair<std::vector<float>, std::vector<std::int32_t>> sum_pool(const Tensor& x, const WindowParams& p,
                                                                  DenominatorPolicy d) {
    const Shape os = window_output_shape(x.shape(), p).value();
    Tensor y = Tensor::zeros(DType::f32, os);
    auto st = run_window<expr::BinOp::add>(expr::In<0, float>{}, 0.0f, expr::In<0, float>{}, x, p, d, y);
    REQUIRE(st.ok());
    return {y.to_vector<float>(), st->counts.to_vector<std::int32_t>()};
}

/// Float average: post = acc / count.
std::vector<float> avg_pool(const Tensor& x, const WindowParams& p, DenominatorPolicy d, bool simd = true) {
    using namespace expr;
    const Shape os = window_output_shape(x.shape(), p).value();
    Tensor y = Tensor::zeros(DType::f32, os);
    const auto post = div(In<0, float>{}, to_float(In<1, std::int32_t>{}));
    auto st = run_window<BinOp::add>(In<0, float>{}, 0.0f, post, x, p, d, y, WindowOptions{simd, -1});
    REQUIRE(st.ok());
    return y.to_vector<float>();
}

std::vector<float> divided(const std::vector<float>& s, const std::vector<std::int32_t>& c) {
    std::vector<float> r;
    for (std::size_t i = 0; i < s.size(); ++i) r.push_back(s[i] / static_cast<float>(c[i]));
    return r;
}

}  // namespace

// ---- output shapes ------------------------------------------------------------------------------------------------

TEST_CASE("window output extent: floor and ceil modes, and ceil drops a window that starts in the right padding") {
    // 4x4, k3 s2 p1: floor (6-3)/2+1 = 2, ceil 3 (last window starts at padded 4 < 4+1: kept)
    CHECK(window_output_shape({1, 1, 4, 4}, params2({3, 3}, {2, 2}, {}, {1, 1}, {1, 1})).value() == Shape{1, 1, 2, 2});
    CHECK(window_output_shape({1, 1, 4, 4}, params2({3, 3}, {2, 2}, {}, {1, 1}, {1, 1}, true)).value() ==
          Shape{1, 1, 3, 3});
    // 5, k2 s2 p1/1: ceil((7-2)/2)+1 = 4, but window 3 would start at padded 6 >= 5+1: dropped -> 3 (= floor)
    CHECK(window_output_shape({1, 1, 5, 5}, params2({2, 2}, {2, 2}, {}, {1, 1}, {1, 1}, true)).value() ==
          Shape{1, 1, 3, 3});
    CHECK(window_output_shape({1, 1, 5, 5}, params2({2, 2}, {2, 2}, {}, {1, 1}, {1, 1})).value() == Shape{1, 1, 3, 3});
    // 5, k2 s2 no pad: floor 2, ceil 3 (the overhang window starts at 4 < 5)
    CHECK(window_output_shape({1, 1, 5, 5}, params2({2, 2}, {2, 2}, {}, {}, {}, true)).value() == Shape{1, 1, 3, 3});
    CHECK(window_output_shape({1, 1, 5, 5}, params2({2, 2}, {2, 2}, {}, {}, {})).value() == Shape{1, 1, 2, 2});
    // dilation: effective extent (k-1)d+1 = 3 on a 5-wide axis -> 3
    CHECK(window_output_shape({2, 3, 5, 5}, params2({2, 2}, {}, {2, 2}, {}, {})).value() == Shape{2, 3, 3, 3});
    // asymmetric pads, per axis
    CHECK(window_output_shape({1, 1, 5, 5}, params2({3, 3}, {2, 2}, {}, {1, 0}, {0, 2})).value() == Shape{1, 1, 2, 3});
    // 1 and 3 spatial axes
    CHECK(window_output_shape({1, 2, 7}, params2({3}, {2}, {}, {}, {})).value() == Shape{1, 2, 3});
    CHECK(window_output_shape({1, 1, 4, 4, 4}, params2({2, 2, 2}, {2, 2, 2}, {}, {}, {})).value() ==
          Shape{1, 1, 2, 2, 2});
}

TEST_CASE("window parameters are validated with named rules") {
    const Shape in{1, 1, 4, 4};
    CHECK_RULE(window_output_shape(in, params2({0, 2}, {}, {}, {}, {})), "kernel-positive");
    CHECK_RULE(window_output_shape(in, params2({2, 2}, {1, 0}, {}, {}, {})), "stride-positive");
    CHECK_RULE(window_output_shape(in, params2({2, 2}, {}, {0, 1}, {}, {})), "dilation-positive");
    CHECK_RULE(window_output_shape(in, params2({2, 2}, {}, {}, {-1, 0}, {})), "pads-nonnegative");
    CHECK_RULE(window_output_shape(in, params2({2, 2}, {}, {}, {}, {0, std::int64_t{1} << 40})), "pads-nonnegative");
    CHECK_RULE(window_output_shape(in, params2({2}, {}, {}, {}, {})), "window-param-length");
    CHECK_RULE(window_output_shape(in, params2({2, 2}, {1, 1, 1}, {}, {}, {})), "window-param-length");
    CHECK_RULE(window_output_shape({4, 4}, params2({2, 2}, {}, {}, {}, {})), "window-input-rank");
    CHECK_RULE(window_output_shape(in, params2({5, 2}, {}, {}, {}, {})), "window-fits-padded-input");
    CHECK_RULE(window_output_shape(in, params2({3, 3}, {}, {2, 2}, {}, {})), "window-fits-padded-input");
    CHECK(window_output_shape(in, params2({5, 2}, {}, {}, {1, 0}, {0, 0})).value() == Shape{1, 1, 1, 3});
    CHECK_RULE(window_output_shape({1, 1, 4, 4, 4}, params2({65536, 65536, 2}, {}, {}, {}, {})),
               "kernel-volume-fits-int32");
    const auto e = window_output_shape(in, params2({2, 2}, {1, 0}, {}, {}, {}), "MaxPool");
    CHECK(e.error().input == "MaxPool");
    CHECK(e.error().position == "strides[1]");
}

TEST_CASE("window_params_from_onnx splits pads into all begins then all ends") {
    const std::vector<std::int64_t> k{3, 2}, s{2, 1}, d{}, pads{1, 0, 2, 3};
    const auto p = window_params_from_onnx(k, s, d, pads, true, "AveragePool").value();
    CHECK(p.kernel == Dims{3, 2});
    CHECK(p.strides == Dims{2, 1});
    CHECK(p.dilations == Dims{1, 1});
    CHECK(p.pads_begin == Dims{1, 0});
    CHECK(p.pads_end == Dims{2, 3});
    CHECK(p.ceil_mode);
    const std::vector<std::int64_t> bad_pads{1, 0, 2};
    CHECK_RULE(window_params_from_onnx(k, s, d, bad_pads, false, "AveragePool"), "window-param-length");
}

// ---- max: padding never wins ---------------------------------------------------------------------------------------

TEST_CASE("max window: padding never wins, even when every input is negative") {
    const Tensor x = Tensor::from<float>({1, 1, 4, 4}, iota_f(16, -1.0f));  // -1 .. -16
    const auto p = params2({3, 3}, {1, 1}, {}, {1, 1}, {1, 1});
    const std::vector<float> want{-1, -1, -2, -3, -1, -1, -2, -3, -5, -5, -6, -7, -9, -9, -10, -11};
    CHECK(max_pool(x, p, true) == want);
    CHECK(max_pool(x, p, false) == want);
    // k2 s2 on 1..16 without padding: the plain example
    CHECK(max_pool(Tensor::from<float>({1, 1, 4, 4}, iota_f(16)), params2({2, 2}, {2, 2}, {}, {}, {})) ==
          std::vector<float>{6, 8, 14, 16});
}

TEST_CASE("max window on int8: init is the type's lowest, the output is the input value (no requantization)") {
    using namespace expr;
    const std::vector<std::int8_t> x{-128, -100, -50, -3, 0, 3, 7, 20, 60, 100, 127, -7, -1, 1, 2, 5};
    const Tensor t = Tensor::from<std::int8_t>({1, 1, 4, 4}, x);
    const auto p = params2({2, 2}, {2, 2}, {}, {1, 1}, {1, 1}, true);
    Tensor y = Tensor::zeros(DType::i8, window_output_shape(t.shape(), p).value());
    auto st = run_window<BinOp::max>(widen(In<0, std::int8_t>{}), -128, sat<std::int8_t>(In<0, std::int32_t>{}), t,
                                     p, DenominatorPolicy::count_valid, y);
    REQUIRE(st.ok());
    CHECK(y.to_vector<std::int8_t>() == std::vector<std::int8_t>{-128, -50, -3, 60, 127, 20, -1, 2, 5});
    // the corner window holds only x[0][0] = -128: a zero pad value would have won
    CHECK(st->counts.to_vector<std::int32_t>() == std::vector<std::int32_t>{1, 2, 1, 2, 4, 2, 1, 2, 1});
}

// ---- averages: the denominator policies ----------------------------------------------------------------------------

TEST_CASE("average window k3 s1 p1: count_include_pad divides by 9, count_valid by the input positions") {
    const Tensor x = Tensor::from<float>({1, 1, 4, 4}, iota_f(16));
    const auto p = params2({3, 3}, {1, 1}, {}, {1, 1}, {1, 1});
    const std::vector<float> sums{14, 24, 30, 22, 33, 54, 63, 45, 57, 90, 99, 69, 46, 72, 78, 54};
    const auto [s_inc, c_inc] = sum_pool(x, p, DenominatorPolicy::count_include_pad);
    CHECK(s_inc == sums);
    CHECK(c_inc == std::vector<std::int32_t>(16, 9));
    const auto [s_val, c_val] = sum_pool(x, p, DenominatorPolicy::count_valid);
    CHECK(s_val == sums);
    const std::vector<std::int32_t> valid{4, 6, 6, 4, 6, 9, 9, 6, 6, 9, 9, 6, 4, 6, 6, 4};
    CHECK(c_val == valid);
    CHECK(avg_pool(x, p, DenominatorPolicy::count_include_pad) == divided(sums, std::vector<std::int32_t>(16, 9)));
    CHECK(avg_pool(x, p, DenominatorPolicy::count_valid) == divided(sums, valid));
    CHECK(avg_pool(x, p, DenominatorPolicy::count_valid, false) == divided(sums, valid));
    CHECK(avg_pool(x, p, DenominatorPolicy::fixed) == divided(sums, std::vector<std::int32_t>(16, 9)));
}

TEST_CASE("ceil-mode overhang is counted by neither policy; padding is counted by count_include_pad only") {
    // 4x4, k3 s2 p1 ceil: windows over padded coordinates [-1,1], [1,3], [3,5]; 4 is padding, 5 is overhang.
    // per axis: include_pad [3, 3, 2], valid [2, 3, 1], fixed [3, 3, 3].
    const Tensor x = Tensor::from<float>({1, 1, 4, 4}, iota_f(16));
    const auto p = params2({3, 3}, {2, 2}, {}, {1, 1}, {1, 1}, true);
    const std::vector<float> sums{14, 30, 12, 57, 99, 36, 27, 45, 16};
    const std::vector<std::int32_t> inc{9, 9, 6, 9, 9, 6, 6, 6, 4}, val{4, 6, 2, 6, 9, 3, 2, 3, 1};
    const auto [s1, c1] = sum_pool(x, p, DenominatorPolicy::count_include_pad);
    CHECK(s1 == sums);
    CHECK(c1 == inc);
    CHECK(sum_pool(x, p, DenominatorPolicy::count_valid).second == val);
    CHECK(sum_pool(x, p, DenominatorPolicy::fixed).second == std::vector<std::int32_t>(9, 9));
    CHECK(avg_pool(x, p, DenominatorPolicy::count_include_pad) == divided(sums, inc));  // e.g. corner 16 / 4 = 4
    CHECK(avg_pool(x, p, DenominatorPolicy::count_include_pad)[8] == 4.0f);
    CHECK(avg_pool(x, p, DenominatorPolicy::count_valid)[8] == 16.0f);
    CHECK(avg_pool(x, p, DenominatorPolicy::fixed)[8] == 16.0f / 9.0f);
    // window_counts is the same function, callable before running
    CHECK(window_counts(x.shape(), p, DenominatorPolicy::count_include_pad).value().to_vector<std::int32_t>() == inc);
    CHECK(window_counts(x.shape(), p, DenominatorPolicy::count_include_pad).value().shape() == Shape{1, 1, 3, 3});
}

TEST_CASE("dilated window reads every d-th position") {
    const Tensor x = Tensor::from<float>({1, 1, 5, 5}, iota_f(25));
    const auto p = params2({2, 2}, {1, 1}, {2, 2}, {}, {});
    CHECK(max_pool(x, p) == std::vector<float>{13, 14, 15, 18, 19, 20, 23, 24, 25});
    const auto [s, c] = sum_pool(x, p, DenominatorPolicy::count_valid);
    // out[i][j] = x[i][j] + x[i][j+2] + x[i+2][j] + x[i+2][j+2]
    CHECK(s == std::vector<float>{28, 32, 36, 48, 52, 56, 68, 72, 76});
    CHECK(c == std::vector<std::int32_t>(9, 4));
    // dilation stepping over a short input: k2 d3, pads 1/1 on a 2-wide axis read coordinates -1 and 2, both
    // padding: an empty window (acc = init, count_valid 0; post decides)
    const Tensor small = Tensor::from<float>({1, 1, 1, 2}, {5, 6});
    const auto pe = params2({1, 2}, {1, 1}, {1, 3}, {0, 1}, {0, 1});
    const auto [se, ce] = sum_pool(small, pe, DenominatorPolicy::count_valid);
    CHECK(se == std::vector<float>{0});
    CHECK(ce == std::vector<std::int32_t>{0});
    CHECK(sum_pool(small, pe, DenominatorPolicy::count_include_pad).second == std::vector<std::int32_t>{2});
}

TEST_CASE("asymmetric pads apply per side and per axis") {
    // 5x5, k3 s2, pads begin (1, 0), end (0, 2): rows read [-1,1], [1,3]; columns [0,2], [2,4], [4,6] (5, 6 padding)
    const Tensor x = Tensor::from<float>({1, 1, 5, 5}, iota_f(25));
    const auto p = params2({3, 3}, {2, 2}, {}, {1, 0}, {0, 2});
    const auto [s, inc] = sum_pool(x, p, DenominatorPolicy::count_include_pad);
    CHECK(s == std::vector<float>{27, 39, 15, 108, 126, 45});
    CHECK(inc == std::vector<std::int32_t>(6, 9));
    CHECK(sum_pool(x, p, DenominatorPolicy::count_valid).second == std::vector<std::int32_t>{6, 6, 2, 9, 9, 3});
    CHECK(max_pool(x, p) == std::vector<float>{8, 10, 10, 18, 20, 20});
}

TEST_CASE("quantized int8 average: pre subtracts the zero point, post divides by count_valid and re-adds it") {
    using namespace expr;
    const std::vector<std::int8_t> x{-128, -100, -50, -3, 0, 3, 7, 20, 60, 100, 127, -7, -1, 1, 2, 5};
    const Tensor t = Tensor::from<std::int8_t>({1, 1, 4, 4}, x);
    const std::int32_t zp = -3;
    const auto p = params2({2, 2}, {2, 2}, {}, {1, 1}, {1, 1}, true);
    const auto pre = sub(widen(In<0, std::int8_t>{}), cst(zp));
    // the mean (same scale in and out) quantized by the one definition: round half to even, + zp, saturate
    const auto mean = div(to_float(In<0, std::int32_t>{}), to_float(In<1, std::int32_t>{}));
    const auto post = quantize_expr<std::int8_t>(mean, cst(zp), cstf(1.0f));
    for (const bool simd : {true, false}) {
        Tensor y = Tensor::zeros(DType::i8, window_output_shape(t.shape(), p).value());
        auto st = run_window<BinOp::add>(pre, 0, post, t, p, DenominatorPolicy::count_valid, y, WindowOptions{simd, -1});
        REQUIRE(st.ok());
        // sums of (x - zp): [-125, -144, 0, 66, 249, 19, 2, 9, 8] over counts [1, 2, 1, 2, 4, 2, 1, 2, 1]
        // means -125, -72, 0, 33, 62.25, 9.5 (-> 10), 2, 4.5 (-> 4), 8
        CHECK(y.to_vector<std::int8_t>() == std::vector<std::int8_t>{-128, -75, -3, 30, 59, 7, -1, 1, 5});
        CHECK(st->combined == 16);
        CHECK(st->kernel_volume == 4);
    }
}

TEST_CASE("window runs every (n, c) plane independently; per-channel post parameters via channel_axis") {
    using namespace expr;
    std::vector<float> v(2 * 3 * 4 * 4);
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>((i * 7) % 13) - 6.0f;
    const Tensor x = Tensor::from<float>({2, 3, 4, 4}, v);
    const auto p = params2({3, 3}, {2, 2}, {}, {1, 1}, {1, 1}, true);
    const std::vector<float> gain{1.0f, 10.0f, 100.0f};
    Tensor y = Tensor::zeros(DType::f32, window_output_shape(x.shape(), p).value());
    auto st = run_window<BinOp::max>(In<0, float>{}, -std::numeric_limits<float>::infinity(),
                                     mul(In<0, float>{}, chan<float>(std::span<const float>(gain))), x, p,
                                     DenominatorPolicy::fixed, y, WindowOptions{true, 1});
    REQUIRE(st.ok());
    for (std::int64_t n = 0; n < 2; ++n)
        for (std::int64_t c = 0; c < 3; ++c) {
            const std::int64_t off = (n * 3 + c) * 16;
            const Tensor plane = Tensor::from<float>(
                {1, 1, 4, 4}, std::vector<float>(v.begin() + off, v.begin() + off + 16));
            const auto want = max_pool(plane, p);
            for (std::int64_t i = 0; i < 9; ++i)
                REQUIRE(y.at<float>({n, c, i / 3, i % 3}) == want[static_cast<std::size_t>(i)] * gain[static_cast<std::size_t>(c)]);
        }
}

TEST_CASE("window reads any input layout (a transposed view gives the transposed answer)") {
    const Tensor x = Tensor::from<float>({1, 1, 4, 4}, iota_f(16));
    const Layout t = transpose(x.layout, Dims{0, 1, 3, 2}).value();
    const auto p = params2({2, 2}, {2, 2}, {}, {}, {});
    CHECK(max_pool(x.view(t), p) == std::vector<float>{6, 14, 8, 16});
}

TEST_CASE("window refuses an integer sum that could leave int32, and a wrong output shape") {
    using namespace expr;
    const Tensor x = Tensor::from<std::int32_t>({1, 1, 2, 2}, {1, 2, 3, 4});
    const auto p = params2({2, 2}, {}, {}, {}, {});
    Tensor y = Tensor::zeros(DType::i32, {1, 1, 1, 1});
    CHECK_RULE(run_window<BinOp::add>(In<0, std::int32_t>{}, 0, In<0, std::int32_t>{}, x, p,
                                      DenominatorPolicy::fixed, y),
               "accumulator-fits-int32");
    // max of the same is fine (no growth)
    CHECK(run_window<BinOp::max>(In<0, std::int32_t>{}, std::numeric_limits<std::int32_t>::min(), In<0, std::int32_t>{},
                                 x, p, DenominatorPolicy::fixed, y)
              .ok());
    CHECK(y.to_vector<std::int32_t>() == std::vector<std::int32_t>{4});
    Tensor wrong = Tensor::zeros(DType::i32, {1, 1, 2, 2});
    CHECK_RULE(run_window<BinOp::max>(In<0, std::int32_t>{}, 0, In<0, std::int32_t>{}, x, p, DenominatorPolicy::fixed,
                                      wrong),
               "output-shape");
    // int8 sums over a 3x3 window are proved: 9 * 255 fits
    const Tensor q = Tensor::from<std::int8_t>({1, 1, 3, 3}, std::vector<std::int8_t>(9, 127));
    Tensor s = Tensor::zeros(DType::i32, {1, 1, 1, 1});
    CHECK(run_window<BinOp::add>(sub(widen(In<0, std::int8_t>{}), cst(-128)), 0, In<0, std::int32_t>{}, q,
                                 params2({3, 3}, {}, {}, {}, {}), DenominatorPolicy::fixed, s)
              .ok());
    CHECK(s.to_vector<std::int32_t>() == std::vector<std::int32_t>{9 * 255});
}

// window_count_values (what a plan needs: the denominators that occur) visits only the windows the policy's bounds
// clip, never every output position (issue 26: a 16384 x 16384 AveragePool made compile allocate 2 GB). Against
// the plain definition, a count of kernel positions per window, on every small 1-D case and on products of them.
TEST_CASE("window_count_values equals the set of every window's count, and does not visit every window") {
    const DenominatorPolicy policies[] = {DenominatorPolicy::count_include_pad, DenominatorPolicy::count_valid,
                                          DenominatorPolicy::fixed};
    // the plain count of window o along one axis: kernel positions inside [lo, hi)
    const auto plain_counts = [](std::int64_t L, const WindowParams& w, std::int64_t N, DenominatorPolicy policy) {
        std::vector<std::int64_t> c;
        for (std::int64_t o = 0; o < N; ++o) {
            std::int64_t n = 0;
            for (std::int64_t j = 0; j < w.kernel[0]; ++j) {
                const std::int64_t x = o * w.strides[0] - w.pads_begin[0] + j * w.dilations[0];
                const bool valid = x >= 0 && x < L, padded = x >= -w.pads_begin[0] && x < L + w.pads_end[0];
                const bool in = policy == DenominatorPolicy::fixed ||
                                (policy == DenominatorPolicy::count_valid ? valid : padded);
                n += in ? 1 : 0;
            }
            c.push_back(n);
        }
        return c;
    };
    const auto distinct = [](std::vector<std::int64_t> v) {
        std::sort(v.begin(), v.end());
        v.erase(std::unique(v.begin(), v.end()), v.end());
        return v;
    };
    struct Axis { std::int64_t L; WindowParams w; std::vector<std::int64_t> counts; };
    std::vector<Axis> axes[3];  // per policy: every 7th 1-D case, for the 2-D products
    int cases = 0, seen = 0;
    for (int pi = 0; pi < 3; ++pi) {
        CAPTURE(pi);
        cases += janus_test::for_each_small_window(
            {.L_min = 1, .d_max = 3, .pad_max = 5, .pad_end_step = 2},
            [&](std::int64_t L, const WindowParams& w, const Shape& out) {
                const auto want = plain_counts(L, w, out[2], policies[pi]);
                const auto got = window_count_values(Shape{1, 1, L}, w, policies[pi]);
                REQUIRE(got.ok());
                REQUIRE(*got == distinct(want));
                if (seen++ % 7 == 0) axes[pi].push_back({L, w, want});
            });
    }
    CHECK(cases > 15000);
    // 2-D: the window is a box, its count the product of the two axes' counts
    int products = 0;
    for (int pi = 0; pi < 3; ++pi)
        for (std::size_t i = 0; i < axes[pi].size(); i += 5)
            for (std::size_t j = 1; j < axes[pi].size(); j += 11) {
                const Axis &a = axes[pi][i], &b = axes[pi][j];
                const WindowParams w = params2({a.w.kernel[0], b.w.kernel[0]}, {a.w.strides[0], b.w.strides[0]},
                                               {a.w.dilations[0], b.w.dilations[0]},
                                               {a.w.pads_begin[0], b.w.pads_begin[0]},
                                               {a.w.pads_end[0], b.w.pads_end[0]}, a.w.ceil_mode);
                if (a.w.ceil_mode != b.w.ceil_mode) continue;
                std::vector<std::int64_t> want;
                for (auto x : a.counts)
                    for (auto y : b.counts) want.push_back(x * y);
                const auto got = window_count_values(Shape{1, 1, a.L, b.L}, w, policies[pi]);
                REQUIRE(got.ok());
                CHECK(*got == distinct(want));
                ++products;
            }
    CHECK(products > 1000);
    // a 2^20 x 2^20 output: a 3x3 window with padding 1 has counts 4, 6, 9 (valid) and only 9 with the padding
    const std::int64_t big = std::int64_t{1} << 20;
    const auto p = params2({3, 3}, {}, {}, {1, 1}, {1, 1});
    CHECK(window_count_values(Shape{1, 1, big, big}, p, DenominatorPolicy::count_valid).value() ==
          std::vector<std::int64_t>{4, 6, 9});
    CHECK(window_count_values(Shape{1, 1, big, big}, p, DenominatorPolicy::count_include_pad).value() ==
          std::vector<std::int64_t>{9});
    // rule window-scan-limit: 2^17 clipped windows along one axis (pads as large as the kernel), or more distinct
    // products than that
    const std::int64_t k17 = std::int64_t{1} << 17;
    CHECK_RULE(window_count_values(Shape{1, 1, k17}, params2({k17}, {}, {}, {k17 - 1}, {0}), DenominatorPolicy::count_valid),
               "window-scan-limit");
    CHECK(window_count_values(Shape{1, 1, 512}, params2({512}, {}, {}, {511}, {0}), DenominatorPolicy::count_valid)
              .value()
              .size() == 512);
    CHECK_RULE(window_count_values(Shape{1, 1, 512, 512}, params2({512, 512}, {}, {}, {511, 511}, {0, 0}),
                                   DenominatorPolicy::count_valid),
               "window-scan-limit");
}
