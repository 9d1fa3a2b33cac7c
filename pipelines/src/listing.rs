//! `--list-passes` and `--list-dialects`: printed from the registry's pass
//! contracts and the spec's dialect data, never from a hand-kept list.

use std::fmt::Write as _;

use xir::pass::{PassRegistry, Produces};

pub fn passes(reg: &PassRegistry) -> String {
    let mut out = String::new();
    for d in reg.iter() {
        let i = &d.info;
        let _ = writeln!(out, "{}\n    {}", i.name, i.doc);
        let consumes = if i.consumes.is_empty() { "any dialect".to_string() } else { i.consumes.join(" | ") };
        let _ = writeln!(out, "    consumes: {consumes}");
        let produces = match i.produces {
            Produces::Same => "same as its input".to_string(),
            Produces::Dialect(p) => p.to_string(),
            Produces::PerConsumed(ps) => {
                let pairs: Vec<String> = i.consumes.iter().zip(ps).map(|(c, p)| format!("{p} (from {c})")).collect();
                pairs.join(" | ")
            }
        };
        let _ = writeln!(out, "    produces: {produces}");
        let preserves: Vec<&str> = i.preserves.iter().map(|a| a.name()).collect();
        let _ = writeln!(
            out,
            "    preserves: {}",
            if preserves.is_empty() { "nothing".into() } else { preserves.join(", ") }
        );
        if !i.eliminates.is_empty() {
            let _ = writeln!(out, "    eliminates: {}", i.eliminates.join(", "));
        }
        if d.options.is_empty() {
            let _ = writeln!(out, "    options: none");
        } else {
            let _ = writeln!(out, "    options:");
            for o in d.options {
                let _ = writeln!(out, "      {}: {} = {}  -- {}", o.name, o.ty, o.default, o.doc);
            }
        }
    }
    let hooks: Vec<_> = reg.hooks().collect();
    if !hooks.is_empty() {
        let _ = writeln!(out, "\nhooks:");
        for h in hooks {
            let bound = h.bound.map(|b| format!("bound to `{b}`")).unwrap_or_else(|| "unbound (no-op)".into());
            let _ = writeln!(out, "  {} ({bound})\n    {}", h.name, h.doc);
        }
    }
    out
}

pub fn dialects() -> String {
    let spec = xir_spec::spec();
    let mut out = String::new();
    for d in &spec.dialects {
        let parent = d.parent.map(|p| format!(" (extends {})", spec.dialect_by_id(p).name)).unwrap_or_default();
        let ops = d.ops.iter().count();
        let _ = writeln!(out, "{}{parent}\n    {}", d.name, d.doc);
        let _ = writeln!(
            out,
            "    {ops} of {} opcodes, {} of {} type kinds",
            spec.ops().len(),
            d.types.len(),
            spec.types.len()
        );
        let invs: Vec<&str> = d.invariants.iter().collect();
        let _ = writeln!(out, "    invariants: {}", if invs.is_empty() { "none".into() } else { invs.join(", ") });
    }
    out
}
