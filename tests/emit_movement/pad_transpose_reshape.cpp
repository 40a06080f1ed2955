// Differential verification of emit/movement.hpp, part 2: Pad (constant, edge, reflect), Transpose, Expand and the
// Reshape family (view or repacking copy), each with equal and different output quantization (move, then
// requantize by lut.apply), compared with ops::call<Op> bit for bit on the simulator. Refusals name their rule.
#include "movement_support.hpp"

using namespace mt;

namespace {

template <class Op>
std::vector<std::int64_t> out_shape(const DramArray& x, const typename Op::Attrs& a) {
    const auto t = Op::infer(std::vector<ops::TensorType>{x.type()}, a);
    REQUIRE_MESSAGE(t.ok(), (t.ok() ? std::string() : t.error().message()));
    return {t->shape.span().begin(), t->shape.span().end()};
}

/// Run `lower(b, a, x, y)` for Op on a random x of shape s (at a wide pitch) and compare with the host.
template <class Op, class Lower>
Outcome check_op(const std::vector<std::int64_t>& s, const typename Op::Attrs& a, numeric::QuantParams qx,
                 numeric::QuantParams qy, std::uint32_t seed, Lower&& lower) {
    const DramArray x{2, 16, s, round16(std::max<std::int64_t>(s.back(), 1)) + 16, qx};
    const DramArray y = DramArray::packed(3, 32, out_shape<Op>(x, a), qy);
    const Tensor tx = random_tensor(s, qx, seed);
    const auto want = host<Op>({tx}, a, y);
    auto o = run({{x, tx}}, y, [&](Builder& b) { return lower(b, a, x, y); });
    CHECK(o.got == want);
    return o;
}

const auto pad_op = [](Builder& b, const ops::Pad::Attrs& a, const DramArray& x, const DramArray& y) {
    return lower_pad(b, a, x, y, janus::numeric::default_rounding_mode);
};
const auto transpose_op = [](Builder& b, const ops::Transpose::Attrs& a, const DramArray& x, const DramArray& y) {
    return lower_transpose(b, a, x, y, janus::numeric::default_rounding_mode);
};
const auto expand_op = [](Builder& b, const ops::Expand::Attrs& a, const DramArray& x, const DramArray& y) {
    return lower_expand(b, a, x, y, janus::numeric::default_rounding_mode);
};

}  // namespace

TEST_CASE("Pad constant: outer pads and crops, aligned innermost pads, the zero point as the pad value") {
    std::uint32_t seed = 400;
    struct Case {
        std::vector<std::int64_t> shape, pads;
        float value;
    };
    const Case cases[] = {
        {{3, 7}, {1, 0, 2, 0}, 0.0f},
        {{2, 3, 13}, {0, 1, 0, 1, 2, 0}, 0.0f},
        {{2, 3, 13}, {-1, 2, 0, 1, -1, 0}, 0.37f},  // crops on the outer axes
        {{4, 16}, {1, 16, 0, 32}, 0.0f},            // innermost pads at multiples of 16
        {{2, 2, 3, 40}, {1, 0, 2, 0, 0, 1, 0, 0}, -0.5f},
        {{2, 3, 32}, {0, 0, -16, 0, 1, 5}, 0.0f},  // innermost crop 16, then an end pad after 16 elements
        {{5, 1}, {2, 0, 1, 0}, 0.0f},
    };
    int runs = 0;
    for (const auto& c : cases)
        for (const std::int32_t zp : {-128, 127})
            for (const bool same : {true, false}) {
                CAPTURE(c.shape.size());
                CAPTURE(c.shape.back());
                CAPTURE(zp);
                CAPTURE(same);
                ops::Pad::Attrs a;
                a.pads = c.pads;
                a.value = c.value;
                const auto qx = quant(0.05f, zp), qy = same ? qx : quant(0.02f, zp / 2);
                const auto o = check_op<ops::Pad>(c.shape, a, qx, qy, ++seed, pad_op);
                CHECK(has(o.log, "constant slabs filled"));
                ++runs;
            }
    CHECK(runs == 28);
}

TEST_CASE("Pad edge and reflect on outer axes (rows copied from the output), with crops and requantization") {
    std::uint32_t seed = 500;
    struct Case {
        std::vector<std::int64_t> shape, pads;
    };
    const Case cases[] = {
        {{4, 13}, {2, 0, 3, 0}},
        {{3, 4, 7}, {2, 1, 0, 1, 3, 0}},
        {{2, 3, 4, 16}, {1, 2, -1, 0, 1, 0, 2, 0}},
        {{5, 2, 40}, {-1, 1, 0, 3, 1, 0}},
    };
    for (const auto& c : cases)
        for (const std::string mode : {"edge", "reflect"})
            for (const bool same : {true, false}) {
                CAPTURE(c.shape.size());
                CAPTURE(mode);
                CAPTURE(same);
                ops::Pad::Attrs a;
                a.pads = c.pads;
                a.mode = mode;
                const auto qx = quant(0.05f, -128), qy = same ? qx : quant(0.09f, 127);
                const auto o = check_op<ops::Pad>(c.shape, a, qx, qy, ++seed, pad_op);
                CHECK(has(o.log, mode + " rows copied"));
            }
}

TEST_CASE("Pad refusals: unaligned or edge innermost pads, per-axis fill values") {
    Builder b("move");
    REQUIRE(b.emit("nop", {}).ok());
    const auto q = quant(0.1f, 0);
    const DramArray x = DramArray::packed(2, 0, {3, 13}, q);
    ops::Pad::Attrs a;
    a.pads = {0, 3, 0, 0};
    CHECK_REFUSED(b, lower_pad(b, a, x, DramArray::packed(3, 0, {3, 16}, q), janus::numeric::default_rounding_mode), "lower-pad-inner");
    a.pads = {0, 0, 0, 3};  // the end pad starts at byte 13
    CHECK_REFUSED(b, lower_pad(b, a, x, DramArray::packed(3, 0, {3, 16}, q), janus::numeric::default_rounding_mode), "lower-pad-inner");
    a.pads = {0, 16, 0, 0};
    a.mode = "edge";
    CHECK_REFUSED(b, lower_pad(b, a, x, DramArray::packed(3, 0, {3, 29}, q), janus::numeric::default_rounding_mode), "lower-pad-inner");
    a.mode = "constant";
    a.pads = {1, 0, 0, 0};
    CHECK_REFUSED(b, lower_pad(b, a, x, DramArray::packed(3, 0, {3, 13}, q), janus::numeric::default_rounding_mode), "output-type-matches-inference");
    a.pads = {1, 0};
    CHECK_REFUSED(b, lower_pad(b, a, x, DramArray::packed(3, 0, {4, 13}, q), janus::numeric::default_rounding_mode), "pads-length");
    // a per-axis output along the unpadded innermost axis: its pad value differs by channel
    std::vector<float> scales(13, 0.1f);
    scales[3] = 0.2f;
    DramArray xa = x;
    xa.quant =
        numeric::make_quant_per_axis(DType::i8, scales, std::vector<std::int32_t>(13, 0), 1, Shape{4, 13}, "q").value();
    a.pads = {1, 0, 0, 0};
    a.value = 1.0f;
    CHECK_REFUSED(b, lower_pad(b, a, xa, DramArray::packed(3, 0, {4, 13}, xa.quant), janus::numeric::default_rounding_mode), "lower-pad-per-axis");
}

TEST_CASE("Transpose of outer axes: ranks 3 and 4, inner extents, equal and different quantization") {
    std::uint32_t seed = 600;
    const std::vector<std::int64_t> perms3[] = {{1, 0, 2}};
    const std::vector<std::int64_t> perms4[] = {{1, 0, 2, 3}, {2, 0, 1, 3}, {0, 2, 1, 3}, {2, 1, 0, 3}};
    for (const std::int64_t inner : {1, 7, 13, 16, 40})
        for (const std::int32_t zp : {-128, 127})
            for (const bool same : {true, false}) {
                CAPTURE(inner);
                CAPTURE(zp);
                CAPTURE(same);
                const auto qx = quant(0.05f, zp), qy = same ? qx : quant(0.04f, 0);
                for (const auto& p : perms3) {
                    ops::Transpose::Attrs a{p};
                    check_op<ops::Transpose>({3, 5, inner}, a, qx, qy, ++seed, transpose_op);
                }
                for (const auto& p : perms4) {
                    ops::Transpose::Attrs a{p};
                    check_op<ops::Transpose>({2, 3, 4, inner}, a, qx, qy, ++seed, transpose_op);
                }
            }
    // rank 2 with the identity permutation: a plain row copy
    check_op<ops::Transpose>({6, 13}, ops::Transpose::Attrs{{0, 1}}, quant(0.1f, 1), quant(0.1f, 1), 9, transpose_op);
}

TEST_CASE("Transpose refusals: the innermost axis moves") {
    Builder b("move");
    REQUIRE(b.emit("nop", {}).ok());
    const auto q = quant(0.1f, 0);
    CHECK_REFUSED(b, lower_transpose(b, {}, DramArray::packed(2, 0, {3, 16}, q), DramArray::packed(3, 0, {16, 3}, q), janus::numeric::default_rounding_mode),
                  "lower-transpose-inner");
    CHECK_REFUSED(b,
                  lower_transpose(b, ops::Transpose::Attrs{{0, 2, 1}}, DramArray::packed(2, 0, {2, 3, 1}, q),
                                  DramArray::packed(3, 0, {2, 1, 3}, q), janus::numeric::default_rounding_mode),
                  "lower-transpose-inner");
    CHECK_REFUSED(b,
                  lower_transpose(b, ops::Transpose::Attrs{{0, 1, 2, 3}}, DramArray::packed(2, 0, {2, 3, 4}, q),
                                  DramArray::packed(3, 0, {2, 3, 4}, q), janus::numeric::default_rounding_mode),
                  "perm-length-matches-rank");
}

TEST_CASE("Expand of outer axes by stride-0 rows: no constant, nothing materialized; requantized once per row") {
    std::uint32_t seed = 700;
    struct Case {
        std::vector<std::int64_t> in, shape;
    };
    const Case cases[] = {
        {{1, 3, 13}, {4, 3, 13}}, {{3, 1, 40}, {2, 3, 5, 40}}, {{1, 1, 7}, {2, 3, 4, 7}}, {{2, 1, 16}, {2, 6, 16}},
        {{1, 1}, {5, 1}},         {{3, 7}, {2, 1, 3, 7}},
    };
    for (const auto& c : cases)
        for (const std::int32_t zp : {-128, 127})
            for (const bool same : {true, false}) {
                CAPTURE(c.in.size());
                CAPTURE(c.shape.size());
                CAPTURE(zp);
                CAPTURE(same);
                const auto qx = quant(0.05f, zp), qy = same ? qx : quant(0.06f, -zp / 4);
                ops::Expand::Attrs a{c.shape};
                const auto o = check_op<ops::Expand>(c.in, a, qx, qy, ++seed, expand_op);
                CHECK(o.weights.size() == (same ? 0u : 256u));  // seed A7: only the LUT table, never the tensor
            }
    Builder b("move");
    REQUIRE(b.emit("nop", {}).ok());
    const auto q = quant(0.1f, 0);
    CHECK_REFUSED(b,
                  lower_expand(b, ops::Expand::Attrs{{3, 16}}, DramArray::packed(2, 0, {3, 1}, q),
                               DramArray::packed(3, 0, {3, 16}, q), janus::numeric::default_rounding_mode),
                  "lower-expand-inner");
    CHECK_REFUSED(b,
                  lower_expand(b, ops::Expand::Attrs{{3, 2}}, DramArray::packed(2, 0, {3, 3}, q),
                               DramArray::packed(3, 0, {3, 2}, q), janus::numeric::default_rounding_mode),
                  "broadcast-compatible");
}

TEST_CASE("Reshape family: a view of the same bytes emits nothing (logged); otherwise a repacking copy") {
    const auto q = quant(0.1f, -128), q2 = quant(0.3f, 127);
    std::uint32_t seed = 800;
    {  // views: x and y the same bytes, run in place in region 3
        struct Case {
            std::vector<std::int64_t> in, shape;
            std::int64_t pitch_in, pitch_out;
        };
        const Case cases[] = {
            {{4, 3, 13}, {12, 13}, 16, 16},
            {{2, 6, 40}, {3, 4, 40}, 48, 48},
            {{4, 32}, {8, 16}, 32, 16},  // both dense: the same bytes
            {{2, 3, 7}, {6, 1, 7}, 64, 64},
        };
        for (const auto& c : cases)
            for (const bool same : {true, false}) {
                CAPTURE(c.in.size());
                CAPTURE(same);
                const DramArray x{3, 0, c.in, c.pitch_in, q};
                const DramArray y{3, 0, c.shape, c.pitch_out, same ? q : q2};
                const Tensor tx = random_tensor(c.in, q, ++seed);
                ops::Reshape::Attrs a{c.shape, 0};
                const auto want = host<ops::Reshape>({tx}, a, y);
                const auto o = run({{x, tx}}, y, [&](Builder& b) { return lower_reshape(b, a, x, y, janus::numeric::default_rounding_mode); });
                CHECK(o.got == want);
                if (same) {
                    CHECK(o.code.size() == 1);  // halt only
                    CHECK(has(o.log, "a view of the same bytes, no code"));
                } else {
                    CHECK(has(o.log, "requantized in place by lut.apply"));
                }
            }
    }
    // repacking copies: rows kept with another pitch, merged, split; Flatten, Squeeze, Unsqueeze
    for (const bool same : {true, false}) {
        CAPTURE(same);
        const auto qy = same ? q : q2;
        {
            const DramArray x{2, 0, {4, 32}, 48, q}, y = DramArray::packed(3, 0, {128}, qy);
            const Tensor tx = random_tensor(x.shape, q, ++seed);
            ops::Reshape::Attrs a{{-1}, 0};
            const auto o = run({{x, tx}}, y, [&](Builder& b) { return lower_reshape(b, a, x, y, janus::numeric::default_rounding_mode); });
            CHECK(o.got == host<ops::Reshape>({tx}, a, y));
            CHECK(has(o.log, "a repacking copy"));
        }
        {
            const DramArray x{2, 0, {2, 64}, 80, q}, y = DramArray::packed(3, 0, {8, 16}, qy);
            const Tensor tx = random_tensor(x.shape, q, ++seed);
            ops::Reshape::Attrs a{{8, 16}, 0};
            const auto o = run({{x, tx}}, y, [&](Builder& b) { return lower_reshape(b, a, x, y, janus::numeric::default_rounding_mode); });
            CHECK(o.got == host<ops::Reshape>({tx}, a, y));
        }
        {
            const DramArray x = DramArray::packed(2, 0, {2, 3, 4, 16}, q), y{3, 0, {6, 64}, 80, qy};
            const Tensor tx = random_tensor(x.shape, q, ++seed);
            ops::Flatten::Attrs a{2};
            const auto o = run({{x, tx}}, y, [&](Builder& b) { return lower_flatten(b, a, x, y, janus::numeric::default_rounding_mode); });
            CHECK(o.got == host<ops::Flatten>({tx}, a, y));
        }
        {
            const DramArray x = DramArray::packed(2, 0, {3, 1, 13}, q), y{3, 0, {3, 13}, 32, qy};
            const Tensor tx = random_tensor(x.shape, q, ++seed);
            ops::Squeeze::Attrs a{{-2}};
            const auto o = run({{x, tx}}, y, [&](Builder& b) { return lower_squeeze(b, a, x, y, janus::numeric::default_rounding_mode); });
            CHECK(o.got == host<ops::Squeeze>({tx}, a, y));
        }
        {
            const DramArray x = DramArray::packed(2, 0, {3, 7}, q), y = DramArray::packed(3, 0, {1, 3, 7}, qy);
            const Tensor tx = random_tensor(x.shape, q, ++seed);
            ops::Unsqueeze::Attrs a{{0}};
            const auto o = run({{x, tx}}, y, [&](Builder& b) { return lower_unsqueeze(b, a, x, y, janus::numeric::default_rounding_mode); });
            CHECK(o.got == host<ops::Unsqueeze>({tx}, a, y));
        }
    }
    Builder b("move");
    REQUIRE(b.emit("nop", {}).ok());
    CHECK_REFUSED(b,
                  lower_reshape(b, ops::Reshape::Attrs{{-1}, 0}, DramArray::packed(2, 0, {4, 40}, q),
                                DramArray::packed(3, 0, {160}, q), janus::numeric::default_rounding_mode),
                  "lower-reshape-inner");
    CHECK_REFUSED(b,
                  lower_reshape(b, ops::Reshape::Attrs{{4, 15}, 0}, DramArray::packed(2, 0, {6, 10}, q),
                                DramArray::packed(3, 0, {4, 15}, q), janus::numeric::default_rounding_mode),
                  "lower-reshape-inner");
    CHECK_REFUSED(b,
                  lower_unsqueeze(b, ops::Unsqueeze::Attrs{{-1}}, DramArray::packed(2, 0, {3, 13}, q),
                                  DramArray::packed(3, 0, {3, 13, 1}, q), janus::numeric::default_rounding_mode),
                  "lower-unsqueeze-inner");
    CHECK_REFUSED(b,
                  lower_reshape(b, ops::Reshape::Attrs{{13, 3}, 0}, DramArray::packed(2, 0, {3, 13}, q),
                                DramArray::packed(3, 0, {3, 13}, q), janus::numeric::default_rounding_mode),
                  "lower-reshape-layout");
}
