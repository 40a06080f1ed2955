#pragma once
// Typed operator attributes: the parameter protocol (seed B8).
//
// An op declares its attributes ONCE as a schema of typed fields with valid ranges:
//     struct Attrs { float alpha = 0.01f; };
//     static constexpr auto schema = attr_schema(attr<"alpha">(&Attrs::alpha, finite_float{}));
// From that one declaration Janus derives: parsing of untrusted attributes (AttrMap, e.g. from an ONNX node) with
// type, range and unknown-name errors; validation of attributes built in C++; and the text form used in IR dumps
// and the support table. Attribute names are compile-time strings (core/fixed_string.hpp).
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <variant>
#include <vector>

#include <janus/core/error.hpp>
#include <janus/core/fixed_string.hpp>

namespace janus::ops {

/// An untrusted attribute value, as a model file carries it.
using AttrValue = std::variant<std::int64_t, float, std::string, std::vector<std::int64_t>, std::vector<float>>;
/// Untrusted attributes by name; ordered, so iteration and error messages are deterministic.
using AttrMap = std::map<std::string, AttrValue, std::less<>>;

inline std::string attr_value_kind(const AttrValue& v) {
    constexpr std::string_view names[] = {"int", "float", "string", "ints", "floats"};
    return std::string(names[v.index()]);
}

// ---- Range rules: each is a small type with `check(value) -> std::string` (empty = valid) and a description. ----

struct any_value {
    static constexpr std::string_view text = "any";
    template <class T> std::string check(const T&) const { return {}; }
};
struct finite_float {
    static constexpr std::string_view text = "finite";
    std::string check(float v) const { return std::isfinite(v) ? "" : "must be finite"; }
};
struct positive_float {
    static constexpr std::string_view text = "finite, > 0";
    std::string check(float v) const { return std::isfinite(v) && v > 0 ? "" : "must be finite and > 0"; }
};
/// Integer in [lo, hi].
struct int_range {
    std::int64_t lo, hi;
    std::string check(std::int64_t v) const {
        return v >= lo && v <= hi ? "" : "must be in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
    }
};
/// Each element of an integer list in [lo, hi]; list length in [min_len, max_len].
struct ints_range {
    std::int64_t lo, hi;
    std::size_t min_len = 0, max_len = 64;
    std::string check(const std::vector<std::int64_t>& v) const {
        if (v.size() < min_len || v.size() > max_len)
            return "must have between " + std::to_string(min_len) + " and " + std::to_string(max_len) + " elements";
        for (std::size_t i = 0; i < v.size(); ++i)
            if (v[i] < lo || v[i] > hi)
                return "element " + std::to_string(i) + " (" + std::to_string(v[i]) + ") must be in [" +
                       std::to_string(lo) + ", " + std::to_string(hi) + "]";
        return {};
    }
};
/// A string from a fixed set: `one_of<3>{{"constant", "reflect", "edge"}}`.
template <std::size_t N>
struct one_of {
    std::array<std::string_view, N> allowed;
    std::string check(const std::string& v) const {
        std::string list;
        for (auto a : allowed) {
            if (a == v) return {};
            list += (list.empty() ? "" : ", ") + std::string(a);
        }
        return "must be one of: " + list;
    }
};

/// One attribute: its name, the member it fills, its rule.
template <fixed_string Name, class Attrs, class T, class Rule>
struct attr_field {
    static constexpr std::string_view name = Name.view();
    using type = T;
    T Attrs::*member;
    Rule rule;
};

template <fixed_string Name, class Attrs, class T, class Rule = any_value>
constexpr attr_field<Name, Attrs, T, Rule> attr(T Attrs::*member, Rule rule = {}) {
    static_assert(std::is_same_v<T, std::int64_t> || std::is_same_v<T, float> || std::is_same_v<T, std::string> ||
                      std::is_same_v<T, std::vector<std::int64_t>> || std::is_same_v<T, std::vector<float>>,
                  "attribute members must be int64_t, float, std::string, std::vector<int64_t> or std::vector<float>");
    return {member, rule};
}

template <class... Fields>
constexpr std::tuple<Fields...> attr_schema(Fields... f) {
    return {f...};
}

/// An op with no attributes.
struct NoAttrs {
    friend bool operator==(const NoAttrs&, const NoAttrs&) = default;
};
inline constexpr std::tuple<> no_attrs_schema{};

/// Fill `out` (pre-set to defaults) from `m`. Errors: unknown attribute, wrong kind, rule violated.
/// `what` names the node ("Conv node 'conv1'").
template <class Attrs, class Schema>
Status parse_attrs(const Schema& schema, const AttrMap& m, Attrs& out, const std::string& what) {
    for (const auto& entry : m) {
        const std::string& key = entry.first;
        bool known = false;
        std::apply([&](const auto&... f) { ((known = known || f.name == key), ...); }, schema);
        if (!known) return make_error(what, "attribute " + key, "known-attribute", "unknown attribute '" + key + "'");
    }
    Status st = ok_status();
    std::apply(
        [&](const auto&... f) {
            auto one = [&](const auto& field) {
                if (!st.ok()) return;
                using T = typename std::decay_t<decltype(field)>::type;
                auto it = m.find(field.name);
                if (it != m.end()) {
                    const AttrValue& v = it->second;
                    if constexpr (std::is_same_v<T, float>) {
                        // An integer literal where a float is expected is accepted (ONNX writers differ).
                        if (auto* i = std::get_if<std::int64_t>(&v)) out.*field.member = static_cast<float>(*i);
                        else if (auto* fl = std::get_if<float>(&v)) out.*field.member = *fl;
                        else st = make_error(what, "attribute " + std::string(field.name), "attribute-kind",
                                             "expected float, got " + attr_value_kind(v));
                    } else {
                        if (auto* x = std::get_if<T>(&v)) out.*field.member = *x;
                        else
                            st = make_error(what, "attribute " + std::string(field.name), "attribute-kind",
                                            "expected " + attr_value_kind(AttrValue(T{})) + ", got " +
                                                attr_value_kind(v));
                    }
                    if (!st.ok()) return;
                }
                const std::string problem = field.rule.check(out.*field.member);
                if (!problem.empty())
                    st = make_error(what, "attribute " + std::string(field.name), "attribute-range",
                                    std::string(field.name) + " " + problem);
            };
            (one(f), ...);
            (void)one;  // unused when the schema is empty
        },
        schema);
    return st;
}

/// Validate attributes built in C++ against the schema's rules.
template <class Attrs, class Schema>
Status validate_attrs(const Schema& schema, const Attrs& a, const std::string& what) {
    Attrs copy = a;
    return parse_attrs(schema, AttrMap{}, copy, what);
}

/// "alpha=0.01 axes=[1,2]" (schema order; IR dumps).
template <class Attrs, class Schema>
std::string attrs_to_string(const Schema& schema, const Attrs& a) {
    std::string s;
    std::apply(
        [&](const auto&... f) {
            auto one = [&](const auto& field) {
                using T = typename std::decay_t<decltype(field)>::type;
                const T& v = a.*field.member;
                s += (s.empty() ? "" : " ") + std::string(field.name) + "=";
                auto num = [](double d) {
                    char b[32];
                    std::snprintf(b, sizeof b, "%.9g", d);
                    return std::string(b);
                };
                if constexpr (std::is_same_v<T, std::int64_t>) s += std::to_string(v);
                else if constexpr (std::is_same_v<T, float>) s += num(v);
                else if constexpr (std::is_same_v<T, std::string>) s += "\"" + v + "\"";
                else {
                    s += "[";
                    for (std::size_t i = 0; i < v.size(); ++i) {
                        if (i) s += ",";
                        if constexpr (std::is_same_v<T, std::vector<float>>) s += num(v[i]);
                        else s += std::to_string(v[i]);
                    }
                    s += "]";
                }
            };
            (one(f), ...);
            (void)one;
        },
        schema);
    return s;
}

}  // namespace janus::ops
