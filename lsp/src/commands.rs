//! `workspace/executeCommand`: what an editor shows in a scratch buffer.
//!
//! - `xir.showXirAfter` `{uri, pipeline?, after?, kernel?}`: the XIR of the
//!   document's module (or of one kernel) after a pipeline step: `after` is
//!   a number of pass executions (0: the input) or a pass name (its first
//!   execution); default: the whole pipeline. `pipeline` is a shipped name or
//!   a path (default `spirv`). Answers `{step, text}`.
//! - `xir.spirvDisassembly` `{uri, kernel?}`: the SPIR-V disassembly of a
//!   kernel (default: the first) after the `spirv` pipeline and the backend,
//!   from the incremental workspace (a kernel no edit reached since the last
//!   answer is not recompiled). Answers `{kernel, text}`.
//!
//! Both work on WGSL / GLSL documents too, on the XIR the front end lowers
//! them to (`after: 0` shows that XIR).
//!
//! Failures answer an error with the diagnostics in their short form.

use serde::Deserialize;
use serde_json::{json, Value};
use std::borrow::Cow;

use xir::pipeline::{PassManager, RunOptions};
use xir::Module;

use crate::document::{Context, Document, Language};

pub const SHOW_XIR_AFTER: &str = "xir.showXirAfter";
pub const SPIRV_DISASSEMBLY: &str = "xir.spirvDisassembly";
pub const ALL: [&str; 2] = [SHOW_XIR_AFTER, SPIRV_DISASSEMBLY];

#[derive(Deserialize)]
pub struct Args {
    pub uri: lsp_types::Uri,
    #[serde(default)]
    pub pipeline: Option<String>,
    #[serde(default)]
    pub after: Option<Value>,
    #[serde(default)]
    pub kernel: Option<String>,
}

fn module(doc: &Document) -> Result<Cow<'_, Module>, String> {
    if let Some(d) = doc.diagnostics.iter().find(|d| d.is_error()) {
        return Err(format!("the document has errors: {d}"));
    }
    match doc.language {
        Language::Xir => doc.xir.as_ref().and_then(|x| x.module.as_ref()).map(Cow::Borrowed),
        // Lowered again on demand: commands are rare, keystrokes are not.
        Language::Shader(language) => {
            let src = xir_frontend::Source { path: &doc.display, text: &doc.text, language };
            xir_frontend::compile(&src, &xir_frontend::Overrides::default()).ok().map(Cow::Owned)
        }
        Language::Pipeline => None,
    }
    .ok_or_else(|| "not an XIR or shader document".to_string())
}

fn short(diags: &[xir::Diagnostic]) -> String {
    xir::diag::render_short(diags)
}

pub fn show_xir_after(doc: &Document, cx: &Context, args: &Args) -> Result<Value, String> {
    let m = module(doc)?;
    let spec = args.pipeline.as_deref().unwrap_or("spirv");
    let pipeline = cx.loader().load(spec).map_err(|f| f.to_string())?;
    let mut out = m.into_owned();
    let (limit, by_name) = match &args.after {
        None => (None, None),
        Some(Value::Number(n)) => (Some(n.as_u64().ok_or("`after` must be a count or a pass name")? as usize), None),
        Some(Value::String(s)) => (None, Some(s.clone())),
        Some(_) => return Err("`after` must be a count or a pass name".into()),
    };
    let step = if limit == Some(0) {
        "the input".to_string()
    } else {
        let options =
            RunOptions { bisect_limit: limit, print_after: by_name.iter().cloned().collect(), ..RunOptions::default() };
        let mut log = Vec::new();
        let report =
            PassManager::new(&pipeline, options).run(&mut out, &mut log).map_err(|e| short(&e.to_diagnostics()))?;
        if let Some(name) = &by_name {
            // The first `IR after` dump of that pass is the state wanted.
            let log = String::from_utf8_lossy(&log);
            let head = format!("// ----- IR after `{name}` (");
            let start = log.find(&head).ok_or_else(|| format!("pass `{name}` did not run in `{spec}`"))?;
            let body_start = log[start..].find('\n').map_or(log.len(), |i| start + i + 1);
            let body_end = log[body_start..].find("// ----- IR after `").map_or(log.len(), |i| body_start + i);
            out = xir::text::parse_module(&log[body_start..body_end], "<after>").map_err(|d| short(&d))?;
            format!("after the first `{name}`")
        } else {
            report.bisect.unwrap_or_else(|| format!("after `{spec}`"))
        }
    };
    let text = match &args.kernel {
        None => xir::text::print_module(&out),
        Some(k) => {
            let f = out.functions.iter().find(|f| f.name == *k).ok_or_else(|| format!("no function `@{k}`"))?;
            xir::text::print_function(&out, f)
        }
    };
    Ok(json!({ "step": step, "text": text }))
}

pub fn spirv_disassembly(doc: &Document, cx: &mut Context, args: &Args) -> Result<Value, String> {
    module(doc)?;
    let ws = &mut cx.workspace;
    let kernel = match &args.kernel {
        Some(k) => k.clone(),
        None => ws.kernels(&doc.display).ok().and_then(|k| k.into_iter().next()).ok_or("the module has no kernel")?,
    };
    let text = ws.spirv_disassembly(&doc.display, &kernel, "spirv").map_err(|e| e.to_string())?;
    Ok(json!({ "kernel": kernel, "text": text }))
}
