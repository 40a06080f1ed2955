// The lowering's scratch arena (graph/lower.hpp lower_detail::Arena): first fit, with the free gaps kept so that an
// allocation does not scan every live block (issue 26). Checked against the plain scan it replaced, on random
// allocation and release sequences: the same offsets and the same peak.
#include <doctest/doctest.h>

#include <cstdint>
#include <map>
#include <random>
#include <vector>

#include <janus/graph/lower.hpp>

namespace lower_arena_test {

/// The arena as it was: scan the live blocks in offset order for the first gap that holds the block.
class ScanArena {
public:
    std::uint32_t allocate(std::int64_t bytes) {
        bytes = (std::max<std::int64_t>(bytes, 16) + 15) / 16 * 16;
        std::int64_t at = 0;
        for (const auto& [off, len] : used_) {
            if (off - at >= bytes) break;
            at = std::max(at, off + len);
        }
        used_.emplace(at, bytes);
        peak_ = std::max(peak_, at + bytes);
        return static_cast<std::uint32_t>(at);
    }
    void release(std::uint32_t at) { used_.erase(at); }
    std::int64_t peak() const { return peak_; }

private:
    std::map<std::int64_t, std::int64_t> used_;
    std::int64_t peak_ = 0;
};

TEST_CASE("Arena: the same offsets and peak as a scan of the live blocks, on random sequences") {
    std::mt19937 rng(26);
    for (int round = 0; round < 200; ++round) {
        janus::graph::lower_detail::Arena fast;
        ScanArena slow;
        std::vector<std::uint32_t> live;
        const int steps = 1 + static_cast<int>(rng() % 300);
        for (int s = 0; s < steps; ++s) {
            if (!live.empty() && rng() % 3 == 0) {  // release a random live block (sometimes one never allocated)
                const std::size_t k = rng() % live.size();
                const std::uint32_t at = rng() % 17 == 0 ? live[k] + 16 : live[k];
                fast.release(at);
                slow.release(at);
                if (at == live[k]) live.erase(live.begin() + static_cast<std::ptrdiff_t>(k));
                continue;
            }
            const std::int64_t bytes = static_cast<std::int64_t>(rng() % 200);
            const std::uint32_t a = fast.allocate(bytes), b = slow.allocate(bytes);
            REQUIRE(a == b);
            live.push_back(a);
        }
        CHECK(fast.peak() == slow.peak());
    }
}

TEST_CASE("Arena: nothing released (verify keeps every value): blocks follow each other") {
    janus::graph::lower_detail::Arena a;
    for (std::int64_t k = 0; k < 1000; ++k) CHECK(a.allocate(16) == static_cast<std::uint32_t>(16 * k));
    CHECK(a.peak() == 16000);
}

}  // namespace lower_arena_test
