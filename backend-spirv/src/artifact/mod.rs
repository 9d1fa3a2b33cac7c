//! The shader artifact codec: the one place that writes and reads compiled
//! shaders (`.xsa` files). Every byte is specified in `docs/artifact.md`.
//!
//! [`ShaderArtifact::encode`] checks what it writes the way the reader will
//! (canonical ABI, signature against the ABI, features against the SPIR-V
//! capabilities, printer records), so it never writes an artifact that
//! [`decode`] would reject. [`decode`] follows the strict integrity order of
//! the reference ("Cache and AOT loading"):
//! 1. magic, then the header digest over the parsed fields, before any field
//!    is trusted; then version, header length, dialect (only `XIR_SPIRV`),
//!    feature bits (unknown ones fail closed), entry point, section table;
//! 2. the caller's [`LoadRequirements`] (dialect, shader hash, argument-type hash);
//! 3. every section size bounded, the total length exact, every section digest;
//! 4. the properties (canonical ABI shape), the saved arguments (their hash
//!    against the header, their module against the ABI), the printer records,
//!    the constant data (exactly the ABI's constant-data block size);
//! 5. the SPIR-V: its header words exactly (magic, version 1.0 to 1.5, id
//!    bound above every id, schema 0), Vulkan 1.2 validation, then the `main`
//!    GLCompute entry point and its `LocalSize`;
//! 6. capability-owned feature bits reconciled from the validated module's
//!    `OpCapability`s, equal to the persisted mask exactly; emission-owned bits
//!    kept from the header; then the device snapshot.
//!
//! Every failure is an [`ArtifactError`] with its reason; nothing panics.

mod args;
mod header;
mod printers;
mod properties;
mod spirv_header;
mod wire;

use rspirv::spirv::{ExecutionMode, ExecutionModel};
use xir::{FuncId, Module};

pub use args::{SavedArgument, SavedArguments};
pub use header::{RawHeader, SectionEntry, FORMAT_VERSION, HEADER_LEN, MAGIC};
pub use printers::{
    check_print_type, count_placeholders, pieces, FormatStringError, Piece, PrintTypeError, PrinterRecord,
};
pub use properties::check_shape as check_abi_shape;

use crate::abi::{KernelAbi, ENTRY_POINT_NAME};
use crate::features::{Feature, FeatureSet};
use crate::SpirvOutput;

/// A SHA-256 digest.
pub type Digest = [u8; 32];

/// Lower-case hex of a digest.
pub fn hex(d: &Digest) -> String {
    d.iter().map(|b| format!("{b:02x}")).collect()
}

/// The sections, in file order; the discriminant is the persisted id.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Section {
    Header = 0,
    Properties = 1,
    SavedArguments = 2,
    Spirv = 3,
    Printers = 4,
    Constants = 5,
}

impl Section {
    pub const ALL: [Section; 5] =
        [Section::Properties, Section::SavedArguments, Section::Spirv, Section::Printers, Section::Constants];
    /// The largest size this build accepts for the section, in bytes.
    pub fn max_size(self) -> u32 {
        match self {
            Section::Header => HEADER_LEN as u32,
            Section::Properties => 20 + 36 * properties::MAX_PROPERTIES,
            Section::SavedArguments => 1 << 20,
            Section::Spirv => 16 << 20,
            Section::Printers => 1 << 20,
            Section::Constants => 64 << 10,
        }
    }
}

/// The largest artifact this build reads.
pub const MAX_ARTIFACT_LEN: usize = HEADER_LEN + (19 << 20);

/// Codegen dialects. Only [`Dialect::XirSpirv`] is produced and accepted by this build.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Dialect {
    /// The native XIR -> SPIR-V backend.
    XirSpirv = 1,
    /// SPIR-V compiled from HLSL (its own feature contract; not decoded here).
    HlslSpirv = 2,
    /// SPIR-V from the LLVM path (not decoded here).
    LlvmSpirv = 3,
}

impl Dialect {
    pub fn from_code(c: u32) -> Option<Dialect> {
        [Dialect::XirSpirv, Dialect::HlslSpirv, Dialect::LlvmSpirv].into_iter().find(|d| *d as u32 == c)
    }
}

/// Which identity a caller requires of an artifact it loads. A `None` hash
/// leaves that dimension unconstrained, explicitly.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoadRequirements {
    pub shader_hash: Option<Digest>,
    pub argument_type_hash: Option<Digest>,
    pub dialect: Dialect,
}

impl LoadRequirements {
    /// Any `XIR_SPIRV` artifact (both hashes unconstrained).
    pub fn any_xir_spirv() -> Self {
        LoadRequirements { shader_hash: None, argument_type_hash: None, dialect: Dialect::XirSpirv }
    }
    /// Exactly the artifact compiled from `module` (printed text) with kernel `kernel`'s signature.
    pub fn for_kernel(module: &Module, kernel: FuncId) -> Self {
        LoadRequirements {
            shader_hash: Some(shader_hash(module)),
            argument_type_hash: Some(SavedArguments::of_kernel(module, kernel).type_hash()),
            dialect: Dialect::XirSpirv,
        }
    }
}

/// Why an artifact was rejected.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ArtifactError {
    #[error("cannot read the artifact: {0}")]
    Io(String),
    #[error("artifact truncated: {needed} bytes needed, {have} present")]
    Truncated { needed: usize, have: usize },
    #[error("artifact is {len} bytes; the limit is {max}")]
    TooLarge { len: usize, max: usize },
    #[error("not a shader artifact (bad magic)")]
    BadMagic,
    #[error("header digest mismatch: the header is corrupt")]
    HeaderDigestMismatch,
    #[error("artifact format version {0} is not supported (this build reads version {FORMAT_VERSION})")]
    UnsupportedVersion(u32),
    #[error("codegen dialect code {0} is not decoded by this build (only XIR_SPIRV = 1)")]
    UnsupportedDialect(u32),
    #[error("malformed header: {0}")]
    BadHeader(String),
    #[error("unknown required-feature bits {0:#x} (fail closed)")]
    UnknownFeatureBits(u64),
    #[error("{section:?} section is {size} bytes; the limit is {max}")]
    SectionTooLarge { section: Section, size: u32, max: u32 },
    #[error("artifact length {actual} does not match the header's {expected}")]
    LengthMismatch { expected: usize, actual: usize },
    #[error("{0:?} section digest mismatch: the section is corrupt")]
    SectionDigestMismatch(Section),
    #[error("malformed {section:?} section at byte {offset}: {reason}")]
    Malformed { section: Section, offset: usize, reason: String },
    #[error("kernel ABI is not canonical: {0}")]
    NonCanonicalAbi(String),
    #[error("saved arguments: {0}")]
    Arguments(String),
    #[error("printer record {record}: {reason}")]
    Printer { record: usize, reason: String },
    /// The SPIR-V header words (magic, version, id bound, schema; `spirv_header.rs`).
    #[error("SPIR-V header: {0}")]
    SpirvHeader(String),
    #[error("SPIR-V is invalid for Vulkan 1.2: {0}")]
    InvalidSpirv(String),
    #[error("SPIR-V entry point: {0}")]
    EntryPoint(String),
    #[error("persisted capability-owned features [{persisted}] differ from the module's capabilities [{reconciled}]")]
    FeatureMismatch { persisted: String, reconciled: String },
    #[error("load requirement not met: {what} is {found}, required {expected}")]
    RequirementMismatch { what: &'static str, expected: String, found: String },
    #[error("the device lacks required feature(s): {}", .0.iter().map(|f| f.vulkan_name()).collect::<Vec<_>>().join(", "))]
    MissingDeviceFeatures(Vec<Feature>),
}

/// A compiled shader with everything needed to load and run it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShaderArtifact {
    pub dialect: Dialect,
    /// SHA-256 of the printed XIR module the kernel was compiled from.
    pub shader_hash: Digest,
    /// [`SavedArguments::type_hash`] of `arguments`.
    pub argument_type_hash: Digest,
    /// Required features: capability-owned (reconciled from `words`) and emission-owned.
    pub features: FeatureSet,
    pub abi: KernelAbi,
    pub arguments: SavedArguments,
    pub words: Vec<u32>,
    pub printers: Vec<PrinterRecord>,
    /// The constant data: the std140 bytes of the ABI's `ConstantData` uniform
    /// block, exactly its planned size (empty when the ABI has none).
    pub constants: Vec<u8>,
}

/// The shader hash: SHA-256 of the module's printed XIR text.
pub fn shader_hash(module: &Module) -> Digest {
    wire::sha256(xir::text::print_module(module).as_bytes())
}

/// The persisted bit of a feature: its position in [`Feature::ALL`].
pub fn feature_bit(f: Feature) -> u64 {
    let pos = Feature::ALL.iter().position(|x| *x == f).unwrap_or(63);
    1u64 << pos
}

/// The persisted mask of a feature set.
pub fn feature_mask(s: &FeatureSet) -> u64 {
    s.iter().fold(0, |m, f| m | feature_bit(f))
}

/// The feature set of a persisted mask; unknown bits fail closed.
pub fn features_from_mask(mask: u64) -> Result<FeatureSet, ArtifactError> {
    let known = Feature::ALL.iter().fold(0u64, |m, f| m | feature_bit(*f));
    if mask & !known != 0 {
        return Err(ArtifactError::UnknownFeatureBits(mask & !known));
    }
    Ok(Feature::ALL.into_iter().filter(|f| mask & feature_bit(*f) != 0).collect())
}

fn names(s: &FeatureSet) -> String {
    s.iter().map(|f| f.vulkan_name()).collect::<Vec<_>>().join(", ")
}

fn capability_owned(s: &FeatureSet) -> FeatureSet {
    s.iter().filter(|f| f.capability().is_some()).collect()
}

impl ShaderArtifact {
    /// The artifact of a compilation of `kernel` in `module` (the module as compiled).
    pub fn from_compiled(module: &Module, kernel: FuncId, out: &SpirvOutput) -> ShaderArtifact {
        let arguments = SavedArguments::of_kernel(module, kernel);
        ShaderArtifact {
            dialect: Dialect::XirSpirv,
            shader_hash: shader_hash(module),
            argument_type_hash: arguments.type_hash(),
            features: out.features,
            abi: out.abi.clone(),
            arguments,
            words: out.words.clone(),
            printers: out.printers.clone(),
            constants: out.constants.clone(),
        }
    }

    /// A signature-only module (and its kernel) for the runner to bind inputs against.
    pub fn signature_module(&self) -> Result<(Module, FuncId), ArtifactError> {
        self.arguments.signature_module(&self.abi)
    }

    /// The artifact bytes. Checks everything the reader checks except the device.
    pub fn encode(&self) -> Result<Vec<u8>, ArtifactError> {
        if self.dialect != Dialect::XirSpirv {
            return Err(ArtifactError::UnsupportedDialect(self.dialect as u32));
        }
        if self.argument_type_hash != self.arguments.type_hash() {
            return Err(ArtifactError::Arguments("argument-type hash does not match the saved arguments".into()));
        }
        let props = properties::encode(&self.abi)?;
        check_constants(&self.constants, &self.abi)?;
        let (sig, k) = self.signature_module()?;
        self.arguments.check_against(&self.abi, &sig, k)?;
        let reconciled = check_spirv(&self.words, &self.abi)?;
        if reconciled != capability_owned(&self.features) {
            return Err(ArtifactError::FeatureMismatch {
                persisted: names(&capability_owned(&self.features)),
                reconciled: names(&reconciled),
            });
        }
        let sections = [
            props,
            self.arguments.encode()?,
            self.words.iter().flat_map(|w| w.to_le_bytes()).collect(),
            printers::encode(&self.printers)?,
            self.constants.clone(),
        ];
        let fields = RawHeader {
            magic: MAGIC,
            version: FORMAT_VERSION,
            header_len: HEADER_LEN as u32,
            dialect: self.dialect as u32,
            exec_model: header::EXEC_MODEL_GLCOMPUTE,
            required_features: feature_mask(&self.features),
            emission_features: feature_mask(&self.features.emission_owned()),
            shader_hash: self.shader_hash,
            argument_type_hash: self.argument_type_hash,
            entry_point: header::entry_field(&self.abi.entry_point)?,
            section_count: header::SECTION_COUNT,
            reserved: 0,
            sections: [SectionEntry { id: 0, size: 0, digest: [0; 32] }; 5],
        };
        for (s, b) in Section::ALL.iter().zip(&sections) {
            if b.len() > s.max_size() as usize {
                return Err(ArtifactError::SectionTooLarge { section: *s, size: b.len() as u32, max: s.max_size() });
            }
        }
        Ok(seal(fields, &sections))
    }
}

/// Frame sections under a header: fill in the section table (ids, sizes,
/// digests) and the header digest. This is framing only, with no semantic
/// check; [`ShaderArtifact::encode`] is the writer. Tests use it to build
/// malformed artifacts whose digests are all correct.
pub fn seal(mut fields: RawHeader, sections: &[Vec<u8>; 5]) -> Vec<u8> {
    for ((entry, s), b) in fields.sections.iter_mut().zip(Section::ALL).zip(sections) {
        *entry = SectionEntry { id: s as u32, size: b.len() as u32, digest: wire::sha256(b) };
    }
    let mut out = fields.to_bytes();
    for b in sections {
        out.extend_from_slice(b);
    }
    out
}

/// Read an artifact file, refusing one over [`MAX_ARTIFACT_LEN`] before reading it.
pub fn read_file(path: &std::path::Path) -> Result<Vec<u8>, ArtifactError> {
    let io = |e: std::io::Error| ArtifactError::Io(format!("{}: {e}", path.display()));
    let len = std::fs::metadata(path).map_err(io)?.len();
    if len > MAX_ARTIFACT_LEN as u64 {
        return Err(ArtifactError::TooLarge { len: len as usize, max: MAX_ARTIFACT_LEN });
    }
    let mut bytes = Vec::with_capacity(len as usize);
    use std::io::Read;
    std::fs::File::open(path).map_err(io)?.take(MAX_ARTIFACT_LEN as u64 + 1).read_to_end(&mut bytes).map_err(io)?;
    Ok(bytes)
}

/// Validate for Vulkan 1.2, find the `main` GLCompute entry point with the
/// ABI's `LocalSize`, and return the capability-owned features of the module.
fn check_spirv(words: &[u32], abi: &KernelAbi) -> Result<FeatureSet, ArtifactError> {
    spirv_header::check_words(words)?;
    spirv_header::check_strings(words)?;
    let m = rspirv::dr::load_words(words).map_err(|e| ArtifactError::InvalidSpirv(e.to_string()))?;
    spirv_header::check_ids(&m, words[3])?;
    crate::validate::validate(words).map_err(|e| ArtifactError::InvalidSpirv(e.message))?;
    properties::check_interface(&m, abi)?;
    use rspirv::dr::Operand;
    let entry = m.entry_points.iter().find_map(|e| match e.operands.as_slice() {
        [Operand::ExecutionModel(ExecutionModel::GLCompute), Operand::IdRef(f), Operand::LiteralString(n), ..]
            if n == ENTRY_POINT_NAME =>
        {
            Some(*f)
        }
        _ => None,
    });
    let Some(f) = entry else {
        return Err(ArtifactError::EntryPoint(format!("no GLCompute entry point named `{ENTRY_POINT_NAME}`")));
    };
    let local_size = m.execution_modes.iter().find_map(|e| match e.operands.as_slice() {
        [Operand::IdRef(id), Operand::ExecutionMode(ExecutionMode::LocalSize), Operand::LiteralBit32(x), Operand::LiteralBit32(y), Operand::LiteralBit32(z)]
            if *id == f =>
        {
            Some([*x, *y, *z])
        }
        _ => None,
    });
    if local_size != Some(abi.block_size) {
        return Err(ArtifactError::EntryPoint(format!(
            "LocalSize {local_size:?} differs from the ABI block size {:?}",
            abi.block_size
        )));
    }
    Ok(FeatureSet::from_capabilities(crate::capabilities(words)))
}

/// The constant data against the ABI: exactly the planned uniform-block
/// range (`Block { size }` of the `ConstantData` property), none without one.
fn check_constants(bytes: &[u8], abi: &KernelAbi) -> Result<(), ArtifactError> {
    let want = abi.constant_data_size() as usize;
    if bytes.len() != want {
        return Err(ArtifactError::Malformed {
            section: Section::Constants,
            offset: bytes.len().min(want),
            reason: format!("{} bytes of constant data; the ABI's constant-data block is {want} bytes", bytes.len()),
        });
    }
    Ok(())
}

fn require(what: &'static str, expected: Option<&Digest>, found: &Digest) -> Result<(), ArtifactError> {
    match expected {
        Some(e) if e != found => Err(ArtifactError::RequirementMismatch { what, expected: hex(e), found: hex(found) }),
        _ => Ok(()),
    }
}

/// Decode and check an artifact in the strict integrity order (module doc).
/// `device`: the logical device's enabled features (`None`: no snapshot, not checked).
pub fn decode(
    bytes: &[u8],
    req: &LoadRequirements,
    device: Option<&FeatureSet>,
) -> Result<ShaderArtifact, ArtifactError> {
    if bytes.len() > MAX_ARTIFACT_LEN {
        return Err(ArtifactError::TooLarge { len: bytes.len(), max: MAX_ARTIFACT_LEN });
    }
    if bytes.len() < MAGIC.len() || bytes[..MAGIC.len()] != MAGIC {
        return Err(ArtifactError::BadMagic);
    }
    // 1. The header: digest first, then its fields.
    let (h, stored) = RawHeader::parse(bytes)?;
    if h.digest() != stored {
        return Err(ArtifactError::HeaderDigestMismatch);
    }
    if h.version != FORMAT_VERSION {
        return Err(ArtifactError::UnsupportedVersion(h.version));
    }
    if h.header_len != HEADER_LEN as u32 || h.reserved != 0 || h.section_count != header::SECTION_COUNT {
        return Err(ArtifactError::BadHeader(format!(
            "header length {}, reserved {}, section count {} (expected {HEADER_LEN}, 0, 5)",
            h.header_len, h.reserved, h.section_count
        )));
    }
    let dialect = match Dialect::from_code(h.dialect) {
        Some(Dialect::XirSpirv) => Dialect::XirSpirv,
        _ => return Err(ArtifactError::UnsupportedDialect(h.dialect)),
    };
    let required = features_from_mask(h.required_features)?;
    let emission = features_from_mask(h.emission_features)?;
    if emission != required.emission_owned() {
        return Err(ArtifactError::BadHeader(format!(
            "emission-owned bits {:#x} are not the emission-owned part of the required mask {:#x}",
            h.emission_features, h.required_features
        )));
    }
    let entry = h.entry_point_name()?;
    if entry != ENTRY_POINT_NAME || h.exec_model != header::EXEC_MODEL_GLCOMPUTE {
        return Err(ArtifactError::BadHeader(format!(
            "entry point `{entry}` model {} (expected `main`, GLCompute)",
            h.exec_model
        )));
    }
    // 2. The caller's requirements.
    if req.dialect != dialect {
        return Err(ArtifactError::RequirementMismatch {
            what: "codegen dialect",
            expected: format!("{:?}", req.dialect),
            found: format!("{dialect:?}"),
        });
    }
    require("shader hash", req.shader_hash.as_ref(), &h.shader_hash)?;
    require("argument-type hash", req.argument_type_hash.as_ref(), &h.argument_type_hash)?;
    // 3. Section table, sizes, total length, digests.
    let mut expected = HEADER_LEN;
    for (e, s) in h.sections.iter().zip(Section::ALL) {
        if e.id != s as u32 {
            return Err(ArtifactError::BadHeader(format!("section table slot for {s:?} holds id {}", e.id)));
        }
        if e.size > s.max_size() {
            return Err(ArtifactError::SectionTooLarge { section: s, size: e.size, max: s.max_size() });
        }
        expected += e.size as usize;
    }
    if bytes.len() != expected {
        return Err(ArtifactError::LengthMismatch { expected, actual: bytes.len() });
    }
    let mut at = HEADER_LEN;
    let mut body: Vec<&[u8]> = Vec::with_capacity(5);
    for (e, s) in h.sections.iter().zip(Section::ALL) {
        let b = &bytes[at..at + e.size as usize];
        if wire::sha256(b) != e.digest {
            return Err(ArtifactError::SectionDigestMismatch(s));
        }
        body.push(b);
        at += e.size as usize;
    }
    // 4. Interface and printers.
    let abi = properties::decode(body[0], entry)?;
    let arguments = SavedArguments::decode(body[1])?;
    if arguments.type_hash() != h.argument_type_hash {
        return Err(ArtifactError::Arguments(
            "the header's argument-type hash does not match the saved arguments".into(),
        ));
    }
    let (sig, k) = arguments.signature_module(&abi)?;
    arguments.check_against(&abi, &sig, k)?;
    let printers = printers::decode(body[3])?;
    check_constants(body[4], &abi)?;
    // 5. SPIR-V.
    if !body[2].len().is_multiple_of(4) {
        return Err(ArtifactError::Malformed {
            section: Section::Spirv,
            offset: body[2].len(),
            reason: "not a whole number of words".into(),
        });
    }
    let words: Vec<u32> = body[2].chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
    let reconciled = check_spirv(&words, &abi)?;
    // 6. Features.
    if reconciled != capability_owned(&required) {
        return Err(ArtifactError::FeatureMismatch {
            persisted: names(&capability_owned(&required)),
            reconciled: names(&reconciled),
        });
    }
    let features = reconciled.union(emission);
    if let Some(dev) = device {
        let missing = features.missing_from(dev);
        if !missing.is_empty() {
            return Err(ArtifactError::MissingDeviceFeatures(missing));
        }
    }
    Ok(ShaderArtifact {
        dialect,
        shader_hash: h.shader_hash,
        argument_type_hash: h.argument_type_hash,
        features,
        abi,
        arguments,
        words,
        printers,
        constants: body[4].to_vec(),
    })
}
