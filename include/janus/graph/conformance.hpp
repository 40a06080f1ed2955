#pragma once
// The result lines of `janusc conform` (docs/conformance.md): one line per ONNX node test whose op types Janus
// imports, written by `ConformanceResult::line` and read back by `parse_conformance` (janusc support reads the
// committed tests/conformance/expected.txt to fill its "node tests" column).
//
// Format, one test per line, fields separated by one space:
//   TEST ops=OP[,OP...] ref=STATUS [npu=STATUS] [bound=N[+M]]
// TEST is the test's directory name; `ops` its op types, sorted and unique; STATUS is `pass`, `host` (npu only: it
// passed with every node on the host), `fail(RULE)` or `refused(RULE)`; `bound` counts the graph inputs bound at
// compile time (+M: the weight operands the NPU engine bound more). Names, op types and rules are non-empty runs of
// [A-Za-z0-9_.-].
//
// Contract: `parse_conformance(text, input)` returns every line's result, or an Error naming `input`, the line
// ("line N") and the rule `conformance-line`; parsing what `line()` wrote gives the same results back (fuzzed by
// fuzz/conformance_results.cpp).
#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <janus/core/error.hpp>

namespace janus::graph {

struct ConformanceResult {
    std::string test;
    std::vector<std::string> ops;  ///< sorted, unique
    std::string ref;               ///< pass, fail(RULE) or refused(RULE)
    std::string npu;               ///< "" when the NPU engine did not run; else pass, host, fail(RULE), refused(RULE)
    int bound = 0, bound_weights = 0;

    std::string line() const {
        std::string s = test + " ops=";
        for (std::size_t k = 0; k < ops.size(); ++k) s += (k ? "," : "") + ops[k];
        s += " ref=" + ref;
        if (!npu.empty()) s += " npu=" + npu;
        if (bound || bound_weights)
            s += " bound=" + std::to_string(bound) + (bound_weights ? "+" + std::to_string(bound_weights) : "");
        return s;
    }
    friend bool operator==(const ConformanceResult&, const ConformanceResult&) = default;
};

namespace conformance_detail {

inline bool is_name(std::string_view s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
               c == '-';
    });
}

/// pass | host (when `host` may appear) | fail(RULE) | refused(RULE)
inline bool is_status(std::string_view s, bool host) {
    if (s == "pass" || (host && s == "host")) return true;
    for (std::string_view head : {std::string_view("fail("), std::string_view("refused(")})
        if (s.size() > head.size() + 1 && s.substr(0, head.size()) == head && s.back() == ')')
            return is_name(s.substr(head.size(), s.size() - head.size() - 1));
    return false;
}

/// A count of 0 .. 99999 in decimal without leading zeros; -1 otherwise.
inline int count(std::string_view s) {
    if (s.empty() || s.size() > 5 || (s.size() > 1 && s[0] == '0')) return -1;
    int v = 0;
    for (char c : s) {
        if (c < '0' || c > '9') return -1;
        v = v * 10 + (c - '0');
    }
    return v;
}

}  // namespace conformance_detail

inline Result<std::vector<ConformanceResult>> parse_conformance(std::string_view text, std::string_view input) {
    using namespace conformance_detail;
    std::vector<ConformanceResult> out;
    std::size_t line_no = 0;
    while (!text.empty()) {
        ++line_no;
        const std::size_t eol = text.find('\n');
        if (eol == std::string_view::npos)
            return make_error(std::string(input), "line " + std::to_string(line_no), "conformance-line",
                              "the last line does not end with a newline");
        const std::string_view line = text.substr(0, eol);
        text.remove_prefix(eol + 1);
        const auto bad = [&](std::string detail) {
            return make_error(std::string(input), "line " + std::to_string(line_no), "conformance-line",
                              std::move(detail));
        };
        std::vector<std::string_view> fields;
        for (std::size_t at = 0;;) {
            const std::size_t sp = line.find(' ', at);
            fields.push_back(line.substr(at, sp == std::string_view::npos ? std::string_view::npos : sp - at));
            if (sp == std::string_view::npos) break;
            at = sp + 1;
        }
        ConformanceResult r;
        if (!is_name(fields[0])) return bad("expected a test name of [A-Za-z0-9_.-] first");
        r.test = std::string(fields[0]);
        if (!out.empty() && !(out.back().test < r.test))
            return bad("test '" + r.test + "' is not after '" + out.back().test + "' (the lines are sorted, unique)");
        // the fields in their one order: ops, ref, then npu and bound when present
        std::size_t k = 1;
        const auto take = [&](std::string_view key) -> std::optional<std::string_view> {
            if (k < fields.size() && fields[k].substr(0, key.size()) == key) return fields[k++].substr(key.size());
            return std::nullopt;
        };
        const auto ops_field = take("ops=");
        if (!ops_field) return bad("expected ops=OP[,OP...] after the test name");
        const std::string_view ops = *ops_field;
        for (std::size_t at = 0;;) {
            const std::size_t comma = ops.find(',', at);
            const std::string_view op = ops.substr(at, comma == std::string_view::npos ? ops.npos : comma - at);
            if (!is_name(op)) return bad("an op type in ops= is empty or not of [A-Za-z0-9_.-]");
            if (!r.ops.empty() && !(r.ops.back() < op)) return bad("the op types in ops= are not sorted and unique");
            r.ops.emplace_back(op);
            if (comma == std::string_view::npos) break;
            at = comma + 1;
        }
        const auto ref = take("ref=");
        if (!ref || !is_status(*ref, false))
            return bad("expected ref=pass, ref=fail(RULE) or ref=refused(RULE) after ops=");
        r.ref = std::string(*ref);
        if (const auto npu = take("npu=")) {
            if (!is_status(*npu, true)) return bad("npu= is not pass, host, fail(RULE) or refused(RULE)");
            r.npu = std::string(*npu);
        }
        if (const auto bf = take("bound=")) {
            const std::string_view b = *bf;
            const std::size_t plus = b.find('+');
            r.bound = count(b.substr(0, plus));
            r.bound_weights = plus == std::string_view::npos ? 0 : count(b.substr(plus + 1));
            if (r.bound < 0 || r.bound_weights < 0 || (plus != std::string_view::npos && r.bound_weights == 0) ||
                (r.bound == 0 && r.bound_weights == 0))
                return bad("bound= is not N or N+M with counts 0 .. 99999, not both 0 and M not 0");
        }
        if (k != fields.size())
            return bad("unexpected field '" + std::string(fields[k]) + "' (the fields are ops=, ref=, npu=, bound=)");
        out.push_back(std::move(r));
    }
    return out;
}

}  // namespace janus::graph
