// The reduction lowerings' refusals (emit/reduce.hpp): every rule is named, with an input and a sentence, and a
// refused lowering leaves nothing in the builder (no instruction, constant or borrowed resource).
#include "reduce_support.hpp"

using namespace rt;

TEST_CASE("reduce refusals name the rule and leave nothing in the builder") {
    const auto q = quant(0.05f, 0);
    const auto type = [&](Shape s) { return ops::TensorType{DType::i8, s, q}; };
    const auto plan = [&](auto op, Shape in, const ops::ReduceAttrs& a) {
        using Op = decltype(op);
        const auto t = type(in);
        const auto inf = Op::infer(std::span<const ops::TensorType>(&t, 1), a);
        REQUIRE(inf.ok());
        const auto p = Op::plan(std::span(&t, 1), a, type(inf->shape), janus::numeric::default_rounding_mode);
        REQUIRE(p.ok());
        return *p;
    };
    Builder c("reduce");
    REQUIRE(c.emit("nop", {}).ok());
    const Shape s{1, 4, 4, 16};
    const DramRows X{2, 0, s, 16};
    // max / min over the innermost axis
    const auto mx = plan(ops::ReduceMax{}, s, attrs({3}, 1));
    CHECK_RULE(lower_reduce_max(c, mx, X, DramRows{3, 0, Shape{1, 4, 4, 1}, 16}), "lower-reduce-inner-minmax");
    const auto mn = plan(ops::ReduceMin{}, s, attrs({1, 2, 3}, 0));
    CHECK_RULE(lower_reduce_min(c, mn, X, DramRows{3, 0, Shape{1}, 16}), "lower-reduce-inner-minmax");
    // two separate blocks of reduced outer axes; a reduced set with the innermost axis that is not a suffix
    const Shape s4{2, 3, 4, 16};
    const auto two = plan(ops::ReduceSum{}, s4, attrs({0, 2}, 1));
    CHECK_RULE(lower_reduce_sum(c, two, DramRows{2, 0, s4, 16}, DramRows{3, 0, Shape{1, 3, 1, 16}, 16}),
               "lower-reduce-axes");
    const auto gap = plan(ops::ReduceSum{}, s4, attrs({2, 3}, 1));
    const auto gap2 = plan(ops::ReduceMean{}, s4, attrs({1, 3}, 1));
    CHECK(lower_reduce_sum(c, gap, DramRows{2, 0, s4, 16}, DramRows{3, 0, Shape{2, 3, 1, 1}, 16}).ok());
    Builder d("reduce");
    REQUIRE(d.emit("nop", {}).ok());
    CHECK_RULE(lower_reduce_mean(d, gap2, DramRows{2, 0, s4, 16}, DramRows{3, 0, Shape{2, 1, 4, 1}, 16}),
               "lower-reduce-axes");
    // layouts: a pitch below the row, a pitch not a multiple of 16, shapes that do not chain, y's pitch != x's
    const auto sp = plan(ops::ReduceSum{}, s, attrs({1, 2}, 1));
    const DramRows Y{3, 0, Shape{1, 1, 1, 16}, 16};
    CHECK(lower_reduce_sum(d, sp, X, Y).ok());
    Builder e("reduce");
    REQUIRE(e.emit("nop", {}).ok());
    CHECK_RULE(lower_reduce_sum(e, sp, DramRows{2, 0, s, 8}, Y), "lower-reduce-layout");
    CHECK_RULE(lower_reduce_sum(e, sp, DramRows{2, 0, s, 24}, Y), "lower-reduce-layout");
    CHECK_RULE(lower_reduce_sum(e, sp, DramRows{2, 0, Shape{1, 4, 5, 16}, 16}, Y), "lower-reduce-layout");
    CHECK_RULE(lower_reduce_sum(e, sp, X, DramRows{3, 0, Shape{1, 1, 16}, 16}), "lower-reduce-layout");
    CHECK_RULE(lower_reduce_sum(e, sp, X, DramRows{3, 0, Shape{1, 1, 1, 16}, 32}), "lower-reduce-layout");
    CHECK_RULE(lower_reduce_sum(e, sp, DramRows{2, 8, s, 16}, Y), "lower-reduce-layout");
    // a float32 plan; a uint8 zero point
    const auto ft = ops::TensorType{DType::f32, s, std::nullopt};
    const auto fp =
        ops::ReduceSum::plan(std::array{ft}, attrs({1, 2}, 1), ops::TensorType{DType::f32, Shape{1, 1, 1, 16}, std::nullopt}, janus::numeric::default_rounding_mode);
    REQUIRE(fp.ok());
    CHECK_RULE(lower_reduce_sum(e, *fp, X, Y), "lower-reduce-type");
    auto up = sp;
    up.zp_in[0] = 200;
    CHECK_RULE(lower_reduce_sum(e, up, X, Y), "lower-reduce-type");
    // per-axis quantization along an outer kept axis; output zero points that vary by channel
    const Shape s3{4, 5, 16};
    const auto qa = numeric::make_quant_per_axis(DType::i8, {0.1f, 0.2f, 0.3f, 0.4f}, {0, 0, 0, 0}, 0, s3).value();
    const ops::TensorType ta{DType::i8, s3, qa};
    const auto pa = ops::ReduceMax::plan(std::array{ta}, attrs({1}, 1), ops::TensorType{DType::i8, Shape{4, 1, 16}, qa}, janus::numeric::default_rounding_mode);
    REQUIRE(pa.ok());
    CHECK_RULE(lower_reduce_max(e, *pa, DramRows{2, 0, s3, 16}, DramRows{3, 0, Shape{4, 1, 16}, 16}),
               "lower-reduce-per-axis");
    std::vector<float> sc(16, 0.1f);
    std::vector<std::int32_t> zs(16, 0);
    zs[3] = 5;
    const auto qc = numeric::make_quant_per_axis(DType::i8, sc, zs, 2, s3).value();
    const auto pc = ops::ReduceMin::plan(std::array{ops::TensorType{DType::i8, s3, qc}}, attrs({1}, 1), ops::TensorType{DType::i8, Shape{4, 1, 16}, qc}, janus::numeric::default_rounding_mode);
    REQUIRE(pc.ok());
    CHECK_RULE(lower_reduce_min(e, *pc, DramRows{2, 0, s3, 16}, DramRows{3, 0, Shape{4, 1, 16}, 16}),
               "lower-reduce-per-axis");
    // budget: one output of 256 KiB on the MAC path (K is not split across loads)
    const Shape big{1, 64, 64, 64};
    const auto pb = plan(ops::ReduceSum{}, big, attrs({1, 2, 3}, 1));
    CHECK_RULE(lower_reduce_sum(e, pb, DramRows{2, 0, big, 64}, DramRows{3, 0, Shape{1, 1, 1, 1}, 16}),
               "lower-reduce-budget");
    CHECK(e.size() == 1);
    CHECK(e.weights().empty());
    CHECK(e.holders().empty());
    CHECK(c.holders().empty());
}
