//! The summary as a few lines for the terminal (`routersim run`, `check`): the figures of
//! `summary.json` a person reads first, and a line per feature only when it acted.

use std::collections::BTreeMap;
use std::io::{self, Write};

use super::document::Summary;
use super::routing::RoutingMetrics;
use super::sections::{AlternativesSummary, ContractSummary, StreamSummary};
use crate::windows::WindowStats;

/// A short human summary for the terminal.
pub fn print_summary(summary: &Summary, out: &mut impl Write) -> io::Result<()> {
    let s = summary;
    match &s.live {
        // A live run's times are the wall clock's: said so, with where and when it ran.
        Some(live) => writeln!(
            out,
            "{} (seed {}): live run against {}, started {}, {} requests in {:.3} s wall clock",
            s.scenario,
            s.seed,
            live.target,
            live.started_at,
            s.requests,
            live.wall_clock_ms / 1000.0,
        )?,
        None => writeln!(
            out,
            "{} (seed {}): {} requests in {:.3} s virtual{}",
            s.scenario,
            s.seed,
            s.requests,
            s.duration_ms / 1000.0,
            s.transport
                .as_deref()
                .map(|t| format!(", transport {t}"))
                .unwrap_or_default()
        )?,
    }
    write!(out, "  ok {}, failed {}", s.ok, s.failed)?;
    if !s.failed_by_kind.is_empty() {
        let kinds: Vec<String> = s
            .failed_by_kind
            .iter()
            .map(|(kind, n)| format!("{kind} {n}"))
            .collect();
        write!(out, " ({})", kinds.join(", "))?;
    }
    writeln!(out)?;
    writeln!(
        out,
        "  fallback rate {:.2}% ({} hops), retry rate {:.2}% ({} retries), {:.2} attempts/request (max {})",
        s.fallback_rate * 100.0,
        s.fallbacks,
        s.retry_rate * 100.0,
        s.retries,
        s.attempts_per_request.mean,
        s.attempts_per_request.max
    )?;
    writeln!(
        out,
        "  latency p50 {:.3} ms, p99 {:.3} ms, max {:.3} ms",
        s.latency_ms.p50, s.latency_ms.p99, s.latency_ms.max
    )?;
    // Periods (distinct cooling intervals, as the plot draws them) beside sets (every
    // `CooldownSet`, re-sets that extend a live cooldown included): two different numbers.
    write!(
        out,
        "  cooldown periods {}, cooldown sets {} ({:.3} ms cooled), all-cooled picks {}",
        s.cooldowns.periods, s.cooldowns.sets, s.cooldowns.cooled_ms_total, s.all_cooled
    )?;
    let parts: Vec<String> = s
        .cooldowns
        .by_deployment
        .iter()
        .filter(|(_, d)| d.count > 0)
        .map(|(id, d)| {
            format!(
                "{id} {} {}/{} {}/{:.3} ms",
                d.periods,
                plural(d.periods, "period"),
                d.sets,
                plural(d.sets, "set"),
                d.total_cooled_ms
            )
        })
        .collect();
    if !parts.is_empty() {
        write!(out, ": {}", parts.join(", "))?;
    }
    writeln!(out)?;
    print_windows(s, out)?;
    if let Some(routing) = &s.routing {
        print_routing(routing, out)?;
    }
    print_streams(&s.streams, out)?;
    print_contract(s.contract.as_ref(), out)?;
    print_alternatives(s.alternatives.as_ref(), out)
}

/// The contract line (`profile: contract`): HTTP success beside acceptance, and why answers
/// and routes were turned down (reasons never seen are left out).
fn print_contract(c: Option<&ContractSummary>, out: &mut impl Write) -> io::Result<()> {
    let Some(c) = c else {
        return Ok(());
    };
    let seen = |m: &BTreeMap<String, u64>| {
        let parts: Vec<String> = m
            .iter()
            .filter(|(_, n)| **n > 0)
            .map(|(name, n)| format!("{name} {n}"))
            .collect();
        if parts.is_empty() {
            String::new()
        } else {
            format!(" ({})", parts.join(", "))
        }
    };
    writeln!(
        out,
        "  contract: http success {:.2}%, accepted {:.2}%, validation rejections {:.2}%{}, routes filtered {}{}",
        c.http_success_rate * 100.0,
        c.accepted_rate * 100.0,
        c.validation_rejection_rate * 100.0,
        seen(&c.validation_rejections),
        c.routes_filtered.values().sum::<u64>(),
        seen(&c.routes_filtered)
    )
}

/// The alternatives line, only when one acted; counts never seen are left out.
fn print_alternatives(alt: Option<&AlternativesSummary>, out: &mut impl Write) -> io::Result<()> {
    let Some(a) = alt else {
        return Ok(());
    };
    let counts = [
        ("retries denied by the budget", a.retries_denied_by_budget),
        ("retries throttled", a.retries_denied_by_throttling),
        ("ejections", a.ejections),
        ("hedged", a.hedged_requests),
        ("hedge wins", a.hedge_wins),
    ];
    let seen: Vec<String> = counts
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(what, n)| format!("{what} {n}"))
        .collect();
    write!(out, "  alternatives: {}", seen.join(", "))?;
    if a.hedged_requests > 0 {
        write!(
            out,
            " ({} extra input tokens, ${:.6})",
            a.hedge_extra_input_tokens, a.hedge_extra_cost_usd
        )?;
    }
    writeln!(out)
}

/// The stream line, only when the run streamed anything; outcomes never seen are left out.
fn print_streams(st: &StreamSummary, out: &mut impl Write) -> io::Result<()> {
    if st.requests == 0 {
        return Ok(());
    }
    write!(out, "  streams {}", st.requests)?;
    let seen: Vec<String> = st
        .outcomes
        .iter()
        .filter(|(_, n)| **n > 0)
        .map(|(name, n)| format!("{name} {n}"))
        .collect();
    if !seen.is_empty() {
        write!(out, " ({})", seen.join(", "))?;
    }
    writeln!(
        out,
        ", continuation rate {:.2}%, ttft p50 {:.3} ms, p99 {:.3} ms",
        st.continuation_rate * 100.0,
        st.ttft_ms.p50,
        st.ttft_ms.p99
    )
}

/// `period` or `periods`.
fn plural(n: u64, word: &str) -> String {
    if n == 1 {
        word.to_string()
    } else {
        format!("{word}s")
    }
}

/// One line per fault window: what the requests that arrived during it and after it met.
fn print_windows(s: &Summary, out: &mut impl Write) -> io::Result<()> {
    let phase = |w: &WindowStats| {
        format!(
            "{} requests, {} failed, p99 {:.3} ms",
            w.requests, w.failed, w.p99_latency_ms
        )
    };
    for w in &s.windows {
        let to = w
            .to_ms
            .map_or_else(|| "end".to_string(), |to| format!("{:.3} s", to / 1000.0));
        write!(
            out,
            "  window {} [{:.3} s, {to}): during {}",
            w.label,
            w.from_ms / 1000.0,
            phase(&w.during)
        )?;
        if w.to_ms.is_some() {
            write!(out, "; after {}", phase(&w.after))?;
        }
        writeln!(out)?;
    }
    Ok(())
}

/// The reliability line, when `summary.json` carries it.
fn print_routing(r: &RoutingMetrics, out: &mut impl Write) -> io::Result<()> {
    write!(
        out,
        "  deadline exhausted {} ({:.2}%), {:.2} attempts/completed request",
        r.deadline_exhausted,
        r.deadline_exhaustion_rate * 100.0,
        r.attempts_per_completed_request
    )?;
    if let Some(usd) = r.cost_per_accepted_response {
        write!(out, "; ${usd:.6}/accepted response")?;
    }
    if r.client_retries > 0 {
        write!(
            out,
            "; {} user requests, {} client retries, {:.2} provider calls/user request (max {})",
            r.user_requests,
            r.client_retries,
            r.provider_calls_per_user_request.mean,
            r.provider_calls_per_user_request.max
        )?;
    }
    if r.ambiguous_outcomes > 0 {
        write!(
            out,
            "; ambiguous {} (replayed {}, executed twice {})",
            r.ambiguous_outcomes, r.ambiguous_replays, r.duplicate_executions
        )?;
    }
    let routes: Vec<String> = r
        .latency_by_final_route
        .iter()
        .map(|(id, l)| format!("{id} {}× p99 {:.3} ms", l.count, l.p99))
        .collect();
    if !routes.is_empty() {
        write!(out, "; by final route: {}", routes.join(", "))?;
    }
    writeln!(out)
}
