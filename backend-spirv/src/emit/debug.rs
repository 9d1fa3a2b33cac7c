//! Debug info at `-g` ([`CompileOptions::debug_info`](crate::CompileOptions)):
//! the front end's `!loc` locations become plain `OpString` / `OpSource` /
//! `OpLine` / `OpNoLine`, and XIR names become `OpName`s of functions,
//! parameters, resources and values (docs/debug-info.md).
//!
//! Plain `OpLine` rather than NonSemantic.Shader.DebugInfo.100: it needs no
//! extension or extended-instruction set, every SPIRV-Tools pass and
//! Vulkan driver accepts it, and a location (file, line, column) is all
//! XIR's metadata holds; scopes, types and variables, what the extended set
//! adds, have no XIR source to come from.
//!
//! Names only describe the module: nothing reads them back to choose a
//! binding, a heap or a role (the reference's "internal emission roles
//! beside public names"). Without the option nothing here runs, so a
//! default build is byte-identical to one from before debug info existed.

use rspirv::spirv::{SourceLanguage, Word};
use rustc_hash::{FxHashMap, FxHashSet};
use xir::{FuncId, Inst};

use super::Emitter;

/// Per-module debug-info state; inert unless the option is on.
#[derive(Default)]
pub(crate) struct DebugState {
    on: bool,
    /// The `OpString` of each source file, by name.
    files: FxHashMap<String, Word>,
}

/// The line in force in the function being emitted (`FnState::line`):
/// builder block index, file, line, column. A line ends at its block's
/// end, so one recorded for another block is none.
pub(crate) type LineInForce = Option<(usize, Word, u32, u32)>;

/// The `OpSource` language of a file, by its extension: GLSL 4.50 for
/// `.comp` / `.glsl`, WGSL for `.wgsl`, Unknown otherwise (XIR text has no
/// SPIR-V enumerant).
fn language(file: &str) -> (SourceLanguage, u32) {
    let ext = std::path::Path::new(file).extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
    match ext.as_deref() {
        Some("comp" | "glsl") => (SourceLanguage::GLSL, 450),
        Some("wgsl") => (SourceLanguage::WGSL, 100),
        _ => (SourceLanguage::Unknown, 0),
    }
}

impl Emitter<'_> {
    /// One `OpString` and `OpSource` per file named by a location in the
    /// emitted functions, in order of first appearance; turns line
    /// emission on.
    pub(crate) fn declare_debug_sources(&mut self) {
        if !self.opts.debug_info {
            return;
        }
        self.debug.on = true;
        let m = self.m;
        let plans = self.plans;
        for &fid in &plans.callgraph.order {
            let f = m.func(fid);
            let closure = &plans.closures[&fid];
            for &b in closure.blocks.iter().filter(|b| closure.reachable.contains(b)) {
                for &i in f.block(b).insts() {
                    let Some(loc) = f.inst_fields(i).location.as_deref() else { continue };
                    if !self.debug.files.contains_key(&loc.file) {
                        let s = self.b.string(loc.file.clone());
                        let (lang, version) = language(&loc.file);
                        self.b.source(lang, version, Some(s), None::<String>);
                        self.debug.files.insert(loc.file.clone(), s);
                    }
                }
            }
        }
    }

    /// Before XIR instruction `i`: its location as an `OpLine` unless that
    /// line is already in force in the current block; an `OpNoLine` when it
    /// has none and a line is in force.
    pub(crate) fn debug_line(&mut self, i: Inst) {
        if !self.debug.on {
            return;
        }
        let f = self.m.func(self.fs.func.expect("in function"));
        let Some(block) = self.b.selected_block() else { return };
        let in_force = self.fs.line.filter(|c| c.0 == block);
        match f.inst_fields(i).location.as_deref() {
            Some(loc) => {
                let file = self.debug.files[&loc.file];
                let want = (block, file, loc.line, loc.col);
                if in_force != Some(want) {
                    self.b.line(file, loc.line, loc.col);
                    self.fs.line = Some(want);
                }
            }
            None => {
                if in_force.is_some() {
                    self.b.no_line();
                }
                self.fs.line = None;
            }
        }
    }

    /// Before an instruction that stands for no XIR instruction (a merge
    /// or branch of the plan's own blocks): end the line in force.
    pub(crate) fn debug_no_line(&mut self) {
        if !self.debug.on {
            return;
        }
        if let Some(block) = self.b.selected_block() {
            if self.fs.line.is_some_and(|c| c.0 == block) {
                self.b.no_line();
            }
        }
        self.fs.line = None;
    }

    /// `OpName`s for function `fid` (being built: called before its end),
    /// its parameters or, in the kernel, its value arguments and resources,
    /// and every named value of its instructions. Only ids the module
    /// defines are named: a value whose emission was folded away (a fused
    /// multiply) has an id that nothing defines.
    pub(crate) fn debug_names(&mut self, fid: FuncId) {
        if !self.debug.on {
            return;
        }
        let f = self.m.func(fid);
        let module = self.b.module_ref();
        let mut defined: FxHashSet<Word> = module.types_global_values.iter().filter_map(|i| i.result_id).collect();
        if let Some(func) = self.b.selected_function().map(|k| &module.functions[k]) {
            defined.extend(func.parameters.iter().filter_map(|i| i.result_id));
            defined.extend(func.blocks.iter().flat_map(|b| &b.instructions).filter_map(|i| i.result_id));
        }
        let mut names: Vec<(Word, String)> = vec![(self.func_ids[&fid], f.name.clone())];
        for (&k, &w) in &self.fs.args {
            if let Some(n) = &f.args[k as usize].md.name {
                names.push((w, n.clone()));
            }
        }
        if fid == self.plans.kernel {
            for (&k, v) in &self.globals.buffers {
                if let Some(n) = &f.args[k as usize].md.name {
                    names.push((v.var, n.clone()));
                }
            }
            for (&k, v) in &self.globals.textures {
                if let Some(n) = &f.args[k as usize].md.name {
                    names.push((v.var, n.clone()));
                }
            }
        }
        for (&i, &w) in &self.fs.values {
            if let Some(n) = f.inst_name(i) {
                names.push((w, n.to_string()));
            }
        }
        names.retain(|(w, _)| *w == self.func_ids[&fid] || defined.contains(w));
        names.sort();
        for (w, n) in names {
            self.b.name(w, n);
        }
    }
}
