//! The shape of a pipeline file, read from the positioned RON tree: header
//! fields and steps, each with the byte offsets the checker reports at.
//! Structural mistakes (unknown fields, wrong value kinds, bad gates, empty
//! step lists) are reported here; passes, options, includes and dialects are
//! resolved by `load` and `check`.
//!
//! ```ron
//! Pipeline(
//!     name: "example",
//!     input: "xir.structured",
//!     output: "xir.raw",
//!     steps: [
//!         Pass("lower_break_continue"),
//!         Pass(name: "dce", options: (aggressive: true)),
//!         Include("cleanup"),
//!         OptGroup(min_level: 2, steps: [Pass("gvn")]),
//!         FixedPoint(max_iterations: 4, steps: [Pass("simplify_cfg")]),
//!         Hook("callable_specialization"),
//!         Pass("destructure_cfg"),
//!     ],
//! )
//! ```

use super::syntax::{Field, Node, NodeKind};
use super::{suggest, Diags};

/// A pipeline file as written.
#[derive(Clone, Debug)]
pub struct FileSyntax {
    pub name: String,
    pub doc: Option<String>,
    pub input: (String, usize),
    pub output: (String, usize),
    pub steps: Vec<StepSyntax>,
}

#[derive(Clone, Debug)]
pub enum StepSyntax {
    Pass { name: String, at: usize, name_at: usize, options: Option<Node> },
    Include { target: String, at: usize, target_at: usize },
    OptGroup { min_level: u8, at: usize, steps: Vec<StepSyntax> },
    FixedPoint { max_iterations: u32, at: usize, steps: Vec<StepSyntax> },
    Hook { name: String, at: usize, name_at: usize },
}

const HEADER_FIELDS: &[&str] = &["name", "doc", "input", "output", "steps"];
const STEP_KINDS: &[&str] = &["Pass", "Include", "OptGroup", "FixedPoint", "Hook"];

/// Read the header and steps; every problem found is added to `diags`.
pub fn read_file(root: &Node, diags: &mut Diags) -> Option<FileSyntax> {
    let fields = match &root.kind {
        NodeKind::Struct { name, fields } if name.as_deref().is_none_or(|n| n == "Pipeline") => fields,
        _ => {
            diags.error(
                root.start,
                format!(
                    "expected `Pipeline(name: ..., input: ..., output: ..., steps: [...])`, found {}",
                    root.describe()
                ),
            );
            return None;
        }
    };
    let fields = struct_fields(fields, HEADER_FIELDS, "pipeline", diags);
    let name = required_str(&fields, "name", root, diags);
    let doc = fields.iter().find(|f| f.name == "doc").and_then(|f| string_value(f, diags));
    let input = required_str(&fields, "input", root, diags);
    let output = required_str(&fields, "output", root, diags);
    let steps_field = fields.iter().find(|f| f.name == "steps");
    let steps = match steps_field {
        None => {
            diags.error(root.start, "pipeline has no `steps` field; add `steps: [Pass(\"...\"), ...]`");
            None
        }
        Some(f) => read_steps(&f.value, "pipeline", diags),
    };
    Some(FileSyntax { name: name?.0, doc, input: input?, output: output?, steps: steps? })
}

/// The fields of a struct, after reporting unknown and duplicate ones.
fn struct_fields<'a>(fields: &'a [Field], known: &[&str], what: &str, diags: &mut Diags) -> Vec<&'a Field> {
    let mut out: Vec<&Field> = Vec::new();
    for f in fields {
        if !known.contains(&f.name.as_str()) {
            let hint = match suggest(&f.name, known.iter().copied()) {
                Some(s) => format!("; did you mean `{s}`?"),
                None => format!(" (expected one of: {})", known.join(", ")),
            };
            diags.error(f.at, format!("unknown field `{}` in {what}{hint}", super::excerpt(&f.name)));
        } else if out.iter().any(|o| o.name == f.name) {
            diags.error(f.at, format!("field `{}` is given twice in {what}", f.name));
        } else {
            out.push(f);
        }
    }
    out
}

fn string_value(f: &Field, diags: &mut Diags) -> Option<String> {
    match f.value.as_str() {
        Some(s) => Some(s.to_string()),
        None => {
            diags.error(f.value.start, format!("field `{}` must be a string, found {}", f.name, f.value.describe()));
            None
        }
    }
}

fn required_str(fields: &[&Field], name: &str, parent: &Node, diags: &mut Diags) -> Option<(String, usize)> {
    match fields.iter().find(|f| f.name == name) {
        Some(f) => string_value(f, diags).map(|s| (s, f.value.start)),
        None => {
            diags.error(parent.start, format!("missing field `{name}`"));
            None
        }
    }
}

fn read_steps(node: &Node, owner: &str, diags: &mut Diags) -> Option<Vec<StepSyntax>> {
    let NodeKind::List(items) = &node.kind else {
        diags.error(node.start, format!("`steps` must be a list `[...]`, found {}", node.describe()));
        return None;
    };
    if items.is_empty() {
        diags.error(node.start, format!("{owner} has no steps; an empty step list does nothing"));
        return None;
    }
    let before = diags.error_count();
    let steps: Vec<StepSyntax> = items.iter().filter_map(|s| read_step(s, diags)).collect();
    (diags.error_count() == before).then_some(steps)
}

fn read_step(node: &Node, diags: &mut Diags) -> Option<StepSyntax> {
    let at = node.start;
    let kind = node.type_name().unwrap_or("");
    match (kind, &node.kind) {
        ("Pass", NodeKind::Tuple { items, .. }) if (1..=2).contains(&items.len()) => {
            let name = items[0].as_str().or_else(|| {
                diags.error(items[0].start, format!("a pass name must be a string, found {}", items[0].describe()));
                None
            })?;
            Some(StepSyntax::Pass { name: name.into(), at, name_at: items[0].start, options: items.get(1).cloned() })
        }
        ("Pass", NodeKind::Struct { fields, .. }) => {
            let fields = struct_fields(fields, &["name", "options"], "`Pass`", diags);
            let name = required_str(&fields, "name", node, diags)?;
            let options = fields.iter().find(|f| f.name == "options").map(|f| f.value.clone());
            Some(StepSyntax::Pass { name: name.0, at, name_at: name.1, options })
        }
        ("Include" | "Hook", NodeKind::Tuple { items, .. }) if items.len() == 1 => {
            let Some(s) = items[0].as_str() else {
                diags.error(items[0].start, format!("`{kind}` takes a string, found {}", items[0].describe()));
                return None;
            };
            Some(if kind == "Include" {
                StepSyntax::Include { target: s.into(), at, target_at: items[0].start }
            } else {
                StepSyntax::Hook { name: s.into(), at, name_at: items[0].start }
            })
        }
        ("OptGroup" | "FixedPoint", NodeKind::Struct { fields, .. }) => {
            let count_field = if kind == "OptGroup" { "min_level" } else { "max_iterations" };
            let fields = struct_fields(fields, &[count_field, "steps"], &format!("`{kind}`"), diags);
            let Some(count) = fields.iter().find(|f| f.name == count_field) else {
                diags.error(at, format!("`{kind}` needs `{count_field}`"));
                return None;
            };
            let n = match &count.value.kind {
                NodeKind::Num(n) => n.replace('_', "").parse::<u64>().ok(),
                _ => None,
            };
            let Some(n) = n else {
                diags.error(
                    count.value.start,
                    format!("`{count_field}` must be a non-negative integer, found {}", count.value.describe()),
                );
                return None;
            };
            let steps = match fields.iter().find(|f| f.name == "steps") {
                Some(f) => read_steps(&f.value, &format!("`{kind}`"), diags)?,
                None => {
                    diags.error(at, format!("`{kind}` needs `steps: [...]`"));
                    return None;
                }
            };
            if kind == "OptGroup" {
                if n > 3 {
                    diags.error(
                        count.value.start,
                        format!("opt-level gate {n} can never open: opt levels are 0..=3, so this group never runs"),
                    );
                    return None;
                }
                Some(StepSyntax::OptGroup { min_level: n as u8, at, steps })
            } else {
                if n == 0 || n > u32::MAX as u64 {
                    diags.error(
                        count.value.start,
                        format!(
                            "`max_iterations` must be between 1 and {}, found {n}; the group would never run",
                            u32::MAX
                        ),
                    );
                    return None;
                }
                Some(StepSyntax::FixedPoint { max_iterations: n as u32, at, steps })
            }
        }
        (k, _) if STEP_KINDS.contains(&k) => {
            let form = match k {
                "Pass" => {
                    "`Pass(\"name\")`, `Pass(\"name\", (option: value))` or `Pass(name: \"name\", options: (...))`"
                }
                "Include" => "`Include(\"name-or-path.ron\")`",
                "Hook" => "`Hook(\"hook_name\")`",
                "OptGroup" => "`OptGroup(min_level: N, steps: [...])`",
                _ => "`FixedPoint(max_iterations: N, steps: [...])`",
            };
            diags.error(at, format!("malformed `{k}` step: write {form}"));
            None
        }
        _ => {
            let found = node.type_name().map(|n| format!("`{}`", super::excerpt(n))).unwrap_or_else(|| node.describe());
            let hint = match node.type_name().and_then(|n| suggest(n, STEP_KINDS.iter().copied())) {
                Some(s) => format!("; did you mean `{s}`?"),
                None => format!(" (a step is one of {})", STEP_KINDS.join(", ")),
            };
            diags.error(at, format!("unknown step kind {found}{hint}"));
            None
        }
    }
}
