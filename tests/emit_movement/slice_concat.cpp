// Differential verification of emit/movement.hpp, part 1: Requantize, Slice and Concat. Each case emits the
// lowering, runs it on the simulator (no fault, no race, no leaked event) and compares the output elements with
// ops::call<Op> bit for bit. Matrix: inner extents 1, 7, 13, 16, 40; ranks 2-4; axes positive and negative; steps
// 1, 2, 3, -1, -2; pitches packed and wider; zero points -128 and 127; equal and different output quantization.
// A mutated DMA stride must break the comparison. Refusals name their rule and leave the builder untouched.
#include "movement_support.hpp"

using namespace mt;

namespace {

const std::vector<std::int64_t> shapes[] = {{5, 1}, {3, 7}, {2, 3, 13}, {4, 16}, {2, 3, 2, 40}, {3, 2, 4, 13}};

std::int64_t wide(std::int64_t inner) { return round16(std::max<std::int64_t>(inner, 1)) + 32; }

}  // namespace

TEST_CASE("Requantize: lut.apply with the host kernel's table, equal and different pitches, zero points") {
    std::uint32_t seed = 1;
    int streamed = 0, staged = 0;
    for (const auto& s : shapes)
        for (const std::int32_t zp : {-128, 127})
            for (const bool same_pitch : {true, false}) {
                CAPTURE(s.size());
                CAPTURE(s.back());
                CAPTURE(zp);
                CAPTURE(same_pitch);
                const auto qx = quant(0.05f, zp), qy = quant(0.031f, zp == 127 ? -128 : 127);
                const DramArray x = DramArray::packed(2, 0, s, qx);
                DramArray y = DramArray::packed(3, 0, s, qy);
                if (!same_pitch) y.pitch = wide(s.back());
                const Tensor tx = random_tensor(s, qx, ++seed);
                const ops::Requantize::Attrs a{};
                const auto want = host<ops::Requantize>({tx}, a, y);
                const auto o = run({{x, tx}}, y, [&](Builder& b) { return lower_requantize(b, a, x, y, janus::numeric::default_rounding_mode); });
                CHECK(o.got == want);
                CHECK(count(o.code, "lut.apply") > 0);
                streamed += has(o.log, "lut.apply streamed");
                staged += has(o.log, "requantized in LMEM by lut.apply");
            }
    CHECK(streamed == 12);
    CHECK(staged == 12);
}

TEST_CASE("Requantize: the table is the host's on all 256 values; equal parameters copy bits without a LUT") {
    const std::vector<std::int64_t> s{2, 128};
    std::vector<std::int8_t> all(256);
    for (int k = 0; k < 256; ++k) all[static_cast<std::size_t>(k)] = static_cast<std::int8_t>(k - 128);
    for (const float ratio : {0.3f, 1.7f, 40.0f}) {
        CAPTURE(ratio);
        const auto qx = quant(0.02f, -3), qy = quant(0.02f / ratio, 5);
        const Tensor tx = Tensor::from<std::int8_t>(to_shape(s), all, qx);
        const DramArray x = DramArray::packed(2, 0, s, qx), y = DramArray::packed(3, 64, s, qy);
        const auto want = host<ops::Requantize>({tx}, {}, y);
        const auto o = run({{x, tx}}, y, [&](Builder& b) { return lower_requantize(b, {}, x, y, janus::numeric::default_rounding_mode); });
        CHECK(o.got == want);
    }
    const auto q = quant(0.02f, 7);
    const Tensor tx = Tensor::from<std::int8_t>(to_shape(s), all, q);
    const DramArray x = DramArray::packed(2, 0, s, q), y{3, 0, s, 144, q};
    const auto o = run({{x, tx}}, y, [&](Builder& b) { return lower_requantize(b, {}, x, y, janus::numeric::default_rounding_mode); });
    CHECK(o.got == all);
    CHECK(count(o.code, "lut.apply") == 0);
    CHECK(o.weights.empty());
    CHECK(has(o.log, "equal parameters, a bit copy"));
}

TEST_CASE("Requantize refusals: per-axis, uint8, layouts") {
    Builder b("move");
    REQUIRE(b.emit("nop", {}).ok());
    const auto q = quant(0.1f, 0);
    const DramArray x = DramArray::packed(2, 0, {4, 16}, q), y = DramArray::packed(3, 0, {4, 16}, quant(0.2f, 1));
    const auto per_axis =
        numeric::make_quant_per_axis(DType::i8, {0.1f, 0.2f, 0.3f, 0.4f}, {0, 0, 0, 0}, 0, Shape{4, 16}, "q").value();
    DramArray xa = x;
    xa.quant = per_axis;
    CHECK_REFUSED(b, lower_requantize(b, {}, xa, y, janus::numeric::default_rounding_mode), "lower-requantize-per-axis");
    ops::Requantize::Attrs u8;
    u8.dtype = "uint8";
    CHECK_REFUSED(b, lower_requantize(b, u8, x, y, janus::numeric::default_rounding_mode), "lower-requantize-type");
    CHECK_REFUSED(b, lower_requantize(b, {}, x, DramArray::packed(3, 0, {4, 15}, q), janus::numeric::default_rounding_mode), "lower-requantize-layout");
    CHECK_REFUSED(b, lower_requantize(b, {}, x, DramArray{3, 0, {4, 16}, 24, q}, janus::numeric::default_rounding_mode), "lower-requantize-layout");  // pitch
    CHECK_REFUSED(b, lower_requantize(b, {}, x, DramArray{3, 8, {4, 16}, 16, q}, janus::numeric::default_rounding_mode), "lower-requantize-layout");  // offset
    CHECK_REFUSED(b, lower_requantize(b, {}, x, DramArray::packed(2, 32, {4, 16}, q), janus::numeric::default_rounding_mode), "lower-requantize-layout");
    DramArray none = y;
    none.quant.reset();
    CHECK_REFUSED(b, lower_requantize(b, {}, x, none, janus::numeric::default_rounding_mode), "output-quantization-required");
}

TEST_CASE("Slice on outer axes: ranks 2-4, negative axes, steps 1, 2, 3, -1, -2, equal and different quantization") {
    std::uint32_t seed = 100;
    int runs = 0, requantized = 0;
    for (const auto& s : shapes) {
        const int r = static_cast<int>(s.size());
        for (int axis = 0; axis + 1 < r; ++axis)
            for (const std::int64_t step : {1, 2, 3, -1, -2})
                for (const std::int32_t zp : {-128, 127})
                    for (const bool same : {true, false}) {
                        const std::int64_t ax = (runs % 2) ? axis - r : axis;  // negative axes every other run
                        CAPTURE(r);
                        CAPTURE(s.back());
                        CAPTURE(ax);
                        CAPTURE(step);
                        CAPTURE(zp);
                        CAPTURE(same);
                        ops::Slice::Attrs a;
                        a.axes = {ax};
                        a.steps = {step};
                        a.starts = {step > 0 ? 1 : -1};
                        a.ends = {step > 0 ? ops::Slice::i64_max : ops::Slice::i64_min};
                        if (s[static_cast<std::size_t>(axis)] == 1) a.starts = {0};
                        const auto qx = quant(0.05f, zp), qy = same ? qx : quant(0.08f, -zp / 2);
                        const DramArray x{2, 32, s, wide(s.back()), qx};
                        const Tensor tx = random_tensor(s, qx, ++seed);
                        const auto inferred = ops::Slice::infer(std::vector<ops::TensorType>{x.type()}, a);
                        REQUIRE(inferred.ok());
                        std::vector<std::int64_t> ys(inferred->shape.span().begin(), inferred->shape.span().end());
                        const DramArray y = DramArray::packed(3, 16, ys, qy);
                        const auto want = host<ops::Slice>({tx}, a, y);
                        const auto o = run({{x, tx}}, y, [&](Builder& b) { return lower_slice(b, a, x, y, janus::numeric::default_rounding_mode); });
                        CHECK(o.got == want);
                        requantized += count(o.code, "lut.apply") > 0;
                        ++runs;
                    }
    }
    CHECK(runs == 220);
    CHECK(requantized == 110);
}

TEST_CASE("Slice on several axes at once, and on the innermost axis from multiples of 16") {
    std::uint32_t seed = 200;
    const auto q = quant(0.1f, -128);
    struct Case {
        std::vector<std::int64_t> shape, starts, ends, axes, steps;
    };
    const Case cases[] = {
        {{3, 4, 40}, {16}, {40}, {-1}, {1}},  // innermost from 16: one aligned row piece
        {{3, 4, 40}, {0}, {13}, {2}, {1}},    // innermost prefix
        {{2, 3, 2, 40}, {1, 16, -1}, {3, 32, -3}, {1, 3, 0}, {1, 1, -1}},
        {{5, 6, 16}, {4, 0, 0}, {0, 6, 16}, {0, 1, 2}, {-2, 3, 1}},
        {{6, 7}, {5, 0}, {-7, 7}, {0, 1}, {-1, 1}},  // a reversed rank-2 tensor
        {{4, 3, 2, 13}, {0, 2, 1}, {4, 0, 2}, {-4, -3, -2}, {3, -2, 1}},
    };
    for (const auto& c : cases) {
        CAPTURE(c.shape.size());
        ops::Slice::Attrs a{c.starts, c.ends, c.axes, c.steps};
        const DramArray x = DramArray::packed(2, 0, c.shape, q);
        const Tensor tx = random_tensor(c.shape, q, ++seed);
        const auto inferred = ops::Slice::infer(std::vector<ops::TensorType>{x.type()}, a);
        REQUIRE(inferred.ok());
        std::vector<std::int64_t> ys(inferred->shape.span().begin(), inferred->shape.span().end());
        const DramArray y = DramArray::packed(3, 0, ys, q);
        const auto want = host<ops::Slice>({tx}, a, y);
        const auto o = run({{x, tx}}, y, [&](Builder& b) { return lower_slice(b, a, x, y, janus::numeric::default_rounding_mode); });
        CHECK(o.got == want);
        CHECK(count(o.code, "lut.apply") == 0);
        CHECK(events(o.code) == 0);  // pure DMA: the queue is in order
    }
}

TEST_CASE("Slice: a wrong DMA stride breaks the comparison (the check can fail)") {
    const std::vector<std::int64_t> s{6, 4, 13};
    const auto q = quant(0.1f, 3);
    ops::Slice::Attrs a;
    a.starts = {0};
    a.ends = {6};
    a.axes = {0};
    a.steps = {2};
    const DramArray x = DramArray::packed(2, 0, s, q), y = DramArray::packed(3, 0, {3, 4, 13}, q);
    const Tensor tx = random_tensor(s, q, 77);
    const auto want = host<ops::Slice>({tx}, a, y);
    const auto good = run({{x, tx}}, y, [&](Builder& b) { return lower_slice(b, a, x, y, janus::numeric::default_rounding_mode); });
    CHECK(good.got == want);
    int mutated = 0;
    const auto shrink_src_stride = [&](std::vector<vnpu::Instr>& code) {
        for (auto& in : code)
            if (in.info->mnemonic == "dma.cfg" && in.operands[1] >= 32) in.operands[1] -= 16, ++mutated;
    };
    const auto bad = run(
        {{x, tx}}, y, [&](Builder& b) { return lower_slice(b, a, x, y, janus::numeric::default_rounding_mode); }, shrink_src_stride);
    CHECK(mutated > 0);
    CHECK(bad.got != want);
    int moved = 0;
    const auto shift_dst_stride = [&](std::vector<vnpu::Instr>& code) {
        for (auto& in : code)
            if (in.info->mnemonic == "dma.cfg" && in.operands[2] >= 32) in.operands[2] += 16, ++moved;
    };
    const auto bad2 = run(
        {{x, tx}}, y, [&](Builder& b) { return lower_slice(b, a, x, y, janus::numeric::default_rounding_mode); }, shift_dst_stride);
    CHECK(moved > 0);
    CHECK(bad2.got != want);
}

TEST_CASE("Slice refusals: unaligned or stepped innermost slices, per-axis requantization, layouts") {
    Builder b("move");
    REQUIRE(b.emit("nop", {}).ok());
    const auto q = quant(0.1f, 0);
    const DramArray x = DramArray::packed(2, 0, {3, 40}, q);
    ops::Slice::Attrs a{{3}, {40}, {1}, {1}};
    CHECK_REFUSED(b, lower_slice(b, a, x, DramArray::packed(3, 0, {3, 37}, q), janus::numeric::default_rounding_mode), "lower-slice-inner");
    ops::Slice::Attrs stepped{{0}, {40}, {-1}, {2}};
    CHECK_REFUSED(b, lower_slice(b, stepped, x, DramArray::packed(3, 0, {3, 20}, q), janus::numeric::default_rounding_mode), "lower-slice-inner");
    ops::Slice::Attrs rows{{1}, {3}, {0}, {1}};
    CHECK_REFUSED(b, lower_slice(b, rows, x, DramArray::packed(3, 0, {3, 40}, q), janus::numeric::default_rounding_mode), "lower-slice-layout");
    const auto pa =
        numeric::make_quant_per_axis(DType::i8, {0.1f, 0.2f, 0.3f}, {0, 0, 0}, 0, Shape{3, 40}, "q").value();
    DramArray xa = x;
    xa.quant = pa;
    CHECK_REFUSED(b, lower_slice(b, rows, xa, DramArray::packed(3, 0, {2, 40}, q), janus::numeric::default_rounding_mode), "lower-slice-per-axis");
    ops::Slice::Attrs zero_step{{0}, {3}, {0}, {0}};
    CHECK_REFUSED(b, lower_slice(b, zero_step, x, DramArray::packed(3, 0, {3, 40}, q), janus::numeric::default_rounding_mode), "slice-step-nonzero");
    // a per-axis output equal to the sliced input's quantization is a bit copy: lowered
    const auto pa2 = numeric::make_quant_per_axis(DType::i8, {0.2f, 0.3f}, {0, 0}, 0, Shape{2, 40}, "q").value();
    CHECK(lower_slice(b, rows, xa, DramArray::packed(3, 0, {2, 40}, pa2), janus::numeric::default_rounding_mode).ok());
}

TEST_CASE("Concat along outer axes and along the innermost axis at multiples of 16, with per-input requantization") {
    std::uint32_t seed = 300;
    struct Case {
        std::vector<std::vector<std::int64_t>> in;
        std::int64_t axis;
    };
    const Case cases[] = {
        {{{2, 3, 13}, {2, 5, 13}}, 1},
        {{{2, 3, 13}, {2, 5, 13}, {2, 1, 13}}, -2},
        {{{1, 7}, {4, 7}}, 0},
        {{{2, 2, 3, 40}, {2, 1, 3, 40}}, -3},
        {{{2, 2, 3, 1}, {2, 2, 4, 1}}, 2},
        {{{3, 16}, {3, 32}, {3, 7}}, -1},           // innermost: offsets 0, 16, 48
        {{{2, 2, 16}, {2, 2, 40}}, 2},              // innermost: the second input's tail rounds up into the padding
        {{{2, 4, 16}, {0, 4, 16}, {3, 4, 16}}, 0},  // an empty input
    };
    int per_input_tables = 0;
    for (const auto& c : cases)
        for (const std::int32_t zp : {-128, 127})
            for (const bool same : {true, false}) {
                CAPTURE(c.in.size());
                CAPTURE(c.axis);
                CAPTURE(zp);
                CAPTURE(same);
                std::vector<std::pair<DramArray, Tensor>> ins;
                std::vector<DramArray> xs;
                std::vector<Tensor> ts;
                std::uint32_t off = 0;
                for (std::size_t k = 0; k < c.in.size(); ++k) {
                    const auto q = same ? quant(0.05f, zp) : quant(0.05f + 0.02f * static_cast<float>(k), zp);
                    DramArray x = DramArray::packed(2, off, c.in[k], q);
                    if (k == 1) x.pitch += 16;  // inputs of different pitches
                    off += static_cast<std::uint32_t>(x.bytes()) + 48;
                    off = static_cast<std::uint32_t>(round16(off));
                    const Tensor t = random_tensor(c.in[k], q, ++seed);
                    ins.emplace_back(x, t);
                    xs.push_back(x);
                    ts.push_back(t);
                }
                ops::Concat::Attrs a;
                a.axis = c.axis;
                std::vector<ops::TensorType> types;
                for (const auto& x : xs) types.push_back(x.type());
                const auto p = ops::Concat::geometry(types, a);
                REQUIRE(p.ok());
                std::vector<std::int64_t> ys(p->out.shape.span().begin(), p->out.shape.span().end());
                const auto qy = same ? quant(0.05f, zp) : quant(0.07f, -zp / 3);
                const DramArray y = DramArray::packed(3, 0, ys, qy);
                const auto want = host<ops::Concat>(ts, a, y);
                const auto o = run(ins, y, [&](Builder& b) { return lower_concat(b, a, xs, y, janus::numeric::default_rounding_mode); });
                CHECK(o.got == want);
                if (!same) per_input_tables += count(o.code, "lut.apply") > 0 && o.weights.size() >= 512;
            }
    CHECK(per_input_tables == 16);
}

TEST_CASE("Concat refusals: unaligned innermost offsets, per-axis requantization, shapes") {
    Builder b("move");
    REQUIRE(b.emit("nop", {}).ok());
    const auto q = quant(0.1f, 0);
    const DramArray xs[2] = {DramArray::packed(2, 0, {3, 13}, q), DramArray::packed(2, 64, {3, 16}, q)};
    ops::Concat::Attrs a;
    a.axis = 1;
    CHECK_REFUSED(b, lower_concat(b, a, xs, DramArray::packed(3, 0, {3, 29}, q), janus::numeric::default_rounding_mode), "lower-concat-inner");
    a.axis = 0;
    CHECK_REFUSED(b, lower_concat(b, a, xs, DramArray::packed(3, 0, {6, 13}, q), janus::numeric::default_rounding_mode), "concat-extents-match");
    const DramArray same[2] = {DramArray::packed(2, 0, {3, 16}, q), DramArray::packed(2, 64, {2, 16}, q)};
    CHECK_REFUSED(b, lower_concat(b, a, same, DramArray::packed(3, 0, {6, 16}, q), janus::numeric::default_rounding_mode), "output-type-matches-inference");
    CHECK_REFUSED(b, lower_concat(b, a, same, DramArray::packed(2, 32, {5, 16}, q), janus::numeric::default_rounding_mode), "lower-concat-layout");
    const auto pa = numeric::make_quant_per_axis(DType::i8, {0.1f, 0.2f}, {0, 0}, 1, Shape{5, 2}, "q").value();
    const DramArray two[2] = {DramArray::packed(2, 0, {3, 2}, q), DramArray::packed(2, 64, {2, 2}, q)};
    CHECK_REFUSED(b, lower_concat(b, a, two, DramArray::packed(3, 0, {5, 2}, pa), janus::numeric::default_rounding_mode), "lower-concat-per-axis");
}
