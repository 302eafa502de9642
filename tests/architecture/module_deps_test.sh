#!/usr/bin/env bash
# The module dependency rule (docs/architecture.md): each module of src/ is a layer, and a
# source file may include headers of its own module and of lower layers only. Modules on one
# layer do not include each other. The rule this enforces, among others:
#   the network never includes the rank layout, the workload or the collectives (it carries GPU
#   flows only); engine/ (the event Simulator) includes nothing above base/; no library code,
#   the Python module, tests, benchmarks or fuzzers include the CLI.
# Usage: module_deps_test.sh [REPO_ROOT]. Exit 0 when the tree obeys the rule; otherwise each
# wrong include is printed as FILE:LINE: MODULE -> MODULE and the exit status is 1. It then
# checks itself: a tree with one wrong include must fail.
set -u

layer() {
  case "$1" in
    base) echo 0 ;;
    config | engine) echo 1 ;;
    network | model) echo 2 ;;
    parallel) echo 3 ;;
    workload) echo 4 ;;
    compute | memory | collective) echo 5 ;;
    exec) echo 6 ;;
    simulate) echo 7 ;;
    interop) echo 8 ;;
    search | validation) echo 9 ;;
    sweep) echo 10 ;;
    report) echo 11 ;;
    cli) echo 12 ;;
    *) echo -1 ;;
  esac
}

# check ROOT: prints every violation; returns 1 if there is one.
check() {
  local root=$1 bad=0 f rel module inc target lm lt
  while IFS= read -r f; do
    rel=${f#"$root"/}
    module=$(echo "$rel" | cut -d/ -f2)
    lm=$(layer "$module")
    if [ "$lm" -lt 0 ]; then
      echo "$rel: src/$module is not a module of the layer table (tests/architecture/module_deps_test.sh)"
      bad=1
      continue
    fi
    while IFS=: read -r line inc; do
      target=${inc%%/*}
      [ "$target" = "$module" ] && continue
      lt=$(layer "$target")
      [ "$lt" -lt 0 ] && continue  # generated/, tests/ fakes and other non-module paths
      case "$rel" in *_test.cc) [ "$target" != cli ] && continue ;; esac
      if [ "$lt" -ge "$lm" ]; then
        echo "$rel:$line: $module -> $target (layer $lm may include layers below $lm only)"
        bad=1
      fi
    done < <(grep -noE '^#include "[a-z_]+/[^"]+"' "$f" | sed -E 's/:#include "/:/; s/"$//')
  done < <(find "$root/src" -name '*.cc' -o -name '*.h' | sort)
  # Outside src/: anything but the CLI.
  while IFS= read -r f; do
    if grep -qE '^#include "cli/' "$f"; then
      echo "${f#"$root"/}: includes the CLI"
      bad=1
    fi
  done < <(find "$root/python" "$root/tests" "$root/bench" "$root/fuzz" \
             \( -name '*.cc' -o -name '*.h' \) 2>/dev/null | sort)
  return $bad
}

root=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
if ! check "$root"; then
  echo "module_deps_test: FAILED: wrong includes above" >&2
  exit 1
fi

# Self-check: a network file that includes the workload must be caught.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/src/network" "$tmp/src/workload"
printf '#include "workload/workload.h"\n' > "$tmp/src/network/wrong.cc"
printf '#include "network/placement.h"\n' > "$tmp/src/workload/right.cc"
if out=$(check "$tmp"); then
  echo "module_deps_test: FAILED: the checker missed network -> workload" >&2
  exit 1
fi
case "$out" in
  *"src/network/wrong.cc:1: network -> workload"*) ;;
  *) echo "module_deps_test: FAILED: unexpected report: $out" >&2; exit 1 ;;
esac
echo "module_deps_test: $(find "$root/src" -name '*.cc' -o -name '*.h' | wc -l) files obey the layer rule"
