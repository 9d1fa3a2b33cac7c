//! Every diagnostic rule is declared data: each rule the spec's names
//! produce is a `Rule` variant, and every rule written as a string anywhere
//! in the workspace (a literal, or a `format!` template such as
//! `"dialect:{name}:type"`) names a declared rule. A new free-form rule
//! string fails here, not at run time.

use std::path::{Path, PathBuf};

use xir::diag::Rule;

#[test]
fn spec_names_are_rules() {
    let spec = xir_spec::spec();
    let has = |n: String| assert!(Rule::from_name(&n).is_some(), "rule `{n}` is not generated");
    for info in spec.ops() {
        let s = &info.spec;
        for o in s.operands.iter().chain(s.variadic.as_ref()) {
            has(format!("operand:{}", o.class));
        }
        has(format!("result:{}", s.result));
        for c in s.constraints.iter() {
            has(c.to_string());
        }
    }
    for k in &spec.types {
        for r in k.rules.iter() {
            has(format!("type:{r}"));
        }
    }
    for d in &spec.dialects {
        has(format!("dialect:{}:opcode", d.name));
        has(format!("dialect:{}:type", d.name));
        for inv in d.invariants.iter().filter(|i| *i != "verified") {
            has(inv.to_string());
            has(format!("dialect:{}:{inv}", d.name));
        }
    }
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        let name = e.file_name();
        if p.is_dir() {
            if name != "target" && !name.to_string_lossy().starts_with('.') {
                rust_files(&p, out);
            }
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The `n`th comma-separated argument after `open` (the text just past a
/// call's `(`), at nesting depth 0.
fn nth_arg(s: &str, n: usize) -> Option<&str> {
    let (mut depth, mut k, mut start, mut in_str) = (0i32, 0, 0, false);
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if in_str {
            if c == b'\\' {
                i += 1;
            } else if c == b'"' {
                in_str = false;
            }
        } else {
            match c {
                b'"' => in_str = true,
                b'(' | b'[' | b'{' => depth += 1,
                b')' | b']' | b'}' if depth == 0 => return (k == n).then(|| s[start..i].trim()),
                b')' | b']' | b'}' => depth -= 1,
                b',' if depth == 0 => {
                    if k == n {
                        return Some(s[start..i].trim());
                    }
                    k += 1;
                    start = i + 1;
                }
                _ => {}
            }
        }
        i += 1;
    }
    None
}

/// A string literal's text, or a `format!` template's (`{..}` kept).
fn literal(arg: &str) -> Option<&str> {
    let arg = arg.trim_start_matches('&');
    let arg = arg.strip_prefix("format!(").unwrap_or(arg);
    let rest = arg.strip_prefix('"')?;
    Some(&rest[..rest.find('"')?])
}

/// Whether some declared rule fits `template`, each `{..}` standing for
/// one or more characters.
fn fits(template: &str) -> bool {
    let mut parts = Vec::new();
    let mut rest = template;
    while let Some(a) = rest.find('{') {
        parts.push(&rest[..a]);
        rest = rest[a..].find('}').map_or("", |b| &rest[a + b + 1..]);
    }
    parts.push(rest);
    Rule::ALL.iter().any(|r| {
        let name = r.name();
        if parts.len() == 1 {
            return name == parts[0];
        }
        let (first, last) = (parts[0], parts[parts.len() - 1]);
        if !name.starts_with(first) || !name.ends_with(last) || name.len() < first.len() + last.len() + 1 {
            return false;
        }
        let mut at = first.len();
        for p in &parts[1..parts.len() - 1] {
            match name[at + 1..].find(p) {
                Some(k) => at = at + 1 + k + p.len(),
                None => return false,
            }
        }
        at < name.len() - last.len()
    })
}

#[test]
fn every_rule_string_in_the_workspace_is_declared() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let mut files = Vec::new();
    rust_files(root, &mut files);
    // Calls whose argument `n` is a rule.
    let calls: &[(&str, usize)] = &[
        ("Diagnostic::error(", 0),
        ("Diagnostic::warning(", 0),
        ("Rule::named(", 0),
        ("Rule::from(", 0),
        ("inst_diag(", 2),
        ("block_diag(", 2),
        ("cx.diag(", 0),
        ("self.diag(", 0),
    ];
    let mut checked = 0;
    let mut bad = Vec::new();
    for f in files.iter().filter(|f| !f.ends_with("framework/tests/rules.rs")) {
        let text = std::fs::read_to_string(f).unwrap();
        let mut sites: Vec<(usize, &str)> = Vec::new();
        for (call, n) in calls {
            for (at, _) in text.match_indices(call) {
                if let Some(arg) = nth_arg(&text[at + call.len()..], *n) {
                    sites.push((at, arg));
                }
            }
        }
        // `const RULE: &str = "spirv-handoff";` and the rules composed from it.
        for (at, _) in text.match_indices("RULE: &str = ") {
            sites.push((at, &text[at + "RULE: &str = ".len()..]));
        }
        // A pass that reports under its own name (`INFO.name`).
        let pass_name = text.find("    name: \"").map(|k| {
            let v = &text[k + "    name: \"".len()..];
            format!("\"{}\"", &v[..v.find('"').unwrap()])
        });
        for (at, arg) in sites {
            let arg = match (&pass_name, arg) {
                (Some(n), "INFO.name") => n.as_str(),
                _ => arg,
            };
            let Some(lit) = literal(arg) else { continue };
            let lit = match text.find("RULE: &str = \"") {
                Some(k) if lit.contains("{RULE}") => {
                    let v = &text[k + "RULE: &str = \"".len()..];
                    lit.replace("{RULE}", &v[..v.find('"').unwrap()])
                }
                _ => lit.to_string(),
            };
            checked += 1;
            if !fits(&lit) {
                let line = text[..at].matches('\n').count() + 1;
                bad.push(format!("{}:{line}: `{lit}`", f.strip_prefix(root).unwrap_or(f).display()));
            }
        }
    }
    // Most sites name a `Rule` variant; the strings left are the passes'
    // (`RULE` constants, `INFO.name`) and the composed ones.
    assert!(checked > 15, "the scan found only {checked} rule strings: is it still looking in the right places?");
    assert!(bad.is_empty(), "rule strings no list declares (add them to ir-spec/spec/rules.ron):\n{}", bad.join("\n"));
}

#[test]
fn the_template_matcher_is_exact() {
    assert!(fits("ssa-dominance"));
    assert!(!fits("ssa-dominanc"));
    assert!(fits("dialect:{name}:opcode"));
    assert!(fits("operand:{}"));
    assert!(!fits("no-such-prefix:{x}"));
    assert!(!fits("dialect:{name}:no_such_check"));
    assert_eq!(literal("&format!(\"result:{}\", x)"), Some("result:{}"));
    assert_eq!(nth_arg("f, i, \"a,b\", msg)", 2), Some("\"a,b\""));
}
