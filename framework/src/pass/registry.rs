//! The pass registry: every pass's contract, option documentation and a
//! constructor that deserializes its options from RON (unknown options and
//! wrong types are rejected there, with serde's message).

use std::collections::BTreeMap;

use super::{Pass, PassInfo};

/// Documentation of one option, for `--list-passes` and load-time checks.
#[derive(Clone, Debug)]
pub struct OptionDoc {
    pub name: &'static str,
    /// Rust-ish type spelling (`bool`, `u32`, `f64`, `string`).
    pub ty: &'static str,
    pub default: &'static str,
    pub doc: &'static str,
}

/// A registered pass.
#[derive(Clone)]
pub struct PassDecl {
    pub info: PassInfo,
    pub options: &'static [OptionDoc],
    /// Build the pass from its RON options (`None` = all defaults).
    pub create: fn(Option<&ron::Value>) -> Result<Box<dyn Pass>, String>,
}

#[derive(Clone, Default)]
pub struct PassRegistry {
    passes: BTreeMap<&'static str, PassDecl>,
}

impl PassRegistry {
    pub fn new() -> Self {
        Self::default()
    }
    pub fn register(&mut self, decl: PassDecl) {
        self.passes.insert(decl.info.name, decl);
    }
    pub fn get(&self, name: &str) -> Option<&PassDecl> {
        self.passes.get(name)
    }
    pub fn iter(&self) -> impl Iterator<Item = &PassDecl> {
        self.passes.values()
    }
    pub fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.passes.keys().copied()
    }
}

/// Deserialize options for a pass: `None` gives the defaults.
pub fn options_from_ron<T: serde::de::DeserializeOwned + Default>(v: Option<&ron::Value>) -> Result<T, String> {
    match v {
        None => Ok(T::default()),
        Some(v) => v.clone().into_rust::<T>().map_err(|e| e.to_string()),
    }
}
