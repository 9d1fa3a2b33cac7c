//! Diagnostics: the framework's typed `Diagnostic`s of a document, and
//! their LSP form.
//!
//! As you type, an `.xir` text is checked by the server's incremental
//! workspace (parse and verify, re-done only for the functions an edit
//! touched) and, when its header names one (as file tests do: `// dialect:
//! D`, or `// pipeline: P` for a shipped pipeline's input), against a
//! dialect; a WGSL / GLSL text goes through the front end; a pipeline is
//! loaded and checked by the framework's loader, whose "did you mean" fixes
//! become code actions. Parse errors at a name that resolves to nothing get
//! such a fix here: the nearest opcode, value or block of the function.
//! On save, a structured module (every shader's is) goes through the
//! shipped `spirv` pipeline and every kernel through the backend (handoff,
//! planning, emission, SPIRV-Tools validation), memoized per kernel by the
//! workspace: a save after editing one function recompiles only the kernels
//! that reach it.
//!
//! In the LSP form the code is the rule's name, secondary labels are related
//! information, notes follow the message, and a diagnostic about another
//! file (an included pipeline) is shown at the top of this one, naming it.

use std::sync::Arc;

use lsp_types::{DiagnosticRelatedInformation, DiagnosticSeverity, Location, NumberOrString};
use xir::diag::{Fix, Rule, Severity};
use xir::ir::Span;
use xir::pipeline::suggest;
use xir::text::tokens::TokenKind;
use xir::Diagnostic;
use xir_pipelines::workspace::WorkspaceError;
use xir_spec::Opcode;

use crate::document::{Context, Document, Language};
use crate::index::{NameKind, XirIndex};
use crate::pipeline_index::PipelineIndex;

/// Parse, verify and dialect-check an XIR document; build its index.
pub fn analyze_xir(doc: &mut Document, cx: &mut Context) {
    cx.workspace.set_file(&doc.display, &doc.text);
    let mut diags = cx.workspace.diagnostics(&doc.display).unwrap_or_default();
    // The index's module (types and spans for hover): the whole text.
    let module = match xir::text::parse_module(&doc.text, &doc.display) {
        Ok(m) => Some(m),
        Err(d) => {
            if !diags.iter().any(Diagnostic::is_error) {
                diags.extend(d);
            }
            None
        }
    };
    if let Some(m) = &module {
        let (dialect, header) = header_dialect(doc, cx);
        let clean = diags.is_empty() && header.is_empty();
        diags.extend(header);
        if let (true, Some(dialect)) = (clean, dialect) {
            diags.extend(xir::dialect::check_module(m, dialect));
        }
    }
    let index = XirIndex::build(&doc.text, module);
    for d in &mut diags {
        if d.rule == Rule::Parse && d.fixes.is_empty() {
            add_name_fix(doc, &index, d);
        }
    }
    doc.xir = Some(index);
    doc.diagnostics = diags;
}

/// The dialect named by the header (`// dialect: D`, else the input of a
/// shipped `// pipeline: P`), and the diagnostics of an unknown name.
fn header_dialect(doc: &Document, cx: &Context) -> (Option<&'static xir_spec::Dialect>, Vec<Diagnostic>) {
    let spec = xir_spec::spec();
    let mut offset = 0;
    let mut from_pipeline = None;
    for line in doc.text.split_inclusive('\n') {
        let Some(body) = line.trim_start().strip_prefix("//") else { break };
        let lead = line.len() - line.trim_start().len() + 2;
        let body_trim = body.trim_start();
        let at = offset + lead + (body.len() - body_trim.len());
        if let Some(name) = body_trim.strip_prefix("dialect:") {
            let name_at = at + "dialect:".len() + (name.len() - name.trim_start().len());
            let name = name.trim();
            if let Some(d) = spec.dialect(name) {
                return (Some(d), Vec::new());
            }
            let pos = doc.lines.position(&doc.text, name_at);
            let span = Span::with_len(pos.line + 1, char_col(doc, name_at), name.len() as u32);
            let mut diag = Diagnostic::error(Rule::Pipeline, format!("unknown dialect `{name}` in the header"))
                .with_file(doc.display.clone())
                .with_span(Some(span));
            if let Some(s) = suggest(name, spec.dialects.iter().map(|d| &*d.name)) {
                diag = diag.with_fix(span, s, format!("did you mean `{s}`?"));
            }
            return (None, vec![diag]);
        }
        if let Some(p) = body_trim.strip_prefix("pipeline:") {
            let p = p.trim();
            if xir::text::is_ident(&p.replace('-', "_")) {
                from_pipeline = cx.loader().load(p).ok().and_then(|p| spec.dialect(&p.input));
            }
        }
        offset += line.len();
    }
    (from_pipeline, Vec::new())
}

/// 1-based column in characters of byte `at`.
fn char_col(doc: &Document, at: usize) -> u32 {
    let line_start = doc.text[..at.min(doc.text.len())].rfind('\n').map_or(0, |i| i + 1);
    doc.text.get(line_start..at).map_or(1, |s| s.chars().count() as u32 + 1)
}

/// A "did you mean" fix for a parse error at an opcode, value or block name
/// that resolves to nothing.
fn add_name_fix(doc: &Document, index: &XirIndex, d: &mut Diagnostic) {
    let Some(span) = d.span else { return };
    let at = doc.span_bytes(span).start;
    let Some((kind, r)) = index.token_at(at) else { return };
    if r.start != at {
        return;
    }
    let written = &doc.text[r.clone()];
    let scope = index.functions.iter().rposition(|f| f.range.start <= at);
    let (sigil, candidates): (&str, Vec<String>) = match kind {
        TokenKind::Ident if Opcode::from_name(written).is_none() && d.message.starts_with("unknown opcode") => {
            ("", Opcode::ALL.iter().map(|o| o.name().to_string()).collect())
        }
        TokenKind::Local => ("%", index.defined_in(NameKind::Value, scope).map(|n| n.text.clone()).collect()),
        TokenKind::Label => ("^", index.defined_in(NameKind::Block, scope).map(|n| n.text.clone()).collect()),
        TokenKind::Global => ("@", index.defined_in(NameKind::Function, None).map(|n| n.text.clone()).collect()),
        _ => return,
    };
    let name = &written[sigil.len()..];
    if candidates.iter().any(|c| c == name) {
        return;
    }
    if let Some(s) = suggest(name, candidates.iter().map(String::as_str)) {
        let fix = format!("{sigil}{s}");
        let span = Span { len: r.len() as u32, ..span };
        d.fixes.push(Fix { file: None, span, replacement: fix.clone(), message: format!("did you mean `{fix}`?") });
    }
}

/// A WGSL / GLSL document: the front end's diagnostics (located in the
/// shader) through the workspace, which keeps the lowered module for the
/// save-time check and the commands.
pub fn analyze_shader(doc: &mut Document, cx: &mut Context) {
    cx.workspace.set_file(&doc.display, &doc.text);
    doc.diagnostics = cx.workspace.diagnostics(&doc.display).unwrap_or_default();
}

/// Load and check a pipeline document; build its index.
pub fn analyze_pipeline(doc: &mut Document, cx: &Context) {
    let loader = cx.loader();
    let display: Arc<str> = doc.display.as_str().into();
    let result = loader.load_text(display, doc.path.as_deref(), &doc.text);
    let (loaded, diags) = match result {
        Ok(p) => {
            let w = p.warnings.iter().map(|w| w.to_diagnostic()).collect();
            (Some(p), w)
        }
        Err(f) => (None, f.diagnostics.iter().map(|d| d.to_diagnostic()).collect()),
    };
    doc.pipeline = Some(PipelineIndex::build(&doc.text, loaded.as_ref()));
    doc.loaded = loaded;
    doc.diagnostics = diags;
}

/// The save-time check of an XIR or shader document: its module (when it
/// has no error and is structured) through the shipped `spirv` pipeline,
/// then every kernel through the backend, by the incremental workspace.
pub fn on_save(doc: &Document, cx: &mut Context) -> Vec<Diagnostic> {
    if doc.diagnostics.iter().any(Diagnostic::is_error) {
        return Vec::new();
    }
    match doc.language {
        Language::Pipeline => return Vec::new(),
        Language::Shader(_) => {}
        Language::Xir => {
            let Some(module) = doc.xir.as_ref().and_then(|x| x.module.as_ref()) else { return Vec::new() };
            let Some(structured) = xir_spec::spec().dialect("xir.structured") else { return Vec::new() };
            if !xir::dialect::satisfies(module, structured) {
                return Vec::new();
            }
        }
    }
    let ws = &mut cx.workspace;
    let kernels = ws.kernels(&doc.display).unwrap_or_default();
    let mut out = Vec::new();
    for k in kernels {
        match ws.emitted(&doc.display, &k, "spirv") {
            Ok(_) => {}
            Err(WorkspaceError::Compile(ds)) | Err(WorkspaceError::Pipeline(ds)) => {
                out.extend(ds.into_iter().map(|d| in_lowered_shader(doc, d)))
            }
            Err(e) => out.push(Diagnostic::error(Rule::SpirvEmit, e.to_string()).in_function(&k)),
        }
    }
    out
}

/// A shader's save-time diagnostic is located in the XIR the front end
/// lowered it to, not in the shader: shown at the top, saying so.
fn in_lowered_shader(doc: &Document, mut d: Diagnostic) -> Diagnostic {
    if matches!(doc.language, Language::Shader(_)) && doc.is_this_file(d.file.as_deref()) {
        if let Some(s) = d.span.take() {
            d.notes.push(format!(
                "at {}:{} of the XIR lowered from this shader (command `xir.showXirAfter` with `after: 0` shows it)",
                s.line, s.col
            ));
        }
        d.labels.clear();
        d.fixes.clear();
    }
    d
}

/// The LSP form of `d`, shown in `doc`.
pub fn to_lsp(doc: &Document, d: &Diagnostic) -> lsp_types::Diagnostic {
    let mut message = d.message.clone();
    let range = match d.span {
        Some(span) if doc.is_this_file(d.file.as_deref()) => doc.range(doc.span_bytes(span)),
        _ => {
            if let Some(f) = &d.file {
                let at = d.span.map(|s| format!(":{}:{}", s.line, s.col)).unwrap_or_default();
                if !doc.is_this_file(Some(f)) {
                    message = format!("{f}{at}: {message}");
                }
            }
            lsp_types::Range::default()
        }
    };
    if let Some(func) = &d.function {
        if d.span.is_none() {
            message.push_str(&format!(" (in @{func})"));
        }
    }
    for n in &d.notes {
        message.push_str("\nnote: ");
        message.push_str(n);
    }
    let related: Vec<DiagnosticRelatedInformation> = d
        .labels
        .iter()
        .filter(|l| doc.is_this_file(l.file.as_deref()))
        .map(|l| DiagnosticRelatedInformation {
            location: Location { uri: doc.uri.clone(), range: doc.range(doc.span_bytes(l.span)) },
            message: l.message.clone(),
        })
        .collect();
    lsp_types::Diagnostic {
        range,
        severity: Some(match d.severity {
            Severity::Error => DiagnosticSeverity::ERROR,
            Severity::Warning => DiagnosticSeverity::WARNING,
            Severity::Note => DiagnosticSeverity::INFORMATION,
        }),
        code: Some(NumberOrString::String(d.rule.name().to_string())),
        source: Some("xir".to_string()),
        message,
        related_information: (!related.is_empty()).then_some(related),
        ..Default::default()
    }
}

/// Every diagnostic of `doc` (as typed, then from the last save).
pub fn all(doc: &Document) -> impl Iterator<Item = &Diagnostic> {
    doc.diagnostics.iter().chain(&doc.saved)
}
