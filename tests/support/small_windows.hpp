#pragma once
// Every small 1-D window geometry: the exhaustive tests that check a direct computation of ops/window.hpp or
// ops/pool.hpp (which must not visit every output position, issue 26) against the plain scan of every window.
#include <cstdint>
#include <string>

#include <doctest/doctest.h>
#include <janus/ops/window.hpp>

namespace janus_test {

/// Inclusive ranges of a [1, 1, L] input and its window (pads from 0, the end pad in steps of pad_end_step).
struct WindowRanges {
    std::int64_t L_min = 0, L_max = 6, k_max = 4, s_max = 4, d_max = 4, pad_max = 6, pad_end_step = 3;
};

/// f(L, window, output shape) for every geometry in `r` whose output extent exists, both ceil modes; each call has
/// the geometry CAPTUREd. Returns how many calls were made.
template <class F>
int for_each_small_window(const WindowRanges& r, F&& f) {
    using janus::Dims;
    int cases = 0;
    for (std::int64_t L = r.L_min; L <= r.L_max; ++L)
        for (std::int64_t k = 1; k <= r.k_max; ++k)
            for (std::int64_t s = 1; s <= r.s_max; ++s)
                for (std::int64_t d = 1; d <= r.d_max; ++d)
                    for (std::int64_t pb = 0; pb <= r.pad_max; ++pb)
                        for (std::int64_t pe = 0; pe <= r.pad_max; pe += r.pad_end_step)
                            for (bool ceil : {false, true}) {
                                const janus::ops::WindowParams w{Dims{k}, Dims{s}, Dims{d}, Dims{pb}, Dims{pe}, ceil};
                                const janus::Shape in{1, 1, L};
                                const auto out = janus::ops::window_output_shape(in, w);
                                if (!out.ok()) continue;
                                ++cases;
                                const std::string geometry = "L " + std::to_string(L) + " k " + std::to_string(k) +
                                                             " s " + std::to_string(s) + " d " + std::to_string(d) +
                                                             " pads " + std::to_string(pb) + " " + std::to_string(pe) +
                                                             (ceil ? " ceil" : " floor");
                                CAPTURE(geometry);
                                f(L, w, *out);
                            }
    return cases;
}

}  // namespace janus_test
