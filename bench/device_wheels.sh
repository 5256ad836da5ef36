#!/usr/bin/env bash
# Builds .devwh/ (git-ignored) for the GPU machine: vLLM 0.26.0 and its wheels
# (../shared/device/wheels.txt) plus the daemon's own runtime dependencies that the machine lacks
# (bench/device-wheels.txt), so the daemon rows of bench/device_session.sh and tests/gpu run there.
# Parts of 60 MiB (part + the ~1.5 MiB working tree fit one device call); carry them as in
# bench/device_session.sh's header. Run from anywhere in the checkout.
set -euo pipefail
root=$(git rev-parse --show-toplevel)
shared=${SHARED_DEVICE:-$root/../shared/device}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp "$shared/build-wheelhouse.sh" "$shared/install-on-device.sh" "$tmp/"
grep -hv '^#' "$shared/wheels.txt" "$root/bench/device-wheels.txt" | grep . > "$tmp/wheels.txt"
cd "$root" && PART_MB=${PART_MB:-60} bash "$tmp/build-wheelhouse.sh"
