//! A test client: the server on one end of lsp-server's in-memory
//! connection, in a thread, and helpers that send requests and
//! notifications and wait for the answers and published diagnostics.

use std::time::Duration;

use lsp_server::{Connection, Message, Notification, Request, RequestId, Response};
use serde_json::{json, Value};

pub struct Client {
    conn: Connection,
    next: i32,
    thread: Option<std::thread::JoinHandle<()>>,
    /// Notifications received while waiting for something else.
    pub pending: Vec<Notification>,
}

pub const TIMEOUT: Duration = Duration::from_secs(120);

impl Client {
    /// A started server; `encodings` is what the client offers.
    pub fn start(encodings: &[&str]) -> Client {
        let (server, conn) = Connection::memory();
        let thread = std::thread::spawn(move || {
            xir_lsp::run(&server).expect("the server ends cleanly");
        });
        let mut c = Client { conn, next: 0, thread: Some(thread), pending: Vec::new() };
        let init = c.request(
            "initialize",
            json!({ "capabilities": { "general": { "positionEncodings": encodings } }, "rootUri": null }),
        );
        assert!(init["capabilities"]["hoverProvider"].as_bool().unwrap_or(false), "{init}");
        c.notify("initialized", json!({}));
        c
    }

    pub fn notify(&mut self, method: &str, params: Value) {
        self.conn.sender.send(Message::Notification(Notification::new(method.to_string(), params))).unwrap();
    }

    /// The response to a request (its `result`, or its `error` as `{"error": ...}`).
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        let id = RequestId::from(self.next);
        self.conn.sender.send(Message::Request(Request::new(id.clone(), method.to_string(), params))).unwrap();
        loop {
            match self.conn.receiver.recv_timeout(TIMEOUT).expect("the server answers") {
                Message::Response(Response { id: rid, response_result, .. }) if rid == id => {
                    return match response_result {
                        Ok(v) => v,
                        Err(e) => json!({ "error": { "code": e.code, "message": e.message } }),
                    };
                }
                Message::Notification(n) => self.pending.push(n),
                other => panic!("unexpected message {other:?}"),
            }
        }
    }

    /// The next diagnostics published for `uri`.
    pub fn diagnostics(&mut self, uri: &str) -> Vec<Value> {
        let take = |n: &Notification| {
            (n.method == "textDocument/publishDiagnostics" && n.params["uri"] == uri)
                .then(|| n.params["diagnostics"].as_array().cloned().unwrap_or_default())
        };
        if let Some(k) = self.pending.iter().position(|n| take(n).is_some()) {
            let n = self.pending.remove(k);
            return take(&n).unwrap();
        }
        loop {
            match self.conn.receiver.recv_timeout(TIMEOUT).expect("diagnostics are published") {
                Message::Notification(n) => match take(&n) {
                    Some(d) => return d,
                    None => self.pending.push(n),
                },
                other => panic!("unexpected message {other:?}"),
            }
        }
    }

    /// Open a document and return its first diagnostics.
    pub fn open(&mut self, uri: &str, text: &str) -> Vec<Value> {
        self.notify(
            "textDocument/didOpen",
            json!({ "textDocument": { "uri": uri, "languageId": "xir", "version": 1, "text": text } }),
        );
        self.diagnostics(uri)
    }

    /// Shut down and check that the server thread ended without a panic.
    pub fn shutdown(mut self) {
        let r = self.request("shutdown", Value::Null);
        assert_eq!(r, Value::Null);
        self.notify("exit", Value::Null);
        self.thread.take().unwrap().join().expect("the server thread did not panic");
    }
}

/// `line`/`character` of the first `needle` in `text` (UTF-16 columns),
/// shifted `delta` characters.
#[allow(dead_code)] // Not every test binary that includes this module asks for positions.
pub fn pos(text: &str, needle: &str, delta: usize) -> Value {
    let at = text.find(needle).unwrap_or_else(|| panic!("`{needle}` not in the text"));
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let line = text[..at].matches('\n').count();
    let col: usize = text[line_start..at].encode_utf16().count() + delta;
    json!({ "line": line, "character": col })
}

pub fn workspace() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}
