//! The `xir-lsp` binary: the language server on standard input and output
//! (what editors start; docs/editors.md).

fn main() {
    let (conn, io) = lsp_server::Connection::stdio();
    let served = xir_lsp::run(&conn);
    drop(conn);
    let joined = io.join();
    if let Err(e) = served {
        eprintln!("xir-lsp: {e}");
        std::process::exit(1);
    }
    if let Err(e) = joined {
        eprintln!("xir-lsp: {e}");
        std::process::exit(1);
    }
}
