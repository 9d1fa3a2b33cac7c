//! The pass sequences tests run generated programs through without the
//! pipeline crate (which `xir-passes`' tests cannot depend on): the
//! legalization spine of `pipelines/spirv-legalize.ron`, in order, and the
//! short way to raw SSA. One list, so the tests that legalize random
//! programs agree with each other and with the shipped pipeline.

/// Structured IR to raw-CFG SSA (`xir.raw.ssa`).
pub const RAW_SSA: &[&str] = &["promote_ref_arg", "destructure_cfg", "mem2reg"];

/// The legalization spine of `spirv-legalize`: to the restructured,
/// SSA form the backend's handoff takes (without the optimization groups).
pub const LEGALIZE: &[&str] = &[
    "promote_ref_arg",
    "destructure_cfg",
    "reg2mem",
    "restructure_cfg",
    "canonicalize_one_shot_loops",
    "clear_inactive_block_payloads",
    "mem2reg",
    "audit_reg2mem_spills",
    "fix_self_referential",
];
