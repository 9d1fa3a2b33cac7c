//! `--emit dot`: each function's CFG as a Graphviz digraph (one `digraph`
//! per function with a body). Executed edges (what `InstData::successors`
//! returns) are solid; structured role edges that are not executed from the
//! terminator (an `if`'s merge, a loop's merge and continue/update blocks,
//! a switch's merge) are dashed and grey. Every edge is labelled with its
//! role from the spec (`true`, `false`, `merge`, `body`, `case`, ...).

use std::fmt::Write as _;

use xir::{Block, Function, Module};

/// The DOT text of every function with a body.
pub fn module_to_dot(m: &Module) -> String {
    let mut out = String::new();
    for f in &m.functions {
        if f.body().is_some() {
            function_to_dot(f, &mut out);
        }
    }
    out
}

fn block_name(f: &Function, b: Block) -> String {
    match f.block_name(b) {
        Some(n) => format!("^{n}"),
        None => format!("^{b}"),
    }
}

fn escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

pub fn function_to_dot(f: &Function, out: &mut String) {
    let _ = writeln!(out, "digraph \"{}\" {{", escape(&f.name));
    let _ = writeln!(out, "  label=\"@{}\";\n  node [shape=box, fontname=\"monospace\"];", escape(&f.name));
    for &b in f.blocks() {
        let term = f.terminator(b).map(|t| f.opcode(t).name()).unwrap_or("(no terminator)");
        let n = f.block(b).insts().len();
        let _ = writeln!(out, "  {b} [label=\"{}\\n{n} insts, {term}\"];", escape(&block_name(f, b)));
    }
    for &b in f.blocks() {
        let Some(t) = f.terminator(b) else { continue };
        let inst = f.inst(t);
        let spec = &xir_spec::spec().op(inst.opcode).spec;
        // Executed successors are a subsequence of the block operands.
        let succs = inst.successors();
        let mut next = 0;
        for (k, &target) in inst.blocks.iter().enumerate() {
            let executed = succs.get(next) == Some(&target);
            if executed {
                next += 1;
            }
            let role = spec.blocks.get(k).cloned().or_else(|| spec.variadic_blocks.clone()).unwrap_or_default();
            let style = if executed { "solid" } else { "dashed, color=gray40, fontcolor=gray40" };
            let _ = writeln!(out, "  {b} -> {target} [label=\"{}\", style={style}];", escape(&role));
        }
    }
    let _ = writeln!(out, "}}");
}
