#pragma once
// The instruction reference of docs/vnpu.md, generated from the instruction table (vnpu/isa.hpp): per row its
// syntax, encoding (every field's bits, kind and range, the fixed bits), semantics, unit and cycle cost. The doc
// holds this text between the markers below; tests/vnpu/reference.cpp fails when the two differ, and
// `janusc isa-doc --update docs/vnpu.md` rewrites the block. No field layout is written by hand anywhere else.
#include <cstdio>
#include <string>
#include <string_view>

#include <janus/core/error.hpp>
#include <janus/vnpu/isa.hpp>

namespace janus::vnpu {

inline constexpr std::string_view reference_begin =
    "<!-- BEGIN GENERATED instruction reference (janusc isa-doc --update docs/vnpu.md); do not edit -->";
inline constexpr std::string_view reference_end = "<!-- END GENERATED instruction reference -->";

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

/// Replace the generated block of `doc` (markers included) with instruction_reference(). Errors name `what` and
/// the missing marker.
inline Result<std::string> splice_reference(std::string_view doc, const std::string& what) {
    const auto b = doc.find(reference_begin);
    const auto e = doc.find(reference_end);
    if (b == std::string_view::npos || e == std::string_view::npos || e < b)
        return make_error(what, "", "reference-markers",
                          "the document needs the line '" + std::string(reference_begin) + "' followed later by '" +
                              std::string(reference_end) + "'");
    auto after = e + reference_end.size();
    if (after < doc.size() && doc[after] == '\n') ++after;
    return std::string(doc.substr(0, b)) + instruction_reference() + std::string(doc.substr(after));
}

}  // namespace janus::vnpu
