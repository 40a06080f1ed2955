#!/bin/bash -eu
# Build every fuzz target of fuzz/ the OSS-Fuzz way (ClusterFuzzLite runs this script in .clusterfuzzlite/
# Dockerfile's image): the compiler, its sanitizer and coverage flags and the fuzzing engine come from the
# environment ($CXX, $CXXFLAGS, $LIB_FUZZING_ENGINE), the fuzzers go to $OUT with their seed corpora
# (<name>_seed_corpus.zip), dictionaries (<name>.dict) and libFuzzer options (<name>.options).
#
# Outside the image (what fuzz/README.md's runs used), with Debian's clang:
#   CXX=clang++ CXXFLAGS="-O1 -gline-tables-only -fsanitize=address,undefined,fuzzer-no-link" \
#   LIB_FUZZING_ENGINE=-fsanitize=fuzzer OUT=/tmp/cfl bash .clusterfuzzlite/build.sh
# JANUS_FUZZ_TARGETS="onnx_run package_run" builds only the named targets; JANUS_EXTRA_INCLUDES adds include flags
# (the image's xsimd).
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
: "${OUT:?set OUT to the output directory}"
mkdir -p "$OUT"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# the flags of CMake's fuzz configuration that the engine does not set: C++20, one FP contraction rule, the
# registry's kernels and the lowering compiled once (tools/common/kernels.cpp, lowering.cpp: CMake's janus_kernels)
flags=(-std=c++20 -ffp-contract=off -DJANUS_OUT_OF_LINE_DISPATCH -DJANUS_OUT_OF_LINE_LOWERING
       -DJANUS_SOURCE_DIR="\"$root\"" -I"$root/include" -I"$root/tools/common" ${JANUS_EXTRA_INCLUDES:-})
for unit in kernels lowering; do
  # shellcheck disable=SC2086  # CXXFLAGS is a list of flags
  $CXX $CXXFLAGS "${flags[@]}" -c "$root/tools/common/$unit.cpp" -o "$work/$unit.o"
done

for src in "$root"/fuzz/*.cpp; do
  name="$(basename "$src" .cpp)"
  [ "$name" = replay_main ] && continue
  if [ -n "${JANUS_FUZZ_TARGETS:-}" ] && [[ " $JANUS_FUZZ_TARGETS " != *" $name "* ]]; then continue; fi
  # shellcheck disable=SC2086
  $CXX $CXXFLAGS "${flags[@]}" "$src" "$work/kernels.o" "$work/lowering.o" $LIB_FUZZING_ENGINE -o "$OUT/$name"
  (cd "$root/fuzz/corpus/$name" && zip -q -r -X "$OUT/${name}_seed_corpus.zip" .)
  options="[libfuzzer]\nrss_limit_mb = 2048\ntimeout = 30\n"
  if [ -e "$root/fuzz/$name.dict" ]; then
    cp -L "$root/fuzz/$name.dict" "$OUT/$name.dict"
    options+="dict = $name.dict\n"
  fi
  printf "$options" >"$OUT/$name.options"
done
