#pragma once
// Assert that a Result holds an Error breaking `expected_rule`, with a named input and a non-empty sentence: the
// contract of every untrusted-input error (core/error.hpp).
#include <doctest/doctest.h>

#define CHECK_RULE(result, expected_rule)                   \
    do {                                                    \
        const auto& r_ = (result);                          \
        REQUIRE_FALSE(r_.ok());                             \
        CHECK(r_.error().rule == (expected_rule));          \
        CHECK_FALSE(r_.error().input.empty());              \
        CHECK_FALSE(r_.error().detail.empty());             \
    } while (false)
