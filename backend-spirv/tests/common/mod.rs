//! Shared helpers of the backend's integration tests: parse XIR text,
//! compile its kernel at every optimizer preset, and check that every module
//! (before and after optimization) passes SPIRV-Tools for Vulkan 1.2.
#![allow(dead_code)]

use xir::{FuncId, Module};
use xir_spirv::{compile, validate, CompileOptions, FeatureSet, SpirvOutput};

pub fn parse(src: &str) -> Module {
    match xir::text::parse_module(src, "test.xir") {
        Ok(m) => m,
        Err(d) => panic!("parse failed:\n{}", xir::diag::render(&d)),
    }
}

pub fn kernel_of(m: &Module) -> FuncId {
    m.func_ids().find(|&f| m.func(f).is_kernel()).expect("module has a kernel")
}

pub fn opts(level: u8, fast_math: bool) -> CompileOptions {
    CompileOptions { opt_level: level, fast_math, ..Default::default() }
}

/// Compile at `o`, panicking with the diagnostics on failure.
pub fn compile_with(src: &str, o: &CompileOptions) -> SpirvOutput {
    let m = parse(src);
    let k = kernel_of(&m);
    match compile(&m, k, o) {
        Ok(out) => out,
        Err(d) => panic!("compile failed:\n{}", xir::diag::render(&d)),
    }
}

/// Compile at presets 0..=3; every module must validate before and after
/// optimization, and the optimizer's output must be kept at 1..=3. Returns
/// the preset-0 output.
pub fn compile_all_presets(src: &str) -> SpirvOutput {
    let mut first = None;
    for level in 0..=3u8 {
        let out = compile_with(src, &opts(level, false));
        validate::validate(&out.words_unoptimized).expect("unoptimized module validates");
        validate::validate(&out.words).expect("final module validates");
        if level > 0 {
            assert_eq!(out.opt, validate::OptOutcome::Optimized, "preset {level} output was rejected");
        }
        if first.is_none() {
            first = Some(out);
        }
    }
    first.expect("level 0 ran")
}

/// Compile expecting failure; returns the rendered diagnostics.
pub fn compile_err(src: &str, o: &CompileOptions) -> String {
    let m = parse(src);
    let k = kernel_of(&m);
    match compile(&m, k, o) {
        Ok(out) => panic!("expected a rejection, got a module:\n{}", out.disassembly()),
        Err(d) => xir::diag::render(&d),
    }
}

/// Lines of the disassembly containing `needle`.
pub fn count(dis: &str, needle: &str) -> usize {
    dis.lines().filter(|l| l.contains(needle)).count()
}

pub fn all_features() -> FeatureSet {
    FeatureSet::all()
}

pub use rspirv::dr::{Module as SpvModule, Operand};
pub use rspirv::spirv::Op;
use std::collections::{HashMap, HashSet};

pub fn load(words: &[u32]) -> SpvModule {
    rspirv::dr::load_words(words).expect("module loads")
}

/// Scalar `OpConstant` values by id (64-bit literals as their full value).
pub fn const_values(m: &SpvModule) -> HashMap<u32, u64> {
    let mut out = HashMap::new();
    for i in &m.types_global_values {
        if i.class.opcode == Op::Constant {
            let v = match i.operands[0] {
                Operand::LiteralBit32(w) => w as u64,
                Operand::LiteralBit64(w) => w,
                _ => continue,
            };
            out.insert(i.result_id.unwrap(), v);
        }
    }
    out
}

/// Branch targets of a block's terminator.
pub fn targets(i: &rspirv::dr::Instruction) -> Vec<u32> {
    match i.class.opcode {
        Op::Branch => vec![i.operands[0].unwrap_id_ref()],
        Op::BranchConditional => vec![i.operands[1].unwrap_id_ref(), i.operands[2].unwrap_id_ref()],
        Op::Switch => {
            let mut v = vec![i.operands[1].unwrap_id_ref()];
            v.extend(i.operands[2..].iter().skip(1).step_by(2).map(|o| o.unwrap_id_ref()));
            v
        }
        _ => vec![],
    }
}

/// Predecessor labels of every block of every function.
pub fn predecessors(m: &SpvModule) -> HashMap<u32, HashSet<u32>> {
    let mut preds: HashMap<u32, HashSet<u32>> = HashMap::new();
    for f in &m.functions {
        for b in &f.blocks {
            let l = b.label.as_ref().unwrap().result_id.unwrap();
            preds.entry(l).or_default();
            for t in targets(b.instructions.last().unwrap()) {
                preds.entry(t).or_default().insert(l);
            }
        }
    }
    preds
}

/// Every OpPhi is first in its block and names each predecessor exactly once.
pub fn check_phis(m: &SpvModule) {
    let preds = predecessors(m);
    for f in &m.functions {
        for b in &f.blocks {
            let l = b.label.as_ref().unwrap().result_id.unwrap();
            let mut seen_other = false;
            for i in &b.instructions {
                if i.class.opcode == Op::Phi {
                    assert!(!seen_other, "OpPhi after a non-Phi instruction in block %{l}");
                    let parents: Vec<u32> = i.operands.iter().skip(1).step_by(2).map(|o| o.unwrap_id_ref()).collect();
                    let set: HashSet<u32> = parents.iter().copied().collect();
                    assert_eq!(set.len(), parents.len(), "duplicate parent in a Phi of %{l}");
                    assert_eq!(set, preds[&l], "Phi parents of %{l} differ from its predecessors");
                } else {
                    seen_other = true;
                }
            }
        }
    }
}

/// All instructions of all functions.
pub fn insts(m: &SpvModule) -> Vec<&rspirv::dr::Instruction> {
    m.functions.iter().flat_map(|f| f.blocks.iter().flat_map(|b| b.instructions.iter())).collect()
}

/// Count `NoContraction` decorations.
pub fn no_contraction(m: &SpvModule) -> usize {
    m.annotations
        .iter()
        .filter(|i| {
            i.class.opcode == Op::Decorate
                && matches!(i.operands[1], Operand::Decoration(rspirv::spirv::Decoration::NoContraction))
        })
        .count()
}

/// Every pass, with the backend's `callable_specialization` bound to its hook
/// (what the shipped `spirv` pipeline needs).
pub fn registry() -> xir::pass::PassRegistry {
    let mut reg = xir::pass::PassRegistry::new();
    reg.declare_hook("callable_specialization", "SPIR-V callable policy");
    xir_passes::register_all(&mut reg);
    xir_spirv::register_passes(&mut reg);
    reg.bind_hook("callable_specialization", "callable_specialization").expect("backend pass registered");
    reg
}

/// `src` through the shipped `spirv` pipeline at `level`, verified after
/// each pass.
pub fn legalize(src: &str, level: u8) -> Module {
    use xir::pipeline::{Loader, PassManager, RunOptions};
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let reg = registry();
    let pipeline = Loader::new(&reg)
        .with_search_dir(std::path::PathBuf::from(format!("{root}/pipelines")))
        .load("spirv")
        .unwrap_or_else(|e| panic!("spirv pipeline loads: {e}"));
    let mut m = parse(src);
    let run = RunOptions { opt_level: level, verify_each: true, ..RunOptions::default() };
    let mut log = Vec::new();
    if let Err(e) = PassManager::new(&pipeline, run).run(&mut m, &mut log) {
        panic!("pipeline at -O{level}: {e}\n{}", String::from_utf8_lossy(&log));
    }
    m
}

/// `src` through the shipped `spirv` pipeline at `level` (verified after each
/// pass), then compiled at `level`; both modules validate.
pub fn through_spirv(src: &str, level: u8) -> (Module, SpirvOutput) {
    let m = legalize(src, level);
    let out = compile(&m, kernel_of(&m), &opts(level, false))
        .unwrap_or_else(|d| panic!("compile at -O{level}:\n{}", xir::diag::render(&d)));
    validate::validate(&out.words_unoptimized).expect("unoptimized module validates");
    validate::validate(&out.words).expect("final module validates");
    (m, out)
}

/// The parsed header fields and the five sections of an artifact.
pub fn split(bytes: &[u8]) -> (xir_spirv::artifact::RawHeader, [Vec<u8>; 5]) {
    let (h, _) = xir_spirv::artifact::RawHeader::parse(bytes).expect("header parses");
    let mut at = xir_spirv::artifact::HEADER_LEN;
    let sections = h.sections.map(|e| {
        let s = bytes[at..at + e.size as usize].to_vec();
        at += e.size as usize;
        s
    });
    (h, sections)
}

/// Edit a real artifact's fields or sections and re-seal it (all digests correct).
pub fn reseal(bytes: &[u8], edit: impl FnOnce(&mut xir_spirv::artifact::RawHeader, &mut [Vec<u8>; 5])) -> Vec<u8> {
    let (mut h, mut s) = split(bytes);
    edit(&mut h, &mut s);
    xir_spirv::artifact::seal(h, &s)
}
