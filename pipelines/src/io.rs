//! Reading the driver's input (XIR text, JSON, or either on stdin; WGSL
//! and GLSL compute shaders and SPIR-V compute modules through the front
//! end) and
//! writing its output atomically: to a temporary file in the destination's
//! directory, renamed into place only once everything succeeded, so a failed
//! run never leaves a partial or stale output file behind.

use std::io::Write;
use std::path::{Path, PathBuf};

use xir::{Diagnostic, Module};

/// The input formats.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum InputFormat {
    Text,
    Json,
    /// A shader for the front end (`.wgsl`, `.comp` / `.glsl`).
    Shader(xir_frontend::Language),
}

impl InputFormat {
    pub fn is_shader(self) -> bool {
        matches!(self, InputFormat::Shader(_))
    }
}

/// Read and parse `path` (`-` = stdin). The format follows the extension
/// (`.json`, `.wgsl`, `.comp` / `.glsl`; anything else is XIR text); on
/// stdin, input starting with `{` is JSON. A shader becomes structured XIR
/// through the front end, its `override`s set from `overrides`.
pub fn read_module_with(path: &str, overrides: &xir_frontend::Overrides) -> Result<Module, Vec<Diagnostic>> {
    read_module_located(path, overrides, false)
}

/// [`read_module_with`]; with `located` (`-g`), a shader's instructions
/// carry their source positions as `!loc` (`xir_frontend::compile_located`).
pub fn read_module_located(
    path: &str,
    overrides: &xir_frontend::Overrides,
    located: bool,
) -> Result<Module, Vec<Diagnostic>> {
    read_module_detected(path, overrides, located).map(|(m, _)| m)
}

/// The module `path` holds, and the format it was read as.
fn read_module_detected(
    path: &str,
    overrides: &xir_frontend::Overrides,
    located: bool,
) -> Result<(Module, InputFormat), Vec<Diagnostic>> {
    let display = display_name(path);
    if let Some(bytes) = read_spirv(path).map_err(|e| vec![*e])? {
        let module = xir_frontend::spirv::compile(display, &bytes, overrides).map_err(|d| vec![*d])?;
        return Ok((module, InputFormat::Shader(xir_frontend::Language::Spirv)));
    }
    let text = read_text(path, "input").map_err(|diags| binary_note(path, diags))?;
    let format = detect(path, &text);
    let module = match format {
        InputFormat::Json => xir::text::json::from_json(&text, display),
        InputFormat::Text => xir::text::parse_module(&text, display),
        InputFormat::Shader(language) => {
            let src = xir_frontend::Source { path: display, text: &text, language };
            let compile = if located { xir_frontend::compile_located } else { xir_frontend::compile };
            compile(&src, overrides).map_err(|d| vec![*d])
        }
    }?;
    Ok((module, format))
}

/// [`read_module_located`], then the verifier: a module the tools may run a
/// pipeline on or emit. A shader's module is not verified twice: the front
/// end verified it (a failure there is the front end's own).
pub fn read_module_verified(
    path: &str,
    overrides: &xir_frontend::Overrides,
    located: bool,
) -> Result<Module, Vec<Diagnostic>> {
    let (module, format) = read_module_detected(path, overrides, located)?;
    if !format.is_shader() {
        let diags = xir::verify::verify_module(&module);
        if diags.iter().any(|d| d.is_error()) {
            return Err(diags);
        }
    }
    Ok(module)
}

/// The bytes of `path` when it is a SPIR-V module: its first four bytes
/// are the magic number (either byte order), or its name ends in `.spv`
/// (then it must be one; the SPIR-V front end says why it is not). At most
/// `MAX_SOURCE_BYTES`, as a text. Standard input is XIR text or JSON.
pub fn read_spirv(path: &str) -> Result<Option<Vec<u8>>, Box<Diagnostic>> {
    use std::io::Read;
    if !is_spirv_file(path) {
        return Ok(None);
    }
    let cap = xir::text::source::MAX_SOURCE_BYTES;
    let io = |message: String| Box::new(Diagnostic::error(xir::diag::Rule::Io, message).with_file(display_name(path)));
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(cap + 1).read_to_end(&mut bytes))
        .map_err(|e| io(format!("cannot read input: {e}")))?;
    if bytes.len() as u64 > cap {
        return Err(io(format!("cannot read input: larger than the {cap}-byte limit")));
    }
    Ok(Some(bytes))
}

/// Whether `path` is taken as a SPIR-V module: named `.spv`, or its first
/// four bytes are the magic number (either byte order). Standard input and
/// an unreadable file are not (the reader of their kind reports them).
pub fn is_spirv_file(path: &str) -> bool {
    use std::io::Read;
    if path == "-" {
        return false;
    }
    if Path::new(path).extension().is_some_and(|e| e.eq_ignore_ascii_case("spv")) {
        return true;
    }
    let mut head = Vec::with_capacity(4);
    std::fs::File::open(path).and_then(|f| f.take(4).read_to_end(&mut head)).is_ok()
        && xir_spirv::reflect::is_spirv(&head)
}

/// Whether `path` is a shader the front end reads (`--override` applies):
/// a WGSL or GLSL text, or a SPIR-V module.
pub fn is_shader_input(path: &str) -> bool {
    detect(path, "").is_shader() || is_spirv_file(path)
}

/// A module input that is not text may be one of the binaries the tools
/// write; say which and what reads it, instead of only "not UTF-8".
fn binary_note(path: &str, diags: Vec<Diagnostic>) -> Vec<Diagnostic> {
    use std::io::Read;
    let mut head = Vec::with_capacity(8);
    let read = std::fs::File::open(path).and_then(|f| f.take(8).read_to_end(&mut head));
    let note = if path == "-" || read.is_err() {
        None
    } else if head.starts_with(&xir_spirv::artifact::MAGIC) {
        Some("the file is a shader artifact (`--emit artifact`): `xir-run --artifact FILE --inputs ...` runs it")
    } else {
        None
    };
    match note {
        Some(n) => diags.into_iter().map(|d| d.with_note(n)).collect(),
        None => diags,
    }
}

/// `read_module_with` without overrides.
pub fn read_module(path: &str) -> Result<Module, Vec<Diagnostic>> {
    read_module_with(path, &xir_frontend::Overrides::new())
}

/// Why an `--override` argument does not parse.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum OverrideError {
    #[error("`{0}` is not NAME=VALUE")]
    NotNameValue(String),
    #[error("override `{name}`: `{value}` is not a number")]
    NotANumber { name: String, value: String },
}

/// Parse `NAME=VALUE` (an `override` value; bools as `true` / `false`).
pub fn parse_override(s: &str) -> Result<(String, f64), OverrideError> {
    let (name, value) = s.split_once('=').ok_or_else(|| OverrideError::NotNameValue(s.to_string()))?;
    let v = match value.trim() {
        "true" => 1.0,
        "false" => 0.0,
        v => {
            v.parse::<f64>().map_err(|_| OverrideError::NotANumber { name: name.to_string(), value: v.to_string() })?
        }
    };
    Ok((name.trim().to_string(), v))
}

/// Why [`write_output`] failed; nothing was left behind at the path.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    #[error("cannot write stdout: {0}")]
    Stdout(std::io::Error),
    #[error("{}: cannot write output: {source}", .path.display())]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{}: cannot write output: the symlink's target cannot be resolved: {source}", .path.display())]
    Symlink { path: PathBuf, source: std::io::Error },
    #[error("{}: cannot write output: it is a directory", .path.display())]
    Directory { path: PathBuf },
}

impl WriteError {
    /// The error as a diagnostic (rule `io`) naming the output file.
    pub fn to_diagnostic(&self) -> Diagnostic {
        let (file, message) = match self {
            WriteError::Stdout(e) => ("<stdout>".to_string(), format!("cannot write stdout: {e}")),
            WriteError::Io { path, source } => (path.display().to_string(), format!("cannot write output: {source}")),
            WriteError::Symlink { path, source } => (
                path.display().to_string(),
                format!("cannot write output: the symlink's target cannot be resolved: {source}"),
            ),
            WriteError::Directory { path } => {
                (path.display().to_string(), "cannot write output: it is a directory".to_string())
            }
        };
        Diagnostic::error(xir::diag::Rule::Io, message).with_file(file)
    }
}

/// The name diagnostics give an input path: `-` is `<stdin>`.
pub fn display_name(path: &str) -> &str {
    if path == "-" {
        "<stdin>"
    } else {
        path
    }
}

/// What was read from standard input: it can be read only once, and
/// diagnostics about `<stdin>` show their source lines from it.
static STDIN_TEXT: std::sync::OnceLock<std::sync::Arc<str>> = std::sync::OnceLock::new();

/// The text read from standard input by [`read_text`], if any.
pub fn stdin_text() -> Option<std::sync::Arc<str>> {
    STDIN_TEXT.get().cloned()
}

/// Read `path` (`-` = stdin) as text: at most `xir::text::source::MAX_SOURCE_BYTES`,
/// UTF-8, a bad byte located at its `file:line:col`; `what` names the file
/// in the message ("cannot read input: ...").
pub fn read_text(path: &str, what: &str) -> Result<String, Vec<Diagnostic>> {
    use xir::text::source::{read_source, read_source_file};
    let read = if path == "-" {
        let read = read_source(std::io::stdin().lock());
        if let Ok(text) = &read {
            let _ = STDIN_TEXT.set(text.as_str().into());
        }
        read
    } else {
        read_source_file(Path::new(path))
    };
    read.map_err(|e| {
        let message = format!("cannot read {what}: {}", e.message);
        vec![Diagnostic::error(xir::diag::Rule::Io, message).with_span(e.span).with_file(display_name(path))]
    })
}

pub fn detect(path: &str, text: &str) -> InputFormat {
    if path == "-" {
        if text.trim_start().starts_with('{') {
            InputFormat::Json
        } else {
            InputFormat::Text
        }
    } else if Path::new(path).extension().is_some_and(|e| e.eq_ignore_ascii_case("json")) {
        InputFormat::Json
    } else if let Some(language) = xir_frontend::Language::from_path(path) {
        InputFormat::Shader(language)
    } else {
        InputFormat::Text
    }
}

/// Write `bytes` to `out` (`None` or `-` = stdout).
///
/// A regular file (or a new one) is written atomically: to a temporary file
/// in its directory, renamed over it only once complete, keeping the old
/// file's permissions. A symlink is written through: its target is replaced
/// the same way and the link stays. Anything else that is not a directory (a
/// device such as `/dev/null`, a FIFO, a socket) is opened and written in
/// place, never replaced by a regular file.
pub fn write_output(out: Option<&str>, bytes: &[u8]) -> Result<(), WriteError> {
    let Some(path) = out.filter(|p| *p != "-") else {
        let mut so = std::io::stdout().lock();
        return so.write_all(bytes).and_then(|_| so.flush()).map_err(WriteError::Stdout);
    };
    let path = Path::new(path);
    let fail = |source: std::io::Error| WriteError::Io { path: path.to_path_buf(), source };
    match output_target(path)? {
        OutputTarget::New => write_atomically(path, bytes, None).map_err(fail),
        OutputTarget::File { target, meta } => write_atomically(&target, bytes, Some(meta.permissions())).map_err(fail),
        // A device, FIFO or socket: written in place, opened without creating
        // or truncating anything.
        OutputTarget::Other { target } => {
            let mut f = std::fs::OpenOptions::new().write(true).open(&target).map_err(fail)?;
            f.write_all(bytes).and_then(|_| f.flush()).map_err(fail)
        }
    }
}

/// What an output path names, its symlink resolved; a directory is refused.
enum OutputTarget {
    /// Nothing yet: a new file.
    New,
    /// A regular file (`target`: the symlink's target, else the path).
    File { target: PathBuf, meta: std::fs::Metadata },
    /// A device, FIFO or socket.
    Other { target: PathBuf },
}

fn output_target(path: &Path) -> Result<OutputTarget, WriteError> {
    let fail = |source: std::io::Error| WriteError::Io { path: path.to_path_buf(), source };
    let target = match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(OutputTarget::New),
        Err(e) => return Err(fail(e)),
        Ok(m) if m.file_type().is_symlink() => {
            std::fs::canonicalize(path).map_err(|source| WriteError::Symlink { path: path.to_path_buf(), source })?
        }
        Ok(_) => path.to_path_buf(),
    };
    let meta = std::fs::metadata(&target).map_err(fail)?;
    if meta.is_dir() {
        Err(WriteError::Directory { path: path.to_path_buf() })
    } else if meta.is_file() {
        Ok(OutputTarget::File { target, meta })
    } else {
        Ok(OutputTarget::Other { target })
    }
}

/// Refuse, before a long run (`xir-reduce`), an `out` that
/// [`write_output`] would refuse after it: a directory, a symlink whose
/// target cannot be resolved, a new file in a directory that does not
/// exist. `None` and `-` (stdout) pass. Nothing is created.
pub fn check_output(out: Option<&str>) -> Result<(), WriteError> {
    let Some(path) = out.filter(|p| *p != "-") else { return Ok(()) };
    let path = Path::new(path);
    let fail = |source: std::io::Error| WriteError::Io { path: path.to_path_buf(), source };
    match output_target(path)? {
        OutputTarget::New => match std::fs::metadata(parent_dir(path)).map_err(fail)?.is_dir() {
            true => Ok(()),
            false => Err(fail(std::io::ErrorKind::NotADirectory.into())),
        },
        OutputTarget::File { .. } | OutputTarget::Other { .. } => Ok(()),
    }
}

/// The directory a new file at `path` goes into (`.` for a bare name).
fn parent_dir(path: &Path) -> PathBuf {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Write `path` (a regular file or none) through a temporary file renamed
/// over it; the temporary file is removed on any failure.
fn write_atomically(path: &Path, bytes: &[u8], permissions: Option<std::fs::Permissions>) -> std::io::Result<()> {
    let dir = parent_dir(path);
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "out".into());
    let tmp = dir.join(format!(".{name}.xir-opt-{}.tmp", std::process::id()));
    let result = (|| {
        let mut f = std::fs::OpenOptions::new().write(true).create_new(true).open(&tmp)?;
        f.write_all(bytes)?;
        if let Some(p) = permissions {
            f.set_permissions(p)?;
        }
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}
