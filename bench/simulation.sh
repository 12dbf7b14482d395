#!/bin/sh
# Runs the simulation of whole runs (tests/integration/simulation.rs) for many cases and
# prints how many held; every case that broke a promise is printed with its seed, to be
# rerun alone with SIM_CASE=<seed> and kept as a regular test.
#
# Usage: bench/simulation.sh [CASES] [SEED] [JOBS]
# (default: 2000 cases, a seed from the clock, 4 cases at once). It builds and runs the
# same test binary as `cargo test`; nothing else is built.
set -eu
cases=${1:-2000}
seed=${2:-$(date +%s)}
jobs=${3:-4}
cd "$(dirname "$0")/.."
echo "simulation: seed $seed, $cases cases, $jobs at once"
SIM_SEED=$seed SIM_CASES=$cases SIM_JOBS=$jobs \
    exec cargo test --locked --test integration simulation::whole_runs -- --nocapture
