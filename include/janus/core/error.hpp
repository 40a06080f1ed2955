#pragma once
// Errors for untrusted input (tier 3 of docs/ARCHITECTURE.md "Errors in three tiers").
//
// Contract: every function that validates input a user controls (shapes, attributes, quantization parameters, file
// bytes, text) returns `Result<T>` and never aborts. An `Error` names
//   - `input`:    what was being read ("Add.input[1].shape", "model.onnx", "QuantParams.scale"),
//   - `position`: where inside it ("axis 2", "byte 1043", "12:7"); may be empty when the input is a single value,
//   - `rule`:     the short name of the rule that was broken ("broadcast-compatible", "scale-positive"),
//   - `detail`:   a sentence a user can act on,
//   - `kind`:     `malformed` (the input breaks a rule of its format or op: fix the input) or `unsupported` (the input
//                 is valid, Janus does not implement it: the detail then starts with the op, or the graph element,
//                 and the attribute or type Janus lacks, e.g. "Resize antialias 1; ...").
// An unsupported error prints as "input:position: unsupported: <op> <attribute or type>; why [rule]" (issue 7), a
// malformed one as "input:position: error: detail [rule]". Wrapping an error in its context (`within`) keeps its kind.
// Misuse of templates is a static_assert (tier 1); broken internal invariants are JANUS_ASSERT (tier 2).
#include <cassert>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>

namespace janus {

/// The most bytes of one piece of untrusted input (a token, a name, a list of dims) an error message repeats.
inline constexpr std::size_t echo_cap = 200;
/// The most bytes of each part of a message (input, position, detail): what message() prints, whatever the parts
/// echo (issue 26: a 5 MB token or 20,000 dims are not copied into a message).
inline constexpr std::size_t message_part_cap = 2000;

/// Untrusted input as an error message repeats it: `s` itself when it has at most `cap` bytes, else its first bytes
/// (cut before a UTF-8 continuation byte) and the marker "...[N more bytes]". The one helper every message that
/// echoes input uses, directly or through Error::message().
inline std::string echo(std::string_view s, std::size_t cap = echo_cap) {
    if (s.size() <= cap) return std::string(s);
    std::size_t keep = cap;
    while (keep > 0 && (static_cast<unsigned char>(s[keep]) & 0xC0) == 0x80) --keep;
    return std::string(s.substr(0, keep)) + "...[" + std::to_string(s.size() - keep) + " more bytes]";
}

/// The index of the first control character of a name (a byte below 0x20, or 0x7F), or npos if it has none. Names
/// are text without control characters: the package format refuses them (rule name-chars), so the ONNX reader
/// refuses them too (onnx-name) rather than compile a model into a package that cannot be written.
inline std::size_t control_char_at(std::string_view name) noexcept {
    for (std::size_t i = 0; i < name.size(); ++i) {
        const auto b = static_cast<unsigned char>(name[i]);
        if (b < 0x20 || b == 0x7F) return i;
    }
    return std::string_view::npos;
}

enum class ErrorKind : unsigned char { malformed, unsupported };

struct Error {
    std::string input;
    std::string position;
    std::string rule;
    std::string detail;
    ErrorKind kind = ErrorKind::malformed;

    bool unsupported() const { return kind == ErrorKind::unsupported; }

    /// "input:position: error: detail [rule]", or "input:position: unsupported: detail [rule]" (position omitted when
    /// empty). Stable text: golden tests pin it.
    /// Each part is capped (echo, message_part_cap).
    std::string message() const {
        std::string m = echo(input, message_part_cap);
        if (!position.empty()) m += ":" + echo(position, message_part_cap);
        m += (unsupported() ? ": unsupported: " : ": error: ") + echo(detail, message_part_cap) + " [" +
             echo(rule, echo_cap) + "]";
        return m;
    }
    /// "input:position: detail": the error as the detail of an error about its context (which names the rule).
    std::string cause() const {
        std::string m = input;
        if (!position.empty()) m += ":" + position;
        return m + ": " + detail;
    }
    /// This error as seen from its context (`input`, `position`), same rule and kind. A malformed error's detail
    /// becomes its `cause()`; an unsupported one keeps its detail, which already names the op and what it lacks.
    Error within(std::string outer_input, std::string outer_position) const {
        return Error{std::move(outer_input), std::move(outer_position), rule, unsupported() ? detail : cause(), kind};
    }
    friend bool operator==(const Error&, const Error&) = default;
};

inline Error make_error(std::string input, std::string position, std::string rule, std::string detail) {
    return Error{std::move(input), std::move(position), std::move(rule), std::move(detail)};
}

/// A valid input Janus does not implement. `subject` is "<op> <attribute or type>" (or the graph element and what it
/// has, when no op is involved), `why` what Janus does instead or needs; the detail is "subject; why".
inline Error make_unsupported(std::string input, std::string position, std::string rule, std::string subject,
                              std::string why) {
    if (!why.empty()) subject += "; " + why;
    return Error{std::move(input), std::move(position), std::move(rule), std::move(subject), ErrorKind::unsupported};
}

/// A value or an Error. Deliberately small (std::expected is C++23).
template <class T>
class [[nodiscard]] Result {
    static_assert(!std::is_same_v<T, Error>, "Result<Error> is ambiguous: return Error directly or use Status");

public:
    Result(T v) : v_(std::in_place_index<0>, std::move(v)) {}  // NOLINT: implicit by design
    Result(Error e) : v_(std::in_place_index<1>, std::move(e)) {}  // NOLINT: implicit by design

    bool ok() const noexcept { return v_.index() == 0; }
    explicit operator bool() const noexcept { return ok(); }

    T& value() & { return checked(), std::get<0>(v_); }
    const T& value() const& { return checked(), std::get<0>(v_); }
    T&& value() && { return checked(), std::get<0>(std::move(v_)); }
    T* operator->() { return &value(); }
    const T* operator->() const { return &value(); }
    T& operator*() & { return value(); }
    const T& operator*() const& { return value(); }

    const Error& error() const {
        assert(!ok() && "Result::error() called on a value");
        return std::get<1>(v_);
    }

private:
    void checked() const {
        // Accessing the value of an error is a programming bug, not an input error: fail loudly in every build mode.
        if (!ok()) throw std::get<1>(v_);
    }
    std::variant<T, Error> v_;
};

struct Ok {
    friend bool operator==(Ok, Ok) = default;
};
/// Success or an Error.
using Status = Result<Ok>;
inline Status ok_status() { return Ok{}; }

}  // namespace janus

/// Propagate an error: `JANUS_TRY(auto x, compute());` declares x from the value or returns the error.
#define JANUS_CONCAT_INNER(a, b) a##b
#define JANUS_CONCAT(a, b) JANUS_CONCAT_INNER(a, b)
#define JANUS_TRY(decl, expr) JANUS_TRY_IMPL(JANUS_CONCAT(janus_try_, __LINE__), decl, expr)
#define JANUS_TRY_IMPL(tmp, decl, expr)          \
    auto tmp = (expr);                           \
    if (!tmp.ok()) return tmp.error();           \
    decl = std::move(tmp).value()
/// Propagate the error of a Status-returning expression.
#define JANUS_CHECK(expr)                                            \
    do {                                                             \
        auto janus_check_ = (expr);                                  \
        if (!janus_check_.ok()) return janus_check_.error();         \
    } while (false)

/// Internal invariant (tier 2). MUST have no side effects: it disappears under NDEBUG (seed D1).
#define JANUS_ASSERT(cond) assert(cond)
