//! The compile cache (docs/compile-cache.md): compiled kernels kept as
//! shader artifacts in a content-addressed directory, so compiling the same
//! kernel the same way again skips the pipeline and the backend.
//!
//! The key is SHA-256 over everything that decides the compiled bytes: the
//! input module's canonical print (so spans and comments do not count, names
//! do: they reach the SPIR-V's `OpName`s and the artifact's saved
//! arguments), the kernel asked for, the resolved pipeline's content (not
//! its name: an edited pipeline file or include misses), the optimization
//! level, fast math, the device features planned for, and the compiler's
//! identity (crate version and `build.rs`'s build id over the compiler's
//! sources). An entry is the artifact codec's bytes behind a small envelope
//! naming its key; a lookup checks the envelope and decodes the artifact,
//! which checks every digest and validates the SPIR-V (the reference's
//! "Cache and AOT loading" order), so a corrupted or truncated entry is
//! rejected, deleted and recompiled, never trusted. Entries are written to a
//! temporary file and renamed into place: other processes see a whole entry
//! or none. It is a tool concern (a directory on disk), not the backend's:
//! `xir-spirv` only knows the codec.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use sha2::{Digest as _, Sha256};
use xir::pipeline::{Pipeline, RunOptions, Step};
use xir::Module;
use xir_spirv::artifact::{self, ArtifactError, LoadRequirements, ShaderArtifact, MAX_ARTIFACT_LEN};
use xir_spirv::FeatureSet;

use crate::backend::{self, BackendError};

/// The environment variable naming the cache directory (what `--cache-dir` does).
pub const CACHE_DIR_ENV: &str = "XIR_CACHE_DIR";
/// What every entry starts with.
pub const ENTRY_MAGIC: [u8; 8] = *b"XIRCACHE";
/// The entry format this build writes and reads; entries live under
/// `v{ENTRY_VERSION}/` of the cache directory.
pub const ENTRY_VERSION: u32 = 1;
/// Bytes before the artifact: magic, version, key.
pub const ENVELOPE_LEN: usize = 8 + 4 + 32;

/// The compiler's identity, part of every key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompilerId {
    /// The crate version.
    pub version: String,
    /// `build.rs`'s digest of the compiler's sources, `Cargo.lock`, rustc,
    /// profile and target (docs/compile-cache.md, "Key").
    pub build: String,
}

impl CompilerId {
    /// This build's identity.
    pub fn current() -> CompilerId {
        CompilerId { version: env!("CARGO_PKG_VERSION").to_string(), build: env!("XIR_BUILD_ID").to_string() }
    }
}

/// What is compiled, besides the pipeline: with it and the compiler, what
/// a key is computed from.
#[derive(Clone, Copy)]
pub struct Request<'a> {
    /// The input module, as read (before any pipeline).
    pub module: &'a Module,
    /// The kernel asked for (`None`: the module's only kernel).
    pub kernel: Option<&'a str>,
    pub opt_level: u8,
    pub fast_math: bool,
    /// The device features planned for (`None`: an unknown device).
    pub device_features: Option<FeatureSet>,
    /// `-g`: debug info in the SPIR-V.
    pub debug_info: bool,
}

/// A cache key: SHA-256 of the canonical key string.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Key(pub [u8; 32]);

impl std::fmt::Display for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&artifact::hex(&self.0))
    }
}

/// SHA-256 of the module's canonical print: the semantic digest.
pub fn module_digest(module: &Module) -> [u8; 32] {
    Sha256::digest(xir::text::print_module(module).as_bytes()).into()
}

/// The resolved pipeline's content as canonical text: dialects, and every
/// step with its options as written, includes spliced in. Name, doc, file
/// and source positions are left out: they do not change what is compiled.
pub fn pipeline_identity(p: &Pipeline) -> String {
    fn pass(out: &mut String, name: &str, options: &Option<String>) {
        out.push_str(&format!("pass {name:?} {options:?}\n"));
    }
    fn steps(out: &mut String, list: &[Step]) {
        for s in list {
            match s {
                Step::Pass(p) => pass(out, &p.name, &p.options),
                Step::Include { target, input, output, steps: inner, .. } => {
                    out.push_str(&format!("include {target:?} {input:?} -> {output:?} {{\n"));
                    steps(out, inner);
                    out.push_str("}\n");
                }
                Step::OptGroup { min_level, steps: inner, .. } => {
                    out.push_str(&format!("opt_group {min_level} {{\n"));
                    steps(out, inner);
                    out.push_str("}\n");
                }
                Step::FixedPoint { max_iterations, steps: inner, .. } => {
                    out.push_str(&format!("fixed_point {max_iterations} {{\n"));
                    steps(out, inner);
                    out.push_str("}\n");
                }
                Step::Hook { name, bound, .. } => {
                    out.push_str(&format!("hook {name:?} "));
                    match bound {
                        Some(b) => pass(out, &b.name, &b.options),
                        None => out.push_str("unbound\n"),
                    }
                }
            }
        }
    }
    let mut out = format!("pipeline {:?} -> {:?}\n", p.input, p.output);
    steps(&mut out, &p.steps);
    out
}

impl Request<'_> {
    /// The key of this request compiled through `pipeline` (`None`: the
    /// module is already `xir.spirv`) by `compiler`.
    pub fn key(&self, pipeline: Option<&Pipeline>, compiler: &CompilerId) -> Key {
        let mut h = Sha256::new();
        let mut field = |name: &str, value: &[u8]| {
            h.update((name.len() as u64).to_le_bytes());
            h.update(name.as_bytes());
            h.update((value.len() as u64).to_le_bytes());
            h.update(value);
        };
        field("key", b"xir compile cache v1");
        field("compiler.version", compiler.version.as_bytes());
        field("compiler.build", compiler.build.as_bytes());
        field("module", &module_digest(self.module));
        field("kernel", self.kernel.map(|k| format!("@{k}")).unwrap_or_default().as_bytes());
        field("pipeline", pipeline.map(pipeline_identity).unwrap_or_default().as_bytes());
        field("opt_level", &[self.opt_level]);
        field("fast_math", &[self.fast_math as u8]);
        let device = match self.device_features {
            None => "unknown".to_string(),
            Some(s) => {
                let mut names: Vec<&str> = s.iter().map(|f| f.vulkan_name()).collect();
                names.sort_unstable();
                format!("[{}]", names.join(","))
            }
        };
        field("device_features", device.as_bytes());
        // Only when on, so every key made before debug info existed stays valid.
        if self.debug_info {
            field("debug_info", &[1]);
        }
        Key(h.finalize().into())
    }
}

/// Why a stored entry was rejected (it is deleted and the kernel recompiled).
#[derive(Debug, thiserror::Error)]
pub enum EntryError {
    #[error("cannot read it: {0}")]
    Io(std::io::Error),
    #[error("truncated: {0} bytes, shorter than the {ENVELOPE_LEN}-byte envelope")]
    Truncated(usize),
    #[error("over the size limit of {0} bytes")]
    TooLarge(usize),
    #[error("not a cache entry (bad magic)")]
    BadMagic,
    #[error("entry format version {0} (this build reads {ENTRY_VERSION})")]
    Version(u32),
    #[error("it names another key ({0})")]
    WrongKey(Key),
    #[error("{0}")]
    Artifact(ArtifactError),
}

/// Why a compiled kernel was not stored (the compilation itself succeeded).
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The artifact codec refuses this kernel, so there is nothing to store.
    #[error("the kernel has no shader artifact: {0}")]
    Uncacheable(ArtifactError),
    #[error("cannot write it: {0}")]
    Io(std::io::Error),
}

/// What a lookup-or-compile did.
#[derive(Debug)]
pub enum Outcome {
    /// A verified entry was used; nothing was compiled.
    Hit { path: PathBuf },
    /// No entry: compiled, and stored unless `stored` says why not.
    Miss { path: PathBuf, stored: Result<(), StoreError> },
    /// The entry was rejected and deleted (unless `deleted` says why not:
    /// a directory in its place is left alone), then the kernel compiled
    /// and stored.
    Recompiled { path: PathBuf, rejected: EntryError, deleted: Result<(), String>, stored: Result<(), StoreError> },
}

impl Outcome {
    /// The entry's path.
    pub fn path(&self) -> &Path {
        match self {
            Outcome::Hit { path } | Outcome::Miss { path, .. } | Outcome::Recompiled { path, .. } => path,
        }
    }
    /// For a rejected entry, what became of it, as the driver's warning
    /// says it.
    pub fn rejection(&self) -> Option<String> {
        match self {
            Outcome::Recompiled { rejected, deleted: Ok(()), .. } => {
                Some(format!("rejected the cached entry ({rejected}); deleted it and recompiled"))
            }
            Outcome::Recompiled { rejected, deleted: Err(e), .. } => {
                Some(format!("rejected the cached entry ({rejected}); could not delete it ({e}); recompiled"))
            }
            _ => None,
        }
    }
    pub fn is_hit(&self) -> bool {
        matches!(self, Outcome::Hit { .. })
    }
}

/// A compiled kernel: its SPIR-V and its artifact bytes (or why the codec
/// refuses it).
#[derive(Clone, Debug)]
pub struct Compiled {
    pub words: Vec<u32>,
    pub artifact: Result<Vec<u8>, ArtifactError>,
}

impl Compiled {
    /// What `--emit spirv | spirv-asm | artifact` writes.
    pub fn emit(&self, what: backend::BackendEmit) -> Result<Vec<u8>, BackendError> {
        match what {
            backend::BackendEmit::Spirv => Ok(self.words.iter().flat_map(|w| w.to_le_bytes()).collect()),
            backend::BackendEmit::SpirvAsm => Ok(xir_spirv::disassemble(&self.words).into_bytes()),
            backend::BackendEmit::Artifact => self.artifact.clone().map_err(|e| BackendError::Artifact(e.to_string())),
        }
    }
}

/// A verified entry.
pub struct Hit {
    pub artifact: ShaderArtifact,
    /// The artifact's bytes (the entry without its envelope).
    pub bytes: Vec<u8>,
}

/// A compile cache at a directory (created on the first store).
#[derive(Clone, Debug)]
pub struct CompileCache {
    dir: PathBuf,
    compiler: CompilerId,
}

/// Makes temporary file names unique within the process.
static TMP_COUNTER: AtomicU64 = AtomicU64::new(0);

impl CompileCache {
    /// A cache at `dir`, keyed for this build.
    pub fn new(dir: impl Into<PathBuf>) -> CompileCache {
        CompileCache { dir: dir.into(), compiler: CompilerId::current() }
    }

    /// The same cache, keyed for another compiler identity (tests, tools
    /// that embed a compiler of their own version).
    pub fn with_compiler(mut self, compiler: CompilerId) -> CompileCache {
        self.compiler = compiler;
        self
    }

    /// `$XIR_CACHE_DIR`, else `$XDG_CACHE_HOME/xir` (an absolute path),
    /// else `$HOME/.cache/xir`; `None` when none is set.
    pub fn default_dir() -> Option<PathBuf> {
        let var = |name| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
        var(CACHE_DIR_ENV)
            .or_else(|| var("XDG_CACHE_HOME").filter(|p| p.is_absolute()).map(|p| p.join("xir")))
            .or_else(|| var("HOME").map(|h| h.join(".cache").join("xir")))
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn compiler(&self) -> &CompilerId {
        &self.compiler
    }

    /// The key of `request` through `pipeline` for this cache's compiler.
    pub fn key(&self, request: &Request<'_>, pipeline: Option<&Pipeline>) -> Key {
        request.key(pipeline, &self.compiler)
    }

    /// Where the entry of `key` lives: `v1/<first two hex digits>/<hex>.xce`.
    pub fn entry_path(&self, key: &Key) -> PathBuf {
        let hex = key.to_string();
        self.dir.join(format!("v{ENTRY_VERSION}")).join(&hex[..2]).join(format!("{hex}.xce"))
    }

    /// The verified entry of `key`: `Ok(None)` when there is none, `Err`
    /// when there is one that must not be trusted.
    pub fn load(&self, key: &Key) -> Result<Option<Hit>, EntryError> {
        let path = self.entry_path(key);
        let limit = ENVELOPE_LEN + MAX_ARTIFACT_LEN;
        let mut bytes = Vec::new();
        match std::fs::File::open(&path) {
            // No entry; or no cache directory, a regular file in its place
            // (then storing fails, and says so).
            Err(e) if matches!(e.kind(), std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory) => {
                return Ok(None)
            }
            Err(e) => return Err(EntryError::Io(e)),
            Ok(f) => {
                f.take(limit as u64 + 1).read_to_end(&mut bytes).map_err(EntryError::Io)?;
            }
        }
        if bytes.len() > limit {
            return Err(EntryError::TooLarge(limit));
        }
        self.verify(key, bytes).map(Some)
    }

    /// Check an entry's bytes as [`CompileCache::load`] does: the envelope
    /// names `key`, and the artifact decodes (every digest, the SPIR-V
    /// validated).
    pub fn verify(&self, key: &Key, mut bytes: Vec<u8>) -> Result<Hit, EntryError> {
        check_envelope(&bytes, key)?;
        let body = bytes.split_off(ENVELOPE_LEN);
        let artifact =
            artifact::decode(&body, &LoadRequirements::any_xir_spirv(), None).map_err(EntryError::Artifact)?;
        Ok(Hit { artifact, bytes: body })
    }

    /// Store `artifact` (encoded bytes) under `key`: written to a temporary
    /// file beside the entry and renamed over it, so readers see the whole
    /// entry or none. Returns the entry's path.
    pub fn store(&self, key: &Key, artifact: &[u8]) -> Result<PathBuf, StoreError> {
        let path = self.entry_path(key);
        let dir = path.parent().expect("an entry path has a parent");
        std::fs::create_dir_all(dir).map_err(StoreError::Io)?;
        let n = TMP_COUNTER.fetch_add(1, Ordering::Relaxed);
        let tmp = dir.join(format!(".{key}.{}.{n}.tmp", std::process::id()));
        let result = (|| {
            let mut f = std::fs::OpenOptions::new().write(true).create_new(true).open(&tmp)?;
            f.write_all(&ENTRY_MAGIC)?;
            f.write_all(&ENTRY_VERSION.to_le_bytes())?;
            f.write_all(&key.0)?;
            f.write_all(artifact)?;
            drop(f);
            std::fs::rename(&tmp, &path)
        })();
        if result.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        result.map(|()| path).map_err(StoreError::Io)
    }

    /// The entry of `key`, or `compile`'s result stored under it. A
    /// rejected entry is deleted before compiling (another process may
    /// store a fresh one meanwhile; deleting that one only costs a miss).
    pub fn get_or_compile<E>(
        &self,
        key: &Key,
        compile: impl FnOnce() -> Result<Compiled, E>,
    ) -> Result<(Compiled, Outcome), E> {
        let path = self.entry_path(key);
        let rejected = match self.load(key) {
            Ok(Some(hit)) => {
                let compiled = Compiled { words: hit.artifact.words, artifact: Ok(hit.bytes) };
                return Ok((compiled, Outcome::Hit { path }));
            }
            Ok(None) => None,
            Err(e) => Some((e, std::fs::remove_file(&path).map_err(|e| e.to_string()))),
        };
        let compiled = compile()?;
        let stored = match &compiled.artifact {
            Ok(bytes) => self.store(key, bytes).map(|_| ()),
            Err(e) => Err(StoreError::Uncacheable(e.clone())),
        };
        let outcome = match rejected {
            None => Outcome::Miss { path, stored },
            Some((rejected, deleted)) => Outcome::Recompiled { path, rejected, deleted, stored },
        };
        Ok((compiled, outcome))
    }
}

fn check_envelope(bytes: &[u8], key: &Key) -> Result<(), EntryError> {
    if bytes.len() < ENVELOPE_LEN {
        return Err(EntryError::Truncated(bytes.len()));
    }
    if bytes[..8] != ENTRY_MAGIC {
        return Err(EntryError::BadMagic);
    }
    let version = u32::from_le_bytes(bytes[8..12].try_into().expect("four bytes"));
    if version != ENTRY_VERSION {
        return Err(EntryError::Version(version));
    }
    let stored = Key(bytes[12..44].try_into().expect("32 bytes"));
    if stored != *key {
        return Err(EntryError::WrongKey(stored));
    }
    Ok(())
}

/// Compile the request's kernel through `pipeline` (if any) and the
/// backend: its SPIR-V and its artifact.
pub fn compile_uncached(request: &Request<'_>, pipeline: Option<&mut Pipeline>) -> Result<Compiled, BackendError> {
    let Request { module, kernel, opt_level, fast_math, device_features, debug_info } = *request;
    let mut m = module.clone();
    let handoffs = match pipeline {
        Some(p) => {
            let options = RunOptions { opt_level, fast_math, ..RunOptions::default() };
            backend::run_pipeline(p, options, &mut m, &mut std::io::sink()).map_err(BackendError::Pass)?.1
        }
        None => xir_spirv::handoff::Handoffs::new(&m),
    };
    let opts = xir_spirv::CompileOptions { opt_level, fast_math, device_features, debug_info };
    let (k, out) = backend::compile_with(&handoffs, kernel, &opts)?;
    let artifact = ShaderArtifact::from_compiled(handoffs.module(), k, &out).encode();
    Ok(Compiled { words: out.words, artifact })
}

/// [`compile_uncached`] through `cache`: the library's one call for a
/// cached compilation.
pub fn compile(
    cache: &CompileCache,
    request: &Request<'_>,
    pipeline: Option<&mut Pipeline>,
) -> Result<(Compiled, Outcome), BackendError> {
    let key = cache.key(request, pipeline.as_deref());
    cache.get_or_compile(&key, || compile_uncached(request, pipeline))
}
