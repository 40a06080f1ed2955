#pragma once
// Resource limits for untrusted input (issue 26): the memory budget one input may make Janus allocate.
//
// Contract:
//   - default_max_memory (1 GiB) is the default budget of one run for what an input asks for rather than holds:
//     read_file refuses a file larger than its cap (default: this budget), janusc's `--max-memory` sets the budget
//     of a command (file reads, the inputs `verify` synthesizes, the simulated DRAM regions of a package or a lowered
//     model, `sim --scratch-size / --output-size`), and charge_memory refuses a request above it with the rule
//     memory-limit (exit 2 in janusc), before anything is allocated.
//   - Decoders bound what they allocate by the size of their input instead (onnx/model.hpp: at most
//     onnx::decode_budget(file size) bytes of decoded structures), so no budget needs to be passed to them.
#include <cstdint>
#include <string>

#include <janus/core/error.hpp>

namespace janus {

/// The default memory budget of one run, in bytes (see the header comment).
inline constexpr std::uint64_t default_max_memory = std::uint64_t{1} << 30;

/// "1073741824 bytes (1 GiB)", "5 MiB" style: bytes with the largest exact binary unit when there is one.
inline std::string byte_size_text(std::uint64_t n) {
    std::string s = std::to_string(n) + (n == 1 ? " byte" : " bytes");
    static constexpr const char* units[] = {"KiB", "MiB", "GiB", "TiB"};
    for (int u = 3; u >= 0; --u) {
        const std::uint64_t unit = std::uint64_t{1} << (10 * (u + 1));
        if (n >= unit && n % unit == 0) return s + " (" + std::to_string(n / unit) + " " + units[u] + ")";
    }
    return s;
}

/// Refuse a request for `bytes` above `budget` (rule memory-limit). `input` names what asks (a file, a model);
/// `what` says for what ("the synthesized inputs").
inline Status charge_memory(std::uint64_t bytes, std::uint64_t budget, const std::string& input,
                            const std::string& what) {
    if (bytes <= budget) return ok_status();
    return make_error(input, "", "memory-limit",
                      what + " need " + byte_size_text(bytes) + ", more than the memory budget of " +
                          byte_size_text(budget) + " (janusc --max-memory)");
}

}  // namespace janus
