//! How the drivers print diagnostics: `--diagnostics=human|short|json`
//! (docs/diagnostics.md). One [`Reporter`] per run holds the chosen format
//! and the source texts the human and JSON forms read (input files from
//! disk on first use, shipped pipelines from the binary), so every error
//! path of `xir-opt` and `xir-run` prints the same way.

use xir::diag::{render_as, Diagnostic, Format, Sources};
use xir::pipeline::{LoadFailure, PipelineDiag, RunError};

/// The `--diagnostics` values.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum DiagnosticsFormat {
    /// rustc-like: the source line with a caret, labels, notes, `help:` fixes.
    #[default]
    Human,
    /// One line each: `file:line:col: error: [rule] message (in @f, ^bb, inst)`.
    Short,
    /// One JSON object per line (docs/diagnostics.md has the schema).
    Json,
}

impl From<DiagnosticsFormat> for Format {
    fn from(f: DiagnosticsFormat) -> Format {
        match f {
            DiagnosticsFormat::Human => Format::Human,
            DiagnosticsFormat::Short => Format::Short,
            DiagnosticsFormat::Json => Format::Json,
        }
    }
}

/// Renders diagnostics in one format with the run's source texts.
pub struct Reporter {
    pub format: Format,
    pub sources: Sources,
}

impl Reporter {
    pub fn new(format: impl Into<Format>) -> Self {
        let sources = Sources::new();
        for (name, text) in crate::SHIPPED {
            sources.add(format!("pipelines/{name}.ron"), *text);
        }
        Reporter { format: format.into(), sources }
    }

    pub fn render(&self, diags: &[Diagnostic]) -> String {
        if let Some(text) = crate::io::stdin_text() {
            // Named `<stdin>` (io::display_name), which no file on disk is.
            self.sources.add(crate::io::display_name("-"), &*text);
        }
        render_as(self.format, diags, &self.sources)
    }

    /// Diagnostics about `input`: those without a file get its name.
    pub fn render_for(&self, diags: &[Diagnostic], input: &str) -> String {
        let named: Vec<Diagnostic> = diags
            .iter()
            .map(|d| if d.file.is_some() { d.clone() } else { d.clone().with_file(crate::io::display_name(input)) })
            .collect();
        self.render(&named)
    }

    /// A pipeline that did not load. The short form is the loader's own
    /// text (`file.ron:line:col: error: message`).
    pub fn load_failure(&self, f: &LoadFailure) -> String {
        match self.format {
            Format::Short => f.to_string(),
            _ => self.render(&f.diagnostics.iter().map(|d| d.to_diagnostic()).collect::<Vec<_>>()),
        }
    }

    /// A loaded pipeline's lint findings that `keep` selects. The short
    /// form is the loader's own text, as for [`Reporter::load_failure`].
    pub fn pipeline_warnings(&self, found: &[PipelineDiag], keep: impl Fn(&PipelineDiag) -> bool) -> String {
        let kept: Vec<&PipelineDiag> = found.iter().filter(|w| keep(w)).collect();
        match self.format {
            Format::Short => kept.iter().map(|w| format!("{w}\n")).collect(),
            _ => self.render(&kept.iter().map(|w| w.to_diagnostic()).collect::<Vec<_>>()),
        }
    }

    /// A pass failure; its diagnostics without a file get `input`'s name.
    /// The short form is the pass manager's own text.
    pub fn run_error(&self, e: &mut RunError, input: &str) -> String {
        for d in e.diagnostics.iter_mut().filter(|d| d.file.is_none()) {
            d.file = Some(crate::io::display_name(input).to_string());
        }
        match self.format {
            Format::Short => e.to_string(),
            _ => self.render(&e.to_diagnostics()),
        }
    }
}
