#!/usr/bin/env bash
# Idempotent installer for everything Janus needs to build and test on Debian.
# Runs `apt-get update` + `apt-get install` only when a package is missing.
set -euo pipefail

packages=(
  cmake
  ninja-build
  g++
  clang-14
  clang
  libclang-rt-14-dev
  libboost-dev
  libxsimd-dev
  doctest-dev
  libbenchmark-dev
  libfmt-dev
  nlohmann-json3-dev
  libcli11-dev
  python3
  python3-onnx
  libonnx-testdata
)

missing=()
for pkg in "${packages[@]}"; do
  status="$(dpkg-query -W -f='${Status}' "${pkg}" 2>/dev/null || true)"
  if [[ "${status}" != "install ok installed" ]]; then
    missing+=("${pkg}")
  fi
done

if ((${#missing[@]} == 0)); then
  echo "bootstrap: all ${#packages[@]} packages already installed"
  exit 0
fi

echo "bootstrap: installing ${#missing[@]} missing package(s): ${missing[*]}"

as_root=()
if [[ "$(id -u)" -ne 0 ]]; then
  if command -v sudo >/dev/null 2>&1; then
    as_root=(sudo)
  else
    echo "bootstrap: must run as root (or have sudo) to install: ${missing[*]}" >&2
    exit 1
  fi
fi

"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive \
  apt-get install -y --no-install-recommends "${missing[@]}"

echo "bootstrap: installed: ${missing[*]}"
