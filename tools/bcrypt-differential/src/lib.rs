//! Nothing but its test: `tests/differential` holds `hashing::batch`
//! (bcrypt-rust's scalar and SIMD kernels) to the `bcrypt` crate over the
//! published vectors and thousands of random inputs (docs/DESIGN.md, Batch
//! hashing). `scripts/test-all` runs it on every x86 backend the CPU has;
//! `scripts/arm64-check` builds it for aarch64 and runs it under qemu (NEON).
