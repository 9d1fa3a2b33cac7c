//! The saved-arguments section: the kernel's signature (name, and per
//! argument its name, passing kind and type in the XIR text spelling), the
//! argument-type hash over it, and the rebuild of a signature-only module
//! that the Vulkan runner binds inputs against (docs/artifact.md, "Saved
//! arguments").
//!
//! Type spellings come from an integrity-checked section but are still
//! screened before the XIR parser sees them: bounded length, the type
//! alphabet only, and bounded bracket nesting (the parser recurses).

use xir::{ArgKind, FuncId, Module, Type};

use super::wire::{sha256, Reader, Writer};
use super::{ArtifactError, Digest, Section};
use crate::abi::{KernelAbi, PropertyKind, Role};

/// Most arguments one kernel may persist.
pub const MAX_ARGS: u32 = 256;
/// Longest kernel or argument name, in bytes.
pub const MAX_NAME_LEN: u32 = 1024;
/// Longest type spelling, in bytes.
pub const MAX_TYPE_LEN: u32 = 4096;
/// Deepest bracket nesting of a type spelling.
pub const MAX_TYPE_DEPTH: usize = 16;

/// One persisted kernel argument.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SavedArgument {
    /// The argument's name as inputs files spell it (`None`: bound by position).
    pub name: Option<String>,
    pub kind: ArgKind,
    /// The type in XIR text spelling (`buffer<f32>`, `struct<align 4>{f32, u32}`).
    pub ty: String,
}

/// The kernel signature persisted beside the SPIR-V.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SavedArguments {
    pub kernel_name: String,
    pub args: Vec<SavedArgument>,
}

fn kind_code(k: ArgKind) -> u8 {
    match k {
        ArgKind::Value => 0,
        ArgKind::Reference => 1,
        ArgKind::Resource => 2,
    }
}

impl SavedArguments {
    /// The signature of `kernel` in `module`.
    pub fn of_kernel(module: &Module, kernel: FuncId) -> SavedArguments {
        let f = module.func(kernel);
        let args = f
            .args
            .iter()
            .map(|a| SavedArgument {
                name: a.md.name.clone(),
                kind: a.kind,
                ty: xir::text::type_to_string(&module.types, a.ty),
            })
            .collect();
        SavedArguments { kernel_name: f.name.clone(), args }
    }

    /// The argument-type hash: SHA-256 over the argument count and, per
    /// argument, its kind code and length-prefixed type spelling (names excluded).
    pub fn type_hash(&self) -> Digest {
        let mut w = Writer::default();
        w.u32(self.args.len() as u32);
        for a in &self.args {
            w.u8(kind_code(a.kind));
            w.string(&a.ty);
        }
        sha256(&w.bytes)
    }

    pub fn encode(&self) -> Result<Vec<u8>, ArtifactError> {
        let too_long = |what: &str, n: usize, max: u32| {
            (n > max as usize).then(|| ArtifactError::Arguments(format!("{what} is {n} bytes (limit {max})")))
        };
        if let Some(e) = too_long("the kernel name", self.kernel_name.len(), MAX_NAME_LEN) {
            return Err(e);
        }
        if self.args.len() > MAX_ARGS as usize {
            return Err(ArtifactError::Arguments(format!("{} arguments (limit {MAX_ARGS})", self.args.len())));
        }
        let mut w = Writer::default();
        w.string(&self.kernel_name);
        w.u32(self.args.len() as u32);
        for a in &self.args {
            let name = a.name.as_deref().unwrap_or("");
            if let Some(e) = too_long("an argument name", name.len(), MAX_NAME_LEN)
                .or_else(|| too_long("an argument type", a.ty.len(), MAX_TYPE_LEN))
            {
                return Err(e);
            }
            w.u8(kind_code(a.kind));
            w.u8(a.name.is_some() as u8);
            w.string(name);
            w.string(&a.ty);
        }
        Ok(w.bytes)
    }

    pub fn decode(bytes: &[u8]) -> Result<SavedArguments, ArtifactError> {
        let mut r = Reader::new(bytes, Section::SavedArguments);
        let kernel_name = r.string("the kernel name", MAX_NAME_LEN)?.to_string();
        let n = r.count("argument", MAX_ARGS)?;
        let mut args = Vec::with_capacity(n as usize);
        for i in 0..n {
            let kind = match r.u8()? {
                0 => ArgKind::Value,
                1 => ArgKind::Reference,
                2 => ArgKind::Resource,
                c => return Err(r.malformed(format!("argument {i}: unknown kind code {c}"))),
            };
            let has_name = r.u8()?;
            let name = r.string("an argument name", MAX_NAME_LEN)?;
            let name = match has_name {
                1 => Some(name.to_string()),
                0 if name.is_empty() => None,
                _ => return Err(r.malformed(format!("argument {i}: bad name flag {has_name}"))),
            };
            let ty = r.string("an argument type", MAX_TYPE_LEN)?.to_string();
            args.push(SavedArgument { name, kind, ty });
        }
        r.finish()?;
        Ok(SavedArguments { kernel_name, args })
    }

    /// A module holding only a kernel with this signature (body: `return`)
    /// and `abi`'s block size and flags, for binding inputs by name and
    /// type.
    pub fn signature_module(&self, abi: &crate::abi::KernelAbi) -> Result<(Module, FuncId), ArtifactError> {
        let mut text = String::from("kernel @k(");
        for (i, a) in self.args.iter().enumerate() {
            screen_type(&a.ty).map_err(|m| ArtifactError::Arguments(format!("argument {i}: type `{}`: {m}", a.ty)))?;
            let r = if a.kind == ArgKind::Reference { "ref " } else { "" };
            text.push_str(&format!("{}%a{i}: {r}{}", if i > 0 { ", " } else { "" }, a.ty));
        }
        let [x, y, z] = abi.block_size;
        let whole = if abi.whole_blocks { " whole_blocks" } else { "" };
        let noalias = if abi.noalias { " noalias" } else { "" };
        text.push_str(&format!(") block_size({x}, {y}, {z}){whole}{noalias} {{\n^entry:\n  return\n}}\n"));
        let mut module = xir::text::parse_module(&text, "<artifact arguments>").map_err(|d| {
            ArtifactError::Arguments(format!("the signature does not parse: {}", xir::diag::render(&d).trim_end()))
        })?;
        let k = module.find_function("k").ok_or_else(|| ArtifactError::Arguments("no kernel parsed".into()))?;
        let f = module.func_mut(k);
        f.name = self.kernel_name.clone();
        for (i, a) in self.args.iter().enumerate() {
            let Some(arg) = f.args.get_mut(i) else {
                return Err(ArtifactError::Arguments(format!("argument {i} did not parse")));
            };
            if arg.kind != a.kind {
                return Err(ArtifactError::Arguments(format!(
                    "argument {i}: kind {:?} but the type `{}` makes it {:?}",
                    a.kind, a.ty, arg.kind
                )));
            }
            arg.md.name = a.name.clone();
        }
        // The spelling must be canonical: it prints back unchanged.
        for (i, a) in self.args.iter().enumerate() {
            let printed = xir::text::type_to_string(&module.types, module.func(k).args[i].ty);
            if printed != a.ty {
                return Err(ArtifactError::Arguments(format!(
                    "argument {i}: `{}` is not canonical (`{printed}`)",
                    a.ty
                )));
            }
        }
        Ok((module, k))
    }

    /// Every property's argument exists, at most once, with a type its kind fits.
    pub fn check_against(&self, abi: &KernelAbi, module: &Module, k: FuncId) -> Result<(), ArtifactError> {
        let f = module.func(k);
        let mut seen = vec![false; f.args.len()];
        for (i, p) in abi.properties.iter().enumerate() {
            let Some(a) = p.arg_index else { continue };
            let Some(arg) = f.args.get(a as usize) else {
                return Err(ArtifactError::Arguments(format!(
                    "property {i} serves argument {a}; the kernel has {}",
                    f.args.len()
                )));
            };
            // An accel's instance buffer is the second property of its argument (the shape check
            // puts it right after the accel's own).
            let instance_buffer = p.kind == PropertyKind::StorageBuffer && p.role == Role::AccelInstance;
            if std::mem::replace(&mut seen[a as usize], true) != instance_buffer {
                return Err(ArtifactError::Arguments(if instance_buffer {
                    format!("argument {a}: an accel instance buffer without its accel property")
                } else {
                    format!("argument {a} has two properties")
                }));
            }
            let ty = module.types.get(arg.ty);
            let fits = match (p.kind, p.role) {
                // The storage must be the layout this backend plans for the element (an artifact
                // from before `buffer<bool>` kept its 1-byte host layout says `Words { 4, 4 }`).
                (PropertyKind::StorageBuffer, Role::Buffer) => match ty {
                    Type::Buffer(e) => crate::plan::layout::plan_buffer(&module.types, *e) == Ok(p.storage),
                    _ => false,
                },
                (PropertyKind::StorageBuffer, Role::ByteBuffer) => matches!(ty, Type::ByteBuffer),
                (PropertyKind::StorageBuffer, Role::BindlessMetadata) => matches!(ty, Type::BindlessArray),
                (PropertyKind::AccelerationStructure { .. }, Role::Accel)
                | (PropertyKind::StorageBuffer, Role::AccelInstance) => matches!(ty, Type::Accel),
                (PropertyKind::StorageImage { dim, texel }, Role::Texture) => match ty {
                    Type::Texture { dim: d, elem } => {
                        dim == u32::from(*d) && crate::abi::texel_kind(&module.types, *elem) == Some(texel)
                    }
                    _ => false,
                },
                (PropertyKind::ConstantValue { size, .. }, Role::PushValue | Role::BlockValue) => {
                    arg.kind == ArgKind::Value
                        && crate::plan::bindings::push_size_align(&module.types, arg.ty).0 == u64::from(size)
                }
                _ => false,
            };
            if !fits {
                return Err(ArtifactError::Arguments(format!(
                    "property {i} ({:?}) does not fit argument {a} of type `{}`",
                    p.kind, self.args[a as usize].ty
                )));
            }
        }
        Ok(())
    }
}

/// Bounded screening of a type spelling before it reaches the recursive parser.
fn screen_type(ty: &str) -> Result<(), String> {
    if ty.is_empty() || ty.len() > MAX_TYPE_LEN as usize {
        return Err(format!("length {} outside 1..={MAX_TYPE_LEN}", ty.len()));
    }
    let mut depth = 0usize;
    for c in ty.chars() {
        match c {
            '<' | '{' => {
                depth += 1;
                if depth > MAX_TYPE_DEPTH {
                    return Err(format!("nested deeper than {MAX_TYPE_DEPTH}"));
                }
            }
            '>' | '}' => depth = depth.checked_sub(1).ok_or("unbalanced brackets")?,
            'a'..='z' | '0'..='9' | '_' | ',' | ' ' => {}
            other => return Err(format!("character {other:?} is not in the type alphabet")),
        }
    }
    if depth != 0 {
        return Err("unbalanced brackets".into());
    }
    Ok(())
}
