//! The `xir-lsp` binary: the language server on standard input and output
//! (what editors start; docs/editors.md). It takes no options but
//! `--help` and `--version`, and `--stdio`, which some clients pass to ask
//! for the only transport it has; anything else is refused, so a user who
//! runs it by hand gets an answer instead of a server waiting on the terminal.

const USAGE: &str = "\
xir-lsp: the language server for XIR text (.xir), pipeline RON files and WGSL/GLSL shaders

Usage: xir-lsp [--stdio]

Speaks the Language Server Protocol on standard input and output; an editor
starts it (docs/editors.md has the Neovim and Helix set-up).

Options:
      --stdio    The transport, standard input and output (the only one; accepted for clients that pass it)
  -h, --help     Print help
  -V, --version  Print version
";

fn main() {
    for arg in std::env::args().skip(1) {
        match arg.as_str() {
            "--stdio" => {}
            "-h" | "--help" => {
                print!("{USAGE}");
                return;
            }
            "-V" | "--version" => {
                println!("xir-lsp {}", env!("CARGO_PKG_VERSION"));
                return;
            }
            other => {
                eprintln!("xir-lsp: error: unexpected argument `{other}`\n\n{USAGE}");
                std::process::exit(2);
            }
        }
    }
    let (conn, io) = lsp_server::Connection::stdio();
    let served = xir_lsp::run(&conn);
    drop(conn);
    // A transport error (a malformed header or message) is why the server
    // saw its channel disconnect: it is the one reported.
    if let Err(e) = io.join() {
        eprintln!("xir-lsp: {e}");
        std::process::exit(1);
    }
    if let Err(e) = served {
        eprintln!("xir-lsp: {e}");
        std::process::exit(1);
    }
}
