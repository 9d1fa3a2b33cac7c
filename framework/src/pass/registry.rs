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

/// Builds a pass from its RON options (`None` = all defaults); the pipeline
/// loader locates the error at the option it comes from.
pub type CreatePass = fn(Option<&ron::Value>) -> Result<Box<dyn Pass>, OptionsError>;

/// Why a pass could not be built from its options.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum OptionsError {
    /// serde rejected the RON value: an unknown option, a value of the
    /// wrong type.
    #[error("{0}")]
    Ron(#[from] ron::Error),
    /// The pass rejected an option's value (an opcode it cannot split).
    #[error("{message}")]
    Value { option: &'static str, message: String },
    /// A file an option names (a rules file) did not load.
    #[error("{0}")]
    File(#[from] FileError),
}

/// A configuration file that does not load, located in that file when the
/// problem has a position (`file:line:col: message`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{file}{}: {message}", .span.map(|s| format!(":{}:{}", s.line, s.col)).unwrap_or_default())]
pub struct FileError {
    pub file: String,
    pub span: Option<crate::ir::Span>,
    pub message: String,
}

impl FileError {
    /// The error as a diagnostic (rule `pipeline`: the file belongs to a
    /// pipeline step's options), pointing into the file.
    pub fn to_diagnostic(&self) -> crate::Diagnostic {
        crate::Diagnostic::error(crate::diag::Rule::Pipeline, self.message.clone())
            .with_file(self.file.clone())
            .with_span(self.span)
    }
}

/// A registered pass.
#[derive(Clone)]
pub struct PassDecl {
    pub info: PassInfo,
    pub options: &'static [OptionDoc],
    /// Build the pass from its RON options (`None` = all defaults).
    pub create: CreatePass,
}

/// A named extension point of pipelines (`Hook("callable_specialization")`).
/// A later crate (the SPIR-V backend) binds it to one of its passes; an
/// unbound hook is a no-op that keeps the dialect.
#[derive(Clone, Debug)]
pub struct HookDecl {
    pub name: &'static str,
    pub doc: &'static str,
    /// The registered pass that runs at this hook, if any.
    pub bound: Option<&'static str>,
}

#[derive(Clone, Default)]
pub struct PassRegistry {
    passes: BTreeMap<&'static str, PassDecl>,
    hooks: BTreeMap<&'static str, HookDecl>,
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

    /// Declare a hook point that pipelines may name.
    pub fn declare_hook(&mut self, name: &'static str, doc: &'static str) {
        self.hooks.entry(name).or_insert(HookDecl { name, doc, bound: None });
    }

    /// Bind a declared hook to a registered pass.
    pub fn bind_hook(&mut self, hook: &str, pass: &'static str) -> Result<(), HookError> {
        if !self.passes.contains_key(pass) {
            return Err(HookError::UnregisteredPass { hook: hook.to_string(), pass });
        }
        let h = self.hooks.get_mut(hook).ok_or_else(|| HookError::UnknownHook(hook.to_string()))?;
        h.bound = Some(pass);
        Ok(())
    }

    pub fn hook(&self, name: &str) -> Option<&HookDecl> {
        self.hooks.get(name)
    }

    pub fn hooks(&self) -> impl Iterator<Item = &HookDecl> {
        self.hooks.values()
    }

    /// Check every declaration against the spec: dialect names in
    /// `consumes` / `produces` and opcode names in `eliminates` must exist.
    /// Returns one message per problem (empty when all is well).
    pub fn validate(&self) -> Vec<String> {
        let spec = xir_spec::spec();
        let mut problems = Vec::new();
        for d in self.passes.values() {
            let i = &d.info;
            for c in i.consumes {
                if spec.dialect(c).is_none() {
                    problems.push(format!("pass `{}` consumes unknown dialect `{c}`", i.name));
                }
            }
            for p in i.produces.named() {
                if spec.dialect(p).is_none() {
                    problems.push(format!("pass `{}` produces unknown dialect `{p}`", i.name));
                }
            }
            if let super::Produces::PerConsumed(ps) = i.produces {
                if ps.len() != i.consumes.len() {
                    problems.push(format!(
                        "pass `{}` names {} produced dialects for {} consumed ones",
                        i.name,
                        ps.len(),
                        i.consumes.len()
                    ));
                }
            }
            for e in i.eliminates {
                if super::eliminated_opcodes(e).is_none() {
                    problems.push(format!("pass `{}` eliminates unknown opcode or group `{e}`", i.name));
                }
            }
        }
        problems
    }
}

/// The options of a pass that takes none: absent or `()` in RON; any
/// field is an unknown-option error.
#[derive(Clone, Copy, Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoOptions {}

impl PassDecl {
    /// The declaration of a pass `P` that takes no options: `P::default()`
    /// is the pass, and any option given in RON is an unknown-option error.
    /// (One place for what every option-less pass would otherwise repeat.)
    pub fn without_options<P: Pass + Default + 'static>(info: PassInfo) -> PassDecl {
        PassDecl {
            info,
            options: &[],
            create: |v| {
                options_from_ron::<NoOptions>(v)?;
                Ok(Box::new(P::default()))
            },
        }
    }
}

/// Deserialize options for a pass: `None` gives the defaults.
pub fn options_from_ron<T: serde::de::DeserializeOwned + Default>(v: Option<&ron::Value>) -> Result<T, OptionsError> {
    match v {
        None => Ok(T::default()),
        Some(v) => Ok(v.clone().into_rust::<T>()?),
    }
}

/// Serde helper for an optional pass option (`#[serde(deserialize_with =
/// "xir::pass::optional")]`): the value written plainly, as the option's
/// documentation shows it (`rules_file: "x.ron"`), or RON's own `Some(..)` /
/// `None`.
pub fn optional<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::Deserialize<'de>,
{
    #[derive(serde::Deserialize)]
    #[serde(untagged)]
    enum Written<T> {
        Wrapped(Option<T>),
        Plain(T),
    }
    Ok(match <Written<T> as serde::Deserialize>::deserialize(d)? {
        Written::Wrapped(v) => v,
        Written::Plain(v) => Some(v),
    })
}

/// Why [`PassRegistry::bind_hook`] refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum HookError {
    #[error("cannot bind hook `{hook}` to unregistered pass `{pass}`")]
    UnregisteredPass { hook: String, pass: &'static str },
    #[error("unknown hook `{0}`")]
    UnknownHook(String),
}
