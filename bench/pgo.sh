#!/usr/bin/env bash
# Builds agentyard-bench and the agentyard program with profile-guided optimization
# (PGO): an instrumented benchmark runs a training workload, LLVM merges what it counted,
# and both programs are built again with the counts, so the compiler lays out the code
# the way it is actually run (hot paths together, cold arms out of the way).
#
# Why: the runtime's HTTP call misses the instruction cache twice as often as the bare
# axum route (docs/benchmarks.md, "2026-12-01 (fifth)"), and a code layout from a
# profile is the lever aimed at that; measured in "2026-12-01 (sixth)".
#
# The training workload is `agentyard-bench --quick` (every suite, small sizes, ~20 s),
# not the rows that are measured afterwards, so a gain is not the profile having seen
# the exact measurement. The floors (bare axum, raw ractor) are in the same binary and
# are trained by the same run, so the benchmark's ratios compare like with like.
#
# usage: bench/pgo.sh [--profile release|dist] [--train 'ARGS for agentyard-bench']
# Output: target/pgo/use/<host>/<profile>/{agentyard-bench,agentyard}.
# Needs llvm-profdata of rustc's own LLVM version: `rustup component add llvm-tools`
# (the script asks rustup for it when it is missing).
set -euo pipefail
cd "$(dirname "$0")/.."

profile=release
train='--quick'
while [ $# -gt 0 ]; do
    case "$1" in
    --profile) profile="${2:?--profile needs release or dist}"; shift 2 ;;
    --train) train="${2:?--train needs the arguments of the training run}"; shift 2 ;;
    -h | --help) sed -n '2,20p' "$0"; exit 0 ;;
    *) echo "bench/pgo.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
done

# The two profiles whose output directory is named after them (dev's is `debug`),
# and the only ones worth a profile-guided build.
case "$profile" in
release | dist) ;;
*) echo "bench/pgo.sh: --profile is release or dist, not '$profile'" >&2; exit 2 ;;
esac

host=$(rustc -vV | sed -n 's/^host: //p')
profdata="$(rustc --print sysroot)/lib/rustlib/$host/bin/llvm-profdata"
if [ ! -x "$profdata" ]; then
    echo "bench/pgo.sh: no llvm-profdata for rustc's LLVM; adding the llvm-tools component" >&2
    rustup component add llvm-tools
fi

work="$PWD/target/pgo"
rm -rf "$work/raw"
mkdir -p "$work/raw"

# --target keeps RUSTFLAGS off build scripts and proc macros: only the programs'
# own code is instrumented, and later optimized.
echo "bench/pgo.sh: building the instrumented benchmark ($profile)" >&2
RUSTFLAGS="${RUSTFLAGS:-} -Cprofile-generate=$work/raw" \
    cargo build --profile "$profile" -p agentyard-bench --target "$host" \
    --target-dir "$work/generate"

echo "bench/pgo.sh: training: agentyard-bench $train" >&2
# Each process (the suites' children too) writes its own file; %m merges the
# counts of processes of the same binary as they exit.
# shellcheck disable=SC2086 # $train is a list of arguments
LLVM_PROFILE_FILE="$work/raw/%p-%m.profraw" \
    "$work/generate/$host/$profile/agentyard-bench" $train >"$work/training.txt"

"$profdata" merge -o "$work/merged.profdata" "$work/raw"

echo "bench/pgo.sh: building agentyard-bench and agentyard with the profile" >&2
RUSTFLAGS="${RUSTFLAGS:-} -Cprofile-use=$work/merged.profdata" \
    cargo build --profile "$profile" -p agentyard-bench -p agentyard --target "$host" \
    --target-dir "$work/use"

echo "built: $work/use/$host/$profile/agentyard-bench and .../agentyard" >&2
