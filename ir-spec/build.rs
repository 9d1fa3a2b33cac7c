//! Generates the `Opcode` and `SpecialRegister` enums from the spec files, so
//! that adding an opcode to `spec/opcodes.ron` adds it to the Rust IR.
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
