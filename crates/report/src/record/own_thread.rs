//! The recorder on a thread of its own: the router's thread numbers each event's names and
//! hands the events over in batches; the recorder's thread folds them into the state, in the
//! order they were emitted, so every file is the same byte for byte.
//!
//! Why: recording is about half of a traced run's time on one core (see the docs' performance
//! page); a second core can do it while the router runs. Why batches: one hand-over per 1,024
//! events keeps the channel's cost and the wake-ups out of the per-event path. Why numbers
//! instead of names: see [`super::numbered`].
//!
//! Bounded: at most [`BATCHES_IN_FLIGHT`] batches wait; a router faster than its recorder
//! waits for it, so memory stays flat however long the run.

use std::fmt;
use std::mem;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::thread::{self, JoinHandle};

use routersim_engine::event::RoutingEvent;

use super::numbered::{Names, Numbering};
use super::state::State;

/// Events per hand-over.
const BATCH: usize = 1024;
/// Batches handed over and not yet folded, at most.
const BATCHES_IN_FLIGHT: usize = 4;

/// One hand-over: the names first seen in it, then its events.
#[derive(Debug, Default)]
struct Batch {
    names: Vec<Box<str>>,
    events: Vec<RoutingEvent<u32>>,
}

impl Batch {
    fn empty() -> Self {
        Self {
            names: Vec::new(),
            events: Vec::with_capacity(BATCH),
        }
    }
}

/// The router's end of a recorder thread.
pub(super) struct OwnThread {
    numbering: Numbering,
    batch: Batch,
    /// `None` once the recorder's thread is gone (it can only have panicked).
    batches: Option<SyncSender<Batch>>,
    /// Folded batches coming back for reuse.
    spare: Receiver<Batch>,
    thread: Option<JoinHandle<Option<Box<State>>>>,
}

impl fmt::Debug for OwnThread {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OwnThread")
            .field("pending", &self.batch.events.len())
            .finish_non_exhaustive()
    }
}

/// The recorder's thread stopped before the end of the run (a panic, whose message was
/// printed when it happened).
#[derive(Debug)]
pub(super) struct ThreadLost;

impl OwnThread {
    /// Starts the thread and moves `state` to it; if the system refuses a thread, `state`
    /// comes back and the caller records on its own thread.
    pub(super) fn start(state: Box<State>) -> Result<Self, Box<State>> {
        let (hand_state, take_state) = sync_channel::<Box<State>>(1);
        let (batches, receive) = sync_channel::<Batch>(BATCHES_IN_FLIGHT);
        let (give_back, spare) = sync_channel::<Batch>(BATCHES_IN_FLIGHT);
        let spawned = thread::Builder::new()
            .name("recorder".into())
            .spawn(move || fold_batches(&take_state, &receive, &give_back));
        let Ok(thread) = spawned else {
            return Err(state);
        };
        if let Err(returned) = hand_state.send(state) {
            return Err(returned.0);
        }
        Ok(Self {
            numbering: Numbering::default(),
            batch: Batch::empty(),
            batches: Some(batches),
            spare,
            thread: Some(thread),
        })
    }

    /// Queues one event (handing the batch over when it is full).
    pub(super) fn send(&mut self, event: &RoutingEvent) {
        let batch = &mut self.batch;
        batch
            .events
            .push(self.numbering.number(event, &mut batch.names));
        if self.batch.events.len() >= BATCH {
            self.hand_over();
        }
    }

    fn hand_over(&mut self) {
        let next = self.spare.try_recv().unwrap_or_else(|_| Batch::empty());
        let full = mem::replace(&mut self.batch, next);
        if let Some(batches) = &self.batches
            && batches.send(full).is_err()
        {
            self.batches = None;
        }
    }

    /// Hands over what is left, waits for the thread to fold it, and takes the state back.
    pub(super) fn finish(mut self) -> Result<Box<State>, ThreadLost> {
        self.stop().ok_or(ThreadLost)
    }

    fn stop(&mut self) -> Option<Box<State>> {
        if !self.batch.events.is_empty() {
            self.hand_over();
        }
        // Closing the channel ends the thread's loop.
        self.batches = None;
        self.thread.take()?.join().ok().flatten()
    }
}

impl Drop for OwnThread {
    /// A recorder dropped without `finish` (a failed run) still waits for its thread, so no
    /// file is written after the run has returned.
    fn drop(&mut self) {
        if self.thread.is_some() {
            self.stop();
        }
    }
}

/// The recorder's thread: takes the state, folds every batch in order, gives the state back.
fn fold_batches(
    state: &Receiver<Box<State>>,
    batches: &Receiver<Batch>,
    give_back: &SyncSender<Batch>,
) -> Option<Box<State>> {
    let mut state = state.recv().ok()?;
    let mut names = Names::default();
    for mut batch in batches {
        names.learn(batch.names.drain(..));
        for event in &batch.events {
            state.fold(&names.name(event));
        }
        batch.events.clear();
        // Full when the router has enough spares: the batch is then dropped here.
        let _ = give_back.try_send(batch);
    }
    Some(state)
}
