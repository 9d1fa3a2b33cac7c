//! The server: the LSP handshake (capabilities, position encoding), the
//! open documents, and the dispatch of requests and notifications to the
//! capability modules. Synchronous: one message at a time, each answered
//! before the next is read. A handler that panics answers an internal error
//! for that request and the server goes on (the capabilities are written not
//! to panic; this is the second line).

use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;

use lsp_server::{Connection, ErrorCode, Message, Notification, Request, Response};
use lsp_types::notification::{self as notif, Notification as _};
use lsp_types::request::{self as req, Request as _};
use lsp_types::*;
use serde_json::{json, Value};

use crate::document::{uri_to_path, Context, Document};
use crate::position::Encoding;
use crate::{actions, commands, definition, diagnostics, format, hover, semantic, symbols};

pub type Error = Box<dyn std::error::Error + Send + Sync>;

pub struct Server {
    pub docs: HashMap<Uri, Document>,
    pub cx: Context,
    pub encoding: Encoding,
}

/// The capabilities this server announces.
pub fn capabilities(encoding: Encoding) -> ServerCapabilities {
    ServerCapabilities {
        position_encoding: Some(PositionEncodingKind::from(encoding.name().to_string())),
        text_document_sync: Some(TextDocumentSyncCapability::Options(TextDocumentSyncOptions {
            open_close: Some(true),
            change: Some(TextDocumentSyncKind::FULL),
            save: Some(TextDocumentSyncSaveOptions::Supported(true)),
            ..Default::default()
        })),
        hover_provider: Some(HoverProviderCapability::Simple(true)),
        definition_provider: Some(OneOf::Left(true)),
        references_provider: Some(OneOf::Left(true)),
        document_symbol_provider: Some(OneOf::Left(true)),
        document_formatting_provider: Some(OneOf::Left(true)),
        code_action_provider: Some(CodeActionProviderCapability::Simple(true)),
        semantic_tokens_provider: Some(SemanticTokensServerCapabilities::SemanticTokensOptions(
            SemanticTokensOptions {
                legend: semantic::legend(),
                full: Some(SemanticTokensFullOptions::Bool(true)),
                ..Default::default()
            },
        )),
        execute_command_provider: Some(ExecuteCommandOptions {
            commands: commands::ALL.iter().map(|c| c.to_string()).collect(),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// Serve `conn` until the client shuts down.
pub fn run(conn: &Connection) -> Result<(), Error> {
    let (id, params) = conn.initialize_start()?;
    let init: InitializeParams = serde_json::from_value(params).unwrap_or_default();
    let offered: Vec<String> = init
        .capabilities
        .general
        .as_ref()
        .and_then(|g| g.position_encodings.as_ref())
        .map(|e| e.iter().map(|k| k.as_str().to_string()).collect())
        .unwrap_or_default();
    let encoding = Encoding::negotiate(&offered);
    let mut roots: Vec<PathBuf> = Vec::new();
    for f in init.workspace_folders.iter().flatten() {
        roots.extend(uri_to_path(&f.uri));
    }
    #[allow(deprecated)] // Clients such as Neovim 0.7 still send only `rootUri`.
    roots.extend(init.root_uri.as_ref().and_then(uri_to_path));
    // The workspace this server was built in: pass sources and shipped
    // pipelines for go-to-definition when the editor's folder is elsewhere.
    roots.push(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".."));
    let result = json!({
        "capabilities": capabilities(encoding),
        "serverInfo": { "name": "xir-lsp", "version": env!("CARGO_PKG_VERSION") },
    });
    conn.initialize_finish(id, result)?;
    let mut server = Server { docs: HashMap::new(), cx: Context::new(roots), encoding };
    // After `shutdown` only `exit` ends the loop; a repeated `shutdown`
    // (Neovim sends one from `stop_client` and another when it quits) is
    // answered again, any other request refused.
    let mut shut_down = false;
    for msg in &conn.receiver {
        match msg {
            Message::Request(r) => {
                let id = r.id.clone();
                if r.method == req::Shutdown::METHOD {
                    shut_down = true;
                    conn.sender.send(Response::new_ok(id, Value::Null).into())?;
                    continue;
                }
                if shut_down {
                    let refused = Response::new_err(id, ErrorCode::InvalidRequest as i32, "xir-lsp: shut down".into());
                    conn.sender.send(refused.into())?;
                    continue;
                }
                let resp = match catch_unwind(AssertUnwindSafe(|| server.request(r))) {
                    Ok(Ok(v)) => Response::new_ok(id, v),
                    Ok(Err((code, m))) => Response::new_err(id, code as i32, m),
                    Err(_) => Response::new_err(id, ErrorCode::InternalError as i32, "xir-lsp: internal error".into()),
                };
                conn.sender.send(resp.into())?;
            }
            Message::Notification(n) => {
                if n.method == notif::Exit::METHOD {
                    return Ok(());
                }
                let published = catch_unwind(AssertUnwindSafe(|| server.notification(n))).unwrap_or_default();
                for p in published {
                    conn.sender.send(p.into())?;
                }
            }
            Message::Response(_) => {}
        }
    }
    Ok(())
}

type Answer = Result<Value, (ErrorCode, String)>;

fn params<P: serde::de::DeserializeOwned>(r: &Request) -> Result<P, (ErrorCode, String)> {
    serde_json::from_value(r.params.clone()).map_err(|e| (ErrorCode::InvalidParams, e.to_string()))
}

fn to_value<T: serde::Serialize>(v: T) -> Answer {
    serde_json::to_value(v).map_err(|e| (ErrorCode::InternalError, e.to_string()))
}

impl Server {
    pub fn request(&mut self, r: Request) -> Answer {
        let cx = &mut self.cx;
        match r.method.as_str() {
            req::HoverRequest::METHOD => {
                let p: HoverParams = params(&r)?;
                let pos = p.text_document_position_params;
                to_value(self.docs.get(&pos.text_document.uri).and_then(|d| hover::hover(d, cx, pos.position)))
            }
            req::GotoDefinition::METHOD => {
                let p: GotoDefinitionParams = params(&r)?;
                let pos = p.text_document_position_params;
                let loc =
                    self.docs.get(&pos.text_document.uri).and_then(|d| definition::definition(d, cx, pos.position));
                to_value(loc.map(GotoDefinitionResponse::Scalar))
            }
            req::References::METHOD => {
                let p: ReferenceParams = params(&r)?;
                let pos = p.text_document_position;
                let refs = self
                    .docs
                    .get(&pos.text_document.uri)
                    .map(|d| definition::references(d, pos.position, p.context.include_declaration));
                to_value(refs)
            }
            req::DocumentSymbolRequest::METHOD => {
                let p: DocumentSymbolParams = params(&r)?;
                let s = self.docs.get(&p.text_document.uri).map(symbols::document_symbols);
                to_value(s.map(DocumentSymbolResponse::Nested))
            }
            req::SemanticTokensFullRequest::METHOD => {
                let p: SemanticTokensParams = params(&r)?;
                let t = self.docs.get(&p.text_document.uri).map(|d| {
                    SemanticTokensResult::Tokens(SemanticTokens { result_id: None, data: semantic::semantic_tokens(d) })
                });
                to_value(t)
            }
            req::Formatting::METHOD => {
                let p: DocumentFormattingParams = params(&r)?;
                match self.docs.get(&p.text_document.uri).map(format::format) {
                    None => to_value(Value::Null),
                    Some(Ok(edits)) => to_value(edits),
                    Some(Err(why)) => Err((ErrorCode::RequestFailed, why.to_string())),
                }
            }
            req::CodeActionRequest::METHOD => {
                let p: CodeActionParams = params(&r)?;
                to_value(self.docs.get(&p.text_document.uri).map(|d| actions::code_actions(d, p.range)))
            }
            req::ExecuteCommand::METHOD => {
                let p: ExecuteCommandParams = params(&r)?;
                let bad = |m: String| (ErrorCode::InvalidParams, m);
                let arg = p.arguments.into_iter().next().ok_or_else(|| bad("one argument object expected".into()))?;
                let args: commands::Args = serde_json::from_value(arg).map_err(|e| bad(e.to_string()))?;
                let doc =
                    self.docs.get(&args.uri).ok_or_else(|| bad(format!("`{}` is not open", args.uri.as_str())))?;
                let failed = |m: String| (ErrorCode::RequestFailed, m);
                match p.command.as_str() {
                    commands::SHOW_XIR_AFTER => commands::show_xir_after(doc, cx, &args).map_err(failed),
                    commands::SPIRV_DISASSEMBLY => commands::spirv_disassembly(doc, cx, &args).map_err(failed),
                    c => Err(bad(format!("unknown command `{c}`"))),
                }
            }
            m => Err((ErrorCode::MethodNotFound, format!("xir-lsp does not handle `{m}`"))),
        }
    }

    /// Handle a notification; returns the diagnostics to publish.
    pub fn notification(&mut self, n: Notification) -> Vec<Notification> {
        let uri = match n.method.as_str() {
            notif::DidOpenTextDocument::METHOD => {
                let Ok(p) = serde_json::from_value::<DidOpenTextDocumentParams>(n.params) else { return Vec::new() };
                let d = p.text_document;
                let doc = Document::new(d.uri.clone(), d.text, d.version, self.encoding, &mut self.cx);
                self.docs.insert(d.uri.clone(), doc);
                d.uri
            }
            notif::DidChangeTextDocument::METHOD => {
                let Ok(p) = serde_json::from_value::<DidChangeTextDocumentParams>(n.params) else { return Vec::new() };
                let uri = p.text_document.uri;
                let Some(old) = self.docs.get(&uri) else { return Vec::new() };
                let mut text = old.text.clone();
                for c in p.content_changes {
                    match c.range {
                        None => text = c.text,
                        Some(r) => {
                            let ix = crate::position::LineIndex::new(&text, self.encoding);
                            let (a, b) = (ix.offset(&text, r.start), ix.offset(&text, r.end));
                            text.replace_range(a.min(b)..b.max(a), &c.text);
                        }
                    }
                }
                let doc = Document::new(uri.clone(), text, p.text_document.version, self.encoding, &mut self.cx);
                self.docs.insert(uri.clone(), doc);
                uri
            }
            notif::DidSaveTextDocument::METHOD => {
                let Ok(p) = serde_json::from_value::<DidSaveTextDocumentParams>(n.params) else { return Vec::new() };
                let Some(doc) = self.docs.get(&p.text_document.uri) else { return Vec::new() };
                let saved = diagnostics::on_save(doc, &mut self.cx);
                if let Some(doc) = self.docs.get_mut(&p.text_document.uri) {
                    doc.saved = saved;
                }
                p.text_document.uri
            }
            notif::DidCloseTextDocument::METHOD => {
                let Ok(p) = serde_json::from_value::<DidCloseTextDocumentParams>(n.params) else { return Vec::new() };
                if let Some(doc) = self.docs.remove(&p.text_document.uri) {
                    self.cx.workspace.remove_file(&doc.display);
                }
                let clear =
                    PublishDiagnosticsParams { uri: p.text_document.uri, diagnostics: Vec::new(), version: None };
                return vec![Notification::new(notif::PublishDiagnostics::METHOD.to_string(), clear)];
            }
            _ => return Vec::new(),
        };
        self.publish(&uri).into_iter().collect()
    }

    fn publish(&self, uri: &Uri) -> Option<Notification> {
        let doc = self.docs.get(uri)?;
        let diagnostics = diagnostics::all(doc).map(|d| diagnostics::to_lsp(doc, d)).collect();
        let p = PublishDiagnosticsParams { uri: uri.clone(), diagnostics, version: Some(doc.version) };
        Some(Notification::new(notif::PublishDiagnostics::METHOD.to_string(), p))
    }
}
