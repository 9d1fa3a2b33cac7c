//! Debug info at `-g` (`CompileOptions::debug_info`, docs/debug-info.md):
//! exact disassembly of small located kernels (the file tests under
//! `tests/debug_info/`), validation at every preset, which lines each
//! preset keeps, and default builds without any of it.

mod common;

use std::collections::{BTreeMap, BTreeSet};

use common::*;
use rspirv::spirv::Op;
use xir::ir::Location;
use xir::Module;
use xir_spirv::validate::{self, OptOutcome};
use xir_spirv::CompileOptions;

/// A location as the module's lines say it: file name, line, column.
type Line = (String, u32, u32);

fn g(level: u8) -> CompileOptions {
    CompileOptions { opt_level: level, debug_info: true, ..Default::default() }
}

/// Every `OpLine` of a module, with its `OpString`'s text.
fn lines(words: &[u32]) -> Vec<Line> {
    let m = load(words);
    let strings: BTreeMap<u32, String> = m
        .debug_string_source
        .iter()
        .filter(|i| i.class.opcode == Op::String)
        .map(|i| match &i.operands[0] {
            rspirv::dr::Operand::LiteralString(s) => (i.result_id.unwrap(), s.clone()),
            o => panic!("OpString operand {o:?}"),
        })
        .collect();
    m.all_inst_iter()
        .filter(|i| i.class.opcode == Op::Line)
        .map(|i| {
            let file = strings[&i.operands[0].unwrap_id_ref()].clone();
            (file, i.operands[1].unwrap_literal_bit32(), i.operands[2].unwrap_literal_bit32())
        })
        .collect()
}

/// Count of instructions with opcode `op` in a module.
fn count_op(words: &[u32], op: Op) -> usize {
    load(words).all_inst_iter().filter(|i| i.class.opcode == op).count()
}

/// Give every instruction of `m` its own location: `file`, line = 1000 *
/// (function index + 1) + its position in the function, column 1.
fn locate_all(m: &mut Module, file: &str) {
    let ids: Vec<_> = m.func_ids().collect();
    for (k, fid) in ids.into_iter().enumerate() {
        let f = m.func_mut(fid);
        let insts: Vec<_> = f.all_insts().map(|(_, i)| i).collect();
        for (n, i) in insts.into_iter().enumerate() {
            let line = 1000 * (k as u32 + 1) + n as u32;
            f.inst_md_mut(i).location = Some(Box::new(Location { file: file.to_string(), line, col: 1 }));
        }
    }
}

/// The locations of the instructions of every function the module's
/// `OpName`s name (the functions emitted: `-g` names each).
fn located_in_emitted(m: &Module, words: &[u32]) -> BTreeSet<Line> {
    let spv = load(words);
    let names: BTreeSet<String> = spv
        .debug_names
        .iter()
        .filter_map(|i| match i.operands.get(1) {
            Some(rspirv::dr::Operand::LiteralString(s)) => Some(s.clone()),
            _ => None,
        })
        .collect();
    m.func_ids()
        .map(|f| m.func(f))
        .filter(|f| names.contains(&f.name))
        .flat_map(|f| f.all_insts().filter_map(move |(_, i)| f.inst_md(i).location.as_deref().cloned()))
        .map(|l| (l.file, l.line, l.col))
        .collect()
}

/// The corpus kernels that are already `xir.spirv` (what the snapshots
/// compile directly), by name.
fn direct_corpus() -> Vec<(String, Module)> {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/corpus");
    let mut paths: Vec<_> = std::fs::read_dir(root).unwrap().map(|e| e.unwrap().path()).collect();
    paths.sort();
    paths
        .into_iter()
        .filter(|p| p.extension().and_then(|e| e.to_str()) == Some("xir"))
        .filter_map(|p| {
            let m = parse(&std::fs::read_to_string(&p).unwrap());
            let k = kernel_of(&m);
            xir_spirv::compile(&m, k, &opts(0, false)).ok()?;
            Some((p.file_stem().unwrap().to_string_lossy().into_owned(), m))
        })
        .collect()
}

/// The file tests: `tests/debug_info/NAME.xir` holds `// opt-level: N` in
/// its header, a module, and after `// ---- expected ----` the exact
/// disassembly of its kernel compiled with `-g` at that level, each line
/// behind `// `. Re-bless with `XIR_BLESS=1`.
#[test]
fn located_kernels_disassemble_exactly() {
    const MARK: &str = "// ---- expected ----\n";
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/debug_info");
    let bless = std::env::var_os("XIR_BLESS").is_some();
    let mut paths: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    paths.sort();
    let mut diffs = Vec::new();
    for p in &paths {
        let text = std::fs::read_to_string(p).unwrap();
        let (source, expected) = text.split_once(MARK).unwrap_or((&text, ""));
        let level = source
            .lines()
            .find_map(|l| l.strip_prefix("// opt-level: "))
            .map_or(0, |n| n.trim().parse::<u8>().expect("opt-level is 0..=3"));
        let m = parse(source);
        let out = xir_spirv::compile(&m, kernel_of(&m), &g(level))
            .unwrap_or_else(|d| panic!("{}: {}", p.display(), xir::diag::render(&d)));
        validate::validate(&out.words).expect("the module validates");
        if level > 0 {
            assert_eq!(out.opt, OptOutcome::Optimized, "{}", p.display());
        }
        let asm = out.disassembly();
        let want: String = expected
            .lines()
            .map(|l| format!("{}\n", l.strip_prefix("// ").unwrap_or(l.trim_start_matches("//"))))
            .collect();
        if bless {
            let block: String = asm.lines().map(|l| format!("// {l}\n")).collect();
            std::fs::write(p, format!("{source}{MARK}{block}")).unwrap();
        } else if want != format!("{}\n", asm.trim_end()) {
            let diff = similar::TextDiff::from_lines(&want, &asm);
            diffs.push(format!("{}:\n{}", p.display(), diff.unified_diff().header("expected", "emitted")));
        }
    }
    assert!(paths.len() >= 2, "only {} file tests", paths.len());
    assert!(diffs.is_empty(), "{}", diffs.join("\n"));
}

/// With every instruction located, `-g` validates at every preset and
/// costs no optimization: a preset's output is kept with lines exactly
/// when it is kept without. At -O0 every located instruction the backend
/// emits keeps its line; after a preset the lines left are a subset of
/// the input's, with the same file, line and column.
#[test]
fn every_corpus_kernel_keeps_its_lines_at_every_preset() {
    let corpus = direct_corpus();
    assert!(corpus.len() >= 10, "only {} corpus kernels compile directly", corpus.len());
    let mut kept = [0usize; 4];
    let mut total = 0usize;
    for (name, plain) in &corpus {
        let mut m = plain.clone();
        let file = format!("{name}.xir");
        locate_all(&mut m, &file);
        let k = kernel_of(&m);
        let mut at_o0 = BTreeSet::new();
        for level in 0..=3u8 {
            let with = xir_spirv::compile(&m, k, &g(level)).unwrap_or_else(|d| panic!("{name} -O{level} -g: {d:?}"));
            let without = xir_spirv::compile(plain, k, &opts(level, false)).unwrap();
            validate::validate(&with.words_unoptimized).expect("the emitted module validates");
            validate::validate(&with.words).expect("the final module validates");
            assert_eq!(with.opt, without.opt, "{name} -O{level}: -g changed what the preset did");
            let found: BTreeSet<Line> = lines(&with.words).into_iter().collect();
            if level == 0 {
                assert_eq!(found, located_in_emitted(&m, &with.words), "{name}: -O0 lines");
                at_o0 = found.clone();
                total += at_o0.len();
            } else {
                assert!(
                    found.is_subset(&at_o0),
                    "{name} -O{level}: lines not in the input: {:?}",
                    found.difference(&at_o0)
                );
            }
            kept[level as usize] += found.len();
            assert_eq!(count_op(&with.words, Op::String), 1, "{name} -O{level}: one file, one OpString");
            assert_eq!(count_op(&with.words, Op::Source), 1, "{name} -O{level}: one OpSource");
        }
    }
    eprintln!("lines kept of {total} at -O0..-O3: {kept:?}");
}

/// Without `-g` nothing changes: no `OpString`, `OpSource`, `OpLine`,
/// `OpNoLine`, no new `OpName`, and the words are exactly those of the
/// same module without its locations (the snapshots hold them equal to
/// what the backend wrote before debug info existed).
#[test]
fn a_default_build_has_no_debug_info() {
    for (name, plain) in direct_corpus() {
        let mut m = plain.clone();
        locate_all(&mut m, "k.xir");
        let k = kernel_of(&m);
        for level in [0u8, 2] {
            let located = xir_spirv::compile(&m, k, &opts(level, false)).unwrap();
            let bare = xir_spirv::compile(&plain, k, &opts(level, false)).unwrap();
            assert_eq!(located.words, bare.words, "{name} -O{level}");
            for op in [Op::String, Op::Source, Op::Line, Op::NoLine] {
                assert_eq!(count_op(&located.words, op), 0, "{name} -O{level}: {op:?}");
            }
            let names = |w: &[u32]| count_op(w, Op::Name);
            let debug = xir_spirv::compile(&m, k, &g(level)).unwrap();
            assert!(names(&debug.words) > names(&located.words), "{name} -O{level}: -g names nothing");
        }
    }
}

/// Files are declared once each, in order of first use, with the language
/// their extension says; a callable's parameters and values are named.
#[test]
fn each_file_is_one_string_and_source_with_its_language() {
    let src = r#"
callable @scale(%v: f32, %s: f32) -> f32 {
^entry:
  %scaled = mul %v, %s : f32 !loc("lib.comp", 3, 12)
  return %scaled !loc("lib.comp", 3, 5)
}
kernel @k(%out: buffer<f32>) block_size(1, 1, 1) {
^entry:
  %x = call @scale, f32 2.0, f32 3.0 : f32 !loc("k.wgsl", 7, 13)
  buffer.write %out, u32 0, %x !loc("k.wgsl", 8, 5)
  %y = call @scale, %x, f32 0.5 : f32 !loc("k.wgsl", 9, 13)
  buffer.write %out, u32 1, %y !loc("other.xir", 2, 1)
  return
}
"#;
    let out = compile_with(src, &g(0));
    let asm = out.disassembly();
    let debug: Vec<&str> =
        asm.lines().filter(|l| l.contains("OpString") || l.contains("OpSource") || l.contains("OpName")).collect();
    // Functions are emitted callees first, so files come in that order
    // (`%1` is the GLSL.std.450 import).
    assert_eq!(
        debug,
        [
            "%2 = OpString \"lib.comp\"",
            "OpSource GLSL 450 %2",
            "%3 = OpString \"k.wgsl\"",
            "OpSource WGSL 100 %3",
            "%4 = OpString \"other.xir\"",
            "OpSource Unknown 0 %4",
        ]
        .iter()
        .copied()
        .chain(debug.iter().copied().filter(|l| l.contains("OpName")))
        .collect::<Vec<_>>()
    );
    let names: BTreeSet<&str> =
        debug.iter().filter_map(|l| l.split_once("OpName ").map(|(_, r)| r.split_once(' ').unwrap().1)).collect();
    for n in ["\"scale\"", "\"v\"", "\"s\"", "\"scaled\"", "\"k\"", "\"out\"", "\"x\"", "\"y\""] {
        assert!(names.contains(n), "{n} not named: {names:?}");
    }
    for level in 1..=3 {
        let o = compile_with(src, &g(level));
        validate::validate(&o.words).expect("validates");
        assert_eq!(o.opt, OptOutcome::Optimized);
    }
}
