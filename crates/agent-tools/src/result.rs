//! What a tool call returns: text for the model, images, and a structured value
//! for programs.

use serde::Serialize;

/// An image a tool produced (a kernel's figure, for instance).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Image {
    /// MIME type, e.g. `image/png`.
    pub mime: String,
    /// The image bytes, base64-encoded.
    pub data_base64: String,
}

/// The result of one tool call.
///
/// Errors a model should read (bad arguments, nothing usable, a refused call)
/// are results with `is_error` set; "nothing found" is a success.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ToolResult {
    /// Text for the model.
    pub text: String,
    /// Images, in order.
    pub images: Vec<Image>,
    /// A JSON value for programs (and MCP `structuredContent`).
    pub structured: Option<serde_json::Value>,
    /// Whether the call failed in a way the model should read.
    pub is_error: bool,
}

impl ToolResult {
    /// A successful result with text only.
    pub fn text(text: impl Into<String>) -> ToolResult {
        ToolResult { text: text.into(), ..ToolResult::default() }
    }

    /// An error result with a message for the model.
    pub fn error(message: impl Into<String>) -> ToolResult {
        ToolResult { text: message.into(), is_error: true, ..ToolResult::default() }
    }

    /// The same result with a structured value.
    pub fn with_structured(mut self, value: serde_json::Value) -> ToolResult {
        self.structured = Some(value);
        self
    }

    /// The same result with one more image.
    pub fn with_image(mut self, image: Image) -> ToolResult {
        self.images.push(image);
        self
    }
}
