//! Drive an edit loop as an editor would: each keystroke-sized edit of a
//! module is handed to a `Workspace`, which answers with diagnostics (in
//! the file's coordinates) and, once the module is clean, the kernel's
//! SPIR-V, recompiling only what the edit can affect. Run with `cargo run
//! -p xir-pipelines --example edit_loop`; `pipelines/tests/examples.rs`
//! runs it in the test suite.

use xir_pipelines::workspace::{Workspace, WorkspaceError};

fn module(leaf_body: &str) -> String {
    let mut text = String::new();
    for i in 0..50 {
        let body = if i == 25 { leaf_body.to_string() } else { format!("%y = mul %x, f32 {i}.0 : f32") };
        text.push_str(&format!("callable @leaf{i}(%x: f32) -> f32 {{\n^entry:\n  {body}\n  return %y\n}}\n\n"));
    }
    text.push_str(
        "kernel @main(%out: buffer<f32>) block_size(1, 1, 1) {\n^entry:\n  \
         %v = call @leaf25, f32 2.0 : f32\n  buffer.write %out, u32 0, %v\n  return\n}\n",
    );
    text
}

pub fn main() -> Result<(), WorkspaceError> {
    let mut ws = Workspace::new();
    let edits = [
        "%y = mul %x, f32 25.0 : f32",
        // Mid-edit: an opcode being typed.
        "%y = mu %x, f32 25.0 : f32",
        "%y = mul %x, f32 26.0 : f32",
    ];
    for (version, body) in edits.iter().enumerate() {
        ws.set_file("loop.xir", &module(body));
        let diags = ws.diagnostics("loop.xir")?;
        if !diags.is_empty() {
            // leaf25 starts on line 151 (six lines a leaf); its body is its third line.
            print!("version {version}: {}", xir::diag::render_short(&diags));
            assert_eq!(diags[0].span.map(|s| s.line), Some(153));
            continue;
        }
        let words = ws.spirv("loop.xir", "main", "spirv")?;
        // What the version recompiled: the edited leaf's caller, nothing else.
        let session = ws.session_for("loop.xir", "spirv", None)?;
        let linked: Vec<String> = session.take_executed().into_iter().filter(|q| q.starts_with("linked(")).collect();
        println!("version {version}: {} SPIR-V words; compiled {linked:?}", words.len());
        if version > 0 {
            assert_eq!(linked, ["linked(@main)"]);
        }
    }
    Ok(())
}
