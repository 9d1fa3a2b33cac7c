//! Go to definition and find references. In XIR: values and blocks within
//! their function, functions module-wide (the index resolves names, so this
//! works in text that does not parse). In a pipeline: a pass step goes to
//! the source file that declares the pass (its `//!` doc states the
//! contract), an `Include` to the included pipeline file.

use std::path::{Path, PathBuf};

use lsp_types::{Location, Position, Range};

use crate::document::{path_to_uri, Context, Document, Language};
use crate::pipeline_index::StepKind;

pub fn definition(doc: &Document, cx: &Context, pos: Position) -> Option<Location> {
    let at = doc.offset(pos);
    match doc.language {
        Language::Xir => {
            let ix = doc.xir.as_ref()?;
            let def = ix.definition_of(ix.name_at(at)?)?;
            Some(Location { uri: doc.uri.clone(), range: doc.range(def.range.clone()) })
        }
        Language::Pipeline => {
            let step = doc.pipeline.as_ref()?.step_at(at)?;
            let path = match step.kind {
                StepKind::Pass => pass_source(cx, &step.name)?,
                StepKind::Hook => pass_source(cx, cx.registry().hook(&step.name)?.bound?)?,
                StepKind::Include => include_file(doc, cx, &step.name)?,
                StepKind::OptGroup | StepKind::FixedPoint => return None,
            };
            Some(Location { uri: path_to_uri(&path)?, range: Range::default() })
        }
        Language::Shader(_) => None,
    }
}

pub fn references(doc: &Document, pos: Position, include_declaration: bool) -> Vec<Location> {
    let at = doc.offset(pos);
    let Some(ix) = doc.xir.as_ref() else { return Vec::new() };
    let Some(n) = ix.name_at(at) else { return Vec::new() };
    ix.references_of(n)
        .filter(|o| include_declaration || !o.is_def)
        .map(|o| Location { uri: doc.uri.clone(), range: doc.range(o.range.clone()) })
        .collect()
}

/// The file under the workspace's pass folders that declares `name: "PASS"`.
pub fn pass_source(cx: &Context, pass: &str) -> Option<PathBuf> {
    let needle = format!("name: \"{pass}\"");
    for root in &cx.roots {
        for dir in ["passes/src", "backend-spirv/src", "pipelines/src"] {
            if let Some(p) = find_in(&root.join(dir), &needle, 0) {
                return Some(p.canonicalize().unwrap_or(p));
            }
        }
    }
    None
}

fn find_in(dir: &Path, needle: &str, depth: usize) -> Option<PathBuf> {
    if depth > 8 {
        return None;
    }
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir).ok()?.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            if let Some(found) = find_in(&p, needle, depth + 1) {
                return Some(found);
            }
        } else if p.extension().is_some_and(|e| e == "rs")
            && std::fs::read_to_string(&p).is_ok_and(|t| t.contains(needle))
        {
            return Some(p);
        }
    }
    None
}

/// The file an `Include("target")` names: a path relative to the document,
/// or a shipped pipeline's source under the workspace.
fn include_file(doc: &Document, cx: &Context, target: &str) -> Option<PathBuf> {
    let loader = cx.loader();
    match loader.resolve(target, doc.path.as_deref().and_then(Path::parent)).ok()? {
        // The loader resolves anything that exists (to report a directory as
        // one); only a file can be jumped to.
        xir::pipeline::PipelineSource::File(p) => Some(p).filter(|p| p.is_file()),
        xir::pipeline::PipelineSource::Shipped { name, .. } => {
            let p = cx.roots.iter().map(|r| r.join("pipelines").join(format!("{name}.ron"))).find(|p| p.is_file())?;
            Some(p.canonicalize().unwrap_or(p))
        }
    }
}
