//! The index of one pipeline `.ron` document: the steps as written (read
//! with the framework's positioned RON reader, so it exists when the
//! pipeline does not load), each with the byte range of its name, and the
//! header's `input` / `output` dialect names. When the pipeline loads, each
//! step also knows the dialect flowing into and out of it.

use std::ops::Range;

use xir::pipeline::syntax::{self, Node, NodeKind};
use xir::pipeline::{Loc, Pipeline, Step};

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum StepKind {
    Pass,
    Include,
    Hook,
    OptGroup,
    FixedPoint,
}

/// One step as written.
#[derive(Clone, Debug)]
pub struct StepEntry {
    pub kind: StepKind,
    /// The pass, hook or included pipeline; empty for groups.
    pub name: String,
    /// The whole step.
    pub range: Range<usize>,
    /// The name's string literal, quotes included.
    pub name_range: Range<usize>,
    /// The step's options (`Pass(name: ..., options: (...))`), as written.
    pub options: Option<String>,
    /// Dialects in and out, when the pipeline loaded.
    pub flow: Option<(String, String)>,
    /// Index of the enclosing group step, if any.
    pub parent: Option<usize>,
}

pub struct PipelineIndex {
    pub steps: Vec<StepEntry>,
    /// `input:` and `output:` values: (dialect, range of the string literal).
    pub dialects: Vec<(String, Range<usize>)>,
    pub name: Option<String>,
}

impl PipelineIndex {
    pub fn build(text: &str, loaded: Option<&Pipeline>) -> PipelineIndex {
        let mut ix = PipelineIndex { steps: Vec::new(), dialects: Vec::new(), name: None };
        let Ok(root) = syntax::parse(text) else { return ix };
        if let NodeKind::Struct { fields, .. } = &root.kind {
            for f in fields {
                match (f.name.as_str(), &f.value.kind) {
                    ("input" | "output", NodeKind::Str(s)) => ix.dialects.push((s.clone(), f.value.start..f.value.end)),
                    ("name", NodeKind::Str(s)) => ix.name = Some(s.clone()),
                    ("steps", NodeKind::List(items)) => ix.read_steps(text, items, None),
                    _ => {}
                }
            }
        }
        if let Some(p) = loaded {
            let mut flows = Vec::new();
            flow(&p.steps, &p.input, &mut flows);
            for s in &mut ix.steps {
                let (line, col) = syntax::line_col(text, s.range.start);
                s.flow = flows
                    .iter()
                    .find(|(loc, _, _)| loc.file == p.file && loc.line == line && loc.col == col)
                    .map(|(_, i, o)| (i.clone(), o.clone()));
            }
        }
        ix
    }

    fn read_steps(&mut self, text: &str, items: &[Node], parent: Option<usize>) {
        for node in items {
            let Some(kind) = node.type_name().and_then(step_kind) else { continue };
            let (mut name, mut name_range, mut options, mut children) = (String::new(), 0..0, None, None);
            match &node.kind {
                NodeKind::Tuple { items, .. } => {
                    if let Some(first) = items.first() {
                        if let NodeKind::Str(s) = &first.kind {
                            name = s.clone();
                            name_range = first.start..first.end;
                        }
                    }
                }
                NodeKind::Struct { fields, .. } => {
                    for f in fields {
                        match (f.name.as_str(), &f.value.kind) {
                            ("name" | "target", NodeKind::Str(s)) => {
                                name = s.clone();
                                name_range = f.value.start..f.value.end;
                            }
                            ("options", _) => options = text.get(f.value.start..f.value.end).map(str::to_string),
                            ("steps", NodeKind::List(list)) => children = Some(list),
                            _ => {}
                        }
                    }
                }
                _ => {}
            }
            self.steps.push(StepEntry {
                kind,
                name,
                range: node.start..node.end,
                name_range,
                options,
                flow: None,
                parent,
            });
            let me = self.steps.len() - 1;
            if let Some(list) = children {
                self.read_steps(text, list, Some(me));
            }
        }
    }

    /// The innermost step whose text holds `offset`.
    pub fn step_at(&self, offset: usize) -> Option<&StepEntry> {
        self.steps.iter().filter(|s| s.range.start <= offset && offset <= s.range.end).min_by_key(|s| s.range.len())
    }
}

fn step_kind(name: &str) -> Option<StepKind> {
    Some(match name {
        "Pass" => StepKind::Pass,
        "Include" => StepKind::Include,
        "Hook" => StepKind::Hook,
        "OptGroup" => StepKind::OptGroup,
        "FixedPoint" => StepKind::FixedPoint,
        _ => return None,
    })
}

/// Each step's location with the dialect before and after it; returns the
/// dialect after `steps`.
fn flow(steps: &[Step], input: &str, out: &mut Vec<(Loc, String, String)>) -> String {
    let mut cur = input.to_string();
    for s in steps {
        let after = match s {
            Step::Pass(p) | Step::Hook { bound: Some(p), .. } => {
                p.pass.info().produced_from(&cur).map(str::to_string).unwrap_or_else(|| cur.clone())
            }
            Step::Hook { bound: None, .. } => cur.clone(),
            Step::Include { output, steps, input, .. } => {
                flow(steps, input, &mut Vec::new());
                output.clone()
            }
            // A group may not run (opt level, no change): what flows out is
            // what its steps make of the input.
            Step::OptGroup { steps, .. } | Step::FixedPoint { steps, .. } => flow(steps, &cur, out),
        };
        out.push((s.loc().clone(), cur.clone(), after.clone()));
        cur = after;
    }
    cur
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_are_read_with_their_names_and_groups() {
        let text = "Pipeline(name: \"p\", input: \"xir.raw\", output: \"xir.raw\", steps: [Pass(\"dce\"), OptGroup(min_level: 2, steps: [Include(\"ssa\")]), Pass(name: \"sroa\", options: (aggressive: true))])";
        let ix = PipelineIndex::build(text, None);
        let names: Vec<(StepKind, &str, Option<usize>)> =
            ix.steps.iter().map(|s| (s.kind, s.name.as_str(), s.parent)).collect();
        assert_eq!(
            names,
            vec![
                (StepKind::Pass, "dce", None),
                (StepKind::OptGroup, "", None),
                (StepKind::Include, "ssa", Some(1)),
                (StepKind::Pass, "sroa", None),
            ]
        );
        assert_eq!(&text[ix.steps[0].name_range.clone()], "\"dce\"");
        assert_eq!(ix.steps[3].options.as_deref(), Some("(aggressive: true)"));
        assert_eq!(ix.step_at(text.find("ssa").unwrap()).unwrap().name, "ssa");
        assert_eq!(ix.dialects.len(), 2);
    }
}
