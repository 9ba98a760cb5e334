//! How a streamed request's content reaches its caller: the engine's own events.
//!
//! The engine reads a provider's stream itself (first-token and stall deadlines, breaks,
//! mid-stream continuation) and tells the outside world what reached the caller only through
//! events: a `StreamChunk` per chunk delivered, a `StreamBreak` per broken stream. So the
//! proxy does not read the provider's stream a second time; [`StreamRoutes`], the router's
//! event sink, forwards each streamed request's events to that request's response body
//! through a channel, keyed by request id. Events are the truth: what the caller receives is
//! exactly what every report of the same engine says it received. The request's task sends
//! the final [`CompletionResult`] on the same channel after the router returns, so it comes
//! after every event of the request.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use routersim_engine::event::{EventKind, EventSink, RoutingEvent};
use routersim_engine::failure::FailureKind;
use routersim_engine::request::CompletionResult;
use routersim_engine::stream::BreakKind;
use routersim_engine::sync::lock_unpoisoned;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

/// What a streamed request's body hears, in order.
#[derive(Debug)]
pub enum StreamMsg {
    /// An attempt started on `deployment_id` in `model_group`.
    Attempt {
        /// The deployment called.
        deployment_id: Arc<str>,
        /// Its model group.
        model_group: Arc<str>,
    },
    /// The retry loop went round again.
    Retry,
    /// A fallback hop.
    Fallback,
    /// Content reached the caller: `tokens` tokens over `span`.
    Chunk {
        /// Tokens in the chunk.
        tokens: u32,
        /// From its first token to its last.
        span: Duration,
    },
    /// A stream broke.
    Break {
        /// How.
        how: BreakKind,
        /// With what.
        failure: FailureKind,
    },
    /// The router returned.
    End(Box<CompletionResult>),
}

/// The router's event sink: routes each streamed request's events to its channel.
#[derive(Debug, Default)]
pub struct StreamRoutes {
    routes: Mutex<BTreeMap<u64, UnboundedSender<StreamMsg>>>,
}

impl StreamRoutes {
    /// Opens the route of request `id`; `None` when a request with that id is already
    /// streaming (its events could not be told apart).
    pub fn open(
        &self,
        id: u64,
    ) -> Option<(UnboundedSender<StreamMsg>, UnboundedReceiver<StreamMsg>)> {
        let mut routes = lock_unpoisoned(&self.routes);
        if routes.contains_key(&id) {
            return None;
        }
        let (tx, rx) = unbounded_channel();
        routes.insert(id, tx.clone());
        Some((tx, rx))
    }

    /// Closes the route of request `id` (its router call returned).
    pub fn close(&self, id: u64) {
        lock_unpoisoned(&self.routes).remove(&id);
    }

    /// Whether request `id` is streaming.
    pub fn is_open(&self, id: u64) -> bool {
        lock_unpoisoned(&self.routes).contains_key(&id)
    }
}

/// The message an event becomes, if the body needs it.
fn message(kind: &EventKind) -> Option<StreamMsg> {
    Some(match kind {
        EventKind::AttemptStart {
            deployment_id,
            model_group,
            ..
        } => StreamMsg::Attempt {
            deployment_id: deployment_id.clone(),
            model_group: model_group.clone(),
        },
        EventKind::Retry { .. } => StreamMsg::Retry,
        EventKind::Fallback { .. } => StreamMsg::Fallback,
        EventKind::StreamChunk {
            tokens, inner_gap, ..
        } => StreamMsg::Chunk {
            tokens: *tokens,
            span: inner_gap.saturating_mul(tokens.saturating_sub(1)),
        },
        EventKind::StreamBreak { how, failure, .. } => StreamMsg::Break {
            how: *how,
            failure: *failure,
        },
        _ => return None,
    })
}

impl EventSink for StreamRoutes {
    fn emit(&self, event: &RoutingEvent) {
        let Some(id) = event.request_id else {
            return;
        };
        let routes = lock_unpoisoned(&self.routes);
        if let (Some(tx), Some(msg)) = (routes.get(&id), message(&event.kind)) {
            // A body whose caller hung up is gone: the request runs on unheard.
            let _ = tx.send(msg);
        }
    }
}

#[cfg(test)]
mod tests {
    use tokio::time::Instant;

    use super::*;

    fn event(id: u64, kind: EventKind) -> RoutingEvent {
        RoutingEvent {
            at: Instant::now(),
            request_id: Some(id),
            kind,
        }
    }

    #[test]
    fn routes_a_requests_events_to_its_channel_only() {
        let routes = StreamRoutes::default();
        let (_tx, mut rx) = routes.open(7).unwrap();
        assert!(routes.open(7).is_none(), "one stream per id");
        routes.emit(&event(
            8,
            EventKind::StreamChunk {
                tokens: 1,
                gap_before: None,
                inner_gap: Duration::ZERO,
            },
        ));
        routes.emit(&event(
            7,
            EventKind::StreamChunk {
                tokens: 3,
                gap_before: None,
                inner_gap: Duration::from_millis(10),
            },
        ));
        routes.emit(&event(
            7,
            EventKind::Wait {
                duration: Duration::ZERO,
                reason: routersim_engine::event::WaitReason::Backoff,
            },
        ));
        let Ok(StreamMsg::Chunk { tokens, span }) = rx.try_recv() else {
            panic!("a chunk")
        };
        assert_eq!((tokens, span), (3, Duration::from_millis(20)));
        assert!(rx.try_recv().is_err(), "other requests and events stay out");
        routes.close(7);
        assert!(!routes.is_open(7));
    }
}
