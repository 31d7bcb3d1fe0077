//! The protocol as typed by `lsp_types`, and what this crate adds to it: the
//! client capabilities, the capability a request needs, what servers send us
//! parsed once as it arrives ([`ServerNotification`], [`ServerRequest`]), the
//! extensions lsp-types has no type for, and a decoder that takes the URIs
//! real servers write.

use lsp_types::notification::{self as note, Notification};
use lsp_types::request::{self as req, Request};
use lsp_types::{
    ClientCapabilities, Diagnostic, DiagnosticSeverity, NumberOrString, OneOf, PublishDiagnosticsParams,
    ServerCapabilities,
};
use serde::de::{DeserializeOwned, Error as _};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A server's JSON read as `T`. lsp-types' `Uri` takes only what RFC 3986
/// allows, and servers that write URIs with the `url` crate (rust-analyzer,
/// ruff) leave `[`, `]` and `|` bare in paths: a value that does not read is
/// read again with the URIs in it repaired ([`crate::uri::repair`]).
pub(crate) fn decode<T: DeserializeOwned>(value: &Value) -> Result<T, serde_json::Error> {
    match T::deserialize(value) {
        Ok(decoded) => Ok(decoded),
        Err(first) => {
            let mut repaired = value.clone();
            if repair_uris(&mut repaired, false) { T::deserialize(repaired).map_err(|_| first) } else { Err(first) }
        }
    }
}

/// The fields of the protocol whose value is a URI.
const URI_FIELDS: &[&str] = &["uri", "targetUri", "oldUri", "newUri", "baseUri", "scopeUri", "href"];
/// The fields of the protocol that map URIs to values (`WorkspaceEdit.changes`, a report's related documents).
const URI_MAPS: &[&str] = &["changes", "relatedDocuments"];

/// Repairs the URIs under `value` that `lsp_types::Uri` would refuse; true when one was.
fn repair_uris(value: &mut Value, is_uri: bool) -> bool {
    let fix = |text: &str| (text.parse::<lsp_types::Uri>().is_err()).then(|| crate::uri::repair(text));
    match value {
        Value::String(text) if is_uri => match fix(text) {
            Some(repaired) => {
                *text = repaired;
                true
            }
            None => false,
        },
        Value::Array(items) => items.iter_mut().fold(false, |any, item| repair_uris(item, false) | any),
        Value::Object(object) => {
            let mut any = false;
            for (key, field) in object.iter_mut() {
                if URI_MAPS.contains(&key.as_str())
                    && let Value::Object(map) = field
                {
                    let keyed: Map<String, Value> = std::mem::take(map)
                        .into_iter()
                        .map(|(uri, mut v)| {
                            any |= repair_uris(&mut v, false);
                            match fix(&uri) {
                                Some(repaired) => {
                                    any = true;
                                    (repaired, v)
                                }
                                None => (uri, v),
                            }
                        })
                        .collect();
                    *map = keyed;
                } else {
                    any |= repair_uris(field, URI_FIELDS.contains(&key.as_str()));
                }
            }
            any
        }
        _ => false,
    }
}

/// rust-analyzer's `experimental/serverStatus`, its own extension of the protocol.
pub(crate) enum ServerStatus {}

#[derive(Debug, Clone, Deserialize, Serialize)]
pub(crate) struct ServerStatusParams {
    /// `ok`, `warning` or `error`.
    pub health: Option<String>,
    /// Whether it has done all the work it knows of (loaded the project, among others).
    pub quiescent: Option<bool>,
    pub message: Option<String>,
}

impl Notification for ServerStatus {
    type Params = ServerStatusParams;
    const METHOD: &'static str = "experimental/serverStatus";
}

/// `workspace/foldingRange/refresh` (LSP 3.18), which lsp-types 0.97 does not have.
pub(crate) enum FoldingRangeRefresh {}

impl Request for FoldingRangeRefresh {
    type Params = ();
    type Result = ();
    const METHOD: &'static str = "workspace/foldingRange/refresh";
}

/// `initialize`, with the client capabilities under the protocol's names and
/// an answer whose unreadable capabilities are left out, not fatal.
pub(crate) enum Initialize {}

impl Request for Initialize {
    type Params = InitializeParams;
    type Result = InitializeAnswer;
    const METHOD: &'static str = req::Initialize::METHOD;
}

/// `InitializeParams`, written as the protocol names its fields: lsp-types
/// calls `workspace.diagnostics` `diagnostic` (gluon-lang/lsp-types#281).
#[derive(Debug, Clone, Deserialize)]
#[serde(transparent)]
pub(crate) struct InitializeParams(pub lsp_types::InitializeParams);

impl Serialize for InitializeParams {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut value = serde_json::to_value(&self.0).map_err(serde::ser::Error::custom)?;
        if let Some(workspace) = value.pointer_mut("/capabilities/workspace").and_then(Value::as_object_mut)
            && let Some(diagnostics) = workspace.remove("diagnostic")
        {
            workspace.insert("diagnostics".into(), diagnostics);
        }
        value.serialize(serializer)
    }
}

/// `textDocument/diagnostic`, its params written as the protocol's optional
/// fields are: absent, where lsp-types writes `"identifier": null` and
/// `"previousResultId": null`.
pub(crate) enum DocumentDiagnostic {}

impl Request for DocumentDiagnostic {
    type Params = DocumentDiagnosticParams;
    type Result = lsp_types::DocumentDiagnosticReportResult;
    const METHOD: &'static str = req::DocumentDiagnosticRequest::METHOD;
}

#[derive(Debug, Clone, Deserialize)]
#[serde(transparent)]
pub(crate) struct DocumentDiagnosticParams(pub lsp_types::DocumentDiagnosticParams);

impl Serialize for DocumentDiagnosticParams {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut value = serde_json::to_value(&self.0).map_err(serde::ser::Error::custom)?;
        if let Some(fields) = value.as_object_mut() {
            fields.retain(|name, field| {
                !(field.is_null() && ["identifier", "previousResultId"].contains(&name.as_str()))
            });
        }
        value.serialize(serializer)
    }
}

/// The answer to `initialize`.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct InitializeAnswer {
    pub capabilities: ServerCapabilities,
    /// The capabilities lsp-types cannot read, left out (their names).
    #[serde(skip)]
    pub unreadable: Vec<String>,
}

impl<'de> Deserialize<'de> for InitializeAnswer {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let mut answer = Value::deserialize(deserializer)?;
        if !answer.is_object() {
            return Err(D::Error::custom(format!("an InitializeResult is an object, not {answer}")));
        }
        let (capabilities, unreadable) = match answer.get_mut("capabilities").map(Value::take) {
            Some(Value::Object(fields)) => server_capabilities(fields),
            _ => (ServerCapabilities::default(), Vec::new()),
        };
        Ok(InitializeAnswer { capabilities, unreadable })
    }
}

/// A server's capabilities, each field that does not read as the protocol's
/// left out (a server that strays from the protocol in one capability keeps the others).
fn server_capabilities(fields: Map<String, Value>) -> (ServerCapabilities, Vec<String>) {
    if let Ok(capabilities) = decode(&Value::Object(fields.clone())) {
        return (capabilities, Vec::new());
    }
    let mut readable = Map::new();
    let mut unreadable = Vec::new();
    for (name, value) in fields {
        let alone = Value::Object(Map::from_iter([(name.clone(), value.clone())]));
        if decode::<ServerCapabilities>(&alone).is_ok() {
            readable.insert(name, value);
        } else {
            unreadable.push(name);
        }
    }
    (decode(&Value::Object(readable)).unwrap_or_default(), unreadable)
}

/// The client capabilities we declare (LSP 3.17 `ClientCapabilities`);
/// `advertise_pull`: whether we say we pull diagnostics (`textDocument.diagnostic`).
pub(crate) fn client_capabilities(advertise_pull: bool) -> ClientCapabilities {
    use lsp_types::*;
    let goto = || Some(GotoCapability { dynamic_registration: None, link_support: Some(true) });
    let code_action_kinds = [
        "",
        "quickfix",
        "refactor",
        "refactor.extract",
        "refactor.inline",
        "refactor.rewrite",
        "source",
        "source.organizeImports",
        "source.fixAll",
    ];
    ClientCapabilities {
        general: Some(GeneralClientCapabilities {
            position_encodings: Some(vec![PositionEncodingKind::UTF8, PositionEncodingKind::UTF16]),
            ..Default::default()
        }),
        workspace: Some(WorkspaceClientCapabilities {
            configuration: Some(true),
            workspace_folders: Some(true),
            apply_edit: Some(true),
            workspace_edit: Some(WorkspaceEditClientCapabilities {
                document_changes: Some(true),
                resource_operations: Some(vec![
                    ResourceOperationKind::Create,
                    ResourceOperationKind::Rename,
                    ResourceOperationKind::Delete,
                ]),
                failure_handling: Some(FailureHandlingKind::Abort),
                ..Default::default()
            }),
            did_change_watched_files: Some(DidChangeWatchedFilesClientCapabilities {
                dynamic_registration: Some(true),
                relative_pattern_support: None,
            }),
            symbol: Some(WorkspaceSymbolClientCapabilities { dynamic_registration: Some(false), ..Default::default() }),
            diagnostic: Some(DiagnosticWorkspaceClientCapabilities { refresh_support: Some(true) }),
            semantic_tokens: Some(SemanticTokensWorkspaceClientCapabilities { refresh_support: Some(false) }),
            code_lens: Some(CodeLensWorkspaceClientCapabilities { refresh_support: Some(false) }),
            inlay_hint: Some(InlayHintWorkspaceClientCapabilities { refresh_support: Some(false) }),
            ..Default::default()
        }),
        text_document: Some(TextDocumentClientCapabilities {
            synchronization: Some(TextDocumentSyncClientCapabilities {
                dynamic_registration: Some(false),
                did_save: Some(true),
                will_save: Some(false),
                will_save_wait_until: None,
            }),
            publish_diagnostics: Some(PublishDiagnosticsClientCapabilities {
                related_information: Some(false),
                version_support: Some(true),
                code_description_support: Some(true),
                ..Default::default()
            }),
            diagnostic: advertise_pull.then_some(DiagnosticClientCapabilities {
                dynamic_registration: Some(true),
                related_document_support: Some(false),
            }),
            definition: goto(),
            type_definition: goto(),
            implementation: goto(),
            references: Some(ReferenceClientCapabilities::default()),
            hover: Some(HoverClientCapabilities {
                dynamic_registration: None,
                content_format: Some(vec![MarkupKind::Markdown, MarkupKind::PlainText]),
            }),
            document_symbol: Some(DocumentSymbolClientCapabilities {
                hierarchical_document_symbol_support: Some(true),
                ..Default::default()
            }),
            code_action: Some(CodeActionClientCapabilities {
                code_action_literal_support: Some(CodeActionLiteralSupport {
                    code_action_kind: CodeActionKindLiteralSupport {
                        value_set: code_action_kinds.iter().map(|k| k.to_string()).collect(),
                    },
                }),
                is_preferred_support: Some(true),
                disabled_support: Some(true),
                data_support: Some(true),
                resolve_support: Some(CodeActionCapabilityResolveSupport { properties: vec!["edit".into()] }),
                ..Default::default()
            }),
            rename: Some(RenameClientCapabilities { prepare_support: Some(true), ..Default::default() }),
            ..Default::default()
        }),
        window: Some(WindowClientCapabilities {
            work_done_progress: Some(true),
            show_message: Some(ShowMessageRequestClientCapabilities::default()),
            show_document: Some(ShowDocumentClientCapabilities { support: true }),
        }),
        // rust-analyzer's extension: it sends `experimental/serverStatus` ([`ServerStatus`]).
        experimental: Some(serde_json::json!({ "serverStatusNotification": true })),
        ..Default::default()
    }
}

/// A request a server answers only when it says so, in its capabilities or by
/// registering the method later ([`crate::server::Server::supports`]).
pub(crate) trait Provided: Request {
    /// Whether the capabilities the server started with offer it.
    fn provided(capabilities: &ServerCapabilities) -> bool;
}

fn on<T>(capability: &Option<OneOf<bool, T>>) -> bool {
    matches!(capability, Some(OneOf::Left(true) | OneOf::Right(_)))
}

impl Provided for req::GotoDefinition {
    fn provided(capabilities: &ServerCapabilities) -> bool {
        on(&capabilities.definition_provider)
    }
}

impl Provided for req::GotoTypeDefinition {
    fn provided(capabilities: &ServerCapabilities) -> bool {
        use lsp_types::TypeDefinitionProviderCapability::{Options, Simple};
        matches!(capabilities.type_definition_provider, Some(Simple(true) | Options(_)))
    }
}

impl Provided for req::GotoImplementation {
    fn provided(capabilities: &ServerCapabilities) -> bool {
        use lsp_types::ImplementationProviderCapability::{Options, Simple};
        matches!(capabilities.implementation_provider, Some(Simple(true) | Options(_)))
    }
}

impl Provided for req::References {
    fn provided(capabilities: &ServerCapabilities) -> bool {
        on(&capabilities.references_provider)
    }
}

impl Provided for req::Rename {
    fn provided(capabilities: &ServerCapabilities) -> bool {
        on(&capabilities.rename_provider)
    }
}

impl Provided for req::DocumentDiagnosticRequest {
    fn provided(capabilities: &ServerCapabilities) -> bool {
        capabilities.diagnostic_provider.is_some()
    }
}

/// A notification a server sent, parsed as it arrived.
#[derive(Debug)]
pub(crate) enum ServerNotification {
    PublishDiagnostics(PublishDiagnosticsParams),
    Progress(lsp_types::ProgressParams),
    ServerStatus(ServerStatusParams),
    ShowMessage(lsp_types::ShowMessageParams),
    LogMessage(lsp_types::LogMessageParams),
    /// One we do not act on, or one whose params are not its method's: ignored.
    Other(String),
}

impl ServerNotification {
    pub(crate) fn parse(method: &str, params: Value) -> ServerNotification {
        let parsed = match method {
            note::PublishDiagnostics::METHOD => publish_diagnostics(params).map(ServerNotification::PublishDiagnostics),
            // Only work-done progress reads (a partial result's does not): the others are ignored.
            note::Progress::METHOD => decode(&params).ok().map(ServerNotification::Progress),
            ServerStatus::METHOD => decode(&params).ok().map(ServerNotification::ServerStatus),
            note::ShowMessage::METHOD => decode(&params).ok().map(ServerNotification::ShowMessage),
            note::LogMessage::METHOD => decode(&params).ok().map(ServerNotification::LogMessage),
            _ => None,
        };
        parsed.unwrap_or_else(|| ServerNotification::Other(method.to_string()))
    }
}

/// A request a server sent us, parsed as it arrived. Those whose answer does
/// not depend on their params keep none (a server's odd params change nothing).
#[derive(Debug)]
pub(crate) enum ServerRequest {
    Configuration(lsp_types::ConfigurationParams),
    WorkspaceFolders,
    WorkDoneProgressCreate,
    RegisterCapability(lsp_types::RegistrationParams),
    UnregisterCapability(lsp_types::UnregistrationParams),
    /// `workspace/diagnostic/refresh`: its diagnostics are to be asked again.
    DiagnosticRefresh,
    /// The other `workspace/…/refresh` requests, of what we never show.
    Refresh,
    ApplyEdit,
    ShowMessageRequest,
    ShowDocument,
    /// A request of the protocol with params that are not its method's.
    Invalid {
        method: &'static str,
        why: String,
    },
    /// A method we do not know.
    Unknown(String),
}

impl ServerRequest {
    pub(crate) fn parse(method: &str, params: Value) -> ServerRequest {
        fn typed<R: Request>(params: Value, variant: fn(R::Params) -> ServerRequest) -> ServerRequest {
            decode(&params).map_or_else(|e| ServerRequest::Invalid { method: R::METHOD, why: e.to_string() }, variant)
        }
        match method {
            req::WorkspaceConfiguration::METHOD => {
                typed::<req::WorkspaceConfiguration>(params, ServerRequest::Configuration)
            }
            req::WorkspaceFoldersRequest::METHOD => ServerRequest::WorkspaceFolders,
            req::WorkDoneProgressCreate::METHOD => ServerRequest::WorkDoneProgressCreate,
            req::RegisterCapability::METHOD => {
                typed::<req::RegisterCapability>(params, ServerRequest::RegisterCapability)
            }
            req::UnregisterCapability::METHOD => {
                typed::<req::UnregisterCapability>(params, ServerRequest::UnregisterCapability)
            }
            req::WorkspaceDiagnosticRefresh::METHOD => ServerRequest::DiagnosticRefresh,
            req::SemanticTokensRefresh::METHOD
            | req::InlayHintRefreshRequest::METHOD
            | req::InlineValueRefreshRequest::METHOD
            | req::CodeLensRefresh::METHOD
            | FoldingRangeRefresh::METHOD => ServerRequest::Refresh,
            req::ApplyWorkspaceEdit::METHOD => ServerRequest::ApplyEdit,
            req::ShowMessageRequest::METHOD => ServerRequest::ShowMessageRequest,
            req::ShowDocument::METHOD => ServerRequest::ShowDocument,
            _ => ServerRequest::Unknown(method.to_string()),
        }
    }
}

/// `textDocument/publishDiagnostics`' params. A diagnostic lsp-types cannot
/// read is kept as far as it reads ([`loose_diagnostic`]), not dropped with its publication.
fn publish_diagnostics(params: Value) -> Option<PublishDiagnosticsParams> {
    #[derive(Deserialize)]
    struct Loose {
        uri: lsp_types::Uri,
        diagnostics: Vec<Value>,
        version: Option<i32>,
    }
    if let Ok(params) = decode(&params) {
        return Some(params);
    }
    let loose: Loose = decode(&params).ok()?;
    let diagnostics = loose.diagnostics.into_iter().filter_map(loose_diagnostic).collect();
    Some(PublishDiagnosticsParams { uri: loose.uri, diagnostics, version: loose.version })
}

/// A diagnostic; one lsp-types cannot read is read as far as it can be: its
/// range (without which it is dropped), severity, code, source and message.
pub(crate) fn loose_diagnostic(value: Value) -> Option<Diagnostic> {
    if let Ok(diagnostic) = decode(&value) {
        return Some(diagnostic);
    }
    let range = decode(value.get("range")?).ok()?;
    let text = |key: &str| value.get(key).and_then(Value::as_str).map(str::to_string);
    let code = match value.get("code") {
        Some(Value::String(s)) => Some(NumberOrString::String(s.clone())),
        Some(Value::Number(n)) => Some(match n.as_i64().and_then(|n| i32::try_from(n).ok()) {
            Some(n) => NumberOrString::Number(n),
            None => NumberOrString::String(n.to_string()),
        }),
        _ => None,
    };
    let severity = match value.get("severity").and_then(Value::as_i64) {
        Some(1) => Some(DiagnosticSeverity::ERROR),
        Some(2) => Some(DiagnosticSeverity::WARNING),
        Some(3) => Some(DiagnosticSeverity::INFORMATION),
        Some(4) => Some(DiagnosticSeverity::HINT),
        _ => None,
    };
    tracing::debug!(%value, "a diagnostic lsp-types cannot read, read loosely");
    Some(Diagnostic {
        range,
        severity,
        code,
        source: text("source"),
        message: text("message").unwrap_or_default(),
        ..Default::default()
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// The capabilities as this crate declared them in JSON before they were typed.
    fn declared_before(advertise_pull: bool) -> Value {
        let mut capabilities = json!({
            "general": { "positionEncodings": ["utf-8", "utf-16"] },
            "workspace": {
                "configuration": true,
                "workspaceFolders": true,
                "applyEdit": true,
                "workspaceEdit": {
                    "documentChanges": true,
                    "resourceOperations": ["create", "rename", "delete"],
                    "failureHandling": "abort"
                },
                "didChangeWatchedFiles": { "dynamicRegistration": true },
                "symbol": { "dynamicRegistration": false },
                "diagnostics": { "refreshSupport": true },
                "semanticTokens": { "refreshSupport": false },
                "codeLens": { "refreshSupport": false },
                "inlayHint": { "refreshSupport": false }
            },
            "textDocument": {
                "synchronization": { "dynamicRegistration": false, "didSave": true, "willSave": false },
                "publishDiagnostics": { "relatedInformation": false, "versionSupport": true, "codeDescriptionSupport": true },
                "diagnostic": { "dynamicRegistration": true, "relatedDocumentSupport": false },
                "definition": { "linkSupport": true },
                "typeDefinition": { "linkSupport": true },
                "implementation": { "linkSupport": true },
                "references": {},
                "hover": { "contentFormat": ["markdown", "plaintext"] },
                "documentSymbol": { "hierarchicalDocumentSymbolSupport": true },
                "codeAction": {
                    "codeActionLiteralSupport": { "codeActionKind": { "valueSet": [
                        "", "quickfix", "refactor", "refactor.extract", "refactor.inline", "refactor.rewrite",
                        "source", "source.organizeImports", "source.fixAll"
                    ] } },
                    "isPreferredSupport": true,
                    "disabledSupport": true,
                    "dataSupport": true,
                    "resolveSupport": { "properties": ["edit"] }
                },
                "rename": { "prepareSupport": true }
            },
            "window": { "workDoneProgress": true, "showMessage": {}, "showDocument": { "support": true } },
            "experimental": { "serverStatusNotification": true }
        });
        if !advertise_pull
            && let Some(text_document) = capabilities.get_mut("textDocument").and_then(Value::as_object_mut)
        {
            text_document.remove("diagnostic");
        }
        capabilities
    }

    #[test]
    fn the_client_capabilities_are_written_as_they_were_declared() -> anyhow::Result<()> {
        for pull in [true, false] {
            let params = InitializeParams(lsp_types::InitializeParams {
                capabilities: client_capabilities(pull),
                ..Default::default()
            });
            let written = serde_json::to_value(&params)?;
            assert_eq!(written["capabilities"], declared_before(pull), "advertise_pull {pull}");
        }
        Ok(())
    }

    #[test]
    fn a_pull_is_written_without_the_fields_it_leaves_out() -> anyhow::Result<()> {
        let uri = crate::uri::file_uri(std::path::Path::new("/tmp/a.rs"));
        let params = DocumentDiagnosticParams(lsp_types::DocumentDiagnosticParams {
            text_document: lsp_types::TextDocumentIdentifier { uri },
            identifier: None,
            previous_result_id: None,
            work_done_progress_params: Default::default(),
            partial_result_params: Default::default(),
        });
        assert_eq!(serde_json::to_value(params)?, json!({ "textDocument": { "uri": "file:///tmp/a.rs" } }));
        Ok(())
    }

    #[test]
    fn a_capability_that_strays_from_the_protocol_leaves_the_others() -> anyhow::Result<()> {
        let answer: InitializeAnswer = serde_json::from_value(json!({ "capabilities": {
            "definitionProvider": true,
            "diagnosticProvider": true,
            "positionEncoding": "utf-8",
        } }))?;
        assert!(req::GotoDefinition::provided(&answer.capabilities));
        assert!(!req::DocumentDiagnosticRequest::provided(&answer.capabilities));
        assert_eq!(answer.capabilities.position_encoding, Some(lsp_types::PositionEncodingKind::UTF8));
        assert_eq!(answer.unreadable, ["diagnosticProvider"]);
        let none: InitializeAnswer = serde_json::from_value(json!({}))?;
        assert!(!req::References::provided(&none.capabilities));
        Ok(())
    }

    #[test]
    fn uris_url_leaves_bare_are_read_and_an_odd_diagnostic_is_kept() -> anyhow::Result<()> {
        // rust-analyzer writes a path's `[` as it is.
        let published = ServerNotification::parse(
            note::PublishDiagnostics::METHOD,
            json!({ "uri": "file:///w/app/[id]/a.rs", "diagnostics": [
                { "range": { "start": { "line": 0, "character": 1 }, "end": { "line": 0, "character": 2 } },
                  "message": "m", "severity": 2, "relatedInformation": [{ "location": {
                      "uri": "file:///w/[x].rs", "range": { "start": { "line": 0, "character": 0 }, "end": { "line": 0, "character": 0 } } },
                      "message": "here" }] },
                { "range": { "start": { "line": 1, "character": 0 }, "end": { "line": 1, "character": 0 } },
                  "code": 1.5, "message": { "kind": "markdown", "value": "odd" } },
                { "message": "no range" }
            ] }),
        );
        let ServerNotification::PublishDiagnostics(params) = published else { anyhow::bail!("{published:?}") };
        assert_eq!(crate::uri::uri_path(&params.uri), Some("/w/app/[id]/a.rs".into()));
        assert_eq!(params.diagnostics.len(), 2);
        assert_eq!(params.diagnostics[0].severity, Some(DiagnosticSeverity::WARNING));
        assert_eq!(params.diagnostics[1].code, Some(NumberOrString::String("1.5".into())));
        assert_eq!(params.diagnostics[1].message, "");

        let edit: lsp_types::WorkspaceEdit = decode(&json!({ "changes": { "file:///w/[id].rs": [] } }))?;
        let uri = edit.changes.and_then(|c| c.into_keys().next());
        assert_eq!(uri.as_ref().and_then(crate::uri::uri_path), Some("/w/[id].rs".into()));
        Ok(())
    }

    #[test]
    fn what_a_server_sends_is_parsed_by_method() {
        let request = |method: &str, params: Value| ServerRequest::parse(method, params);
        assert!(matches!(request(req::WorkspaceFoldersRequest::METHOD, Value::Null), ServerRequest::WorkspaceFolders));
        assert!(matches!(request(FoldingRangeRefresh::METHOD, Value::Null), ServerRequest::Refresh));
        assert!(matches!(
            request(req::WorkspaceConfiguration::METHOD, json!({ "items": 3 })),
            ServerRequest::Invalid { method, .. } if method == req::WorkspaceConfiguration::METHOD
        ));
        assert!(matches!(request("fixture/unknown", Value::Null), ServerRequest::Unknown(m) if m == "fixture/unknown"));
        let status = ServerNotification::parse(ServerStatus::METHOD, json!({ "health": "ok", "quiescent": true }));
        assert!(matches!(status, ServerNotification::ServerStatus(ServerStatusParams { quiescent: Some(true), .. })));
        // A partial result's progress is not work-done progress.
        let partial = ServerNotification::parse(note::Progress::METHOD, json!({ "token": "t", "value": [1] }));
        assert!(matches!(partial, ServerNotification::Other(_)));
    }
}
