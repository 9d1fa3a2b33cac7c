//! Generates the `Opcode`, `SpecialRegister` and `Rule` enums from the spec
//! files, so that adding an opcode to `spec/opcodes.ron` adds it to the Rust
//! IR, and every diagnostic rule (spec names plus `spec/rules.ron`) is a
//! variant.
//! Structural checks (duplicates, unknown names) happen in the loader, which
//! reports them with a location; here a malformed file only fails the build.

use std::{env, fmt::Write, fs, path::Path};

#[path = "src/schema.rs"]
#[allow(dead_code)]
mod schema;

fn main() {
    println!("cargo:rerun-if-changed=spec");
    println!("cargo:rerun-if-changed=src/schema.rs");
    let ops: schema::OpcodeFile = read("spec/opcodes.ron");
    let regs: schema::RegisterFile = read("spec/registers.ron");
    let mut out = String::new();
    gen_enum(&mut out, "Opcode", "Every XIR opcode, in spec order.", ops.iter().map(|o| o.name.as_str()));
    gen_enum(
        &mut out,
        "SpecialRegister",
        "Every special register, in spec order.",
        regs.iter().map(|r| r.name.as_str()),
    );
    let types: schema::TypeFile = read("spec/types.ron");
    let dialects: schema::DialectFile = read("spec/dialects.ron");
    let fixed: schema::RuleFile = read("spec/rules.ron");
    gen_rules(&mut out, &ops, &types, &dialects, &fixed);
    let dest = Path::new(&env::var("OUT_DIR").unwrap()).join("generated.rs");
    fs::write(dest, out).unwrap();
}

fn read<T: serde::de::DeserializeOwned>(path: &str) -> T {
    let text = fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    ron::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn gen_enum<'a>(out: &mut String, name: &str, doc: &str, names: impl Iterator<Item = &'a str>) {
    let names: Vec<&str> = names.collect();
    writeln!(out, "/// {doc}").unwrap();
    writeln!(
        out,
        "#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]\n#[repr(u16)]\npub enum {name} {{"
    )
    .unwrap();
    for n in &names {
        writeln!(out, "    /// `{n}`\n    {},", schema::variant_name(n)).unwrap();
    }
    writeln!(out, "}}\n\nimpl {name} {{").unwrap();
    writeln!(out, "    /// All values, in spec order.\n    pub const ALL: &'static [{name}] = &[").unwrap();
    for n in &names {
        writeln!(out, "        {name}::{},", schema::variant_name(n)).unwrap();
    }
    writeln!(out, "    ];").unwrap();
    writeln!(out, "    /// The text spelling.\n    pub fn name(self) -> &'static str {{\n        match self {{")
        .unwrap();
    for n in &names {
        writeln!(out, "            {name}::{} => {n:?},", schema::variant_name(n)).unwrap();
    }
    writeln!(out, "        }}\n    }}").unwrap();
    writeln!(
        out,
        "    /// Parse a text spelling.\n    pub fn from_name(s: &str) -> Option<Self> {{\n        match s {{"
    )
    .unwrap();
    for n in &names {
        writeln!(out, "            {n:?} => Some({name}::{}),", schema::variant_name(n)).unwrap();
    }
    writeln!(out, "            _ => None,\n        }}\n    }}").unwrap();
    writeln!(out, "    /// Position in the spec file (dense index).\n    pub fn index(self) -> usize {{\n        self as usize\n    }}\n}}\n").unwrap();
    writeln!(
        out,
        "impl std::fmt::Display for {name} {{\n    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {{\n        f.write_str(self.name())\n    }}\n}}\n"
    )
    .unwrap();
}

/// Every rule name a diagnostic can carry, with its doc: the fixed list, then
/// the spec's names in the spellings the verifier and dialect checker use.
fn rule_names(
    ops: &schema::OpcodeFile,
    types: &schema::TypeFile,
    dialects: &schema::DialectFile,
    fixed: &schema::RuleFile,
) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    let mut push = |name: String, doc: String| {
        if !out.iter().any(|(n, _)| *n == name) {
            out.push((name, doc));
        }
    };
    for r in fixed {
        push(r.name.clone(), r.doc.clone());
    }
    for o in ops {
        for c in o.operands.iter().chain(&o.variadic) {
            push(format!("operand:{}", c.class), format!("An operand outside the operand class `{}`.", c.class));
        }
    }
    for o in ops {
        push(format!("result:{}", o.result), format!("A result type that breaks the result rule `{}`.", o.result));
    }
    for o in ops {
        for c in &o.constraints {
            push(c.clone(), format!("The opcode constraint `{c}`."));
        }
    }
    for t in types {
        for r in &t.rules {
            push(format!("type:{r}"), format!("The type rule `{r}`."));
        }
    }
    for d in dialects {
        for inv in d.invariants.iter().filter(|i| *i != "verified") {
            push(inv.clone(), format!("The dialect invariant `{inv}`."));
        }
    }
    for d in dialects {
        let n = &d.name;
        push(format!("dialect:{n}:opcode"), format!("An opcode outside dialect `{n}`."));
        push(format!("dialect:{n}:type"), format!("A type kind outside dialect `{n}`."));
        for inv in resolved_invariants(dialects, d) {
            push(format!("dialect:{n}:{inv}"), format!("Invariant `{inv}` of dialect `{n}`."));
        }
    }
    out
}

/// A dialect's invariants with its parents' (minus those it drops), except
/// `verified`, whose diagnostics keep the verifier's rules.
fn resolved_invariants(all: &schema::DialectFile, d: &schema::DialectSpec) -> Vec<String> {
    let mut invs = match d.extends.as_deref().and_then(|p| all.iter().find(|x| x.name == p)) {
        Some(parent) if parent.name != d.name => resolved_invariants(all, parent),
        _ => Vec::new(),
    };
    invs.retain(|i| !d.drop_invariants.contains(i));
    for i in &d.invariants {
        if i != "verified" && !invs.contains(i) {
            invs.push(i.clone());
        }
    }
    invs
}

/// `CamelCase` of a rule spelling; every non-alphanumeric character splits
/// words (`dialect:xir.raw:type` -> `DialectXirRawType`).
fn rule_variant(name: &str) -> String {
    let mut out = String::new();
    let mut upper = true;
    for c in name.chars() {
        if !c.is_ascii_alphanumeric() {
            upper = true;
        } else if upper {
            out.push(c.to_ascii_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

fn gen_rules(
    out: &mut String,
    ops: &schema::OpcodeFile,
    types: &schema::TypeFile,
    dialects: &schema::DialectFile,
    fixed: &schema::RuleFile,
) {
    let rules = rule_names(ops, types, dialects, fixed);
    let mut variants: Vec<String> = Vec::new();
    for (n, _) in &rules {
        let v = rule_variant(n);
        if variants.contains(&v) {
            panic!("spec/rules.ron: rule `{n}` has the same Rust name `{v}` as another rule");
        }
        variants.push(v);
    }
    writeln!(out, "/// Every diagnostic rule: `spec/rules.ron`, then the spec's names.").unwrap();
    writeln!(out, "#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]\npub enum Rule {{").unwrap();
    for ((n, doc), v) in rules.iter().zip(&variants) {
        writeln!(out, "    /// `{n}`: {doc}\n    {v},").unwrap();
    }
    writeln!(out, "}}\n\nimpl Rule {{").unwrap();
    writeln!(out, "    /// All rules, in declaration order.\n    pub const ALL: &'static [Rule] = &[").unwrap();
    for v in &variants {
        writeln!(out, "        Rule::{v},").unwrap();
    }
    writeln!(out, "    ];").unwrap();
    writeln!(
        out,
        "    /// The spelling diagnostics print.\n    pub fn name(self) -> &'static str {{\n        match self {{"
    )
    .unwrap();
    for ((n, _), v) in rules.iter().zip(&variants) {
        writeln!(out, "            Rule::{v} => {n:?},").unwrap();
    }
    writeln!(out, "        }}\n    }}").unwrap();
    writeln!(out, "    /// What the rule checks.\n    pub fn doc(self) -> &'static str {{\n        match self {{")
        .unwrap();
    for ((_, doc), v) in rules.iter().zip(&variants) {
        writeln!(out, "            Rule::{v} => {doc:?},").unwrap();
    }
    writeln!(out, "        }}\n    }}").unwrap();
    writeln!(
        out,
        "    /// The rule with this spelling.\n    pub fn from_name(s: &str) -> Option<Self> {{\n        match s {{"
    )
    .unwrap();
    for ((n, _), v) in rules.iter().zip(&variants) {
        writeln!(out, "            {n:?} => Some(Rule::{v}),").unwrap();
    }
    writeln!(out, "            _ => None,\n        }}\n    }}\n}}\n").unwrap();
}
