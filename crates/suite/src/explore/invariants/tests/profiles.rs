//! Invariant checks whose rule differs by profile (chained continuations, Retry-After waits)
//! or by replica (a fleet's cooldowns), and the bounds each profile derives.

use super::*;

fn continued(s: &mut Script, ms: u64, from: &str, to: &str) {
    s.push(
        ms,
        Some(0),
        EventKind::StreamContinued {
            from_group: g(),
            from_deployment: Arc::from(from),
            to_group: g(),
            to_deployment: Arc::from(to),
            prefill_tokens: 5,
        },
    );
}

fn broke(s: &mut Script, ms: u64, dep: &str) {
    s.push(
        ms,
        Some(0),
        EventKind::StreamBreak {
            model_group: g(),
            deployment_id: Arc::from(dep),
            failure: FailureKind::ApiConnection,
            how: BreakKind::Connection,
            tokens_so_far: 10,
            after_content: true,
        },
    );
}

/// Request 0 streams from `a`, breaks, and is continued on `b`, `c`, … (`legs` of them), each
/// breaking after content but the last.
fn chain(legs: &[&str]) -> Script {
    let mut s = committed();
    let mut from = "a";
    let mut t = 600;
    for (i, to) in legs.iter().enumerate() {
        let n = i as u32 + 2;
        continued(&mut s, t, from, to);
        s.start_attempt(t, 0, n, to).chunk(t + 50, 0);
        let last = i + 1 == legs.len();
        if !last {
            broke(&mut s, t + 100, to);
        }
        s.end_attempt(t + 100, 0, n, t, to, last);
        from = to;
        t += 100;
    }
    s.end(t, 0, legs.len() as u32 + 1, 0, true)
        .attempt(0, 10, 1, 1, "a", true)
        .end(10, 1, 1, 0, false);
    s
}

#[test]
fn chained_continuations_pass_up_to_what_the_profile_allows() {
    let chained = |max| Bounds {
        max_continuations: max,
        max_attempts: 10,
        ..bounds()
    };
    // Two continuations in a row: legal where a broken continuation is continued again, up
    // to max_fallbacks (litellm-1.110); a second continuation by the documented rule.
    let two = chain(&["b", "a"]);
    assert_eq!(two.check_with(chained(2)), None);
    let v = two.check_with(chained(1)).expect("a second continuation");
    assert_eq!(v.invariant, Invariant::NoRetryAfterCommit);
    assert!(v.detail.contains("a second continuation"), "{}", v.detail);
    // One past max_fallbacks: the chain's bound.
    let three = chain(&["b", "a", "b"]);
    assert_eq!(three.check_with(chained(3)), None);
    let v = three.check_with(chained(2)).expect("past max_fallbacks");
    assert_eq!(v.invariant, Invariant::NoRetryAfterCommit);
    assert!(v.detail.contains("max_fallbacks is 2"), "{}", v.detail);
}

/// Request 0 fails on `b`, waits `duration` for `reason`, and succeeds after it.
fn waited(duration: Duration, reason: WaitReason) -> Script {
    let mut s = Script::new();
    let after = 100 + duration.as_millis() as u64;
    s.attempt(0, 100, 0, 1, "b", false)
        .retry(100, 0, 1, 2)
        .push(100, Some(0), EventKind::Wait { duration, reason })
        .attempt(after, after + 10, 0, 2, "b", true)
        .end(after + 10, 0, 2, 1, false)
        .attempt(0, 10, 1, 1, "a", true)
        .end(10, 1, 1, 0, false);
    s
}

#[test]
fn retry_after_waits_follow_the_profile_s_rule() {
    let ra = |ms| waited(Duration::from_millis(ms), WaitReason::RetryAfter);
    // Documented: (0, 60 s].
    assert_eq!(
        ra(0).check().map(|v| v.invariant),
        Some(Invariant::NoWaitPastDeadline)
    );
    assert_eq!(
        ra(60_500).check().map(|v| v.invariant),
        Some(Invariant::NoWaitPastDeadline)
    );
    // litellm-1.110: its jitter (< 0.75 s) is added to a Retry-After of up to 60 s.
    let v110 = Bounds {
        retry_after_cap: MAX_RETRY_AFTER + MAX_JITTER,
        ..bounds()
    };
    assert_eq!(ra(60_500).check_with(v110.clone()), None);
    assert!(ra(60_800).check_with(v110.clone()).is_some());
    assert!(ra(0).check_with(v110).is_some());
    // Multigrid: the provider's Retry-After wins, 0 included, up to the walk's deadline.
    let multigrid = Bounds {
        retry_after_zero: true,
        retry_after_cap: Duration::from_secs(300),
        ..bounds()
    };
    assert_eq!(ra(0).check_with(multigrid.clone()), None);
    assert_eq!(ra(120_000).check_with(multigrid.clone()), None);
    assert!(ra(301_000).check_with(multigrid).is_some());
}

#[test]
fn cooldowns_are_checked_per_replica() {
    // Replica 0 cools b until 2.05 s and ends it there; replica 1 cools b until 6 s and ends
    // it there. One checker slot per deployment (replicas: 1) mixes them up.
    let mut s = Script::new();
    s.cool(50, "b", 2)
        .cool(1000, "b", 5)
        .cool_end(2050, "b")
        .cool_end(6000, "b");
    let replicas = [0, 1, 0, 1];
    let check = |count: usize| {
        let checker = Checker::new(
            Bounds {
                replicas: count,
                ..bounds()
            },
            s.start,
        );
        for (e, r) in s.events.iter().zip(replicas) {
            checker.emit_from(r, e);
        }
        checker.first_violation()
    };
    assert_eq!(check(2), None);
    assert_eq!(check(1).map(|v| v.invariant), Some(Invariant::CooldownEnds));
}

#[test]
fn bounds_carry_each_profile_s_rules() {
    use routersim_sim::scenario::parse_scenario;
    let derive = |profile: &str| {
        let text = format!(
            "name: p\nduration: 10s\nrouter:\n  model_list:\n    - {{model_name: g, litellm_params: \
             {{model: openai/x}}, model_info: {{id: a}}}}\n  router_settings:\n    profile: {profile}\n    \
             enable_mid_stream_fallback_continuation: true\n    max_fallbacks: 3\ntraffic:\n  - \
             {{model: g, at: 1s}}\n"
        );
        let scenario = parse_scenario(&text, std::path::Path::new("p.yaml")).expect("loads");
        Bounds::derive(&scenario, 1)
    };
    let documented = derive("litellm");
    assert_eq!(
        (
            documented.max_continuations,
            documented.retry_after_cap,
            documented.retry_after_zero
        ),
        (1, MAX_RETRY_AFTER, false)
    );
    assert_eq!(derive("deltallm").max_continuations, 1);
    let v110 = derive("litellm-1.110");
    assert_eq!(
        (
            v110.max_continuations,
            v110.retry_after_cap,
            v110.retry_after_zero
        ),
        (3, MAX_RETRY_AFTER + MAX_JITTER, false)
    );
    assert_eq!(v110.max_attempts, documented.max_attempts + 2);
    assert_eq!(documented.cooldown_rewrite, CooldownRewrite::KeepLater);
    assert_eq!(v110.cooldown_rewrite, CooldownRewrite::FirstOrLatest);
    for walks in ["multigrid", "contract"] {
        let b = derive(walks);
        assert!(b.retry_after_zero, "{walks}");
        assert_eq!(b.retry_after_cap, Duration::from_secs(300), "{walks}");
    }
    // A walk over candidate routes never continues a stream (the contract profile's stream
    // recovery is LiteLLM's, but its walk is Multigrid's).
    for walks in ["multigrid", "contract"] {
        let b = derive(walks);
        assert_eq!((b.continuation, b.max_continuations), (false, 0), "{walks}");
    }
}

#[test]
fn a_cooldown_rewrite_follows_the_profile_s_store() {
    // b cools 5 s at 0.05 s (until 5.05 s), fails again at 1 s asking 10 s (until 11 s),
    // and again at 2 s asking 1 s (until 3 s). The documented store keeps the later
    // deadline (11 s); LiteLLM 1.110.2's never extends a live cooldown and lets a shorter
    // one shorten it: the earlier of the first write's 5.05 s and the new write's end
    // (oracle calls 44-48).
    let script = |second: u64, third: u64, end: u64| {
        let mut s = Script::new();
        s.cool(50, "b", 5)
            .push_until(1000, "b", 10, second)
            .push_until(2000, "b", 1, third)
            .cool_end(end, "b");
        s
    };
    let v110 = Bounds {
        cooldown_rewrite: CooldownRewrite::FirstOrLatest,
        ..bounds()
    };
    let store_110 = script(5050, 3000, 3000);
    assert_eq!(store_110.cooldowns_with(v110.clone()), None);
    let v = store_110
        .cooldowns_with(bounds())
        .expect("the documented store keeps the later");
    assert_eq!(v.invariant, Invariant::EventsConsistent);
    assert!(
        v.detail.contains("the later of the old deadline"),
        "{}",
        v.detail
    );
    let documented = script(11_000, 11_000, 11_000);
    assert_eq!(documented.cooldowns_with(bounds()), None);
    let v = documented
        .cooldowns_with(v110)
        .expect("1.110.2 never extends");
    assert!(
        v.detail
            .contains("the earlier of the first write's deadline"),
        "{}",
        v.detail
    );
}

#[test]
fn a_cooldown_written_as_the_old_one_ends_begins_a_new_one() {
    // b cools 1 s at 0.05 s (until 1.05 s) and fails again at exactly 1.05 s, before its
    // cooldown_end: the store's entry is over (live only while until > now), so the write
    // begins a new cooldown until 6.05 s under either re-write rule.
    for rule in [CooldownRewrite::KeepLater, CooldownRewrite::FirstOrLatest] {
        let mut s = Script::new();
        s.cool(50, "b", 1)
            .push_until(1050, "b", 5, 6050)
            .cool_end(6050, "b");
        let bounds = Bounds {
            cooldown_rewrite: rule,
            ..bounds()
        };
        assert_eq!(s.cooldowns_with(bounds), None, "{rule:?}");
    }
}

impl Script {
    /// The first violation of the events so far (no request needs to have ended).
    fn cooldowns_with(&self, bounds: Bounds) -> Option<Violation> {
        let checker = Checker::new(bounds, self.start);
        for e in &self.events {
            checker.emit(e);
        }
        checker.first_violation()
    }

    /// A cooldown set at `ms` for `secs` whose event says it lasts until `until_ms`.
    fn push_until(&mut self, ms: u64, dep: &str, secs: u64, until_ms: u64) -> &mut Self {
        let until = self.t(until_ms);
        self.push(
            ms,
            None,
            EventKind::CooldownSet {
                source: routersim_engine::event::CooldownSource::Router,
                model_group: g(),
                deployment_id: Arc::from(dep),
                reason: CooldownReason::RateLimitInGroup,
                failure: FailureKind::RateLimit,
                duration: Duration::from_secs(secs),
                until,
            },
        )
    }
}

/// Portkey's `loadbalance` tries the one target it draws (its retries, `num_retries: 2`) and
/// never another, so a request makes at most 3 attempts and no hop; its `fallback` walks both
/// deployments of `g` (3 each) and may hop to `h` (3 more).
#[test]
fn portkey_loadbalance_bounds_one_route_and_no_hop() {
    use routersim_sim::scenario::parse_scenario;
    let derive = |strategy: &str| {
        let text = format!(
            "name: p\nduration: 10s\nrouter:\n  model_list:\n    - {{model_name: g, \
             litellm_params: {{model: openai/x}}, model_info: {{id: a}}}}\n    - {{model_name: \
             g, litellm_params: {{model: openai/y}}, model_info: {{id: b}}}}\n    - \
             {{model_name: h, litellm_params: {{model: openai/z}}, model_info: {{id: c}}}}\n  \
             router_settings:\n    profile: portkey\n    num_retries: 2\n    \
             portkey_strategy: {strategy}\ntraffic:\n  - {{model: g, at: 1s}}\n"
        );
        let scenario = parse_scenario(&text, std::path::Path::new("p.yaml")).expect("loads");
        let b = Bounds::derive(&scenario, 1);
        (b.max_attempts, b.max_fallback_hops)
    };
    assert_eq!(derive("fallback"), (9, 1));
    assert_eq!(derive("loadbalance"), (3, 0));
}

/// Portkey's backoff has no cap: with `num_retries: 6` its last wait is 1 s · 2^5 = 32 s, past
/// the capped profiles' longest backoff, and the bound allows exactly that (plus jitter's
/// slack); LiteLLM's capped backoff keeps the documented cap.
#[test]
fn an_uncapped_backoff_bounds_the_wait_by_its_last_retry() {
    use routersim_sim::scenario::parse_scenario;
    let derive = |profile: &str| {
        let text = format!(
            "name: p\nduration: 10s\nrouter:\n  model_list:\n    - {{model_name: g, \
             litellm_params: {{model: openai/x}}, model_info: {{id: a}}}}\n  \
             router_settings:\n    profile: {profile}\n    num_retries: 6\ntraffic:\n  - \
             {{model: g, at: 1s}}\n"
        );
        let scenario = parse_scenario(&text, std::path::Path::new("p.yaml")).expect("loads");
        Bounds::derive(&scenario, 1).backoff_cap
    };
    assert!(Duration::from_secs(32) > MAX_BACKOFF);
    assert_eq!(derive("portkey"), Duration::from_secs(32) + MAX_JITTER);
    assert_eq!(derive("litellm"), MAX_BACKOFF + MAX_JITTER);
}
