//! Where events go: the sink the router emits to, and the two every caller needs (none, and
//! all of them in memory).

use std::sync::{Arc, Mutex};

use super::kind::RoutingEvent;

/// Where events go. Called synchronously, in order, on the router's task.
pub trait EventSink {
    /// Receives one event.
    fn emit(&self, event: &RoutingEvent);
}

/// Drops every event.
#[derive(Clone, Copy, Debug, Default)]
pub struct NullSink;

impl EventSink for NullSink {
    fn emit(&self, _event: &RoutingEvent) {}
}

/// Keeps every event in memory (tests, small runs).
#[derive(Debug, Default)]
pub struct VecSink {
    events: Mutex<Vec<RoutingEvent>>,
}

impl VecSink {
    /// An empty sink.
    pub fn new() -> Self {
        Self::default()
    }

    /// A copy of every event so far.
    pub fn events(&self) -> Vec<RoutingEvent> {
        crate::sync::lock_unpoisoned(&self.events).clone()
    }
}

impl EventSink for VecSink {
    fn emit(&self, event: &RoutingEvent) {
        crate::sync::lock_unpoisoned(&self.events).push(event.clone());
    }
}

impl<S: EventSink + ?Sized> EventSink for Arc<S> {
    fn emit(&self, event: &RoutingEvent) {
        (**self).emit(event);
    }
}

impl<S: EventSink + ?Sized> EventSink for &S {
    fn emit(&self, event: &RoutingEvent) {
        (**self).emit(event);
    }
}
