// Permutation conventions and seed A2 (keep_dims=false rebuilds the inverse permutation).
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include <janus/layout/permutation.hpp>
#include <janus/layout/view.hpp>

#include "reference.hpp"

using namespace janus;
using janus::test::Materialized;

namespace {
// Every permutation of 0..n-1 (n <= 4), lexicographic.
std::vector<Dims> all_permutations(int n) {
    std::vector<Dims> out;
    Dims p = identity_permutation(n);
    std::vector<std::int64_t> v(p.begin(), p.end());
    do {
        Dims d;
        for (auto x : v) d.push_back(x);
        out.push_back(d);
    } while (std::next_permutation(v.begin(), v.end()));
    return out;
}
}  // namespace

TEST_CASE("perm-entry-in-range, perm-entry-unique, rank-at-most-6: make_permutation rejects non-permutations") {
    const std::int64_t ok[] = {2, 0, 1};
    CHECK(make_permutation(ok).value() == Dims{2, 0, 1});
    CHECK(make_permutation(Dims{}).value() == Dims{});

    const std::int64_t too_big[] = {0, 3, 1};
    CHECK_RULE(make_permutation(too_big, "Transpose.perm"), "perm-entry-in-range");
    CHECK(make_permutation(too_big, "Transpose.perm").error().position == "index 1");
    CHECK(make_permutation(too_big, "Transpose.perm").error().input == "Transpose.perm");

    const std::int64_t negative[] = {0, -1, 1};
    CHECK_RULE(make_permutation(negative), "perm-entry-in-range");

    const std::int64_t dup[] = {1, 0, 1};
    CHECK_RULE(make_permutation(dup), "perm-entry-unique");
    CHECK(make_permutation(dup).error().position == "index 2");

    const std::int64_t seven[] = {0, 1, 2, 3, 4, 5, 6};
    CHECK_RULE(make_permutation(seven), "rank-at-most-6");
}

TEST_CASE("perm-convention: permute(values, perm)[j] = values[perm[j]] and transpose follows it") {
    // NCHW -> NHWC: output axis j is input axis perm[j].
    const Dims perm{0, 2, 3, 1};
    CHECK(permute(Dims{2, 3, 4, 5}, perm) == Dims{2, 4, 5, 3});
    const Layout t = transpose(Layout::contiguous({2, 3, 4, 5}, 1), perm).value();
    CHECK(t.shape == Dims{2, 4, 5, 3});
    CHECK(t.strides == Dims{60, 5, 1, 20});
    CHECK(identity_permutation(0) == Dims{});
    CHECK(identity_permutation(4) == Dims{0, 1, 2, 3});
    CHECK(is_permutation(perm));
    CHECK_FALSE(is_permutation(Dims{0, 0}));
    CHECK_FALSE(is_permutation(Dims{1, 2}));
}

TEST_CASE("perm-inverse: inverse(p)[p[j]] = j and compose(p, inverse(p)) is the identity, for every p of rank <= 4") {
    for (int n = 0; n <= 4; ++n)
        for (const auto& p : all_permutations(n)) {
            const Dims inv = inverse(p);
            for (int j = 0; j < n; ++j) CHECK(inv[static_cast<int>(p[j])] == j);
            CHECK(compose(p, inv) == identity_permutation(n));
            CHECK(compose(inv, p) == identity_permutation(n));
            CHECK(inverse(inv) == p);
        }
    CHECK(inverse(Dims{0, 2, 3, 1}) == Dims{0, 3, 1, 2});
}

TEST_CASE("perm-compose: transpose(transpose(x, p), q) == transpose(x, compose(p, q)) with compose(p, q)[j] = p[q[j]]") {
    const Layout base = Layout::contiguous({2, 3, 4}, 4);
    const Materialized m(base);
    for (const auto& p : all_permutations(3))
        for (const auto& q : all_permutations(3)) {
            const Dims c = compose(p, q);
            for (int j = 0; j < 3; ++j) CHECK(c[j] == p[static_cast<int>(q[j])]);
            const Layout twice = transpose(transpose(base, p).value(), q).value();
            const Layout once = transpose(base, c).value();
            CHECK(twice == once);
            CHECK(m.read(twice) == m.read(once));
            CHECK(permute(permute(Dims{10, 20, 30}, p), q) == permute(Dims{10, 20, 30}, c));
        }
}

TEST_CASE("keep_dims=false rebuilds the inverse permutation (A2): NCHW->NHWC with C removed") {
    const Dims perm{0, 2, 3, 1};
    const Dims removed{1};
    CHECK(removed_output_axes(perm, removed) == Dims{3});
    CHECK(permutation_after_removing(perm, removed) == Dims{0, 1, 2});
    CHECK(inverse_after_removing(perm, removed) == Dims{0, 1, 2});
    // The old inverse still names output axis 3, which a rank-3 tensor does not have.
    const Dims old_inv = inverse(perm);
    CHECK(old_inv == Dims{0, 3, 1, 2});
    CHECK(old_inv.size() == 4);  // sized for the old rank
    CHECK(old_inv[1] == 3);      // input axis 1 (C) -> output axis 3: neither exists after the removal
    // Reusing it for the rank-3 result would transpose by a non-permutation; the rebuilt one is checked above.
}

TEST_CASE("keep_dims=false rebuilds the inverse permutation (A2): patching the old inverse is wrong for NHWC->NCHW minus H") {
    const Dims perm{0, 3, 1, 2};  // NHWC -> NCHW
    const Dims removed{1};        // H
    const Dims rebuilt = inverse_after_removing(perm, removed);
    CHECK(permutation_after_removing(perm, removed) == Dims{0, 2, 1});
    CHECK(rebuilt == Dims{0, 2, 1});
    Dims patched = inverse(perm);  // [0,2,3,1]
    patched.erase(1);              // "drop the removed axis' entry": [0,3,1]
    CHECK(patched == Dims{0, 3, 1});
    CHECK_FALSE(is_permutation(patched));
    CHECK(compose(permutation_after_removing(perm, removed), rebuilt) == identity_permutation(3));
}

namespace {
// Plain reference: sum a materialized int32 tensor over the axes in `removed` (keep_dims=false).
std::vector<std::int64_t> reduce_sum(const Materialized& m, const Layout& view, const Dims& removed, Shape& out_shape) {
    out_shape = Shape{};
    for (int k = 0; k < view.rank(); ++k)
        if (!janus::detail::contains(removed, k)) out_shape.push_back(view.shape[k]);
    std::vector<std::int64_t> out(static_cast<std::size_t>(element_count(out_shape)), 0);
    for (const auto& idx : janus::test::all_indices(view.shape)) {
        Dims o;
        for (int k = 0; k < view.rank(); ++k)
            if (!janus::detail::contains(removed, k)) o.push_back(idx[k]);
        out[static_cast<std::size_t>(janus::test::flat(o, out_shape))] += m.at(view, idx);
    }
    return out;
}
// Transpose a dense row-major vector of shape `s` by `perm` with plain loops.
std::vector<std::int64_t> transpose_values(const std::vector<std::int64_t>& v, const Shape& s, const Dims& perm) {
    const Shape os = permute(s, perm);
    std::vector<std::int64_t> out(v.size());
    for (const auto& o : janus::test::all_indices(os)) {
        Dims i = Dims::filled(s.size(), 0);
        for (int j = 0; j < perm.size(); ++j) i[static_cast<int>(perm[j])] = o[j];
        out[static_cast<std::size_t>(janus::test::flat(o, os))] = v[static_cast<std::size_t>(janus::test::flat(i, s))];
    }
    return out;
}
}  // namespace

TEST_CASE("keep_dims=false rebuilds the inverse permutation (A2): reduce-then-transpose equals transpose-then-reduce") {
    const Layout base = Layout::contiguous({2, 3, 4, 5}, 4);
    const Materialized m(base);
    const std::vector<Dims> removals = {{1}, {0}, {3}, {0, 2}, {1, 3}, {0, 1, 2}, {}};
    for (const auto& perm : all_permutations(4))
        for (const auto& removed : removals) {
            // Path 1: transpose, then reduce the OUTPUT axes that carry the removed input axes.
            const Layout t = transpose(base, perm).value();
            Shape s1;
            const auto after = reduce_sum(m, t, removed_output_axes(perm, removed), s1);
            // Path 2: reduce the input axes, then transpose the smaller tensor by the renumbered permutation.
            Shape s0;
            const auto before = reduce_sum(m, base, removed, s0);
            const Dims p2 = permutation_after_removing(perm, removed);
            CHECK(permute(s0, p2) == s1);
            CHECK(transpose_values(before, s0, p2) == after);
            // And the rebuilt inverse undoes it.
            CHECK(transpose_values(after, s1, inverse_after_removing(perm, removed)) == before);
        }
}
