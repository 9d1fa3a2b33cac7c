//! One open document: its text, line index and the analysis of that text.
//! A `.ron` file is a pipeline, a `.wgsl` / `.comp` / `.glsl` file a shader
//! for the front end, anything else XIR text.
//!
//! XIR and shader texts also live in the server's incremental
//! [`Workspace`]: each change updates it, and its per-function database
//! re-checks (and, on save, recompiles to SPIR-V) only the functions the
//! edit can affect. The token index, which hover and go-to-definition read,
//! is rebuilt from the text on every change (one linear pass).

use std::path::PathBuf;

use lsp_types::Uri;
use xir::pass::PassRegistry;
use xir::pipeline::Pipeline;
use xir::Diagnostic;
use xir_pipelines::workspace::Workspace;

use crate::index::XirIndex;
use crate::pipeline_index::PipelineIndex;
use crate::position::{Encoding, LineIndex};

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Language {
    Xir,
    Pipeline,
    /// WGSL or GLSL, lowered to XIR by the front end.
    Shader(xir_frontend::Language),
}

/// What the analyses share across documents: the incremental workspace of
/// the open XIR and shader texts (its pass registry is the one pipelines
/// load against) and where the sources are.
pub struct Context {
    pub workspace: Workspace,
    /// Folders searched for pass sources and shipped pipeline files.
    pub roots: Vec<PathBuf>,
}

impl Context {
    pub fn new(roots: Vec<PathBuf>) -> Context {
        Context { workspace: Workspace::new(), roots }
    }

    pub fn registry(&self) -> &PassRegistry {
        self.workspace.registry()
    }

    pub fn loader(&self) -> xir::pipeline::Loader<'_> {
        xir_pipelines::loader(self.registry(), None)
    }
}

pub struct Document {
    pub uri: Uri,
    /// The file's path when the URI is a `file:` URI.
    pub path: Option<PathBuf>,
    /// The name diagnostics carry for this document.
    pub display: String,
    pub text: String,
    pub version: i32,
    pub language: Language,
    pub lines: LineIndex,
    pub xir: Option<XirIndex>,
    pub pipeline: Option<PipelineIndex>,
    /// The pipeline, when a `.ron` document loads.
    pub loaded: Option<Pipeline>,
    /// Diagnostics of the text as typed (parse, verify, dialect; load check).
    pub diagnostics: Vec<Diagnostic>,
    /// Diagnostics of the last save (SPIR-V handoff and validation); cleared
    /// by an edit, since their positions refer to the saved text.
    pub saved: Vec<Diagnostic>,
}

impl Document {
    /// The document and its analysis; an XIR or shader text is also set in
    /// `cx`'s workspace under [`Document::display`].
    pub fn new(uri: Uri, text: String, version: i32, encoding: Encoding, cx: &mut Context) -> Document {
        let path = uri_to_path(&uri);
        let display = path.as_ref().map_or_else(|| uri.as_str().to_string(), |p| p.display().to_string());
        let language = if display.ends_with(".ron") {
            Language::Pipeline
        } else if let Some(shader) = xir_frontend::Language::from_path(&display) {
            Language::Shader(shader)
        } else {
            Language::Xir
        };
        let lines = LineIndex::new(&text, encoding);
        let mut doc = Document {
            uri,
            path,
            display,
            text,
            version,
            language,
            lines,
            xir: None,
            pipeline: None,
            loaded: None,
            diagnostics: Vec::new(),
            saved: Vec::new(),
        };
        match language {
            Language::Xir => crate::diagnostics::analyze_xir(&mut doc, cx),
            Language::Pipeline => crate::diagnostics::analyze_pipeline(&mut doc, cx),
            Language::Shader(_) => crate::diagnostics::analyze_shader(&mut doc, cx),
        }
        doc
    }

    /// Byte range of a framework span in this text.
    pub fn span_bytes(&self, span: xir::ir::Span) -> std::ops::Range<usize> {
        self.lines.span_bytes(&self.text, span)
    }

    pub fn range(&self, r: std::ops::Range<usize>) -> lsp_types::Range {
        self.lines.range(&self.text, r)
    }

    pub fn offset(&self, pos: lsp_types::Position) -> usize {
        self.lines.offset(&self.text, pos)
    }

    /// Whether a diagnostic's file names this document.
    pub fn is_this_file(&self, file: Option<&str>) -> bool {
        match file {
            None => true,
            Some(f) => f == self.display || self.path.as_ref().is_some_and(|p| same_path(p, f)),
        }
    }
}

fn same_path(p: &std::path::Path, f: &str) -> bool {
    let a = p.canonicalize().ok();
    a.is_some() && a == std::path::Path::new(f).canonicalize().ok()
}

/// `file:///a/b%20c.xir` -> `/a/b c.xir`; `None` for other schemes.
pub fn uri_to_path(uri: &Uri) -> Option<PathBuf> {
    let rest = uri.as_str().strip_prefix("file://")?;
    // `file://host/path`: only the local host (empty or `localhost`).
    let rest = rest.strip_prefix("localhost").unwrap_or(rest);
    if !rest.starts_with('/') {
        return None;
    }
    let bytes = rest.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (bytes[i], bytes.get(i + 1).and_then(|&b| hex(b)), bytes.get(i + 2).and_then(|&b| hex(b))) {
            (b'%', Some(h), Some(l)) => {
                out.push((h * 16 + l) as u8);
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).ok().map(PathBuf::from)
}

/// A `file:` URI for `path` (percent-encoding what a URI path may not hold).
pub fn path_to_uri(path: &std::path::Path) -> Option<Uri> {
    let abs = if path.is_absolute() { path.to_path_buf() } else { std::env::current_dir().ok()?.join(path) };
    let mut s = String::from("file://");
    for b in abs.to_str()?.bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~".contains(&b) {
            s.push(b as char);
        } else {
            s.push_str(&format!("%{b:02X}"));
        }
    }
    s.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_uris_round_trip_with_escapes() {
        let p = std::path::Path::new("/tmp/a b/é.xir");
        let uri = path_to_uri(p).unwrap();
        assert_eq!(uri.as_str(), "file:///tmp/a%20b/%C3%A9.xir");
        assert_eq!(uri_to_path(&uri).as_deref(), Some(p));
        assert_eq!(uri_to_path(&"untitled:x".parse().unwrap()), None);
    }
}
