// Resize (nearest) on the vnpu (emit/resize.hpp): emit -> simulate -> compare with ops::call<ops::Resize> (NCHW on
// the host, NHWC on the vnpu) bit for bit, no fault, no race. Integer upscales (x2, x3), downscales, non-integer
// scales that need runs, sizes, the coordinate rules and nearest modes, a different output quantization (lut.apply),
// C = 1, 13, 40; the column split; and the refusals.
#include <doctest/doctest.h>

#include <random>
#include <string>
#include <vector>

#include <janus/emit/resize.hpp>
#include <janus/numeric/quant_params.hpp>
#include <janus/vnpu/sim/simulator.hpp>

#include "../emit/emit_support.hpp"
#include "../support/check_rule.hpp"

using namespace janus;
using namespace janus::emit;

namespace {

numeric::QuantParams q8(float s, std::int32_t z) { return numeric::make_quant(DType::i8, s, z).value(); }

ops::Resize::Attrs nearest(std::vector<float> scales, std::string coord = "half_pixel",
                           std::string mode = "round_prefer_floor", std::vector<std::int64_t> sizes = {}) {
    ops::Resize::Attrs a;
    a.scales = std::move(scales);
    a.sizes = std::move(sizes);
    a.coordinate_transformation_mode = std::move(coord);
    a.nearest_mode = std::move(mode);
    return a;
}

std::vector<std::string> check(const ops::Resize::Attrs& a, std::int64_t C, std::int64_t H, std::int64_t W,
                               std::uint32_t seed, std::optional<numeric::QuantParams> qo = std::nullopt) {
    CAPTURE(C);
    CAPTURE(H);
    CAPTURE(W);
    CAPTURE(a.coordinate_transformation_mode);
    CAPTURE(a.nearest_mode);
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> byte(-128, 127);
    std::vector<std::int8_t> x(static_cast<std::size_t>(C * H * W));
    for (auto& v : x) v = static_cast<std::int8_t>(byte(rng));
    const auto qi = q8(0.05f, -7);
    const Tensor tx = Tensor::from<std::int8_t>(Shape{1, C, H, W}, x, qi);
    const ops::TensorType tin = ops::type_of(tx);
    const auto inferred = ops::Resize::infer(std::span<const ops::TensorType>(&tin, 1), a);
    REQUIRE_MESSAGE(inferred.ok(), (inferred.ok() ? std::string() : inferred.error().message()));
    const ops::TensorType out{DType::i8, inferred->shape, qo ? qo : inferred->quant};
    const auto host = ops::call<ops::Resize>({tx}, a, out);
    REQUIRE_MESSAGE(host.ok(), (host.ok() ? std::string() : host.error().message()));
    const auto want = host->to_vector<std::int8_t>();
    const std::int64_t Ho = out.shape[2], Wo = out.shape[3], Cp = round16(C);

    Builder b("resize");
    const DramArray X{2, 0, {1, H, W, C}, Cp, qi}, Y{3, 0, {1, Ho, Wo, C}, Cp + 16, out.quant};  // a wider pitch
    const Status st = lower_resize(b, a, X, Y, janus::numeric::default_rounding_mode);
    REQUIRE_MESSAGE(st.ok(), (st.ok() ? std::string() : st.error().message()));
    const auto log = b.log();
    vnpu::sim::Machine m;
    m.dram[2] = et::to_nhwc(x, C, H * W, Cp, 0x5a);  // padding channels hold anything
    m.dram[3].resize(static_cast<std::size_t>(Ho * Wo * (Cp + 16)));
    et::run_clean(b, m);
    const auto got = et::from_nhwc(m.dram[3], C, Ho * Wo, (Cp + 16));
    CHECK(got == want);
    return log;
}

}  // namespace

TEST_CASE("nearest Resize as DMA pixel copies: upscales, downscales, coordinate rules, nearest modes") {
    auto log = check(nearest({1, 1, 2, 2}), 13, 5, 6, 1);  // x2: two classes per row
    REQUIRE(!log.empty());
    CHECK(log.back().find("output columns in 2 class(es)") != std::string::npos);
    log = check(nearest({1, 1, 3, 3}, "asymmetric", "floor"), 16, 3, 4, 2);  // x3
    CHECK(log.back().find("in 3 class(es)") != std::string::npos);
    check(nearest({1, 1, 0.5f, 0.5f}), 40, 8, 10, 3);                                       // a downscale: one class
    check(nearest({1, 1, 1.5f, 1.75f}, "align_corners", "round_prefer_ceil"), 1, 4, 4, 4);  // periods or runs
    check(nearest({}, "pytorch_half_pixel", "ceil", {1, 13, 7, 11}), 13, 3, 5, 5);          // sizes
    check(nearest({1, 1, 2, 2}, "tf_half_pixel_for_nn"), 16, 4, 4, 6);
    check(nearest({1, 1, 2, 2}), 13, 4, 5, 7, q8(0.1f, 20));  // a different output quantization: lut.apply
}

TEST_CASE("the column split: periods, then runs") {
    using resize_detail::split_columns;
    const auto two = split_columns({0, 0, 1, 1, 2, 2, 3});
    REQUIRE(two.size() == 2);
    CHECK(two[0].count == 4);
    CHECK(two[0].in_step == 1);
    CHECK(two[1].count == 3);
    const auto one = split_columns({0, 2, 4, 6});
    REQUIRE(one.size() == 1);
    CHECK(one[0].in_step == 2);
    std::vector<std::int64_t> odd{0, 1, 1, 2, 3, 3, 4, 5, 5, 6, 7, 7, 8, 9, 9, 10, 11, 11, 12, 12, 13};  // no period
    const auto runs = split_columns(odd);
    std::int64_t covered = 0;
    for (const auto& c : runs) covered += c.count;
    CHECK(covered == static_cast<std::int64_t>(odd.size()));
    for (const auto& c : runs)
        for (std::int64_t k = 0; k < c.count; ++k)
            CHECK(odd[static_cast<std::size_t>(c.first + k * c.out_step)] == c.in_first + k * c.in_step);
}

TEST_CASE("Resize refusals") {
    Builder b("resize");
    REQUIRE(b.emit("nop", {}).ok());
    const auto qi = q8(0.05f, -7);
    const DramArray X{2, 0, {1, 4, 4, 16}, 16, qi}, Y{3, 0, {1, 8, 8, 16}, 16, qi};
    auto linear = nearest({1, 1, 2, 2});
    linear.mode = "linear";
    CHECK_RULE(lower_resize(b, linear, X, Y, janus::numeric::default_rounding_mode), "lower-resize-mode");
    // an output descriptor of another extent: the op's plan checks the output type
    CHECK_RULE(lower_resize(b, nearest({1, 1, 2, 2}), X, DramArray{3, 0, {1, 8, 7, 16}, 16, qi}, janus::numeric::default_rounding_mode),
               "output-type-matches-inference");
    CHECK_RULE(lower_resize(b, nearest({1, 1, 2, 2}), DramArray{2, 0, {4, 16}, 16, qi}, Y, janus::numeric::default_rounding_mode), "lower-resize-layout");
    // program-size, before any index table is made: an output extent above emit::max_program_instructions (a
    // 300-byte model asked for 2^22 rows of copies: 25 M instructions, 4 GB), or more row copies than that (2^20
    // rows x 2 column classes)
    const DramArray tiny{2, 0, {1, 2, 2, 16}, 16, qi};
    const std::int64_t cap = max_program_instructions;
    const auto sized = [](std::int64_t h, std::int64_t w) { return nearest({}, "asymmetric", "floor", {1, 16, h, w}); };
    CHECK_RULE(lower_resize(b, sized(2 * cap, 2), tiny, DramArray{3, 0, {1, 2 * cap, 2, 16}, 16, qi},
                            janus::numeric::default_rounding_mode),
               "program-size");
    CHECK_RULE(lower_resize(b, sized(2, 2 * cap), tiny, DramArray{3, 0, {1, 2, 2 * cap, 16}, 16, qi},
                            janus::numeric::default_rounding_mode),
               "program-size");
    CHECK_RULE(lower_resize(b, sized(cap, 3), tiny, DramArray{3, 0, {1, cap, 3, 16}, 16, qi},
                            janus::numeric::default_rounding_mode),
               "program-size");
    CHECK(b.size() == 1);
    CHECK(b.holders().empty());
}
