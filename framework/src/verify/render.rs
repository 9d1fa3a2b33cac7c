//! Diagnostics shown on the printed IR, Cranelift style: each function with
//! a problem is printed by the text printer (which is total, so broken IR
//! prints too) and every diagnostic is written under the line it is about —
//! the instruction, else the block label, else the function signature.
//! Module-level diagnostics come first. The annotation lines start with `;`,
//! which is not XIR syntax, so the output is never mistaken for valid IR.

use std::fmt::Write;

use crate::diag::Diagnostic;
use crate::ir::{Function, MetadataFields, Module};
use crate::text::print_function;

/// Render `diags` on the printed functions of `m` they point into.
pub fn render_on_ir(m: &Module, diags: &[Diagnostic]) -> String {
    let mut out = String::new();
    for d in diags.iter().filter(|d| d.function.is_none() || find(m, d).is_none()) {
        let _ = writeln!(out, "; {}", annotation(d));
    }
    for (k, f) in m.functions.iter().enumerate() {
        let mine: Vec<&Diagnostic> = diags.iter().filter(|d| find(m, d) == Some(k)).collect();
        if mine.is_empty() {
            continue;
        }
        if !out.is_empty() {
            out.push('\n');
        }
        let text = print_function(m, f);
        let lines: Vec<&str> = text.lines().collect();
        let anchors = anchors(f);
        let mut placed = vec![false; mine.len()];
        if anchors.total == lines.len() {
            for (n, line) in lines.iter().enumerate() {
                out.push_str(line);
                out.push('\n');
                let indent: String = line.chars().take_while(|c| c.is_whitespace()).collect();
                for (j, d) in mine.iter().enumerate() {
                    if !placed[j] && anchors.line_of(d) == n {
                        placed[j] = true;
                        let _ = writeln!(out, "{indent}; {}", annotation(d));
                    }
                }
            }
        } else {
            out.push_str(&text);
        }
        for (j, d) in mine.iter().enumerate() {
            if !placed[j] {
                let _ = writeln!(out, "; {}", annotation(d));
            }
        }
    }
    out
}

fn find(m: &Module, d: &Diagnostic) -> Option<usize> {
    let name = d.function.as_deref()?;
    m.functions.iter().position(|f| f.name == name)
}

fn annotation(d: &Diagnostic) -> String {
    let sev = if d.is_error() { "error" } else { "warning" };
    format!("{sev}: [{}] {}", d.rule, d.message)
}

/// Line numbers (0-based, within the printed function) of the signature,
/// each block label and each instruction, mirroring the printer's layout.
struct Anchors {
    signature: usize,
    blocks: Vec<Option<usize>>,
    insts: Vec<Option<usize>>,
    total: usize,
}

impl Anchors {
    fn line_of(&self, d: &Diagnostic) -> usize {
        let inst = d.inst.and_then(|i| self.insts.get(i.index()).copied().flatten());
        let block = d.block.and_then(|b| self.blocks.get(b.index()).copied().flatten());
        inst.or(block).unwrap_or(self.signature)
    }
}

fn comment_lines(md: &MetadataFields) -> usize {
    md.comments.iter().map(|c| c.split('\n').count()).sum()
}

fn anchors(f: &Function) -> Anchors {
    let mut n = comment_lines(&f.md);
    let signature = n;
    n += 1;
    let mut blocks = vec![None; f.block_capacity()];
    let mut insts = vec![None; f.inst_capacity()];
    if !(f.is_external() && f.blocks().is_empty()) {
        for &b in f.blocks() {
            if !f.block_exists(b) {
                continue;
            }
            n += comment_lines(&f.block_md(b));
            blocks[b.index()] = Some(n);
            n += 1;
            for &i in f.block(b).insts() {
                if f.inst_exists(i) {
                    n += comment_lines(&f.inst_md(i));
                    insts[i.index()] = Some(n);
                    n += 1;
                }
            }
        }
        n += 1; // the closing brace
    }
    Anchors { signature, blocks, insts, total: n }
}
