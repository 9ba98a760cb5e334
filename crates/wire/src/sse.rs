//! An incremental Server-Sent Events parser (the WHATWG `text/event-stream` rules).
//!
//! It is fed the response body one network frame at a time and hands out events as soon as
//! their blank line arrives, so a stream is never buffered whole: the parser holds at most one
//! unfinished line plus the fields of one unfinished event. A line longer than
//! [`MAX_LINE`] is refused (a misbehaving peer must not grow memory without bound).
//!
//! Comments (`: text`) are handed out at once, in order with events: the wire contract's
//! `: x-routersim-break kind=… status=…` must be seen before the connection error that follows.

use std::collections::VecDeque;

use routersim_engine::failure::{FailureKind, ProviderFailure};

/// The longest line accepted, in bytes (real chat-completion frames are a few hundred bytes).
pub const MAX_LINE: usize = 1 << 20;

/// One thing the stream said.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SseItem {
    /// A dispatched event: its `event:` name (`None` for the default `message`) and its `data:`
    /// lines joined with `\n`.
    Event {
        /// The `event:` field.
        event: Option<String>,
        /// The `data:` field.
        data: String,
    },
    /// A comment line, without its leading `:` and one optional space.
    Comment(String),
}

/// A line over [`MAX_LINE`] bytes (the stream treats it as a broken connection).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LineTooLong;

/// The parser's state between frames.
#[derive(Debug, Default)]
pub struct SseParser {
    /// The unfinished line.
    line: Vec<u8>,
    /// The last byte fed was a `\r` (a following `\n` belongs to the same line end).
    after_cr: bool,
    event: Option<String>,
    data: String,
    has_data: bool,
    ready: VecDeque<SseItem>,
}

impl SseParser {
    /// An empty parser.
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds bytes; complete items become available from [`SseParser::next_item`].
    pub fn feed(&mut self, bytes: &[u8]) -> Result<(), LineTooLong> {
        let mut rest = bytes;
        if self.after_cr && rest.first() == Some(&b'\n') {
            rest = &rest[1..];
        }
        self.after_cr = false;
        while let Some(end) = rest.iter().position(|b| *b == b'\n' || *b == b'\r') {
            if self.line.len() + end > MAX_LINE {
                return Err(LineTooLong);
            }
            self.line.extend_from_slice(&rest[..end]);
            let cr = rest[end] == b'\r';
            rest = &rest[end + 1..];
            if cr {
                if rest.first() == Some(&b'\n') {
                    rest = &rest[1..];
                } else if rest.is_empty() {
                    self.after_cr = true;
                }
            }
            let line = std::mem::take(&mut self.line);
            self.line_done(&line);
            self.line = line;
            self.line.clear();
        }
        if self.line.len() + rest.len() > MAX_LINE {
            return Err(LineTooLong);
        }
        self.line.extend_from_slice(rest);
        Ok(())
    }

    /// The next complete item, if one is ready.
    pub fn next_item(&mut self) -> Option<SseItem> {
        self.ready.pop_front()
    }

    fn line_done(&mut self, line: &[u8]) {
        let line = String::from_utf8_lossy(line);
        if line.is_empty() {
            self.dispatch();
            return;
        }
        if let Some(comment) = line.strip_prefix(':') {
            let comment = comment.strip_prefix(' ').unwrap_or(comment);
            self.ready.push_back(SseItem::Comment(comment.to_string()));
            return;
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line.as_ref(), ""),
        };
        match field {
            "event" => self.event = Some(value.to_string()),
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            // `id` and `retry` steer browser reconnection, which an LLM client never does.
            _ => {}
        }
    }

    fn dispatch(&mut self) {
        let event = self.event.take();
        if !self.has_data {
            // The spec drops an event without data (a bare `event:` line, or a stray blank).
            return;
        }
        self.has_data = false;
        let data = std::mem::take(&mut self.data);
        self.ready.push_back(SseItem::Event { event, data });
    }
}

/// The comment that names a stream break's kind (the wire contract's extension).
pub const BREAK_COMMENT: &str = "x-routersim-break";

/// The comment a break sends before its abrupt close:
/// `: x-routersim-break kind=<kind> status=<status>` and a blank line.
pub fn break_comment(failure: &ProviderFailure) -> String {
    let status = failure
        .effective_status()
        .map_or_else(|| "none".to_string(), |s| s.to_string());
    format!(
        ": {BREAK_COMMENT} kind={} status={status}\n\n",
        failure.kind.as_str()
    )
}

/// Reads `x-routersim-break kind=<kind> status=<status>`; a status that is not a number
/// (`none`) means none.
pub fn parse_break_comment(comment: &str) -> Option<ProviderFailure> {
    let mut words = comment.split_whitespace();
    if words.next()? != BREAK_COMMENT {
        return None;
    }
    let mut kind = None;
    let mut status = None;
    for word in words {
        match word.split_once('=') {
            Some(("kind", name)) => kind = FailureKind::from_name(name),
            Some(("status", code)) => status = code.parse::<u16>().ok(),
            _ => {}
        }
    }
    Some(ProviderFailure::new(kind?).with_status(status))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(p: &mut SseParser) -> Vec<SseItem> {
        std::iter::from_fn(|| p.next_item()).collect()
    }

    fn ev(event: Option<&str>, data: &str) -> SseItem {
        SseItem::Event {
            event: event.map(str::to_string),
            data: data.to_string(),
        }
    }

    #[test]
    fn events_split_anywhere_arrive_whole_and_in_order() {
        let text = b"event: message_start\ndata: {\"a\":1}\n\n: x-routersim-break kind=rate_limit status=429\r\ndata: one\r\ndata: two\r\r\ndata: [DONE]\n\n";
        let want = vec![
            ev(Some("message_start"), "{\"a\":1}"),
            SseItem::Comment("x-routersim-break kind=rate_limit status=429".into()),
            ev(None, "one\ntwo"),
            ev(None, "[DONE]"),
        ];
        for split in 0..text.len() {
            let mut p = SseParser::new();
            let mut got = Vec::new();
            for part in [&text[..split], &text[split..]] {
                p.feed(part).unwrap();
                got.extend(all(&mut p));
            }
            assert_eq!(got, want, "split at {split}");
        }
        // Byte by byte.
        let mut p = SseParser::new();
        let mut got = Vec::new();
        for b in text {
            p.feed(&[*b]).unwrap();
            got.extend(all(&mut p));
        }
        assert_eq!(got, want);
    }

    #[test]
    fn an_event_is_not_dispatched_before_its_blank_line() {
        let mut p = SseParser::new();
        p.feed(b"data: {\"x\":1}\n").unwrap();
        assert_eq!(p.next_item(), None);
        p.feed(b"\n").unwrap();
        assert_eq!(p.next_item(), Some(ev(None, "{\"x\":1}")));
    }

    #[test]
    fn an_overlong_line_is_refused() {
        let mut p = SseParser::new();
        let chunk = vec![b'a'; 64 * 1024];
        let mut result = Ok(());
        for _ in 0..=(MAX_LINE / chunk.len()) {
            result = p.feed(&chunk);
            if result.is_err() {
                break;
            }
        }
        assert_eq!(result, Err(LineTooLong));
    }

    #[test]
    fn break_comments() {
        assert_eq!(
            parse_break_comment("x-routersim-break kind=rate_limit status=429"),
            Some(ProviderFailure::new(FailureKind::RateLimit))
        );
        assert_eq!(
            parse_break_comment("x-routersim-break kind=internal_server status=none"),
            Some(ProviderFailure::new(FailureKind::InternalServer).with_status(None))
        );
        assert_eq!(parse_break_comment("x-routersim-break kind=nonsense"), None);
        assert_eq!(parse_break_comment("keep-alive"), None);
    }
}
