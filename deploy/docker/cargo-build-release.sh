#!/bin/sh
# Builds one workspace binary in release mode for the CPU level in TARGET_CPU and copies it to
# /out/NAME. The Dockerfile's build stages (one per service) call it with cache mounts on the
# cargo registry and on /cache/target, so a rebuild compiles only what changed.
set -eu

crate="$1"
target_cpu="${TARGET_CPU:-x86-64-v2}"

# One target directory per CPU level: the flags are part of what cargo fingerprints, so two
# levels sharing a directory would keep rebuilding each other's artefacts.
export CARGO_TARGET_DIR="/cache/target/${target_cpu}"
export RUSTFLAGS="-C target-cpu=${target_cpu}"

cargo build --release --locked -p "$crate" --bin "$crate"
install -D -m 0755 "$CARGO_TARGET_DIR/release/$crate" "/out/$crate"
