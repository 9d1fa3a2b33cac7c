//! Generators of random well-formed IR for property tests (proptest
//! strategies): `modules` for format round trips, `programs` for executable
//! structured kernels used by the differential tests of passes and backends;
//! `nesting` for the deterministic deep kernels of the stack-depth tests.

pub mod modules;
pub mod nesting;
pub mod programs;
pub mod splitmix;

pub use splitmix::SplitMix64;
