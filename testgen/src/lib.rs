//! `xir-testgen`: generators of random well-formed input for tests, kept out
//! of the libraries so that embedding the compiler pulls in no proptest.
//! `modules` (proptest strategies) for format round trips, `programs` for
//! executable structured kernels used by the differential tests of passes
//! and backends, `spec_gen` for kernels derived from the IR spec's opcode
//! data (the same tests, and the `generated` fuzz target), `nesting` for the deterministic deep kernels of the
//! stack-depth tests, `wgslsmith` for seeded WGSL programs of the front
//! end's differential test; `heap`, the counting allocator of the memory
//! measurements. Every crate takes it as a dev-dependency only.

pub mod heap;
pub mod modules;
pub mod nesting;
pub mod passes;
pub mod programs;
pub mod spec_gen;
pub mod splitmix;
pub mod wgslsmith;

pub use splitmix::SplitMix64;
