//! Prompt templates: text with references to the run's input and to the artifacts of
//! earlier nodes, parsed when a workflow is loaded and rendered when a node starts.
//!
//! | reference | renders as |
//! |---|---|
//! | `{{input}}` | the run's input text |
//! | `{{node}}` | the first text part of `node`'s artifacts |
//! | `{{node.data}}` | the first data part of `node`'s artifacts, as JSON |
//! | `{{node.parts[N]}}` | part `N` (from 0) of `node`'s artifacts, counted across them in order: a text part as its text, a data part as JSON, a file as its URI or base64 bytes |
//!
//! Spaces inside the braces are allowed (`{{ node }}`). A reference to a part the node
//! did not produce is an error of the rendering node naming the template, never an
//! empty string: a prompt silently missing its input is worse than a failed node.

use std::fmt;

use agentyard_transport::a2a::{Artifact, FileContent, Part};

#[cfg(test)]
mod tests;

/// What a `{{...}}` refers to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reference {
    /// `{{input}}`: the run's input.
    Input,
    /// `{{node}}`: the node's first text part.
    Text(String),
    /// `{{node.data}}`: the node's first data part, as JSON.
    Data(String),
    /// `{{node.parts[N]}}`: one part of the node's artifacts.
    Part(String, usize),
}

impl Reference {
    /// The node referred to; `None` for `{{input}}`.
    #[must_use]
    pub fn node(&self) -> Option<&str> {
        match self {
            Self::Input => None,
            Self::Text(node) | Self::Data(node) | Self::Part(node, _) => Some(node),
        }
    }
}

impl fmt::Display for Reference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Input => f.write_str("{{input}}"),
            Self::Text(node) => write!(f, "{{{{{node}}}}}"),
            Self::Data(node) => write!(f, "{{{{{node}.data}}}}"),
            Self::Part(node, n) => write!(f, "{{{{{node}.parts[{n}]}}}}"),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Segment {
    Literal(String),
    Ref(Reference),
}

/// A parsed template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    source: String,
    segments: Vec<Segment>,
}

/// Why a template could not be parsed or rendered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("template `{template}`: {problem}")]
pub struct TemplateError {
    /// The template's source text.
    pub template: String,
    /// What was wrong.
    pub problem: String,
}

/// Whether `id` is a usable node id (also what a reference may name).
#[must_use]
pub fn is_valid_id(id: &str) -> bool {
    !id.is_empty()
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

impl Template {
    /// Parses `source`.
    ///
    /// # Errors
    /// [`TemplateError`] for an unclosed `{{`, an empty reference, or a reference that
    /// is not one of the forms above.
    ///
    /// ```
    /// use agentyard_workflow::template::{Reference, Template};
    ///
    /// let t = Template::parse("Summarize {{ research }} for {{input}}").unwrap();
    /// assert_eq!(
    ///     t.references().collect::<Vec<_>>(),
    ///     [&Reference::Text("research".into()), &Reference::Input]
    /// );
    /// ```
    pub fn parse(source: &str) -> Result<Self, TemplateError> {
        let error = |problem: String| TemplateError {
            template: source.to_owned(),
            problem,
        };
        let mut segments = Vec::new();
        let mut rest = source;
        while let Some(start) = rest.find("{{") {
            if start > 0 {
                segments.push(Segment::Literal(rest[..start].to_owned()));
            }
            let after = &rest[start + 2..];
            let end = after
                .find("}}")
                .ok_or_else(|| error(String::from("`{{` is never closed by `}}`")))?;
            let inner = after[..end].trim();
            segments.push(Segment::Ref(parse_reference(inner).map_err(error)?));
            rest = &after[end + 2..];
        }
        if !rest.is_empty() {
            segments.push(Segment::Literal(rest.to_owned()));
        }
        Ok(Self {
            source: source.to_owned(),
            segments,
        })
    }

    /// The template's source text.
    #[must_use]
    pub fn source(&self) -> &str {
        &self.source
    }

    /// Every reference, in order.
    pub fn references(&self) -> impl Iterator<Item = &Reference> {
        self.segments.iter().filter_map(|segment| match segment {
            Segment::Ref(reference) => Some(reference),
            Segment::Literal(_) => None,
        })
    }

    /// Renders the template with the run's `input` and the artifacts `artifacts`
    /// gives for a node id (`None`: the node has produced nothing).
    ///
    /// # Errors
    /// [`TemplateError`] naming the template and the missing part.
    pub fn render<'a>(
        &self,
        input: &str,
        artifacts: impl Fn(&str) -> Option<&'a [Artifact]>,
    ) -> Result<String, TemplateError> {
        let mut out = String::with_capacity(self.source.len());
        for segment in &self.segments {
            match segment {
                Segment::Literal(text) => out.push_str(text),
                Segment::Ref(Reference::Input) => out.push_str(input),
                Segment::Ref(reference) => {
                    let node = reference.node().unwrap_or_default();
                    let mut parts = artifacts(node)
                        .unwrap_or_default()
                        .iter()
                        .flat_map(|a| a.parts.iter());
                    let rendered = match reference {
                        Reference::Text(_) => parts
                            .filter_map(Part::as_text)
                            .next()
                            .map(str::to_owned)
                            .ok_or_else(|| {
                                format!("`{reference}`: node `{node}` has no text part")
                            }),
                        Reference::Data(_) => parts
                            .find_map(|p| match p {
                                Part::Data(data) => Some(render_data(&data.data)),
                                Part::Text(_) | Part::File(_) => None,
                            })
                            .ok_or_else(|| {
                                format!("`{reference}`: node `{node}` has no data part")
                            }),
                        Reference::Part(_, n) => {
                            let count = artifacts(node)
                                .unwrap_or_default()
                                .iter()
                                .map(|a| a.parts.len())
                                .sum::<usize>();
                            parts.clone().nth(*n).map(render_part).ok_or_else(|| {
                                format!(
                                    "`{reference}`: node `{node}` has {count} part(s), no part {n}"
                                )
                            })
                        }
                        Reference::Input => unreachable_input(),
                    };
                    out.push_str(&rendered.map_err(|problem| TemplateError {
                        template: self.source.clone(),
                        problem,
                    })?);
                }
            }
        }
        Ok(out)
    }
}

/// `Reference::Input` is rendered before the match that calls this.
fn unreachable_input() -> Result<String, String> {
    Err(String::from("`{{input}}` rendered out of place"))
}

fn render_data(data: &serde_json::Map<String, serde_json::Value>) -> String {
    serde_json::to_string(data).unwrap_or_default()
}

/// One part as text.
#[must_use]
pub fn render_part(part: &Part) -> String {
    match part {
        Part::Text(text) => text.text.clone(),
        Part::Data(data) => render_data(&data.data),
        Part::File(file) => match &file.file {
            FileContent::Uri(uri) => uri.uri.clone(),
            FileContent::Bytes(bytes) => bytes.bytes.clone(),
        },
    }
}

fn parse_reference(inner: &str) -> Result<Reference, String> {
    if inner.is_empty() {
        return Err(String::from("`{{}}` names nothing"));
    }
    let (node, field) = match inner.split_once('.') {
        Some((node, field)) => (node.trim(), Some(field.trim())),
        None => (inner, None),
    };
    if !is_valid_id(node) {
        return Err(format!(
            "`{{{{{inner}}}}}`: `{node}` is not a node id (letters, digits, `_` and `-`)"
        ));
    }
    match field {
        None if node == "input" => Ok(Reference::Input),
        None => Ok(Reference::Text(node.to_owned())),
        Some("data") => Ok(Reference::Data(node.to_owned())),
        Some(field) => {
            let index = field
                .strip_prefix("parts[")
                .and_then(|rest| rest.strip_suffix(']'))
                .and_then(|n| n.trim().parse::<usize>().ok())
                .ok_or_else(|| {
                    format!(
                        "`{{{{{inner}}}}}`: after `{node}.` expected `data` or `parts[N]`, got `{field}`"
                    )
                })?;
            Ok(Reference::Part(node.to_owned(), index))
        }
    }
}
