//! Events whose names are numbers: what crosses to a recorder on a thread of its own.
//!
//! Why: the engine names model groups and deployments with shared `Arc<str>`s, cloned into
//! every event. Moving those clones to another thread, and dropping them there, makes both
//! cores write the same reference counts: the cache line travels on every event, which cost
//! more than the recording it was meant to move (the same effect `Scenario::unshared` removes
//! between a sweep's workers). So the router's thread numbers each name ([`Numbering`]) and
//! sends [`RoutingEvent<u32>`]s, plain data; the recorder's thread turns the numbers back into
//! names of its own ([`Names`]), allocated and counted on its core only.

use std::collections::BTreeMap;
use std::sync::Arc;

use routersim_engine::event::{AlternativeEvent, EventKind, RoutingEvent};

/// How many slots the router's side has for names by address. It holds at most three
/// quarters of them ([`HELD_AT_MOST`]), so a probe always ends at an empty slot; a run names a
/// few dozen at most.
const SLOTS: usize = 256;
/// Names held by address at most; past them, a name is looked up by text every time.
const HELD_AT_MOST: usize = SLOTS * 3 / 4;

/// The router's side: a number for each name, the same number for the same text.
///
/// Why an open-addressed table that never evicts, keyed by a hash of the address: the
/// direct-mapped cache it replaced used the address's low bits, which are the offset in a
/// page; two names allocated a multiple of 4 KiB apart shared a slot and pushed each other
/// out on every event. In one build, the bench scenario's model group and a deployment did:
/// 375,605 lookups by text in a virtual hour, 4 % of the run thread's instructions.
#[derive(Debug)]
pub(super) struct Numbering {
    /// By address: the name itself (held, so its address is not reused while held) and its
    /// number.
    slots: Vec<Option<(Arc<str>, u32)>>,
    held: usize,
    by_text: BTreeMap<Box<str>, u32>,
    /// Lookups by text (for the tests).
    #[cfg(test)]
    by_text_lookups: usize,
}

impl Default for Numbering {
    fn default() -> Self {
        Self {
            slots: vec![None; SLOTS],
            held: 0,
            by_text: BTreeMap::new(),
            #[cfg(test)]
            by_text_lookups: 0,
        }
    }
}

/// A name's first slot: the top bits of its address times the 64-bit golden ratio (Fibonacci
/// hashing), so names whose addresses differ only above the page offset spread out.
#[inline]
fn home(name: &Arc<str>) -> usize {
    let address = Arc::as_ptr(name).cast::<u8>() as usize as u64;
    (address.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - SLOTS.trailing_zeros())) as usize
}

impl Numbering {
    /// `event` with numbers for names; a name seen for the first time is added to `new`
    /// (its number is its position among all the names sent so far).
    pub(super) fn number(
        &mut self,
        event: &RoutingEvent,
        new: &mut Vec<Box<str>>,
    ) -> RoutingEvent<u32> {
        RoutingEvent {
            at: event.at,
            request_id: event.request_id,
            kind: map_kind(&event.kind, &mut |name| self.of(name, new)),
        }
    }

    #[inline]
    fn of(&mut self, name: &Arc<str>, new: &mut Vec<Box<str>>) -> u32 {
        let slot = home(name);
        match &self.slots[slot] {
            Some((held, number)) if Arc::ptr_eq(held, name) => *number,
            _ => self.probe(slot, name, new),
        }
    }

    /// A name not at its first slot: the slots after it, up to an empty one.
    #[cold]
    #[inline(never)]
    fn probe(&mut self, mut slot: usize, name: &Arc<str>, new: &mut Vec<Box<str>>) -> u32 {
        // Ends: at most HELD_AT_MOST of the SLOTS are taken.
        loop {
            match &self.slots[slot] {
                Some((held, number)) if Arc::ptr_eq(held, name) => return *number,
                Some(_) => slot = (slot + 1) % SLOTS,
                None => return self.first_at(slot, name, new),
            }
        }
    }

    /// A name not held at its address: its number by text (a new one if the text is new),
    /// then held in the empty `slot` its probe ended at, while there is room.
    fn first_at(&mut self, slot: usize, name: &Arc<str>, new: &mut Vec<Box<str>>) -> u32 {
        #[cfg(test)]
        {
            self.by_text_lookups += 1;
        }
        let number = match self.by_text.get(&**name) {
            Some(&number) => number,
            None => {
                let number = u32::try_from(self.by_text.len()).unwrap_or(u32::MAX);
                self.by_text.insert(Box::from(&**name), number);
                new.push(Box::from(&**name));
                number
            }
        };
        if self.held < HELD_AT_MOST {
            self.slots[slot] = Some((Arc::clone(name), number));
            self.held += 1;
        }
        number
    }
}

/// The recorder's side: the names, in the order they were numbered.
#[derive(Debug, Default)]
pub(super) struct Names {
    names: Vec<Arc<str>>,
}

impl Names {
    /// Learns the names first sent with a batch (before its events are read).
    pub(super) fn learn(&mut self, new: impl IntoIterator<Item = Box<str>>) {
        self.names.extend(new.into_iter().map(Arc::from));
    }

    /// `event` with its names back.
    pub(super) fn name(&self, event: &RoutingEvent<u32>) -> RoutingEvent {
        RoutingEvent {
            at: event.at,
            request_id: event.request_id,
            kind: map_kind(&event.kind, &mut |&number| {
                // Every number was learnt before the event that carries it.
                self.names
                    .get(number as usize)
                    .cloned()
                    .unwrap_or_else(|| Arc::from("?"))
            }),
        }
    }
}

/// Rebuilds an event variant by variant: `Variant [name fields] [copied fields]`, then any
/// arms written out.
macro_rules! map_fields {
    ($kind:expr, $f:expr, $E:ident;
     $( $variant:ident [$($name:ident),*] [$($copy:ident),*] ),* ;
     $($arms:tt)*) => {
        match $kind {
            $( $E::$variant { $($name,)* $($copy,)* } => $E::$variant {
                $($name: $f($name),)*
                $($copy: *$copy,)*
            }, )*
            $($arms)*
        }
    };
}

/// `kind` with every name passed through `f`; everything else copied. Exhaustive: a new
/// event kind does not compile until it is listed here.
fn map_kind<S, T>(kind: &EventKind<S>, f: &mut impl FnMut(&S) -> T) -> EventKind<T> {
    map_fields!(kind, f, EventKind;
        AttemptStart [model_group, deployment_id] [attempt, fallback_depth, max_tokens],
        AttemptEnd [model_group, deployment_id]
            [attempt, start, failure, status, retry_after, wait, fallback_depth],
        Wait [] [duration, reason],
        Retry [model_group] [failure, retry, budget],
        GiveUp [model_group] [failure, reason],
        OrderFallback [model_group] [from_order, to_order],
        WeightedFailover [model_group, excluded] [],
        Fallback [source, target] [order, depth, level, failure],
        CooldownSet [model_group, deployment_id] [reason, failure, duration, source, until],
        CooldownEnd [model_group, deployment_id] [],
        HalfOpen [model_group, deployment_id] [],
        Recovered [model_group, deployment_id] [via],
        ProbeOk [model_group, deployment_id] [],
        ProbeFailed [model_group, deployment_id] [failure],
        AllCooled [model_group] [retry_after],
        StreamBreak [model_group, deployment_id]
            [failure, how, tokens_so_far, after_content],
        StreamContinued [from_group, from_deployment, to_group, to_deployment] [prefill_tokens],
        RouteFiltered [model_group, deployment_id] [reason],
        ValidationRejected [model_group, deployment_id] [attempt, reason],
        ResponseCost [model_group, deployment_id] [input_tokens, output_tokens, usd],
        ClientTry [] [try_number, retries, provider_calls_before],
        AmbiguousOutcome [model_group, deployment_id] [operation_id, replay, executed],
        StreamChunk [] [tokens, gap_before, inner_gap];
        EventKind::RequestEnd {
            model,
            final_model_group,
            final_deployment_id,
            failure,
            status,
            attempts,
            retries,
            fallbacks,
            attempted_fallbacks,
            start,
            stream,
        } => EventKind::RequestEnd {
            model: f(model),
            final_model_group: f(final_model_group),
            final_deployment_id: final_deployment_id.as_ref().map(&mut *f),
            failure: *failure,
            status: *status,
            attempts: *attempts,
            retries: *retries,
            fallbacks: *fallbacks,
            attempted_fallbacks: *attempted_fallbacks,
            start: *start,
            stream: *stream,
        },
        EventKind::Alternative(event) => EventKind::Alternative(map_alternative(event, f)),
    )
}

fn map_alternative<S, T>(
    event: &AlternativeEvent<S>,
    f: &mut impl FnMut(&S) -> T,
) -> AlternativeEvent<T> {
    map_fields!(event, f, AlternativeEvent;
        Ejected [model_group, deployment_id]
            [duration, until, ejections, consecutive_5xx],
        Unejected [model_group, deployment_id] [],
        Hedged [model_group, primary, hedge] [delay, extra_input_tokens, extra_cost_usd],
        HedgeEnd [model_group, winner] [hedge_won];
    )
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use routersim_engine::config::Replay;
    use routersim_engine::event::{
        CooldownReason, CooldownSource, FallbackLevel, FilterReason, GiveUpReason, RecoveredVia,
        ValidationReason, WaitReason,
    };
    use routersim_engine::failure::FailureKind;
    use routersim_engine::stream::{BreakKind, StreamOutcome, StreamStats};
    use tokio::time::Instant;

    use super::*;

    /// One event of every kind, each name a fresh allocation (as a run's would not be).
    fn every_kind(t0: Instant) -> Vec<RoutingEvent> {
        let mut kinds = request_and_routing_kinds(t0);
        kinds.extend(health_and_other_kinds(t0));
        kinds.extend(other_kinds(t0));
        kinds
            .into_iter()
            .enumerate()
            .map(|(i, kind)| RoutingEvent {
                at: t0 + Duration::from_millis(i as u64),
                request_id: (i % 3 != 0).then_some(i as u64),
                kind,
            })
            .collect()
    }

    fn request_and_routing_kinds(t0: Instant) -> Vec<EventKind> {
        let n = |text: &str| -> Arc<str> { Arc::from(text) };
        let d = Duration::from_millis;
        let fail = FailureKind::RateLimit;
        vec![
            EventKind::AttemptStart {
                attempt: 1,
                model_group: n("g"),
                deployment_id: n("a"),
                fallback_depth: 0,
                max_tokens: Some(7),
            },
            EventKind::AttemptEnd {
                attempt: 1,
                start: t0,
                model_group: n("g"),
                deployment_id: n("a"),
                failure: Some(fail),
                status: Some(429),
                retry_after: Some(d(3)),
                wait: d(4),
                fallback_depth: 2,
            },
            EventKind::Wait {
                duration: d(5),
                reason: WaitReason::Backoff,
            },
            EventKind::Retry {
                model_group: n("g"),
                failure: fail,
                retry: 1,
                budget: 3,
            },
            EventKind::GiveUp {
                model_group: n("g"),
                failure: fail,
                reason: GiveUpReason::RetriesExhausted,
            },
            EventKind::OrderFallback {
                model_group: n("g"),
                from_order: Some(1),
                to_order: None,
            },
            EventKind::WeightedFailover {
                model_group: n("g"),
                excluded: n("b"),
            },
            EventKind::Fallback {
                source: n("g"),
                target: n("h"),
                order: 1,
                depth: 2,
                level: FallbackLevel::ContextWindow,
                failure: fail,
            },
            EventKind::CooldownSet {
                model_group: n("g"),
                deployment_id: n("a"),
                reason: CooldownReason::RateLimitInGroup,
                failure: fail,
                duration: d(60),
                source: CooldownSource::RetryAfter,
                until: t0 + d(60),
            },
        ]
    }

    fn health_and_other_kinds(t0: Instant) -> Vec<EventKind> {
        let n = |text: &str| -> Arc<str> { Arc::from(text) };
        let d = Duration::from_millis;
        let fail = FailureKind::RateLimit;
        vec![
            EventKind::CooldownEnd {
                model_group: n("g"),
                deployment_id: n("a"),
            },
            EventKind::HalfOpen {
                model_group: n("g"),
                deployment_id: n("b"),
            },
            EventKind::Recovered {
                model_group: n("g"),
                deployment_id: n("b"),
                via: RecoveredVia::Probe,
            },
            EventKind::ProbeOk {
                model_group: n("h"),
                deployment_id: n("c"),
            },
            EventKind::ProbeFailed {
                model_group: n("h"),
                deployment_id: n("c"),
                failure: fail,
            },
            EventKind::AllCooled {
                model_group: n("g"),
                retry_after: d(9),
            },
            EventKind::RequestEnd {
                model: n("m"),
                final_model_group: n("h"),
                final_deployment_id: Some(n("c")),
                failure: None,
                status: Some(200),
                attempts: 3,
                retries: 1,
                fallbacks: 1,
                attempted_fallbacks: 2,
                start: t0,
                stream: Some(StreamStats {
                    outcome: Some(StreamOutcome::Completed),
                    ttft: Some(d(1)),
                    tokens_delivered: 5,
                    tokens_billed: 6,
                }),
            },
            EventKind::RequestEnd {
                model: n("m"),
                final_model_group: n("g"),
                final_deployment_id: None,
                failure: Some(fail),
                status: None,
                attempts: 1,
                retries: 0,
                fallbacks: 0,
                attempted_fallbacks: 0,
                start: t0,
                stream: None,
            },
            EventKind::StreamBreak {
                model_group: n("g"),
                deployment_id: n("a"),
                failure: fail,
                how: BreakKind::Truncated,
                tokens_so_far: 4,
                after_content: true,
            },
            EventKind::StreamContinued {
                from_group: n("g"),
                from_deployment: n("a"),
                to_group: n("h"),
                to_deployment: n("c"),
                prefill_tokens: 4,
            },
            EventKind::RouteFiltered {
                model_group: n("g"),
                deployment_id: n("b"),
                reason: FilterReason::Context,
            },
            EventKind::ValidationRejected {
                model_group: n("g"),
                deployment_id: n("a"),
                attempt: 2,
                reason: ValidationReason::MalformedJson,
            },
        ]
    }

    fn other_kinds(t0: Instant) -> Vec<EventKind> {
        let n = |text: &str| -> Arc<str> { Arc::from(text) };
        let d = Duration::from_millis;
        vec![
            EventKind::ResponseCost {
                model_group: n("g"),
                deployment_id: n("a"),
                input_tokens: 10,
                output_tokens: 20,
                usd: 0.25,
            },
            EventKind::ClientTry {
                try_number: 1,
                retries: 2,
                provider_calls_before: 3,
            },
            EventKind::AmbiguousOutcome {
                model_group: n("g"),
                deployment_id: n("a"),
                operation_id: 8,
                replay: Replay::Dedupe,
                executed: Some(true),
            },
            EventKind::StreamChunk {
                tokens: 3,
                gap_before: Some(d(2)),
                inner_gap: d(1),
            },
            EventKind::Alternative(AlternativeEvent::Ejected {
                model_group: n("g"),
                deployment_id: n("a"),
                duration: d(30),
                until: t0 + d(30),
                ejections: 2,
                consecutive_5xx: 5,
            }),
            EventKind::Alternative(AlternativeEvent::Unejected {
                model_group: n("g"),
                deployment_id: n("a"),
            }),
            EventKind::Alternative(AlternativeEvent::Hedged {
                model_group: n("g"),
                primary: n("a"),
                hedge: n("b"),
                delay: d(50),
                extra_input_tokens: 10,
                extra_cost_usd: 0.5,
            }),
            EventKind::Alternative(AlternativeEvent::HedgeEnd {
                model_group: n("g"),
                winner: n("b"),
                hedge_won: true,
            }),
        ]
    }

    #[test]
    fn every_kind_is_named_back_as_it_was_sent() {
        let t0 = Instant::now();
        let events = every_kind(t0);
        assert_eq!(
            events.len(),
            29,
            "one of each kind, and a second request end"
        );
        let (mut numbering, mut names) = (Numbering::default(), Names::default());
        for event in &events {
            let mut new = Vec::new();
            let numbered = numbering.number(event, &mut new);
            names.learn(new);
            assert_eq!(&names.name(&numbered), event, "{}", event.kind.name());
        }
        // The same text is one number, however many allocations carried it: a, b, c, g, h, m.
        assert_eq!(names.names.len(), 6);
    }

    #[test]
    fn a_name_is_announced_once_and_cached_by_address() {
        let (mut numbering, mut new) = (Numbering::default(), Vec::new());
        let (a, b) = (Arc::<str>::from("a"), Arc::<str>::from("b"));
        let other_a = Arc::<str>::from("a");
        assert_eq!(numbering.of(&a, &mut new), 0);
        // The cache holds the name, so its address is not reused for another while cached.
        assert_eq!(Arc::strong_count(&a), 2);
        assert_eq!(numbering.of(&b, &mut new), 1);
        assert_eq!(numbering.of(&a, &mut new), 0);
        assert_eq!(numbering.of(&other_a, &mut new), 0);
        assert_eq!(new, vec![Box::from("a"), Box::from("b")]);
    }

    #[test]
    fn names_a_page_apart_are_each_looked_up_by_text_once() {
        // Names whose addresses differ by multiples of 4 KiB: they shared one slot of the
        // direct-mapped cache and were looked up by text on every event.
        // Every name made is kept alive, so no two share an address.
        let mut made: Vec<Arc<str>> = Vec::new();
        let mut names: Vec<Arc<str>> = Vec::new();
        while names.len() < 8 && made.len() < 100_000 {
            let name: Arc<str> = Arc::from(format!("n{}", made.len()));
            let apart = names.first().is_none_or(|first| {
                (Arc::as_ptr(&name).cast::<u8>() as usize)
                    .abs_diff(Arc::as_ptr(first).cast::<u8>() as usize)
                    .is_multiple_of(4096)
            });
            if apart {
                names.push(Arc::clone(&name));
            }
            made.push(name);
        }
        assert!(
            names.len() >= 2,
            "the allocator gave no two names a page apart"
        );
        let (mut numbering, mut new) = (Numbering::default(), Vec::new());
        for _round in 0..100 {
            for (i, name) in names.iter().enumerate() {
                assert_eq!(numbering.of(name, &mut new), i as u32);
            }
        }
        assert_eq!(numbering.by_text_lookups, names.len());
    }

    #[test]
    fn past_the_held_names_numbers_still_follow_the_text() {
        let (mut numbering, mut new) = (Numbering::default(), Vec::new());
        let names: Vec<Arc<str>> = (0..SLOTS * 2).map(|i| Arc::from(format!("n{i}"))).collect();
        for _round in 0..3 {
            for (i, name) in names.iter().enumerate() {
                assert_eq!(numbering.of(name, &mut new), i as u32);
            }
        }
        assert_eq!(numbering.held, HELD_AT_MOST);
        // Held names were looked up by text once, the others in every round.
        assert_eq!(
            numbering.by_text_lookups,
            HELD_AT_MOST + (SLOTS * 2 - HELD_AT_MOST) * 3
        );
        // The same text at another address: the same number, and nothing new announced.
        for (i, name) in names.iter().enumerate() {
            let again: Arc<str> = Arc::from(&**name);
            assert_eq!(numbering.of(&again, &mut new), i as u32);
        }
        assert_eq!(new.len(), SLOTS * 2);
    }
}
