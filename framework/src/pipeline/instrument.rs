//! Instrumentation of pipeline runs: the `--time-passes` table, IR printing
//! around passes and the `--print-changed` diff (via `similar`).

use std::{fmt::Write as _, time::Duration};

use super::Loc;

/// Timing of one pass step over all its executions (fixed-point groups run a
/// step several times).
#[derive(Clone, Debug)]
pub struct TimingRow {
    pub name: String,
    pub loc: Loc,
    pub runs: usize,
    pub wall: Duration,
    /// Live instructions before the first and after the last execution.
    pub insts_before: usize,
    pub insts_after: usize,
    /// `PassOutcome::stats`: integer values are summed over executions,
    /// others keep the last value (an e-graph stop reason, ...).
    pub stats: Vec<(String, String)>,
}

impl TimingRow {
    pub fn add_stats(&mut self, stats: &[(String, String)]) {
        for (k, v) in stats {
            match self.stats.iter_mut().find(|(kk, _)| kk == k) {
                Some((_, old)) => {
                    *old = match (old.parse::<i64>(), v.parse::<i64>()) {
                        (Ok(a), Ok(b)) => (a + b).to_string(),
                        _ => v.clone(),
                    }
                }
                None => self.stats.push((k.clone(), v.clone())),
            }
        }
    }
}

/// The `--time-passes` table: wall time, share of the total, runs, IR size
/// before and after, and the passes' statistics.
pub fn timing_table(rows: &[TimingRow]) -> String {
    let total: Duration = rows.iter().map(|r| r.wall).sum();
    let total_s = total.as_secs_f64();
    let mut out = String::new();
    let _ = writeln!(out, "===== pass execution timing report =====");
    let _ = writeln!(
        out,
        "{:>12} {:>7} {:>5} {:>10} {:>10}  pass (step) and statistics",
        "wall (ms)", "%", "runs", "insts in", "insts out"
    );
    let mut sorted: Vec<&TimingRow> = rows.iter().collect();
    sorted.sort_by(|a, b| b.wall.cmp(&a.wall).then(a.loc.line.cmp(&b.loc.line)));
    for r in sorted {
        let pct = if total_s > 0.0 { 100.0 * r.wall.as_secs_f64() / total_s } else { 0.0 };
        let stats = if r.stats.is_empty() {
            String::new()
        } else {
            format!("  [{}]", r.stats.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(", "))
        };
        let _ = writeln!(
            out,
            "{:>12.3} {:>6.1}% {:>5} {:>10} {:>10}  {} ({}){stats}",
            r.wall.as_secs_f64() * 1e3,
            pct,
            r.runs,
            r.insts_before,
            r.insts_after,
            r.name,
            r.loc
        );
    }
    let runs: usize = rows.iter().map(|r| r.runs).sum();
    let _ = writeln!(out, "{:>12.3} {:>6.1}% {:>5}  total", total_s * 1e3, 100.0, runs);
    out
}

/// A unified diff of two printings of the module.
pub fn unified_diff(before: &str, after: &str, pass: &str) -> String {
    similar::TextDiff::from_lines(before, after)
        .unified_diff()
        .context_radius(3)
        .header(&format!("before {pass}"), &format!("after {pass}"))
        .to_string()
}
