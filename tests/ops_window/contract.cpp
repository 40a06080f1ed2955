// The `contract` primitive: convolution (groups, depthwise, stride, dilation, asymmetric pads, zero points, bias)
// and batched matmul, float and int8; the accumulator headroom proof; shape and parameter errors.
// Hand-computed expectations (cross-checked with a separate Python script while writing the test), plus a naive
// reference (explicitly zero-padded real values, 7 plain loops) for random cases.
#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <random>
#include <span>
#include <vector>

#include <janus/ops/contract.hpp>
#include <support/check_rule.hpp>

using namespace janus;
using namespace janus::ops;

namespace {

using expr::In;

ConvParams conv_params(Dims s, Dims d, Dims pb, Dims pe, std::int64_t groups = 1) {
    ConvParams p;
    p.window = WindowParams{{}, s, d, pb, pe, false};
    p.groups = groups;
    return p;
}

/// Float convolution through the primitive (identity pre expressions).
Tensor conv_f(const Tensor& x, const Tensor& w, const Tensor* bias, const ConvParams& p) {
    auto r = run_conv_contract(In<0, float>{}, In<0, float>{}, x, w, bias, p);
    REQUIRE(r.ok());
    return r->acc;
}

/// int8 convolution with a per-tensor input zero point and per-output-channel weight zero points.
Result<Contracted> conv_q(const Tensor& x, std::int32_t zp_x, const Tensor& w, std::span<const std::int32_t> zp_w,
                          const Tensor* bias, const ConvParams& p, bool simd = true) {
    using namespace expr;
    return run_conv_contract(sub(widen(In<0, std::int8_t>{}), cst(zp_x)),
                             sub(widen(In<0, std::int8_t>{}), chan<std::int32_t>(zp_w)), x, w, bias, p,
                             ContractOptions{simd});
}

/// Naive reference: real-valued operands (q - zp) in double, the input zero-padded into a bigger buffer first,
/// then the formula with plain loops. Shares nothing with the primitive but the geometry's definition.
std::vector<double> naive_conv(const std::vector<double>& x, const Shape& xs, const std::vector<double>& w,
                               const Shape& ws, const std::vector<double>& bias, const ConvParams& p) {
    const std::int64_t N = xs[0], C = xs[1], H = xs[2], W = xs[3], CO = ws[0], CIg = ws[1], KH = ws[2], KW = ws[3];
    const auto s = p.window.strides, d = p.window.dilations, pb = p.window.pads_begin, pe = p.window.pads_end;
    const std::int64_t HP = H + pb[0] + pe[0], WP = W + pb[1] + pe[1];
    std::vector<double> xp(static_cast<std::size_t>(N * C * HP * WP), 0.0);
    for (std::int64_t n = 0; n < N; ++n)
        for (std::int64_t c = 0; c < C; ++c)
            for (std::int64_t h = 0; h < H; ++h)
                for (std::int64_t q = 0; q < W; ++q)
                    xp[static_cast<std::size_t>(((n * C + c) * HP + h + pb[0]) * WP + q + pb[1])] =
                        x[static_cast<std::size_t>(((n * C + c) * H + h) * W + q)];
    const std::int64_t OH = (HP - (KH - 1) * d[0] - 1) / s[0] + 1, OW = (WP - (KW - 1) * d[1] - 1) / s[1] + 1;
    const std::int64_t COg = CO / p.groups;
    std::vector<double> out;
    for (std::int64_t n = 0; n < N; ++n)
        for (std::int64_t oc = 0; oc < CO; ++oc)
            for (std::int64_t oh = 0; oh < OH; ++oh)
                for (std::int64_t ow = 0; ow < OW; ++ow) {
                    double acc = bias.empty() ? 0.0 : bias[static_cast<std::size_t>(oc)];
                    const std::int64_t g = oc / COg;
                    for (std::int64_t ci = 0; ci < CIg; ++ci)
                        for (std::int64_t kh = 0; kh < KH; ++kh)
                            for (std::int64_t kw = 0; kw < KW; ++kw)
                                acc += xp[static_cast<std::size_t>(((n * C + g * CIg + ci) * HP + oh * s[0] + kh * d[0]) * WP +
                                                                   ow * s[1] + kw * d[1])] *
                                       w[static_cast<std::size_t>(((oc * CIg + ci) * KH + kh) * KW + kw)];
                    out.push_back(acc);
                }
    return out;
}

template <class T>
std::vector<T> random_values(std::mt19937& rng, std::size_t n, int lo, int hi) {
    std::uniform_int_distribution<int> dist(lo, hi);
    std::vector<T> v(n);
    for (auto& x : v) x = static_cast<T>(dist(rng));
    return v;
}

}  // namespace

// ---- convolution: hand-computed ---------------------------------------------------------------------------------------

TEST_CASE("conv float 1x2x3x3 with two 2x2 filters: each output is the sum over both input channels") {
    const Tensor x = Tensor::from<float>({1, 2, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9, -1, 0, 1, 2, -2, 3, 0, 1, -3});
    const Tensor w = Tensor::from<float>({2, 2, 2, 2}, {1, 0, 0, 1, 2, 1, 0, -1, 0, 1, 1, 0, -1, 0, 2, 1});
    // out[0,0,0,0] = (1*1 + 5*1) + (-1*2 + 0*1 + 2*0 + -2*-1) = 6
    const Tensor y = conv_f(x, w, nullptr, conv_params({}, {}, {}, {}));
    CHECK(y.shape() == Shape{1, 2, 2, 2});
    CHECK(y.to_vector<float>() == std::vector<float>{6, 6, 13, 16, 9, 7, 11, 15});
    const Tensor b = Tensor::from<float>({2}, {10, -5});
    CHECK(conv_f(x, w, &b, conv_params({}, {}, {}, {})).to_vector<float>() ==
          std::vector<float>{16, 16, 23, 26, 4, 2, 6, 10});
}

TEST_CASE("conv int8: (x - zp_x) * (w - zp_w[oc]) summed in int32, plus bias[oc]") {
    const Tensor x = Tensor::from<std::int8_t>({1, 2, 3, 3}, {10, -20, 30, 4, 5, -6, 7, 127, -128, 3, 3, 3, 0, -1, 2,
                                                              100, -100, 50});
    const Tensor w = Tensor::from<std::int8_t>({2, 2, 2, 2}, {1, 2, 3, 4, -5, 6, -7, 8, 0, -2, -2, 1, 127, -128, 3, -2});
    const std::vector<std::int32_t> zp_w{1, -2};
    const Tensor b = Tensor::from<std::int32_t>({2}, {10, -5});
    for (const bool simd : {true, false}) {
        auto r = conv_q(x, 3, w, zp_w, &b, conv_params({}, {}, {}, {}), simd);
        REQUIRE(r.ok());
        CHECK(r->acc.dtype == DType::i32);
        CHECK(r->acc.to_vector<std::int32_t>() == std::vector<std::int32_t>{-9, 39, -1107, 1028, 0, -98, 971, -1299});
        CHECK(r->terms == 8);
        CHECK(r->acc_range.contains(numeric::Interval{-1299, 1028}));
    }
}

TEST_CASE("conv stride 2, dilation 2, asymmetric pads: padding contributes a real zero") {
    std::vector<float> xv(30);
    for (std::size_t i = 0; i < 30; ++i) xv[i] = static_cast<float>(static_cast<int>((i * 7) % 11) - 5);
    const Tensor x = Tensor::from<float>({1, 1, 5, 6}, xv);
    const Tensor w = Tensor::from<float>({1, 1, 2, 3}, {1, 2, -1, 0, 3, 1});
    // rows: pads (1, 0), eff 3 -> (6 - 3) / 2 + 1 = 2; columns: pads (0, 2), eff 5 -> (8 - 5) / 2 + 1 = 2
    const auto p = conv_params({2, 2}, {2, 2}, {1, 0}, {0, 2});
    const Tensor y = conv_f(x, w, nullptr, p);
    CHECK(y.shape() == Shape{1, 1, 2, 2});
    CHECK(y.to_vector<float>() == std::vector<float>{-13, -3, 1, -21});
    // int8 with an input zero point: padded positions must act as x == zp_x (real 0), not as x == 0
    std::vector<std::int8_t> xq(30);
    for (std::size_t i = 0; i < 30; ++i) xq[i] = static_cast<std::int8_t>(xv[i] + 20.0f);  // zp_x = 20
    const std::vector<std::int32_t> zp_w{0};
    auto r = conv_q(Tensor::from<std::int8_t>({1, 1, 5, 6}, xq), 20,
                    Tensor::from<std::int8_t>({1, 1, 2, 3}, {1, 2, -1, 0, 3, 1}), zp_w, nullptr, p);
    REQUIRE(r.ok());
    CHECK(r->acc.to_vector<std::int32_t>() == std::vector<std::int32_t>{-13, -3, 1, -21});
}

TEST_CASE("depthwise conv (groups = channels) filters every channel with its own kernel") {
    std::vector<float> xv(27);
    for (std::size_t i = 0; i < 27; ++i) xv[i] = static_cast<float>(static_cast<int>((i * 5) % 9) - 4);
    const Tensor x = Tensor::from<float>({1, 3, 3, 3}, xv);
    const Tensor w = Tensor::from<float>({3, 1, 2, 2}, {1, -1, 2, 0, 0, 1, 1, 1, -2, 1, 0, 3});
    const Tensor y = conv_f(x, w, nullptr, conv_params({}, {}, {1, 1}, {0, 0}, 3));
    CHECK(y.shape() == Shape{1, 3, 3, 3});
    CHECK(y.to_vector<float>() == std::vector<float>{0,  -8, 2,  4, -1, 0, -2, 2, 3, -4, -3, -2, -2, 1,
                                                     -2, 1,  1,  7, -12, 3, -9, 2, 3, 4, -1, 6,  7});
}

TEST_CASE("grouped conv equals two convs on split inputs, with weights, zero points and bias split together (B1)") {
    std::mt19937 rng(11);
    const Tensor x = Tensor::from<std::int8_t>({2, 4, 5, 5}, random_values<std::int8_t>(rng, 200, -128, 127));
    const Tensor w = Tensor::from<std::int8_t>({6, 2, 3, 3}, random_values<std::int8_t>(rng, 108, -128, 127));
    const std::vector<std::int32_t> zp_w{0, 3, -7, 1, -128, 127};
    const Tensor b = Tensor::from<std::int32_t>({6}, {100, -200, 300, -400, 500, -600});
    const auto p = conv_params({2, 1}, {1, 2}, {1, 2}, {0, 1}, 2);
    auto whole = conv_q(x, -5, w, zp_w, &b, p);
    REQUIRE(whole.ok());
    CHECK(whole->acc.shape() == Shape{2, 6, 2, 4});
    CHECK(whole->terms == 18);

    auto ch_slice = [](const Tensor& t, std::int64_t axis, std::int64_t lo, std::int64_t hi) {
        const std::vector<std::int64_t> ax{axis}, st{lo}, en{hi};
        return t.view(slice(t.layout, ax, st, en, {}).value());
    };
    for (std::int64_t g = 0; g < 2; ++g) {
        const Tensor xg = ch_slice(x, 1, 2 * g, 2 * g + 2);  // input channels of group g
        const Tensor wg = ch_slice(w, 0, 3 * g, 3 * g + 3);  // its filters ...
        const std::span<const std::int32_t> zg(zp_w.data() + 3 * g, 3);  // ... their zero points ...
        const Tensor bg = ch_slice(b, 0, 3 * g, 3 * g + 3);  // ... and their biases, cut together
        auto part = conv_q(xg, -5, wg, zg, &bg, conv_params({2, 1}, {1, 2}, {1, 2}, {0, 1}, 1));
        REQUIRE(part.ok());
        for (std::int64_t n = 0; n < 2; ++n)
            for (std::int64_t co = 0; co < 3; ++co)
                for (std::int64_t i = 0; i < 2; ++i)
                    for (std::int64_t j = 0; j < 4; ++j)
                        REQUIRE(part->acc.at<std::int32_t>({n, co, i, j}) ==
                                whole->acc.at<std::int32_t>({n, 3 * g + co, i, j}));
    }
    // Cutting the zero points WITHOUT the weights (group 1 reusing group 0's) gives a different answer.
    const Tensor x1 = ch_slice(x, 1, 2, 4), w1 = ch_slice(w, 0, 3, 6), b1 = ch_slice(b, 0, 3, 6);
    auto wrong = conv_q(x1, -5, w1, std::span<const std::int32_t>(zp_w.data(), 3), &b1,
                        conv_params({2, 1}, {1, 2}, {1, 2}, {0, 1}, 1));
    REQUIRE(wrong.ok());
    int differ = 0;
    for (std::int64_t co = 0; co < 3; ++co)
        for (std::int64_t j = 0; j < 4; ++j)
            differ += wrong->acc.at<std::int32_t>({0, co, 1, j}) != whole->acc.at<std::int32_t>({0, 3 + co, 1, j});
    CHECK(differ > 0);
}

TEST_CASE("conv int8 matches the naive zero-padded reference on random shapes and parameters") {
    std::mt19937 rng(2025);
    struct Case { Shape xs, ws; ConvParams p; };
    const std::vector<Case> cases{
        {{1, 3, 6, 7}, {4, 3, 3, 3}, conv_params({1, 1}, {1, 1}, {1, 1}, {1, 1})},
        {{2, 4, 7, 5}, {4, 1, 3, 2}, conv_params({2, 1}, {1, 3}, {0, 2}, {2, 1}, 4)},
        {{1, 6, 5, 5}, {9, 2, 2, 3}, conv_params({3, 2}, {2, 1}, {2, 0}, {1, 3}, 3)},
        {{1, 2, 4, 4}, {2, 2, 1, 1}, conv_params({2, 2}, {1, 1}, {0, 0}, {0, 0})},
    };
    for (const auto& c : cases) {
        const auto xq = random_values<std::int8_t>(rng, static_cast<std::size_t>(element_count(c.xs)), -128, 127);
        const auto wq = random_values<std::int8_t>(rng, static_cast<std::size_t>(element_count(c.ws)), -128, 127);
        const auto zw = random_values<std::int32_t>(rng, static_cast<std::size_t>(c.ws[0]), -20, 20);
        const auto bq = random_values<std::int32_t>(rng, static_cast<std::size_t>(c.ws[0]), -1000, 1000);
        const std::int32_t zx = 17;
        const Tensor b = Tensor::from<std::int32_t>({c.ws[0]}, bq);
        auto r = conv_q(Tensor::from<std::int8_t>(c.xs, xq), zx, Tensor::from<std::int8_t>(c.ws, wq), zw, &b, c.p);
        REQUIRE(r.ok());
        std::vector<double> xr, wr, br;
        for (auto v : xq) xr.push_back(v - zx);
        for (std::size_t i = 0; i < wq.size(); ++i)
            wr.push_back(wq[i] - zw[i / static_cast<std::size_t>(element_count(c.ws) / c.ws[0])]);
        for (auto v : bq) br.push_back(v);
        // the naive reference pads with the real value 0, i.e. x - zx = 0
        const auto want = naive_conv(xr, c.xs, wr, c.ws, br, c.p);
        const auto got = r->acc.to_vector<std::int32_t>();
        REQUIRE(got.size() == want.size());
        for (std::size_t i = 0; i < got.size(); ++i) REQUIRE(static_cast<double>(got[i]) == want[i]);
        // and the float form of the same contraction agrees exactly (small integers are exact in float)
        std::vector<float> xf(xr.begin(), xr.end()), wf(wr.begin(), wr.end()), bf(br.begin(), br.end());
        const Tensor bft = Tensor::from<float>({c.ws[0]}, bf);
        const auto yf = conv_f(Tensor::from<float>(c.xs, xf), Tensor::from<float>(c.ws, wf), &bft, c.p);
        const auto gf = yf.to_vector<float>();
        for (std::size_t i = 0; i < got.size(); ++i) REQUIRE(static_cast<double>(gf[i]) == want[i]);
    }
}

// ---- matmul ---------------------------------------------------------------------------------------------------------

TEST_CASE("batched matmul 2x3x4: broadcast and batched right operands, float and int8 with per-row/column zps") {
    std::vector<float> a(24), b2(8), b3(16);
    for (std::size_t i = 0; i < 24; ++i) a[i] = static_cast<float>(static_cast<int>((i * 3) % 7) - 3);
    for (std::size_t i = 0; i < 8; ++i) b2[i] = static_cast<float>(static_cast<int>((i * 5) % 9) - 4);
    for (std::size_t i = 0; i < 16; ++i) b3[i] = static_cast<float>(static_cast<int>((i * 2) % 5) - 2);
    const Tensor ta = Tensor::from<float>({2, 3, 4}, a);
    {
        auto r = run_matmul_contract(In<0, float>{}, In<0, float>{}, ta, Tensor::from<float>({4, 2}, b2), nullptr);
        REQUIRE(r.ok());
        CHECK(r->acc.shape() == Shape{2, 3, 2});
        CHECK(r->acc.to_vector<float>() == std::vector<float>{7, 2, -1, -11, -9, 11, 11, -9, -11, -1, 2, 7});
    }
    {
        auto r = run_matmul_contract(In<0, float>{}, In<0, float>{}, ta, Tensor::from<float>({2, 4, 2}, b3), nullptr);
        REQUIRE(r.ok());
        CHECK(r->acc.to_vector<float>() == std::vector<float>{9, -8, -7, -6, 5, 3, -6, 1, 1, 5, 8, -5});
    }
    {
        using namespace expr;
        std::vector<std::int8_t> aq(a.begin(), a.end()), bq(b2.begin(), b2.end());
        const std::vector<std::int32_t> za{1, -2, 0}, zb{3, -1};  // per row m, per column n
        const Tensor bias = Tensor::from<std::int32_t>({2}, {100, -100});
        auto r = run_matmul_contract(sub(widen(In<0, std::int8_t>{}), chan<std::int32_t>(za)),
                                     sub(widen(In<0, std::int8_t>{}), chan<std::int32_t>(zb)),
                                     Tensor::from<std::int8_t>({2, 3, 4}, aq), Tensor::from<std::int8_t>({4, 2}, bq),
                                     &bias);
        REQUIRE(r.ok());
        CHECK(r->terms == 4);
        CHECK(r->acc.to_vector<std::int32_t>() ==
              std::vector<std::int32_t>{132, -113, 61, -85, 79, -85, 145, -127, 39, -71, 99, -92});
    }
    // a broadcast left operand: [1, 3, 4] x [2, 4, 2]
    {
        auto r = run_matmul_contract(In<0, float>{}, In<0, float>{},
                                     Tensor::from<float>({1, 3, 4}, std::vector<float>(a.begin(), a.begin() + 12)),
                                     Tensor::from<float>({2, 4, 2}, b3), nullptr);
        REQUIRE(r.ok());
        CHECK(r->acc.shape() == Shape{2, 3, 2});
        const auto v = r->acc.to_vector<float>();
        CHECK(std::vector<float>(v.begin(), v.begin() + 6) == std::vector<float>{9, -8, -7, -6, 5, 3});
    }
}

// ---- headroom and errors --------------------------------------------------------------------------------------------

TEST_CASE("the int32 accumulator is refused exactly when K products could overflow it") {
    using namespace expr;
    // uint8 activations [0, 255] times int8 weights minus -128, [0, 255]: products in [0, 65025]; 33025 fit
    const std::vector<std::int32_t> zb{-128};
    auto mm = [&](std::int64_t K) {
        return run_matmul_contract(widen(In<0, std::uint8_t>{}),
                                   sub(widen(In<0, std::int8_t>{}), chan<std::int32_t>(zb)),
                                   Tensor::from<std::uint8_t>({1, K}, std::vector<std::uint8_t>(static_cast<std::size_t>(K), 255)),
                                   Tensor::from<std::int8_t>({K, 1}, std::vector<std::int8_t>(static_cast<std::size_t>(K), 127)),
                                   nullptr);
    };
    auto ok = mm(33025);
    REQUIRE(ok.ok());
    CHECK(ok->acc.to_vector<std::int32_t>() == std::vector<std::int32_t>{33025 * 65025});
    CHECK(ok->acc_range == numeric::Interval{0, std::int64_t{33025} * 65025});
    const auto bad = mm(33026);
    CHECK_RULE(bad, "accumulator-fits-int32");
    CHECK(bad.error().detail.find("33025") != std::string::npos);  // names the largest K that fits
    // a bias eats headroom too
    const Tensor bias = Tensor::from<std::int32_t>({1}, {std::numeric_limits<std::int32_t>::max()});
    CHECK_RULE(run_matmul_contract(widen(In<0, std::uint8_t>{}), widen(In<0, std::uint8_t>{}),
                                   Tensor::from<std::uint8_t>({1, 1}, {1}), Tensor::from<std::uint8_t>({1, 1}, {1}),
                                   &bias),
               "accumulator-fits-int32");
    // conv: K = Cin_g * kh * kw
    const std::vector<std::int32_t> zw{0};
    const auto x = Tensor::from<std::int8_t>({1, 7311, 3, 3}, std::vector<std::int8_t>(7311 * 9, 0));
    const auto w = Tensor::from<std::int8_t>({1, 7311, 3, 3}, std::vector<std::int8_t>(7311 * 9, 0));
    CHECK_RULE(conv_q(x, -128, w, zw, nullptr, conv_params({}, {}, {}, {})), "accumulator-fits-int32");
}

TEST_CASE("contract refuses inconsistent shapes and parameters with named rules") {
    const Tensor x = Tensor::from<float>({1, 4, 3, 3}, std::vector<float>(36, 1.0f));
    const Tensor w = Tensor::from<float>({2, 2, 2, 2}, std::vector<float>(16, 1.0f));
    auto conv = [&](const Tensor& xx, const Tensor& ww, const Tensor* b, const ConvParams& p) {
        return run_conv_contract(In<0, float>{}, In<0, float>{}, xx, ww, b, p);
    };
    CHECK(conv(x, w, nullptr, conv_params({}, {}, {}, {}, 2)).ok());
    CHECK_RULE(conv(x, w, nullptr, conv_params({}, {}, {}, {}, 1)), "conv-channels-match-groups");
    CHECK_RULE(conv(x, Tensor::from<float>({3, 1, 2, 2}, std::vector<float>(12, 1.0f)), nullptr,
                    conv_params({}, {}, {}, {}, 4)),
               "conv-out-channels-divisible");
    CHECK_RULE(conv(x, w, nullptr, conv_params({}, {}, {}, {}, 0)), "groups-positive");
    CHECK_RULE(conv(Tensor::from<float>({4, 3}, std::vector<float>(12, 1.0f)), w, nullptr, conv_params({}, {}, {}, {})),
               "conv-input-rank");
    CHECK_RULE(conv(x, Tensor::from<float>({2, 2, 2}, std::vector<float>(8, 1.0f)), nullptr, conv_params({}, {}, {}, {})),
               "conv-weight-rank");
    ConvParams k = conv_params({}, {}, {}, {}, 2);
    k.window.kernel = Dims{3, 3};
    CHECK_RULE(conv(x, w, nullptr, k), "kernel-matches-weights");
    k.window.kernel = Dims{2, 2};
    CHECK(conv(x, w, nullptr, k).ok());
    k.window.ceil_mode = true;
    CHECK_RULE(conv(x, w, nullptr, k), "conv-floor-mode");
    CHECK_RULE(conv(x, w, nullptr, conv_params({0, 1}, {}, {}, {}, 2)), "stride-positive");
    CHECK_RULE(conv(x, w, nullptr, conv_params({}, {4, 4}, {}, {}, 2)), "window-fits-padded-input");
    const Tensor b3 = Tensor::from<float>({3}, {1, 2, 3});
    CHECK_RULE(conv(x, w, &b3, conv_params({}, {}, {}, {}, 2)), "bias-shape");
    const Tensor bi = Tensor::from<std::int32_t>({2}, {1, 2});
    CHECK_RULE(conv(x, w, &bi, conv_params({}, {}, {}, {}, 2)), "bias-dtype");

    auto mm = [](const Shape& a, const Shape& b) {
        return run_matmul_contract(In<0, float>{}, In<0, float>{},
                                   Tensor::from<float>(a, std::vector<float>(static_cast<std::size_t>(element_count(a)))),
                                   Tensor::from<float>(b, std::vector<float>(static_cast<std::size_t>(element_count(b)))),
                                   nullptr);
    };
    CHECK(mm({2, 3, 4}, {4, 5}).ok());
    CHECK_RULE(mm({2, 3, 4}, {3, 5}), "matmul-inner-dims-match");
    CHECK_RULE(mm({4}, {4, 5}), "matmul-rank-at-least-2");
    CHECK_RULE(mm({2, 3, 4}, {3, 4, 5}), "broadcast-compatible");
    // the output shape alone, for shape inference
    CHECK(matmul_output_shape({5, 1, 3, 4}, {2, 4, 6}).value() == Shape{5, 2, 3, 6});
    CHECK(conv_output_shape({1, 4, 9, 9}, {8, 2, 3, 3}, conv_params({2, 2}, {}, {1, 1}, {1, 1}, 2)).value() ==
          Shape{1, 8, 5, 5});
}
