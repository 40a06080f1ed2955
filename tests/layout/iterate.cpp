// Row-major iteration: for_each_index and for_each_row against plain nested loops.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include <janus/layout/iterate.hpp>
#include <janus/layout/view.hpp>

#include "reference.hpp"

using namespace janus;

TEST_CASE("for-each-index-row-major: indices come in row-major order, last axis fastest") {
    std::vector<Dims> seen;
    for_each_index(Shape{2, 3}, [&](const Dims& i) { seen.push_back(i); });
    std::vector<Dims> want;
    for (std::int64_t a = 0; a < 2; ++a)
        for (std::int64_t b = 0; b < 3; ++b) want.push_back(Dims{a, b});
    CHECK(seen == want);
    for (const Shape& s : {Shape{4}, Shape{2, 1, 3}, Shape{1, 1, 1, 1, 1, 2}, Shape{3, 2, 2, 2}}) {
        std::vector<Dims> got;
        for_each_index(s, [&](const Dims& i) { got.push_back(i); });
        CHECK(got == janus::test::all_indices(s));
    }
}

TEST_CASE("for-each-index-edge: rank 0 calls once with [], a zero extent calls never") {
    int calls = 0;
    for_each_index(Shape{}, [&](const Dims& i) {
        CHECK(i.size() == 0);
        ++calls;
    });
    CHECK(calls == 1);
    calls = 0;
    for (const Shape& s : {Shape{0}, Shape{3, 0}, Shape{0, 3}, Shape{2, 0, 2}})
        for_each_index(s, [&](const Dims&) { ++calls; });
    CHECK(calls == 0);
}

TEST_CASE("for-each-row-rows: one call per innermost row with the last coordinate 0") {
    std::vector<Dims> rows;
    std::vector<std::int64_t> lengths;
    for_each_row(Shape{2, 3, 5}, [&](const Dims& i, std::int64_t n) {
        rows.push_back(i);
        lengths.push_back(n);
    });
    std::vector<Dims> want;
    for (std::int64_t a = 0; a < 2; ++a)
        for (std::int64_t b = 0; b < 3; ++b) want.push_back(Dims{a, b, 0});
    CHECK(rows == want);
    CHECK(lengths == std::vector<std::int64_t>(6, 5));

    int calls = 0;
    for_each_row(Shape{}, [&](const Dims& i, std::int64_t n) {
        CHECK(i.size() == 0);
        CHECK(n == 1);
        ++calls;
    });
    CHECK(calls == 1);
    calls = 0;
    for (const Shape& s : {Shape{0}, Shape{3, 0}, Shape{0, 3}, Shape{2, 0, 2}})
        for_each_row(s, [&](const Dims&, std::int64_t) { ++calls; });
    CHECK(calls == 0);
}

TEST_CASE("for-each-row-kernel: a row loop over a strided view reads exactly what element-wise indexing reads") {
    // The way kernels use it: address of the row start, then the innermost stride.
    const Layout base = Layout::padded({3, 4, 7}, 4, 16);
    const janus::test::Materialized m(base);
    const Layout v = transpose(base, Dims{1, 0, 2}).value();
    std::vector<std::int32_t> got;
    for_each_row(v.shape, [&](const Dims& i, std::int64_t n) {
        const std::int64_t row_start = v.address(i);  // i has last coordinate 0
        for (std::int64_t x = 0; x < n; ++x) {
            std::int32_t e;
            std::memcpy(&e, m.bytes.data() + row_start + x * v.strides[2], 4);
            got.push_back(e);
        }
    });
    CHECK(got == m.read(v));
}
