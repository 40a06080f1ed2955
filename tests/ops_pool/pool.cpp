// AveragePool / MaxPool / GlobalAveragePool / GlobalMaxPool: one hand-computed golden case per semantic switch
// (seed D14: the denominator at a border and in the ceil overhang, asymmetric pads, dilation, each auto_pad), the
// quantized epilogues on hand-computed values, the NaN rule, and a CHECK_RULE test for every rule the ops enforce.
#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include <janus/ops/pool.hpp>
#include <support/check_rule.hpp>
#include <support/small_windows.hpp>

using namespace janus;
using namespace janus::ops;

namespace {

numeric::QuantParams quant(DType d, float s, std::int32_t zp) { return numeric::make_quant(d, s, zp).value(); }

Tensor f1d(std::vector<float> v) { return Tensor::from<float>({1, 1, static_cast<std::int64_t>(v.size())}, v); }

AveragePoolAttrs avg(std::vector<std::int64_t> k, std::vector<std::int64_t> s, std::vector<std::int64_t> pads,
                     std::int64_t count_include_pad, std::int64_t ceil = 0, std::string auto_pad = "NOTSET") {
    AveragePoolAttrs a;
    a.kernel_shape = std::move(k);
    a.strides = std::move(s);
    a.pads = std::move(pads);
    a.count_include_pad = count_include_pad;
    a.ceil_mode = ceil;
    a.auto_pad = std::move(auto_pad);
    return a;
}

MaxPoolAttrs mx(std::vector<std::int64_t> k, std::vector<std::int64_t> s, std::vector<std::int64_t> pads,
                std::int64_t ceil = 0, std::vector<std::int64_t> d = {}, std::string auto_pad = "NOTSET") {
    MaxPoolAttrs a;
    a.kernel_shape = std::move(k);
    a.strides = std::move(s);
    a.pads = std::move(pads);
    a.ceil_mode = ceil;
    a.dilations = std::move(d);
    a.auto_pad = std::move(auto_pad);
    return a;
}

std::vector<float> avg_f(const Tensor& x, const AveragePoolAttrs& a) {
    auto r = call<AveragePool>({x}, a);
    REQUIRE(r.ok());
    return r->to_vector<float>();
}
std::vector<float> max_f(const Tensor& x, const MaxPoolAttrs& a) {
    auto r = call<MaxPool>({x}, a);
    REQUIRE(r.ok());
    return r->to_vector<float>();
}

void check_close(const std::vector<float>& got, const std::vector<float>& want) {
    REQUIRE(got.size() == want.size());
    for (std::size_t i = 0; i < got.size(); ++i) CHECK(got[i] == doctest::Approx(want[i]).epsilon(1e-6));
}

}  // namespace

// ---- AveragePool denominators ------------------------------------------------------------------------------------

TEST_CASE("AveragePool count_include_pad=0 divides a border window by its input elements, =1 also by its padding") {
    // x = 1 2 3 4, k3 s1 pads 1/1: windows [-1,1] [0,2] [1,3] [2,4]
    const Tensor x = f1d({1, 2, 3, 4});
    check_close(avg_f(x, avg({3}, {1}, {1, 1}, 0)), {3.0f / 2, 2, 3, 7.0f / 2});
    check_close(avg_f(x, avg({3}, {1}, {1, 1}, 1)), {3.0f / 3, 2, 3, 7.0f / 3});
}

TEST_CASE("AveragePool ceil overhang: padding counts with count_include_pad=1, the overhang past the padding never") {
    // x = 1..6, k3 s2 pads 1/1 ceil: padded [-1, 7), 4 windows; the last [5,7] holds 6 (input), 6 (pad), 7 (overhang)
    const Tensor x = f1d({1, 2, 3, 4, 5, 6});
    check_close(avg_f(x, avg({3}, {2}, {1, 1}, 0, 1)), {3.0f / 2, 9.0f / 3, 15.0f / 3, 6.0f / 1});
    check_close(avg_f(x, avg({3}, {2}, {1, 1}, 1, 1)), {3.0f / 3, 9.0f / 3, 15.0f / 3, 6.0f / 2});
    // floor mode drops the overhang window
    check_close(avg_f(x, avg({3}, {2}, {1, 1}, 1, 0)), {1, 3, 5});
    // without padding the overhang window's divisor is 1 under both policies
    const Tensor y = f1d({1, 2, 3, 4, 5});
    check_close(avg_f(y, avg({2}, {2}, {}, 0, 1)), {1.5f, 3.5f, 5});
    check_close(avg_f(y, avg({2}, {2}, {}, 1, 1)), {1.5f, 3.5f, 5});
}

TEST_CASE("AveragePool asymmetric pads: begin and end padding are separate, and give different answers") {
    const Tensor x = f1d({1, 2, 3, 4});
    check_close(avg_f(x, avg({2}, {2}, {1, 0}, 1)), {0.5f, 2.5f});  // [-1,0] [1,2]
    check_close(avg_f(x, avg({2}, {2}, {1, 0}, 0)), {1.0f, 2.5f});
    check_close(avg_f(x, avg({2}, {2}, {0, 1}, 1)), {1.5f, 3.5f});  // [0,1] [2,3]
}

TEST_CASE("AveragePool 2-D corner: count_include_pad=1 divides by 4, =0 by the one input element") {
    const Tensor x = Tensor::from<float>({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
    // k2 s1 pads 1 on every side: 4x4 outputs; corner (0,0) sees only x[0][0]; (1,1) sees 1 2 4 5
    const auto cv = avg_f(x, avg({2, 2}, {1, 1}, {1, 1, 1, 1}, 0));
    const auto cip = avg_f(x, avg({2, 2}, {1, 1}, {1, 1, 1, 1}, 1));
    REQUIRE(cv.size() == 16);
    CHECK(cv[0] == 1.0f);
    CHECK(cip[0] == 0.25f);
    CHECK(cv[1] == 1.5f);     // (1 + 2) / 2
    CHECK(cip[1] == 0.75f);   // (1 + 2) / 4
    CHECK(cv[5] == 3.0f);
    CHECK(cip[5] == 3.0f);
    CHECK(cv[15] == 9.0f);
    CHECK(cip[15] == 2.25f);
}

TEST_CASE("AveragePool dilations (opset 19) skip input positions") {
    // x = 1..5, k2 d2 s1: windows {0,2} {1,3} {2,4}
    AveragePoolAttrs a = avg({2}, {1}, {}, 0);
    a.dilations = {2};
    check_close(avg_f(f1d({1, 2, 3, 4, 5}), a), {2, 3, 4});
}

TEST_CASE("AveragePool run_with_stats reports the denominator of every output and the elements combined") {
    const Tensor x = f1d({1, 2, 3, 4});
    const auto a = avg({3}, {1}, {1, 1}, 0);
    auto r = AveragePool::run_with_stats(std::vector<Tensor>{x}, a, AveragePool::infer(std::vector<TensorType>{type_of(x)}, a).value(), {});
    REQUIRE(r.ok());
    CHECK(r->stats.counts.to_vector<std::int32_t>() == std::vector<std::int32_t>{2, 3, 3, 2});
    CHECK(r->stats.kernel_volume == 3);
    CHECK(r->stats.combined == 10);
}

// ---- auto_pad ---------------------------------------------------------------------------------------------------

TEST_CASE("auto_pad SAME_UPPER puts the odd padding unit at the end, SAME_LOWER at the beginning, VALID pads none") {
    // L=4 k3 s2: O = ceil(4/2) = 2, total pad = (2-1)*2 + 3 - 4 = 1
    const Tensor x = f1d({1, 2, 3, 4});
    check_close(avg_f(x, avg({3}, {2}, {}, 0, 0, "SAME_UPPER")), {2.0f, 3.5f});   // [0,2] [2,4]
    check_close(avg_f(x, avg({3}, {2}, {}, 0, 0, "SAME_LOWER")), {1.5f, 3.0f});   // [-1,1] [1,3]
    check_close(avg_f(x, avg({3}, {2}, {}, 1, 0, "SAME_UPPER")), {2.0f, 7.0f / 3});
    check_close(avg_f(x, avg({3}, {2}, {}, 1, 0, "SAME_LOWER")), {1.0f, 3.0f});
    check_close(avg_f(x, avg({3}, {2}, {}, 0, 0, "VALID")), {2.0f});
    check_close(max_f(x, mx({3}, {2}, {}, 0, {}, "SAME_UPPER")), {3, 4});
    check_close(max_f(x, mx({3}, {2}, {}, 0, {}, "SAME_LOWER")), {2, 4});
    // SAME fixes the extent to ceil(L / s): ceil_mode has no effect
    check_close(avg_f(x, avg({3}, {2}, {}, 0, 1, "SAME_UPPER")), {2.0f, 3.5f});
    // VALID keeps ceil_mode (ONNX Runtime): L=5 k2 s2 -> 3 outputs, the last one in the overhang
    check_close(max_f(f1d({1, 2, 3, 4, 5}), mx({2}, {2}, {}, 1, {}, "VALID")), {2, 4, 5});
}

// ---- MaxPool ------------------------------------------------------------------------------------------------------

TEST_CASE("MaxPool padding never wins, even over negative values") {
    check_close(max_f(f1d({-5, -3, -8}), mx({2}, {1}, {1, 1})), {-5, -3, -3, -8});
}

TEST_CASE("MaxPool ceil_mode adds the overhang window") {
    check_close(max_f(f1d({1, 2, 3, 4, 5}), mx({2}, {2}, {}, 1)), {2, 4, 5});
    check_close(max_f(f1d({1, 2, 3, 4, 5}), mx({2}, {2}, {}, 0)), {2, 4});
}

TEST_CASE("MaxPool dilations: kernel positions d apart") {
    const Tensor x = f1d({3, 1, 4, 1, 5, 9, 2, 6});
    check_close(max_f(x, mx({2}, {1}, {}, 0, {2})), {4, 1, 5, 9, 5, 9});
    check_close(max_f(x, mx({2}, {1}, {}, 0, {1})), {3, 4, 4, 5, 9, 9, 6});
}

TEST_CASE("MaxPool NaN rule: NaN elements are skipped; a window of only NaN gives -inf") {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const auto y = max_f(f1d({nan, 1, nan, nan}), mx({2}, {2}, {}));
    CHECK(y[0] == 1.0f);
    CHECK(y[1] == -std::numeric_limits<float>::infinity());
}

TEST_CASE("AveragePool NaN propagates through the sum") {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const auto y = avg_f(f1d({nan, 1, 2, 3}), avg({2}, {2}, {}, 0));
    CHECK(std::isnan(y[0]));
    CHECK(y[1] == 2.5f);
}

TEST_CASE("MaxPool storage_order is accepted and does not change Y (it orders the unsupported Indices output)") {
    const Tensor x = Tensor::from<float>({1, 1, 2, 2}, {1, 4, 3, 2});
    MaxPoolAttrs a = mx({2, 2}, {1, 1}, {});
    const auto y0 = max_f(x, a);
    a.storage_order = 1;
    CHECK(max_f(x, a) == y0);
    CHECK(y0 == std::vector<float>{4});
}

// ---- Global pools -------------------------------------------------------------------------------------------------

TEST_CASE("GlobalAveragePool and GlobalMaxPool pool every spatial axis to extent 1, per channel") {
    const Tensor x = Tensor::from<float>({1, 2, 2, 2}, {1, 2, 3, 4, -1, -2, -3, -6});
    auto a = call<GlobalAveragePool>({x});
    auto m = call<GlobalMaxPool>({x});
    REQUIRE(a.ok());
    REQUIRE(m.ok());
    CHECK(a->shape() == Shape{1, 2, 1, 1});
    CHECK(a->to_vector<float>() == std::vector<float>{2.5f, -3.0f});
    CHECK(m->to_vector<float>() == std::vector<float>{4.0f, -1.0f});
    const Tensor x3 = Tensor::from<float>({2, 1, 3}, {1, 2, 6, 0, 0, 3});  // one spatial axis, two batches
    CHECK(call<GlobalAveragePool>({x3}).value().to_vector<float>() == std::vector<float>{3, 1});
}

// ---- Quantized ----------------------------------------------------------------------------------------------------

TEST_CASE("quantized AveragePool: per-count multipliers give round(s_in * sum / (s_out * count)) + zp_out") {
    // x real = 0.5 (q - 1) = 1 2 3 4; output s 0.25 zp -2
    const auto qi = quant(DType::i8, 0.5f, 1), qo = quant(DType::i8, 0.25f, -2);
    const Tensor x = Tensor::from<std::int8_t>({1, 1, 4}, {3, 5, 7, 9}, qi);
    const TensorType out{DType::i8, {1, 1, 4}, qo};
    // count_valid: 1.5 2 3 3.5 -> 6 8 12 14 -> -2
    auto cv = call<AveragePool>({x}, avg({3}, {1}, {1, 1}, 0), out);
    REQUIRE(cv.ok());
    CHECK(cv->to_vector<std::int8_t>() == std::vector<std::int8_t>{4, 6, 10, 12});
    // count_include_pad: 1 2 3 7/3 -> 4 8 12 9.33 -> round 9 -> -2
    auto cip = call<AveragePool>({x}, avg({3}, {1}, {1, 1}, 1), out);
    REQUIRE(cip.ok());
    CHECK(cip->to_vector<std::int8_t>() == std::vector<std::int8_t>{2, 6, 10, 7});
    // the plan holds one multiplier per count that occurs
    auto p = AveragePool::plan(std::array{type_of(x)}, avg({3}, {1}, {1, 1}, 0), out, janus::numeric::default_rounding_mode);
    REQUIRE(p.ok());
    CHECK(p->min_count == 2);
    CHECK(p->max_count == 3);
    CHECK(p->table.size() == 2);
}

TEST_CASE("quantized AveragePool exact ties with a power-of-two divisor round away from zero") {
    const auto q = quant(DType::i8, 1.0f, 0);
    const Tensor x = Tensor::from<std::int8_t>({1, 1, 8}, {1, 2, -1, -2, 0, 1, 0, -1}, q);  // 1.5 -1.5 0.5 -0.5
    auto y = call<AveragePool>({x}, avg({2}, {2}, {}, 0), TensorType{DType::i8, {1, 1, 4}, q});
    REQUIRE(y.ok());
    CHECK(y->to_vector<std::int8_t>() == std::vector<std::int8_t>{2, -2, 1, -1});
}

TEST_CASE("quantized AveragePool uint8 saturates at the output range") {
    const auto qi = quant(DType::u8, 1.0f, 0), qo = quant(DType::u8, 0.5f, 10);
    const Tensor x = Tensor::from<std::uint8_t>({1, 1, 2}, {250, 250}, qi);
    auto y = call<AveragePool>({x}, avg({2}, {1}, {}, 0), TensorType{DType::u8, {1, 1, 1}, qo});
    REQUIRE(y.ok());
    CHECK(y->to_vector<std::uint8_t>() == std::vector<std::uint8_t>{255});
}

TEST_CASE("quantized MaxPool proposes the input's quantization and is then a bit-exact selection") {
    const auto qi = quant(DType::i8, 0.5f, 1);
    const Tensor x = Tensor::from<std::int8_t>({1, 1, 4}, {3, -128, 127, 9}, qi);
    const auto t = MaxPool::infer(std::vector<TensorType>{type_of(x)}, mx({2}, {2}, {}));
    REQUIRE(t.ok());
    CHECK(t->quant == qi);
    auto y = call<MaxPool>({x}, mx({2}, {2}, {}));
    REQUIRE(y.ok());
    CHECK(y->to_vector<std::int8_t>() == std::vector<std::int8_t>{3, 127});
}

TEST_CASE("quantized MaxPool requantizes when the caller gives a different output quantization") {
    const auto qi = quant(DType::i8, 0.5f, 1), qo = quant(DType::i8, 0.25f, 0);
    const Tensor x = Tensor::from<std::int8_t>({1, 1, 4}, {3, 5, 7, 9}, qi);  // real 1 2 3 4
    auto y = call<MaxPool>({x}, mx({2}, {2}, {}), TensorType{DType::i8, {1, 1, 2}, qo});
    REQUIRE(y.ok());
    CHECK(y->to_vector<std::int8_t>() == std::vector<std::int8_t>{8, 16});  // 2 / 0.25, 4 / 0.25
}

TEST_CASE("quantized GlobalAveragePool needs the caller's output quantization and divides by the volume") {
    const auto qi = quant(DType::u8, 0.1f, 128), qo = quant(DType::u8, 0.1f, 128);
    const Tensor x = Tensor::from<std::uint8_t>({1, 1, 2, 2}, {128, 129, 130, 132}, qi);  // deltas 0 1 2 4: 7/4
    CHECK_RULE(call<GlobalAveragePool>({x}), "output-quantization-required");
    auto y = call<GlobalAveragePool>({x}, {}, TensorType{DType::u8, {1, 1, 1, 1}, qo});
    REQUIRE(y.ok());
    CHECK(y->to_vector<std::uint8_t>() == std::vector<std::uint8_t>{130});  // 128 + round(1.75)
    auto m = call<GlobalMaxPool>({x});
    REQUIRE(m.ok());
    CHECK(m->to_vector<std::uint8_t>() == std::vector<std::uint8_t>{132});
}

// ---- Errors: every rule -------------------------------------------------------------------------------------------

TEST_CASE("pool rule window-input-rank: an input without spatial axes") {
    const Tensor x = Tensor::from<float>({2, 2}, {1, 2, 3, 4});
    CHECK_RULE(call<AveragePool>({x}, avg({1}, {}, {}, 0)), "window-input-rank");
    CHECK_RULE(call<GlobalMaxPool>({x}), "window-input-rank");
}

TEST_CASE("pool rule window-param-length: kernel_shape is required and has one value per spatial axis") {
    const Tensor x = f1d({1, 2, 3});
    CHECK_RULE(call<MaxPool>({x}, mx({}, {}, {})), "window-param-length");
    CHECK_RULE(call<MaxPool>({x}, mx({2, 2}, {}, {})), "window-param-length");
    CHECK_RULE(call<MaxPool>({x}, mx({2}, {1, 1}, {})), "window-param-length");
    CHECK_RULE(call<AveragePool>({x}, avg({2}, {}, {1}, 0)), "window-param-length");
}

TEST_CASE("pool rule pads-with-auto-pad: explicit pads only with auto_pad NOTSET") {
    CHECK_RULE(call<AveragePool>({f1d({1, 2, 3})}, avg({2}, {}, {1, 1}, 0, 0, "SAME_UPPER")), "pads-with-auto-pad");
    CHECK_RULE(call<MaxPool>({f1d({1, 2, 3})}, mx({2}, {}, {0, 0}, 0, {}, "VALID")), "pads-with-auto-pad");
}

TEST_CASE("pool rule window-holds-input: an all-padding or dilated-past window has no value") {
    CHECK_RULE(call<AveragePool>({f1d({1, 2})}, avg({2}, {1}, {2, 0}, 1)), "window-holds-input");
    CHECK_RULE(call<MaxPool>({f1d({1, 2})}, mx({2}, {1}, {2, 0})), "window-holds-input");
    CHECK_RULE(call<MaxPool>({f1d({1})}, mx({2}, {1}, {1, 1}, 0, {2})), "window-holds-input");  // reads -1 and 1
}

// check_windows_hold_input finds the first empty window without visiting every output position (issue 26: a huge
// extent made MaxPool's inference loop 2^40 times). Against the plain scan of every window, on every small case.
TEST_CASE("pool rule window-holds-input: the direct check equals the scan of every window, and is not a loop") {
    int refused = 0;
    const int cases = janus_test::for_each_small_window({}, [&](std::int64_t L, const WindowParams& w, const Shape& out) {
        std::string want;  // the plain scan: the first window with no input position
        for (std::int64_t o = 0; o < out[2] && want.empty(); ++o) {
            bool holds = false;
            for (std::int64_t j = 0; j < w.kernel[0]; ++j) {
                const std::int64_t x = o * w.strides[0] - w.pads_begin[0] + j * w.dilations[0];
                holds = holds || (x >= 0 && x < L);
            }
            if (!holds) want = "spatial axis 0 output " + std::to_string(o);
        }
        const Status got = ops::detail::check_windows_hold_input(Shape{1, 1, L}, w, out, "pool");
        REQUIRE(got.ok() == want.empty());
        if (!got.ok()) {
            ++refused;
            CHECK(got.error().rule == "window-holds-input");
            CHECK(got.error().position == want);
        }
    });
    CHECK(cases > 10000);
    CHECK(refused > 1000);
    // a 2^39-long axis: inference answers at once (it scanned every output position)
    const ops::TensorType big{DType::f32, Shape{1, 1, std::int64_t{1} << 39}, std::nullopt};
    const auto t = infer_with<MaxPool>(std::span<const ops::TensorType>(&big, 1),
                                       AttrMap{{"kernel_shape", std::vector<std::int64_t>{2}}});
    REQUIRE(t.ok());
    CHECK(t->shape == Shape{1, 1, (std::int64_t{1} << 39) - 1});
    // a dilation larger than the input with more windows in the padding than the check examines one by one
    WindowParams w{Dims{2}, Dims{1}, Dims{8}, Dims{std::int64_t{1} << 20}, Dims{0}, false};
    const Shape in{1, 1, 4};
    const auto out = window_output_shape(in, w, "pool");
    REQUIRE(out.ok());
    CHECK(ops::detail::check_windows_hold_input(in, w, *out, "pool").error().rule == "window-scan-limit");
}

TEST_CASE("pool rule window-fits-padded-input: a kernel larger than the padded input") {
    CHECK_RULE(call<MaxPool>({f1d({1, 2, 3})}, mx({5}, {}, {})), "window-fits-padded-input");
}

TEST_CASE("pool rule kernel-positive: a global pool over an empty spatial axis has no window") {
    CHECK_RULE(call<GlobalAveragePool>({Tensor::from<float>({1, 1, 0}, std::vector<float>{})}), "kernel-positive");
}

TEST_CASE("pool rule attribute-range: auto_pad names, 0/1 flags, positive kernel and strides, non-negative pads") {
    const std::vector<Tensor> x{f1d({1, 2, 3})};
    CHECK_RULE(call_with<AveragePool>(x, {{"kernel_shape", std::vector<std::int64_t>{2}}, {"auto_pad", std::string("SAME")}}),
               "attribute-range");
    CHECK_RULE(call_with<AveragePool>(x, {{"kernel_shape", std::vector<std::int64_t>{2}}, {"count_include_pad", std::int64_t{2}}}),
               "attribute-range");
    CHECK_RULE(call_with<MaxPool>(x, {{"kernel_shape", std::vector<std::int64_t>{2}}, {"storage_order", std::int64_t{2}}}),
               "attribute-range");
    CHECK_RULE(call_with<MaxPool>(x, {{"kernel_shape", std::vector<std::int64_t>{0}}}), "attribute-range");
    CHECK_RULE(call_with<MaxPool>(x, {{"kernel_shape", std::vector<std::int64_t>{2}}, {"strides", std::vector<std::int64_t>{0}}}),
               "attribute-range");
    CHECK_RULE(call_with<MaxPool>(x, {{"kernel_shape", std::vector<std::int64_t>{2}}, {"pads", std::vector<std::int64_t>{-1, 0}}}),
               "attribute-range");
    CHECK_RULE(call_with<MaxPool>(x, {{"kernel_shape", std::vector<std::int64_t>{2}}, {"ceil_mode", std::int64_t{3}}}),
               "attribute-range");
    CHECK_RULE(call_with<MaxPool>(x, {{"kernel_shape", std::vector<std::int64_t>{2}}, {"count_include_pad", std::int64_t{1}}}),
               "known-attribute");  // AveragePool only
    CHECK_RULE(call_with<GlobalMaxPool>(x, {{"kernel_shape", std::vector<std::int64_t>{2}}}), "known-attribute");
}

TEST_CASE("pool rule float-or-quantized: int32 and unquantized int8 inputs are refused") {
    CHECK_RULE(call<MaxPool>({Tensor::from<std::int32_t>({1, 1, 2}, {1, 2})}, mx({2}, {}, {})), "float-or-quantized");
    CHECK_RULE(call<AveragePool>({Tensor::from<std::int8_t>({1, 1, 2}, {1, 2})}, avg({2}, {}, {}, 0)),
               "float-or-quantized");
}

TEST_CASE("pool rule per-tensor-quantization: per-axis quantized input is refused") {
    const auto q = numeric::make_quant_per_axis(DType::i8, {0.5f}, {0}, 1, {1, 1, 2}).value();
    const Tensor x = Tensor::from<std::int8_t>({1, 1, 2}, {1, 2}, q);
    CHECK_RULE(call<MaxPool>({x}, mx({2}, {}, {})), "per-tensor-quantization");
}

TEST_CASE("pool rule output-quantization-required: a quantized average needs the caller's output parameters") {
    const Tensor x = Tensor::from<std::int8_t>({1, 1, 2}, {1, 2}, quant(DType::i8, 0.5f, 0));
    CHECK_RULE(call<AveragePool>({x}, avg({2}, {}, {}, 0)), "output-quantization-required");
}

TEST_CASE("pool rule output-dtype: int8 in, int8 out (a storage change is QuantizeLinear's job)") {
    const Tensor x = Tensor::from<std::int8_t>({1, 1, 2}, {1, 2}, quant(DType::i8, 0.5f, 0));
    const TensorType out{DType::u8, {1, 1, 1}, quant(DType::u8, 0.5f, 128)};
    CHECK_RULE(AveragePool::plan(std::array{type_of(x)}, avg({2}, {}, {}, 0), out, janus::numeric::default_rounding_mode), "output-dtype");
    CHECK_RULE(MaxPool::plan(std::array{type_of(x)}, mx({2}, {}, {}), out, janus::numeric::default_rounding_mode), "output-dtype");
}

TEST_CASE("pool rule output-shape / output-type-matches-inference: the output must be the pooled shape") {
    const Tensor x = f1d({1, 2, 3});
    CHECK_RULE(call<MaxPool>({x}, mx({2}, {}, {}), TensorType{DType::f32, {1, 1, 3}, std::nullopt}),
               "output-type-matches-inference");
    CHECK_RULE(MaxPool::plan(std::array{type_of(x)}, mx({2}, {}, {}), TensorType{DType::f32, {1, 1, 3}, std::nullopt}, janus::numeric::default_rounding_mode),
               "output-shape");
}

TEST_CASE("pool rule input-count: one input") {
    const Tensor x = f1d({1, 2, 3});
    CHECK_RULE(call<GlobalAveragePool>({x, x}), "input-count");
}

TEST_CASE("pool rule requantize-left-shift-fits-int32: a count-1 corner with a huge centre count and s_in > s_out") {
    // L = K = 2^22, stride 2^20, pads 2^22 - 1: 8 windows whose counts (count_include_pad=0) run from 1 (first) to
    // 2^22 - 1. The clamp limit ~512 * 2^22 * s_out / s_in = 2^29 shifted by M[1] = 4's shift 3 leaves int32:
    // refused (plan only: no input tensor is allocated).
    const std::int64_t n = std::int64_t{1} << 22;
    const TensorType in{DType::i8, {1, 1, n}, quant(DType::i8, 1.0f, 0)};
    const auto a = avg({n}, {std::int64_t{1} << 20}, {n - 1, n - 1}, 0);
    const auto t = AveragePool::infer(std::vector<TensorType>{in}, a);
    REQUIRE(t.ok());
    CHECK_RULE(AveragePool::plan(std::array{in}, a, TensorType{DType::i8, t->shape, quant(DType::i8, 0.25f, 0)}, janus::numeric::default_rounding_mode),
               "requantize-left-shift-fits-int32");
    // the same geometry with s_in = s_out is accepted (the clamp limit shrinks the shifted range)
    CHECK(AveragePool::plan(std::array{in}, a, TensorType{DType::i8, t->shape, quant(DType::i8, 1.0f, 0)}, janus::numeric::default_rounding_mode).ok());
}

// The plan needs only the denominators that occur: window_count_values, never a tensor over the output (issue 26: a
// 253-byte model with a 16384 x 16384 AveragePool made `janusc compile` allocate 2 GB and take 11 s).
TEST_CASE("quantized AveragePool plan: denominators without visiting the output; rule pool-count-table") {
    const std::int64_t n = 16384;
    const TensorType in{DType::i8, {1, 1, n, n}, quant(DType::i8, 0.5f, 0)};
    const TensorType out{DType::i8, {1, 1, n, n}, quant(DType::i8, 0.25f, 0)};
    const auto p = AveragePool::plan(std::array{in}, avg({3, 3}, {1, 1}, {1, 1, 1, 1}, 0), out,
                                     janus::numeric::default_rounding_mode);
    REQUIRE(p.ok());
    CHECK(p->min_count == 4);  // a corner
    CHECK(p->max_count == 9);
    CHECK(p->table.size() == 6);
    CHECK(p->table[1].multiplier == p->table[0].multiplier);  // 5 never occurs: it repeats 4's entry
    CHECK(p->table[2].value() != p->table[0].value());  // 6 (an edge) has its own
    // per axis, windows of 1 and 2^15 - 1 input positions: counts 1 .. (2^15 - 1)^2, a table of 2^30 entries
    const std::int64_t k = std::int64_t{1} << 15;
    const TensorType tin{DType::i8, {1, 1, k, k}, quant(DType::i8, 1.0f, 0)};
    const auto a = avg({k, k}, {k, k}, {k - 1, k - 1, 1, 1}, 0);
    const auto t = AveragePool::infer(std::array{tin}, a);
    REQUIRE(t.ok());
    CHECK(t->shape == Shape{1, 1, 2, 2});
    CHECK_RULE(AveragePool::plan(std::array{tin}, a, TensorType{DType::i8, t->shape, quant(DType::i8, 1.0f, 0)},
                                 janus::numeric::default_rounding_mode),
               "pool-count-table");
}

// ---- The rq_indexed primitive (expr.hpp) the average epilogue is built on ------------------------------------------

TEST_CASE("rq_indexed multiplies by the table entry its index selects; scalar == batch; out-of-table is refused") {
    using namespace expr;
    const std::vector<numeric::QuantizedMultiplier> table = {numeric::quantize_multiplier(1.0 / 2).value(),
                                                             numeric::quantize_multiplier(1.0 / 3).value(),
                                                             numeric::quantize_multiplier(1.0 / 4).value()};
    const auto e = rq_indexed<numeric::round_double>(In<0, std::int32_t>{}, clamp(In<1, std::int32_t>{}, 2, 4),
                                                     std::span<const numeric::QuantizedMultiplier>(table), 2);
    ScalarArgs s;
    s.i[0] = 12;
    s.i[1] = 3;
    CHECK(e.eval(s) == 4);  // 12 / 3
    s.i[1] = 4;
    CHECK(e.eval(s) == 3);  // 12 / 4
    BatchArgs b;
    alignas(64) std::array<std::int32_t, lanes> xs{}, ks{}, got{};
    for (std::size_t l = 0; l < lanes; ++l) xs[l] = static_cast<std::int32_t>(l) * 7 - 20, ks[l] = 2 + static_cast<std::int32_t>(l % 3);
    b.i[0] = xsimd::batch<std::int32_t, arch>::load_aligned(xs.data());
    b.i[1] = xsimd::batch<std::int32_t, arch>::load_aligned(ks.data());
    e.eval(b).store_aligned(got.data());
    for (std::size_t l = 0; l < lanes; ++l) {
        s.i[0] = xs[l];
        s.i[1] = ks[l];
        CHECK(got[l] == e.eval(s));
    }
    InputRanges r;
    r.r[0] = {-100, 100};
    r.set[0] = true;
    CHECK(check_ranges(e, r, "t").ok());
    CHECK(to_string(e) == "rq_indexed<double>(in0:int32, clamp(in1:int32, 2, 4), table[3]@2)");
    // an index range the table does not cover: unbounded, refused by the range proof
    const auto bad = rq_indexed<numeric::round_double>(In<0, std::int32_t>{}, clamp(In<1, std::int32_t>{}, 1, 4),
                                                       std::span<const numeric::QuantizedMultiplier>(table), 2);
    CHECK_RULE(check_ranges(bad, r, "t"), "intermediate-fits-int32");
}
