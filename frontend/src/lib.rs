//! WGSL and GLSL compute shaders in: naga's front ends parse and validate
//! (we write no parser), overrides are given their values, and each
//! compute entry point becomes a kernel of a kernel AST (`xir-ast`), which
//! `ast2xir` turns into structured XIR. What the translation keeps and
//! refuses is in [`lower`]'s documentation.
//!
//! Every error is a located [`Diagnostic`] (`file:line:col` from naga's
//! spans): `wgsl` / `glsl` for what naga rejects, `frontend:unsupported`
//! for what XIR cannot express.

use std::collections::BTreeMap;

use xir::diag::Diagnostic;
use xir::ir::Span;

pub mod depth;
mod glsl_layout;
mod glsl_literals;
pub mod lower;
/// naga's own SPIR-V for the same source: the second oracle.
pub mod oracle;
pub mod spirv;

/// A shading language naga reads.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Language {
    Wgsl,
    /// GLSL 4.50 compute shaders.
    Glsl,
    /// A SPIR-V compute module: binary, so it has no [`Source`] text and is
    /// read by [`spirv::compile`] ([`spirv`]).
    Spirv,
}

impl Language {
    /// The text language a file name says: `.wgsl`, or `.comp` / `.glsl`
    /// (in any case). A SPIR-V binary is told by its magic number
    /// (`xir_spirv::reflect::is_spirv`), not by its name.
    pub fn from_path(path: &str) -> Option<Language> {
        let ext = std::path::Path::new(path).extension()?.to_str()?.to_ascii_lowercase();
        match ext.as_str() {
            "wgsl" => Some(Language::Wgsl),
            "comp" | "glsl" => Some(Language::Glsl),
            _ => None,
        }
    }

    fn rule(self) -> &'static str {
        match self {
            Language::Wgsl => "wgsl",
            Language::Glsl => "glsl",
            Language::Spirv => "spirv",
        }
    }
}

/// A shader source file.
#[derive(Copy, Clone, Debug)]
pub struct Source<'s> {
    /// The path diagnostics name.
    pub path: &'s str,
    pub text: &'s str,
    pub language: Language,
}

/// Values of the shader's `override` constants, by name.
pub type Overrides = BTreeMap<String, f64>;

fn location(text: &str, span: naga::Span) -> Option<Span> {
    // A span past the text (none has text: a SPIR-V module) locates nothing.
    if !span.is_defined() || span.to_range()?.end > text.len() {
        return None;
    }
    let loc = span.location(text);
    Some(Span::with_len(loc.line_number, loc.line_position, loc.length))
}

/// A front-end failure: one located diagnostic (boxed: it is large, and
/// the success path should not pay for it).
pub type Error = Box<Diagnostic>;

fn diag(src: &Source<'_>, rule: &str, message: String, span: Option<Span>) -> Error {
    Box::new(Diagnostic::error(rule, message).with_file(src.path).with_span(span))
}

/// The message of an error with its chain of causes, on one line.
fn chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        s.push_str(": ");
        s.push_str(&c.to_string());
        cur = c.source();
    }
    s
}

/// Run `f` (naga and the lowering) after checking that `src` nests no
/// deeper than the front end takes, on its own stack when `src` is deeper
/// than any thread's stack is sure to take ([`depth`]).
fn on_front_end_stack<T: Send>(src: &Source<'_>, f: impl FnOnce() -> Result<T, Error> + Send) -> Result<T, Error> {
    let placement = depth::check(src)?;
    depth::run_placed(placement, f).unwrap_or_else(|e| {
        Err(diag(src, "frontend:internal", format!("could not start the front end's thread: {e}"), None))
    })
}

/// Parse and validate `src` with naga, and give the overrides their values.
pub fn parse(src: &Source<'_>, overrides: &Overrides) -> Result<(naga::Module, naga::valid::ModuleInfo), Error> {
    on_front_end_stack(src, || parse_here(src, overrides))
}

/// [`parse`] on the calling thread, whose stack the caller vouches for.
fn parse_here(src: &Source<'_>, overrides: &Overrides) -> Result<(naga::Module, naga::valid::ModuleInfo), Error> {
    if src.language == Language::Glsl {
        if let Some(bad) = glsl_literals::first_bad_literal(src.text) {
            let span = naga::Span::new(bad.start as u32, (bad.start + bad.len) as u32);
            return Err(diag(src, "glsl", bad.message, location(src.text, span)));
        }
        if let Some(at) = glsl_layout::first_index_in_layout(src.text) {
            let span = naga::Span::new(at as u32, at as u32 + 1);
            let message = "an index in a layout qualifier (naga's GLSL front end cannot evaluate one)".to_string();
            return Err(diag(src, "glsl", message, location(src.text, span)));
        }
    }
    let module = match src.language {
        Language::Spirv => {
            let message = "a SPIR-V module is binary: it is read by `spirv::compile`, not as text".to_string();
            return Err(diag(src, "frontend:internal", message, None));
        }
        Language::Wgsl => naga::front::wgsl::parse_str(src.text).map_err(|e| {
            let mut message = e.message().to_string();
            for (_, label) in e.labels() {
                if !label.is_empty() && !e.message().contains(label) {
                    message.push_str(&format!(" ({label})"));
                }
            }
            let span = e.location(src.text).map(|l| Span::with_len(l.line_number, l.line_position, l.length));
            // naga's notes carry what its message may leave out (an "internal
            // front end error" says why only there).
            let d = diag(src, "wgsl", message, span);
            Box::new(e.notes().fold(*d, Diagnostic::with_note))
        })?,
        Language::Glsl => {
            let options = naga::front::glsl::Options::from(naga::ShaderStage::Compute);
            naga::front::glsl::Frontend::default().parse(&options, src.text).map_err(|e| {
                let first = e.errors.first();
                let mut message = first.map(|e| e.kind.to_string()).unwrap_or_else(|| "invalid GLSL".into());
                let mut span = first.and_then(|e| location(src.text, e.meta));
                if span.is_none() && message == "UnexpectedCharacter" {
                    if let Some(at) = unexpected_glsl_char(src.text) {
                        let c = src.text[at..].chars().next().unwrap_or_default();
                        message = format!("unexpected character {c:?} (U+{:04X})", c as u32);
                        span = location(src.text, naga::Span::new(at as u32, (at + c.len_utf8()) as u32));
                    }
                }
                diag(src, "glsl", message, span)
            })?
        }
    };
    with_overrides(src, module, overrides)
}

/// Validate naga's `module` of `src` and give its overrides their values.
fn with_overrides(
    src: &Source<'_>,
    module: naga::Module,
    overrides: &Overrides,
) -> Result<(naga::Module, naga::valid::ModuleInfo), Error> {
    let info = validate(src, &module)?;
    if module.overrides.is_empty() && overrides.is_empty() {
        return Ok((module, info));
    }
    let mut constants = naga::back::PipelineConstants::default();
    for (k, v) in overrides {
        constants.insert(k.clone(), *v);
    }
    let (module, _) =
        naga::back::pipeline_constants::process_overrides(&module, &info, None, &constants).map_err(|e| {
            let hint = match src.language {
                Language::Spirv => {
                    " (a SPIR-V module's specialization constants are named by their SpecId: `--override 0=VALUE`)"
                }
                _ => "",
            };
            diag(src, src.language.rule(), format!("overrides: {}{hint}", chain(&e)), None)
        })?;
    let module = module.into_owned();
    let info = validate(src, &module)?;
    Ok((module, info))
}

/// The byte offset of the first character, outside comments, that starts
/// no GLSL token, for naga's "UnexpectedCharacter": its preprocessor
/// (pp-rs) gives lexer errors no position. Quotes and backslashes are not
/// taken (the preprocessor reads them in places), so a stray one stays
/// unlocated rather than mislocated.
fn unexpected_glsl_char(text: &str) -> Option<usize> {
    let mut i = 0;
    while let Some(c) = text[i..].chars().next() {
        if let Some(n) = comment_len(&text[i..]) {
            i += n;
            continue;
        }
        let token = c.is_alphanumeric() || c == '_' || matches!(c, ' ' | '\t' | '\n' | '\r' | '\x0b' | '\x0c');
        let punct = c.is_ascii_punctuation() && !matches!(c, '@' | '$' | '`');
        if !token && !punct {
            return Some(i);
        }
        i += c.len_utf8();
    }
    None
}

/// The length in bytes of the comment `rest` starts with (`//` to the end
/// of the line, `/* */`, unterminated to the end of the text), for the
/// scans of the source before naga (both languages comment alike).
pub(crate) fn comment_len(rest: &str) -> Option<usize> {
    if rest.starts_with("//") {
        return Some(rest.find('\n').unwrap_or(rest.len()));
    }
    let body = rest.strip_prefix("/*")?;
    Some(body.find("*/").map_or(rest.len(), |n| n + 4))
}

fn validate(src: &Source<'_>, module: &naga::Module) -> Result<naga::valid::ModuleInfo, Error> {
    naga::valid::Validator::new(naga::valid::ValidationFlags::all(), naga::valid::Capabilities::all())
        .validate(module)
        .map_err(|e| {
            // naga's location reads the text up to the span: none past it.
            let within = e.spans().all(|(s, _)| s.to_range().is_none_or(|r| r.end <= src.text.len()));
            let span = within
                .then(|| e.location(src.text))
                .flatten()
                .map(|l| Span::with_len(l.line_number, l.line_position, l.length));
            diag(src, src.language.rule(), chain(e.as_inner()), span)
        })
}

/// `src` as a kernel AST in `arenas`: one kernel per compute entry point.
/// naga runs where [`parse`] places it; the lowering into `arenas` runs on
/// this thread (the arenas cannot be shared with another), within the depth
/// the check allowed (our lowering takes more than ten times that depth on
/// a main thread's stack).
pub fn to_ast<'a>(
    arenas: &'a xir_ast::Arenas<'a>,
    src: &Source<'_>,
    overrides: &Overrides,
) -> Result<xir_ast::Module<'a>, Error> {
    let (module, info) = parse(src, overrides)?;
    lower_parsed(arenas, src, &module, &info)
}

fn lower_parsed<'a>(
    arenas: &'a xir_ast::Arenas<'a>,
    src: &Source<'_>,
    module: &naga::Module,
    info: &naga::valid::ModuleInfo,
) -> Result<xir_ast::Module<'a>, Error> {
    lower::Lowering::new(arenas, module, info, src.text).lower().map_err(|e| {
        diag(src, "frontend:unsupported", format!("not supported: {}", e.message), location(src.text, e.span))
    })
}

/// `src` as structured XIR (`xir.structured`), verified. All of it runs
/// on the front end's own stack.
pub fn compile(src: &Source<'_>, overrides: &Overrides) -> Result<xir::ir::Module, Error> {
    on_front_end_stack(src, || {
        let (module, info) = parse_here(src, overrides)?;
        let arenas = xir_ast::Arenas::default();
        let ast = lower_parsed(&arenas, src, &module, &info)?;
        ast_to_module(src, &ast)
    })
}

/// [`compile`] with every instruction located: `!loc(path, line, col)`
/// from the source position of the statement or expression it came from
/// (what `-g` turns into `OpLine`s, docs/debug-info.md). Off by default:
/// locations would show in every printed module and in its cache key.
pub fn compile_located(src: &Source<'_>, overrides: &Overrides) -> Result<xir::ir::Module, Error> {
    let mut module = compile(src, overrides)?;
    attach_locations(&mut module, src.path);
    Ok(module)
}

/// Give every instruction of `module` that has a source span and no
/// location the location `file:line:col` of that span.
pub fn attach_locations(module: &mut xir::ir::Module, file: &str) {
    let ids: Vec<_> = module.func_ids().collect();
    for fid in ids {
        let f = module.func_mut(fid);
        let located: Vec<_> = f
            .all_insts()
            .filter(|&(_, i)| f.inst_md(i).location.is_none())
            .filter_map(|(_, i)| f.inst_span(i).map(|s| (i, s)))
            .collect();
        for (i, s) in located {
            let loc = xir::ir::Location { file: file.to_string(), line: s.line, col: s.col };
            f.inst_md_mut(i).location = Some(Box::new(loc));
        }
    }
}

/// Translate an AST made from `src` and verify the result: a failure here is
/// the front end's fault, reported as `frontend:internal` at the statement.
pub fn ast_to_module(src: &Source<'_>, ast: &xir_ast::Module<'_>) -> Result<xir::ir::Module, Error> {
    let module = xir_ast::ast_to_xir(ast).map_err(|e| diag(src, "frontend:internal", e.to_string(), e.span))?;
    if let Some(d) = xir::verify::verify_module(&module).into_iter().find(Diagnostic::is_error) {
        let message = format!("the translation does not verify: [{}] {}", d.rule, d.message);
        let mut out = diag(src, "frontend:internal", message, d.span);
        out.function = d.function;
        return Err(out);
    }
    Ok(module)
}
