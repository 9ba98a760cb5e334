//! LiteLLM's spend logs: the proxy's `LiteLLM_SpendLogs` rows, exported as JSON (one object per
//! line, or one array) or CSV (a header naming the columns; `metadata` a JSON text cell).
//!
//! What LiteLLM 1.110.2's proxy writes (recorded with `tools/litellm-import/`, which captures
//! the rows its spend writer builds): one row per request, never per attempt. A success row is
//! dated and attributed by the attempt that answered (`startTime` is that attempt's start, not
//! the request's arrival); a failure row by the request's failure. The attempts before it are
//! only counted (`metadata.attempted_retries`, `attempted_fallbacks`), never dated or
//! attributed; the failure's class and code are in `metadata.error_information`; no Retry-After
//! is kept.

use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, Visitor};

use super::intern::Interner;
use super::loose::{Loose, LooseList, parse_list_text};
use super::payload::{ErrorInformation, LineProblem, read_failure, span_and_group};
use crate::call::{Call, Scope, request_key};

/// The fields read from a spend-log row.
#[derive(Debug, Default, Deserialize)]
pub(super) struct SpendRow<'a> {
    #[serde(default, borrow)]
    request_id: Loose<'a>,
    #[serde(default, borrow)]
    litellm_call_id: Loose<'a>,
    #[serde(default, rename = "startTime", borrow)]
    start_time: Loose<'a>,
    #[serde(default, rename = "endTime", borrow)]
    end_time: Loose<'a>,
    #[serde(default, rename = "completionStartTime", borrow)]
    completion_start_time: Loose<'a>,
    #[serde(default, borrow)]
    model: Loose<'a>,
    #[serde(default, borrow)]
    model_id: Loose<'a>,
    #[serde(default, borrow)]
    model_group: Loose<'a>,
    #[serde(default, borrow)]
    api_base: Loose<'a>,
    #[serde(default, borrow)]
    status: Loose<'a>,
    #[serde(default, borrow)]
    prompt_tokens: Loose<'a>,
    #[serde(default, borrow)]
    completion_tokens: Loose<'a>,
    #[serde(default)]
    request_tags: LooseList,
    #[serde(default)]
    metadata: Metadata,
    /// A standard logging payload's field: present only when the formats were mixed.
    #[serde(default, borrow)]
    pub(super) trace_id: Loose<'a>,
}

/// The parts of `metadata` read (an object in JSON exports, a JSON text in CSV ones).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct MetadataFields {
    error_information: Option<OwnedError>,
    attempted_retries: Option<f64>,
    attempted_fallbacks: Option<f64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct OwnedError {
    error_code: Option<serde_json::Value>,
    error_class: Option<String>,
    error_message: Option<String>,
}

/// `metadata`, read from an object or from a JSON text.
#[derive(Debug, Default)]
struct Metadata(MetadataFields);

impl<'de> Deserialize<'de> for Metadata {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Metadata;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object or a JSON text")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Metadata, A::Error> {
                MetadataFields::deserialize(de::value::MapAccessDeserializer::new(map))
                    .map(Metadata)
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Metadata, E> {
                Ok(Metadata(metadata_text(v)))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Metadata, E> {
                Ok(Metadata::default())
            }
            fn visit_none<E: de::Error>(self) -> Result<Metadata, E> {
                Ok(Metadata::default())
            }
        }
        d.deserialize_any(V)
    }
}

/// `metadata` as JSON text; unreadable text reads as empty (the row still counts).
fn metadata_text(text: &str) -> MetadataFields {
    serde_json::from_str(text).unwrap_or_default()
}

/// A count from `metadata`.
fn count(n: Option<f64>) -> Option<u32> {
    n.filter(|n| *n >= 0.0 && n.fract() == 0.0 && *n <= f64::from(u32::MAX))
        .map(|n| n as u32)
}

impl SpendRow<'_> {
    /// A row from a CSV record: each named column as its JSON field.
    pub(super) fn from_csv<'r>(
        columns: &SpendColumns,
        record: &'r csv::StringRecord,
    ) -> SpendRow<'r> {
        let cell = |i: Option<usize>| {
            i.and_then(|i| record.get(i))
                .filter(|s| !s.trim().is_empty())
                .map_or(Loose::Other, |s| Loose::Str(s.into()))
        };
        SpendRow {
            request_id: cell(columns.request_id),
            litellm_call_id: cell(columns.litellm_call_id),
            start_time: cell(columns.start_time),
            end_time: cell(columns.end_time),
            completion_start_time: cell(columns.completion_start_time),
            model: cell(columns.model),
            model_id: cell(columns.model_id),
            model_group: cell(columns.model_group),
            api_base: cell(columns.api_base),
            status: cell(columns.status),
            prompt_tokens: cell(columns.prompt_tokens),
            completion_tokens: cell(columns.completion_tokens),
            request_tags: LooseList(
                columns
                    .request_tags
                    .and_then(|i| record.get(i))
                    .map(parse_list_text)
                    .unwrap_or_default(),
            ),
            metadata: Metadata(
                columns
                    .metadata
                    .and_then(|i| record.get(i))
                    .map(metadata_text)
                    .unwrap_or_default(),
            ),
            trace_id: Loose::Other,
        }
    }

    /// The row as a [`Call`].
    pub(super) fn into_call(self, line: u64, names: &mut Interner) -> Result<Call, LineProblem> {
        let (start, end, group) =
            span_and_group(&self.start_time, &self.end_time, &self.model_group)?;
        let mut call = Call::new(line, start, end, names.get(&group), Scope::Request);
        call.deployment = self.model_id.text().map(|d| names.get(&d));
        call.model = self.model.text().map(|m| names.get(&m));
        call.api_base = self
            .api_base
            .text()
            .map(|a| names.get(a.trim_end_matches('/')));
        call.input_tokens = self.prompt_tokens.count();
        call.output_tokens = self.completion_tokens.count();
        call.request = [&self.litellm_call_id, &self.request_id]
            .into_iter()
            .find_map(|v| v.text().map(|id| request_key(&id)));
        call.tags = self
            .request_tags
            .0
            .iter()
            .filter(|t| !t.starts_with("User-Agent:"))
            .map(|t| names.get(t))
            .collect();
        let meta = self.metadata.0;
        call.attempted_retries = count(meta.attempted_retries);
        call.attempted_fallbacks = count(meta.attempted_fallbacks);
        // A stream's first token comes before its end; a plain call's row has them equal.
        let first = self.completion_start_time.timestamp();
        if let Some(first) = first.filter(|f| *f >= start && end - *f > 0.001) {
            call.stream = Some(true);
            call.first_token = Some(first);
        }
        match self.status.text().as_deref() {
            Some("success") | None => {}
            Some(_) => {
                let owned = meta.error_information.unwrap_or_default();
                let code = owned.error_code.as_ref().map(|c| match c {
                    serde_json::Value::String(s) => Loose::Str(s.as_str().into()),
                    serde_json::Value::Number(n) => n.as_f64().map_or(Loose::Other, Loose::Num),
                    _ => Loose::Other,
                });
                let error = ErrorInformation {
                    error_code: code.unwrap_or_default(),
                    error_class: owned
                        .error_class
                        .as_deref()
                        .map_or(Loose::Other, |c| Loose::Str(c.into())),
                    error_message: owned
                        .error_message
                        .as_deref()
                        .map_or(Loose::Other, |m| Loose::Str(m.into())),
                };
                read_failure(&mut call, &error, None, names);
            }
        }
        Ok(call)
    }
}

/// Where each read column is in a spend-log CSV.
#[derive(Debug, Default)]
pub(super) struct SpendColumns {
    request_id: Option<usize>,
    litellm_call_id: Option<usize>,
    start_time: Option<usize>,
    end_time: Option<usize>,
    completion_start_time: Option<usize>,
    model: Option<usize>,
    model_id: Option<usize>,
    model_group: Option<usize>,
    api_base: Option<usize>,
    status: Option<usize>,
    prompt_tokens: Option<usize>,
    completion_tokens: Option<usize>,
    request_tags: Option<usize>,
    metadata: Option<usize>,
}

impl SpendColumns {
    /// The columns a spend-log CSV must have.
    pub(super) const REQUIRED: [&'static str; 4] =
        ["request_id", "startTime", "endTime", "model_group"];

    /// Finds each column by its name in the header; the names not read.
    pub(super) fn new(header: &csv::StringRecord) -> (Self, Vec<String>) {
        let mut columns = Self::default();
        let mut ignored = Vec::new();
        for (i, name) in header.iter().enumerate() {
            let slot = match name.trim() {
                "request_id" => &mut columns.request_id,
                "litellm_call_id" => &mut columns.litellm_call_id,
                "startTime" => &mut columns.start_time,
                "endTime" => &mut columns.end_time,
                "completionStartTime" => &mut columns.completion_start_time,
                "model" => &mut columns.model,
                "model_id" => &mut columns.model_id,
                "model_group" => &mut columns.model_group,
                "api_base" => &mut columns.api_base,
                "status" => &mut columns.status,
                "prompt_tokens" => &mut columns.prompt_tokens,
                "completion_tokens" => &mut columns.completion_tokens,
                "request_tags" => &mut columns.request_tags,
                "metadata" => &mut columns.metadata,
                other => {
                    ignored.push(other.to_string());
                    continue;
                }
            };
            *slot = Some(i);
        }
        (columns, ignored)
    }
}
