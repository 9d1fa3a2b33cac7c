//! `--device-features`: the device a kernel is compiled for, as the set of
//! optional Vulkan features the planner may rely on.
//!
//! Why a flag: the planner's choices depend on the device (native float
//! atomics or a CAS loop, 8/16-bit storage or widened access, ...), and the
//! backend refuses a kernel whose reconciled requirements the device lacks.
//! Without the flag the target is *unknown*: nothing is checked and nothing
//! optional is used, which is what a file meant for any device needs.
//!
//! A value is one of the named presets (`unknown`, `none`, `all`,
//! `lavapipe`, `vulkan` = read from the running Vulkan device) or the path
//! of a RON file holding a list of feature names (`[Int64,
//! BufferFloat32AtomicAdd]`; `xir-opt --list-device-features` prints every
//! name). A bad file is answered with its path, line and column.

use std::fmt::Write as _;

use xir_spirv::{Feature, FeatureSet};

/// The named presets, for `--help` and the listing.
pub const PRESETS: [(&str, &str); 5] = [
    ("unknown", "the default: no check, no optional feature used"),
    ("none", "a device with no optional feature: every requirement is refused"),
    ("all", "a device with every feature the planner knows"),
    ("lavapipe", "what Mesa's lavapipe (25.x) enables for the runner"),
    ("vulkan", "what the running Vulkan device enables (opens it)"),
];

/// What Mesa's lavapipe 25 enables when `xir-vulkan` opens it (checked
/// against the live device by `pipelines/tests/device_features_cli.rs`
/// wherever lavapipe is installed).
pub fn lavapipe() -> FeatureSet {
    use Feature as F;
    [
        F::Int8,
        F::Int16,
        F::Int64,
        F::Float16,
        F::Float64,
        F::StorageBuffer8BitAccess,
        F::StorageBuffer16BitAccess,
        F::StoragePushConstant8,
        F::StoragePushConstant16,
        F::Int64Atomics,
        F::BufferFloat32AtomicAdd,
        F::SharedFloat32AtomicAdd,
        F::SignedZeroInfNanPreserve,
        F::RoundingModeRte,
        F::RayQuery,
        F::StorageImageReadWithoutFormat,
        F::StorageImageWriteWithoutFormat,
        F::UniformAndStorageBuffer8BitAccess,
        F::UniformAndStorageBuffer16BitAccess,
        F::ShaderNonSemanticInfo,
        F::AccelerationStructure,
        F::RuntimeDescriptorArray,
        F::StorageBufferArrayNonUniformIndexing,
        F::BufferHeapBindingFlags,
        F::SamplerAnisotropy,
        F::SampledImageArrayNonUniformIndexing,
        F::BufferFloat32Atomics,
        F::SharedFloat32Atomics,
        F::BufferFloat32AtomicMinMax,
        F::SharedFloat32AtomicMinMax,
        F::SubgroupBasic,
        F::SubgroupVote,
        F::SubgroupArithmetic,
        F::SubgroupBallot,
        F::SubgroupShuffle,
        F::SubgroupExtendedTypes,
        F::MaximalReconvergence,
        F::ShaderSubgroupClock,
    ]
    .into_iter()
    .collect()
}

/// Why a `--device-features` value was refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum DeviceFeaturesError {
    /// Not a preset, and no file could be opened there.
    #[error("`{path}` is not a preset ({presets}) and not a readable file: {reason}")]
    Unreadable { path: String, presets: String, reason: String },
    /// The file opened but is not text the reader takes (not UTF-8, past
    /// the source-size cap, a directory); `span` locates a bad byte.
    #[error("cannot read the feature file: {message}")]
    BadText { path: String, span: Option<xir::ir::Span>, message: String },
    /// The file is not a RON list of feature names.
    #[error("{message}")]
    Syntax { path: String, line: usize, column: usize, message: String },
    /// `vulkan` was asked for, and no device could be opened.
    #[error("no Vulkan device to read the features of: {0}")]
    NoDevice(String),
}

impl DeviceFeaturesError {
    /// The error as a diagnostic (rule `device-features`), located in the
    /// file where it is a syntax error.
    pub fn to_diagnostic(&self) -> xir::Diagnostic {
        let d = xir::Diagnostic::error(xir::diag::Rule::DeviceFeatures, format!("--device-features: {self}"));
        match self {
            DeviceFeaturesError::Syntax { path, line, column, .. } => d
                .with_file(path.clone())
                .with_span(Some(xir::ir::Span { line: *line as u32, col: *column as u32, len: 0 }))
                .with_note(
                    "a feature file is a RON list of feature names, e.g. `[Int64, BufferFloat32AtomicAdd]`; \
                     `xir-opt --list-device-features` prints them",
                ),
            DeviceFeaturesError::BadText { path, span, .. } => d.with_file(path.clone()).with_span(*span),
            _ => d,
        }
    }
}

/// The features `value` names; `None` for `unknown`.
pub fn resolve(value: &str) -> Result<Option<FeatureSet>, DeviceFeaturesError> {
    match value {
        "unknown" => Ok(None),
        "none" => Ok(Some(FeatureSet::empty())),
        "all" => Ok(Some(FeatureSet::all())),
        "lavapipe" => Ok(Some(lavapipe())),
        "vulkan" => running_device().map(Some),
        path => from_file(path).map(Some),
    }
}

#[cfg(feature = "run")]
fn running_device() -> Result<FeatureSet, DeviceFeaturesError> {
    xir_vulkan::Device::new().map(|d| d.enabled).map_err(|e| DeviceFeaturesError::NoDevice(e.to_string()))
}

#[cfg(not(feature = "run"))]
fn running_device() -> Result<FeatureSet, DeviceFeaturesError> {
    Err(DeviceFeaturesError::NoDevice(
        "this xir-opt was built without Vulkan (the `run` feature of xir-pipelines)".into(),
    ))
}

/// A RON file holding a list of feature names, read as every source file
/// is (`xir::text::source`: UTF-8, a size cap, so `/dev/zero` is refused).
pub fn from_file(path: &str) -> Result<FeatureSet, DeviceFeaturesError> {
    let file = std::fs::File::open(path).map_err(|e| DeviceFeaturesError::Unreadable {
        path: path.to_string(),
        presets: PRESETS.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", "),
        reason: e.to_string(),
    })?;
    let text = xir::text::source::read_source(file).map_err(|e| DeviceFeaturesError::BadText {
        path: path.to_string(),
        span: e.span,
        message: e.message,
    })?;
    parse(path, &text)
}

/// The text of a feature file (`path` names it in errors).
pub fn parse(path: &str, text: &str) -> Result<FeatureSet, DeviceFeaturesError> {
    let list: Vec<Feature> = ron::from_str(text).map_err(|e| DeviceFeaturesError::Syntax {
        path: path.to_string(),
        line: e.span.start.line,
        column: e.span.start.col,
        message: e.code.to_string(),
    })?;
    Ok(list.into_iter().collect())
}

/// `--list-device-features`: every feature, its Vulkan name, and the
/// presets that contain it.
pub fn listing() -> String {
    let mut out = String::new();
    let _ = writeln!(out, "presets:");
    for (name, doc) in PRESETS {
        let _ = writeln!(out, "    {name:<9} {doc}");
    }
    let _ = writeln!(out, "features (name in a feature file, Vulkan feature, in `lavapipe`):");
    let lavapipe = lavapipe();
    for f in Feature::ALL {
        let _ = writeln!(
            out,
            "    {:<36} {:<64} {}",
            format!("{f:?}"),
            f.vulkan_name(),
            if lavapipe.contains(f) { "yes" } else { "no" }
        );
    }
    out
}
