#pragma once
// The generated parts of docs/vnpu.md: the instruction reference, from the instruction table (vnpu/isa.hpp: per row
// its syntax, encoding, semantics, unit and cycle cost), and the parameter tables, from the layouts of
// vnpu/params.hpp (per field its bytes, type, valid values and meaning). The doc holds each between its markers;
// tests/vnpu/reference.cpp fails when they differ, and `janusc isa-doc --update docs/vnpu.md` rewrites both blocks.
// No field layout is written by hand anywhere else.
#include <cstdio>
#include <limits>
#include <string>
#include <string_view>

#include <janus/core/error.hpp>
#include <janus/vnpu/isa.hpp>
#include <janus/vnpu/params.hpp>

namespace janus::vnpu {

inline constexpr std::string_view reference_begin =
    "<!-- BEGIN GENERATED instruction reference (janusc isa-doc --update docs/vnpu.md); do not edit -->";
inline constexpr std::string_view reference_end = "<!-- END GENERATED instruction reference -->";
inline constexpr std::string_view params_begin =
    "<!-- BEGIN GENERATED parameter tables (janusc isa-doc --update docs/vnpu.md); do not edit -->";
inline constexpr std::string_view params_end = "<!-- END GENERATED parameter tables -->";

namespace ref_detail {
inline std::string bits(int hi, int lo) {
    return hi == lo ? std::to_string(hi) : std::to_string(hi) + ".." + std::to_string(lo);
}
inline std::string kind_text(const Field& f) {
    const std::string scale = f.scale > 1 ? ", multiple of " + std::to_string(f.scale) : "";
    switch (f.kind) {
        case FieldKind::reg: return "register r0..r15";
        case FieldKind::event: return "event e0..e15";
        case FieldKind::region: return "DRAM region: weights 0, scratch 1, input 2, output 3";
        case FieldKind::mask: return "bit mask 0x0..0x" + [&] {
            char b[24];
            std::snprintf(b, sizeof b, "%llx", static_cast<unsigned long long>(f.max()));
            return std::string(b);
        }();
        case FieldKind::count:
            return "count " + std::to_string(f.min()) + ".." + std::to_string(f.max()) + scale +
                   ", stored as value" + (f.scale > 1 ? " / " + std::to_string(f.scale) : std::string()) + " - 1";
        case FieldKind::simm:
            return "signed " + std::to_string(f.min()) + ".." + std::to_string(f.max()) + scale + ", two's complement";
        case FieldKind::uimm:
            return "unsigned " + std::to_string(f.min()) + ".." + std::to_string(f.max()) + scale +
                   (f.scale > 1 ? ", stored as value / " + std::to_string(f.scale) : std::string());
    }
    return "";
}
inline std::string cost_text(Cost c) {
    switch (c) {
        case Cost::seq: return "1 cycle on SEQ";
        case Cost::config: return "1 cycle (configuration)";
        case Cost::dma: return "L + rows x (2 + bytes / 16); L = 64 with DRAM, 8 otherwise";
        case Cost::mac: return "(k / 16) x (n / 16) x (16 + m) + 8";
        case Cost::vec: return "4 + elements / 16 (vec.rq: elements = channels x rows)";
        case Cost::lut: return "2 + n / 16";
    }
    return "";
}
inline std::string syntax(const InstrInfo& r) {
    std::string s = "`" + std::string(r.mnemonic);
    for (int k = 0; k < r.n_fields; ++k) s += std::string(k == 0 ? " " : ", ") + std::string(r.fields[static_cast<std::size_t>(k)].name);
    return s + " [wait(eN)] [signal(eN)]`";
}
}  // namespace ref_detail

/// The generated reference, markers included, ending in a newline.
inline std::string instruction_reference() {
    using namespace ref_detail;
    std::string s(reference_begin);
    s += "\n\n## Instruction reference (generated)\n\n";
    s += "Every word: bits 63..58 opcode, 57 wait flag, 56..53 wait event, 52 signal flag, 51..48 signal event, "
         "47..0 payload. A payload bit that no field and no fixed bit covers is reserved and must be 0.\n\n";
    s += "| mnemonic | unit | opcode | operands | cycles |\n|---|---|---|---|---|\n";
    for (const InstrInfo& r : instruction_table) {
        std::string ops;
        for (int k = 0; k < r.n_fields; ++k) ops += std::string(k ? ", " : "") + std::string(r.fields[static_cast<std::size_t>(k)].name);
        s += "| `" + std::string(r.mnemonic) + "` | " + std::string(unit_name(r.unit)) + " | " +
             std::to_string(r.opcode) + " | " + (ops.empty() ? "-" : ops) + " | " + cost_text(r.cost) + " |\n";
    }
    for (const InstrInfo& r : instruction_table) {
        s += "\n### `" + std::string(r.mnemonic) + "`\n\n";
        s += "Syntax: " + syntax(r) + ". Unit: " + std::string(unit_name(r.unit)) + ". Cycles: " + cost_text(r.cost) +
             ".\n\n";
        std::string sem(r.semantics);
        for (auto& c : sem)
            if (c == '\n') c = ' ';
        s += sem + "\n\n";
        s += "| bits | field | value |\n|---|---|---|\n";
        s += "| 63..58 | opcode | " + std::to_string(r.opcode) + " |\n";
        if (r.fixed.width > 0)
            s += "| " + bits(r.fixed.lo + r.fixed.width - 1, r.fixed.lo) + " | function (fixed) | " +
                 std::to_string(r.fixed.value) + " |\n";
        for (const Field& f : r.operands())
            s += "| " + bits(f.lo + f.width - 1, f.lo) + " | " + std::string(f.name) + " | " + kind_text(f) + " |\n";
    }
    s += "\n" + std::string(reference_end) + "\n";
    return s;
}

/// The generated parameter-table description, markers included, ending in a newline.
inline std::string param_reference() {
    std::string s(params_begin);
    s += "\n";
    for_each_param_layout([&](const auto& l) {
        s += "\n**" + std::string(l.name) + "** (" + std::string(l.placement) + "): " + std::to_string(l.size) +
             " bytes, little endian; a malformed one is fault `" + std::string(l.fault) + "`.\n\n";
        s += "| bytes | field | type | valid values | meaning |\n|---|---|---|---|---|\n";
        for (const auto& f : l.fields) {
            const std::string bytes = f.width == 1 ? std::to_string(f.offset)
                                                   : std::to_string(f.offset) + ".." +
                                                         std::to_string(f.offset + f.width - 1);
            std::string type = f.kind == ParamKind::reserved ? "-" : f.width == 4 ? "int32" : "uint8";
            std::string valid;
            switch (f.kind) {
                case ParamKind::reserved: valid = "0"; break;
                case ParamKind::multiplier: valid = "0, or 2^30 .. 2^31 - 1"; break;
                case ParamKind::right_shift: valid = "1..62; 31 when the multiplier is 0"; break;
                default:
                    valid = f.min == std::numeric_limits<std::int32_t>::min() &&
                                    f.max == std::numeric_limits<std::int32_t>::max()
                                ? "any"
                                : std::to_string(f.min) + ".." + std::to_string(f.max);
            }
            s += "| " + bytes + " | " + std::string(f.name) + " | " + type + " | " + valid + " | " +
                 std::string(f.meaning) + " |\n";
        }
        if (!l.consistent_text.empty()) s += "\nCross-field rule: " + std::string(l.consistent_text) + ".\n";
    });
    s += "\n" + std::string(params_end) + "\n";
    return s;
}

namespace ref_detail {
/// Replace the block between `begin` and `end` (markers included) with `text`.
inline Result<std::string> splice(std::string_view doc, std::string_view begin, std::string_view end,
                                  const std::string& text, const std::string& what) {
    const auto b = doc.find(begin);
    const auto e = doc.find(end);
    if (b == std::string_view::npos || e == std::string_view::npos || e < b)
        return make_error(what, "", "reference-markers",
                          "the document needs the line '" + std::string(begin) + "' followed later by '" +
                              std::string(end) + "'");
    auto after = e + end.size();
    if (after < doc.size() && doc[after] == '\n') ++after;
    return std::string(doc.substr(0, b)) + text + std::string(doc.substr(after));
}
}  // namespace ref_detail

/// Replace both generated blocks of `doc` (markers included) with instruction_reference() and param_reference().
/// Errors name `what` and the missing marker.
inline Result<std::string> splice_reference(std::string_view doc, const std::string& what) {
    JANUS_TRY(std::string once, ref_detail::splice(doc, reference_begin, reference_end, instruction_reference(), what));
    return ref_detail::splice(once, params_begin, params_end, param_reference(), what);
}

}  // namespace janus::vnpu
