#!/usr/bin/env bash
# Full CI run: bootstrap packages, then every CI workflow preset in sequence.
# Ends with a single summary line "N passed, M failed" and exits non-zero on any failure.
#   CMAKE_BUILD_PARALLEL_LEVEL  build jobs (default 2)
#   JANUS_FUZZ_SECONDS          per-fuzzer time for the ci-fuzz workflow (default: cache value, 10)
#   JANUS_WORKFLOWS             space-separated subset of workflows to run
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "${root}"

export CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-2}"

bash scripts/bootstrap.sh

workflows=(${JANUS_WORKFLOWS:-ci-gcc-release ci-asan ci-fuzz})
log_dir="${root}/build/logs"
mkdir -p "${log_dir}"

total_passed=0
total_failed=0
failed_workflows=()
timings=()
start_all=${SECONDS}

for wf in "${workflows[@]}"; do
  log="${log_dir}/${wf}.log"
  echo "=== ${wf}: cmake --workflow --preset ${wf} (log: ${log})"
  start=${SECONDS}
  rc=0
  cmake --workflow --preset "${wf}" 2>&1 | tee "${log}" || rc=$?
  elapsed=$((SECONDS - start))

  # ctest closing line: "97% tests passed, 1 tests failed out of 35"
  summary="$(grep -E '^[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+' "${log}" | tail -n 1 || true)"
  if [[ -n "${summary}" ]]; then
    failed="$(sed -E 's/.* ([0-9]+) tests? failed out of ([0-9]+).*/\1/' <<<"${summary}")"
    total="$(sed -E 's/.* ([0-9]+) tests? failed out of ([0-9]+).*/\2/' <<<"${summary}")"
    passed=$((total - failed))
  else
    passed=0
    failed=0
  fi
  if ((rc != 0)) && ((failed == 0)); then
    failed=1  # configure/build failure, or ctest failed without a summary
  fi
  total_passed=$((total_passed + passed))
  total_failed=$((total_failed + failed))
  if ((rc != 0)); then
    failed_workflows+=("${wf}")
  fi
  timings+=("${wf}: ${elapsed}s (${passed} passed, ${failed} failed, exit ${rc})")
  echo "=== ${wf}: ${elapsed}s, exit ${rc}"
done

echo
echo "=== workflow timings (total $((SECONDS - start_all))s)"
for t in "${timings[@]}"; do
  echo "  ${t}"
done
if ((${#failed_workflows[@]} > 0)); then
  echo "=== FAILED workflows: ${failed_workflows[*]}"
fi
echo "${total_passed} passed, ${total_failed} failed"

if ((${#failed_workflows[@]} > 0 || total_failed > 0)); then
  exit 1
fi
