#!/usr/bin/env bash
# MPI strategy search: `mpirun -np 2 preflight search ...` must write the same CSV, byte for byte,
# as the single-process search. Builds nothing: pass a binary configured with -DPREFLIGHT_MPI=ON
# (`make mpi-test` builds one in build-mpi/ and runs this).
#   tests/mpi/run_mpi_test.sh build-mpi/preflight
set -uo pipefail
cd "$(dirname "$0")/../.."
bin=${1:?usage: tests/mpi/run_mpi_test.sh PATH/TO/preflight (built with -DPREFLIGHT_MPI=ON)}
command -v mpirun >/dev/null || { echo "FAIL mpi: mpirun not found (scripts/install-deps)"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mpirun=(mpirun -np 2 --oversubscribe)
if [ "$(id -u)" -eq 0 ]; then mpirun+=(--allow-run-as-root); fi
passed=0
failed=0

# name | arguments of `preflight search`
cases=(
  "gpt3-13b-16gpus|examples/gpt3-13b-one-node.yaml --gpus 16"
  "gpt3-13b-32gpus-flow|examples/gpt3-13b-one-node.yaml --gpus 32 --set simulation.network=flow --top 5"
)
for c in "${cases[@]}"; do
  name=${c%%|*}
  read -r -a args <<<"${c#*|}"
  if ! timeout 60 "${mpirun[@]}" "$bin" search "${args[@]}" --jobs 1 --csv "$tmp/$name.mpi.csv" \
      >"$tmp/$name.mpi.out" 2>"$tmp/$name.mpi.err"; then
    echo "FAIL mpi $name: mpirun exited non-zero: $(tail -5 "$tmp/$name.mpi.err")"
    failed=$((failed + 1))
    continue
  fi
  if ! grep -q "x 2 processes" "$tmp/$name.mpi.out"; then
    echo "FAIL mpi $name: the search did not run on 2 MPI ranks (a build without -DPREFLIGHT_MPI=ON?)"
    failed=$((failed + 1))
    continue
  fi
  if ! "$bin" search "${args[@]}" --jobs 2 --quiet --csv "$tmp/$name.one.csv" 2>"$tmp/$name.err"; then
    echo "FAIL mpi $name: the single-process search exited non-zero: $(cat "$tmp/$name.err")"
    failed=$((failed + 1))
    continue
  fi
  if cmp -s "$tmp/$name.mpi.csv" "$tmp/$name.one.csv" && [ -s "$tmp/$name.one.csv" ]; then
    passed=$((passed + 1))
  else
    echo "FAIL mpi $name: mpirun -np 2 and the single-process search wrote different CSVs:"
    diff "$tmp/$name.mpi.csv" "$tmp/$name.one.csv" | head -10
    failed=$((failed + 1))
  fi
done

echo "mpi: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
