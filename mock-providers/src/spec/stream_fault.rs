//! Stream faults (`stream_break`, `stream_error_frame`, `stream_truncated`, `stream_stall`,
//! `stream_empty`, `stream_no_finish`): where they cut a stream and how their keys are read.
//!
//! Separate because their key checks are their own small grammar inside an outcome.

use std::fmt;
use std::time::Duration;

use routersim_engine::failure::FailureKind;
use serde::Deserialize;
use serde::de::{self, Deserializer, Visitor};

use super::error::ErrorSpec;
use crate::duration::HumanDuration;

/// Where a stream fault cuts a stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StreamCut {
    /// After this many content tokens (`after_tokens: 20`): they are delivered, then the
    /// fault happens at the instant the last of them arrives (at the first-token instant
    /// for 0). At or past the answer's length, every token is delivered and the fault takes
    /// the terminal marker's place.
    Tokens(u32),
    /// This long after the first token's instant (`after: 1.5s`): the tokens that arrive up
    /// to then are delivered, then the fault happens. A cut after the last token never fires.
    Time(Duration),
}

/// What a stream-opening success sends instead of content.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EmptyStream {
    /// One role-only delta, then the terminal marker (`stream_empty: role_only`).
    RoleOnly,
    /// The terminal marker alone (`stream_empty: true`).
    Nothing,
}

impl<'de> Deserialize<'de> for EmptyStream {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        const EXPECTED: &str = "role_only (one role-only delta, then done) or true (done only)";
        impl Visitor<'_> for V {
            type Value = EmptyStream;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(EXPECTED)
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<EmptyStream, E> {
                if v {
                    Ok(EmptyStream::Nothing)
                } else {
                    Err(E::custom(format!("false is no fault; write {EXPECTED}")))
                }
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<EmptyStream, E> {
                match v {
                    "role_only" => Ok(EmptyStream::RoleOnly),
                    _ => Err(E::custom(format!("expected {EXPECTED}, found {v:?}"))),
                }
            }
        }
        deserializer.deserialize_any(V)
    }
}

/// How an opened stream misbehaves. Only streamed calls see it; a non-streamed call
/// answers as if the outcome were `ok`.
#[derive(Clone, Debug, PartialEq)]
pub enum StreamFault {
    /// The connection drops (`{stream_break: {after_tokens: 20}}`): `next_item` gives
    /// `Some(Err(error))`; default `api_connection`.
    Break {
        /// Where.
        at: StreamCut,
        /// The failure it breaks with (its `status` only; no Retry-After, no latency).
        error: ErrorSpec,
    },
    /// An error event inside the stream (`{stream_error_frame: {after_tokens: 5, error:
    /// overloaded}}`): `Some(Ok(StreamItem::ErrorFrame(..)))`, then the stream closes.
    ErrorFrame {
        /// Where.
        at: StreamCut,
        /// The error sent (its `status` only).
        error: ErrorSpec,
    },
    /// The stream closes without its terminal marker (`{stream_truncated: {after_tokens:
    /// 5}}`): `None`.
    Truncated {
        /// Where.
        at: StreamCut,
    },
    /// The stream stops sending for `pause` (`{stream_stall: {after_tokens: 5, for: 30s}}`),
    /// then resumes at its pace and completes: the next item arrives `pause` after the cut.
    Stall {
        /// Where.
        at: StreamCut,
        /// How long nothing arrives.
        pause: Duration,
    },
    /// A success with no content at all (`stream_empty: role_only | true`).
    Empty(EmptyStream),
    /// The same, but its end marker carries no finish reason (`stream_no_finish: role_only |
    /// true`): OpenAI's `[DONE]` without a `finish_reason` chunk, Anthropic's `message_stop`
    /// without a `message_delta`. LiteLLM 1.110.2's OpenAI path fails a stream that sent
    /// something first ("Stream ended before a finish_reason was received").
    NoFinish(EmptyStream),
}

/// A stream fault's mapping, before we know which fault it is.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawStreamFault {
    after_tokens: Option<u32>,
    after: Option<HumanDuration>,
    error: Option<FailureKind>,
    status: Option<u16>,
    #[serde(rename = "for")]
    pause: Option<HumanDuration>,
}

impl RawStreamFault {
    fn cut(&self, name: &str) -> Result<StreamCut, String> {
        match (self.after_tokens, self.after) {
            (Some(n), None) => Ok(StreamCut::Tokens(n)),
            (None, Some(d)) => Ok(StreamCut::Time(d.0)),
            _ => Err(format!(
                "{name} needs exactly one of `after_tokens: N` or `after: <duration>`"
            )),
        }
    }

    pub(super) fn error(
        &self,
        name: &str,
        default: Option<FailureKind>,
    ) -> Result<ErrorSpec, String> {
        let kind = match (self.error, default) {
            (Some(kind), _) | (None, Some(kind)) => kind,
            (None, None) => {
                return Err(format!(
                    "{name} needs `error: <kind>` (the error event sent)"
                ));
            }
        };
        let spec = ErrorSpec {
            status: self.status,
            ..ErrorSpec::new(kind)
        };
        spec.check()?;
        Ok(spec)
    }

    fn no_error(&self, name: &str) -> Result<(), String> {
        if self.error.is_some() || self.status.is_some() {
            return Err(format!(
                "{name} sends no error; `error` and `status` belong to stream_break and \
                 stream_error_frame"
            ));
        }
        Ok(())
    }

    fn no_pause(&self, name: &str) -> Result<(), String> {
        if self.pause.is_some() {
            return Err(format!("`for` belongs to stream_stall, not {name}"));
        }
        Ok(())
    }
}

/// The six stream-fault keys of an outcome or a fault window.
pub(super) struct StreamKeys {
    pub(super) stream_break: Option<RawStreamFault>,
    pub(super) stream_error_frame: Option<RawStreamFault>,
    pub(super) stream_truncated: Option<RawStreamFault>,
    pub(super) stream_stall: Option<RawStreamFault>,
    pub(super) stream_empty: Option<EmptyStream>,
    pub(super) stream_no_finish: Option<EmptyStream>,
}

impl StreamKeys {
    pub(super) fn parse(self) -> Result<Option<StreamFault>, String> {
        let set = [
            self.stream_break.is_some(),
            self.stream_error_frame.is_some(),
            self.stream_truncated.is_some(),
            self.stream_stall.is_some(),
            self.stream_empty.is_some(),
            self.stream_no_finish.is_some(),
        ]
        .iter()
        .filter(|&&b| b)
        .count();
        if set > 1 {
            return Err("set one stream fault (stream_break, stream_error_frame, \
                 stream_truncated, stream_stall, stream_empty or stream_no_finish), not several"
                .into());
        }
        if let Some(raw) = self.stream_break {
            let name = "stream_break";
            raw.no_pause(name)?;
            return Ok(Some(StreamFault::Break {
                at: raw.cut(name)?,
                error: raw.error(name, Some(FailureKind::ApiConnection))?,
            }));
        }
        if let Some(raw) = self.stream_error_frame {
            let name = "stream_error_frame";
            raw.no_pause(name)?;
            return Ok(Some(StreamFault::ErrorFrame {
                at: raw.cut(name)?,
                error: raw.error(name, None)?,
            }));
        }
        if let Some(raw) = self.stream_truncated {
            let name = "stream_truncated";
            raw.no_pause(name)?;
            raw.no_error(name)?;
            return Ok(Some(StreamFault::Truncated { at: raw.cut(name)? }));
        }
        if let Some(raw) = self.stream_stall {
            let name = "stream_stall";
            raw.no_error(name)?;
            let at = raw.cut(name)?;
            let pause = raw
                .pause
                .ok_or("stream_stall needs `for: <duration>` (how long nothing arrives)")?;
            return Ok(Some(StreamFault::Stall { at, pause: pause.0 }));
        }
        if let Some(kind) = self.stream_no_finish {
            return Ok(Some(StreamFault::NoFinish(kind)));
        }
        Ok(self.stream_empty.map(StreamFault::Empty))
    }
}
