#!/usr/bin/env bash
# Every example command line in the CLI's --help texts runs as written (exit 0), in the order
# the help gives them (an import follows its export), in a scratch directory.
# Usage: tests/help/help_examples_test.sh path/to/preflight
set -uo pipefail
bin=$(realpath "${1:-build/preflight}")
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0
failed=0
commands=(simulate compare memory collective presets validate topology search sweep "export simai"
          "export chakra" kernels)
for c in "${commands[@]}"; do
  # shellcheck disable=SC2086
  "$bin" $c --help 2>/dev/null | awk '/^  preflight /{
      line = $0
      while (line ~ /\\$/) { getline nxt; sub(/\\$/, "", line); line = line nxt }
      sub(/#.*/, "", line); print line }' >>"$tmp/examples"
done
count=$(wc -l <"$tmp/examples")
[ "$count" -ge 15 ] || { echo "help_examples_test: only $count examples found"; exit 1; }
cd "$tmp"
while IFS= read -r line; do
  args=${line#*preflight }
  # Scenario files named in examples are the repository's.
  args=${args//examples\//$root/examples/}
  args=${args//tests\/data\//$root/tests/data/}
  # shellcheck disable=SC2086
  timeout 300 "$bin" $args >out.txt 2>err.txt </dev/null
  rc=$?
  if [ "$rc" -eq 0 ]; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "FAIL (exit $rc): preflight $args"
    head -c 400 err.txt
  fi
done <"$tmp/examples"
echo "help_examples_test: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
