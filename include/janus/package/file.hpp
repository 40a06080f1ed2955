#pragma once
// Package files (docs/package.md "Files"): an atomic writer and a reader. POSIX.
//
// Contract (seed D7: success must be decidable from the directory):
//   - write_package_file(path, p) first encodes `p` (write_package); an invalid package is an error before anything
//     touches the disk. It then writes the bytes with core/file.hpp's write_file_atomic (temporary file in the
//     target's directory, fsync, rename, directory sync): after the call, `path` holds either the old file (or
//     nothing) or the complete new package, never a partial one. Errors: rule package-write, input = path,
//     a sentence naming the step and the system's reason.
//   - read_package_file(path) reads the whole file and validates it (read_package, input = path); a file that
//     cannot be opened or read is rule package-read.
#include <cstdint>
#include <string>
#include <vector>

#include <janus/core/error.hpp>
#include <janus/core/file.hpp>
#include <janus/package/package.hpp>

namespace janus::package {

/// Atomically replace (or create) `path` with the package `p` (core/file.hpp write_file_atomic, rule package-write).
inline Status write_package_file(const std::string& path, const Package& p) {
    JANUS_TRY(const std::vector<std::uint8_t> bytes, write_package(p, path));
    return write_file_atomic(path, bytes, "package-write");
}

/// Read and validate the package file at `path` (of at most `max_bytes` bytes: core/file.hpp read_file).
inline Result<Package> read_package_file(const std::string& path, const ReadOptions& options = {},
                                         std::uint64_t max_bytes = default_max_memory) {
    JANUS_TRY(const auto bytes, read_file(path, "package-read", "a package file", max_bytes));
    return read_package(bytes, path, options);
}

}  // namespace janus::package
