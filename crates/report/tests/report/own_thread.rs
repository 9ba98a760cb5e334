//! `Recorder::on_own_thread`: the same files as folding on the emitting thread, a real second
//! thread, and no work left behind when the recorder is dropped unfinished.

use std::error::Error;
use std::fs;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use routersim_engine::event::{CooldownReason, CooldownSource, EventKind, EventSink, RoutingEvent};
use routersim_engine::failure::FailureKind;
use routersim_report::{Recorder, RecorderOptions, RunMeta};
use tokio::time::Instant;

use super::out_dir;

type TestResult = Result<(), Box<dyn Error>>;

/// `requests` requests of one or two attempts over three deployments, with cooldowns: many
/// hand-overs' worth of events. Names are shared, as a run's are, except every seventh
/// request's, which are fresh allocations of the same text.
fn traffic(t0: Instant, requests: u64) -> Vec<RoutingEvent> {
    let ms = Duration::from_millis;
    let shared: Vec<Arc<str>> = ["a", "b", "c"].into_iter().map(Arc::from).collect();
    let group: Arc<str> = Arc::from("gpt-4o");
    let mut events = Vec::new();
    for id in 0..requests {
        let fresh = id % 7 == 0;
        let name = |text: &Arc<str>| {
            if fresh {
                Arc::from(&**text)
            } else {
                text.clone()
            }
        };
        let deployment = name(&shared[(id % 3) as usize]);
        let group = name(&group);
        let at = |offset: u64| t0 + ms(id * 10 + offset);
        let ev = |offset: u64, kind: EventKind| RoutingEvent {
            at: at(offset),
            request_id: Some(id),
            kind,
        };
        let failed = id % 5 == 0;
        events.push(ev(
            0,
            EventKind::AttemptStart {
                attempt: 1,
                model_group: group.clone(),
                deployment_id: deployment.clone(),
                fallback_depth: 0,
                max_tokens: None,
            },
        ));
        events.push(ev(
            4,
            EventKind::AttemptEnd {
                attempt: 1,
                start: at(0),
                model_group: group.clone(),
                deployment_id: deployment.clone(),
                failure: failed.then_some(FailureKind::RateLimit),
                status: Some(if failed { 429 } else { 200 }),
                retry_after: None,
                wait: Duration::ZERO,
                fallback_depth: 0,
            },
        ));
        if failed {
            events.push(ev(
                4,
                EventKind::CooldownSet {
                    model_group: group.clone(),
                    deployment_id: deployment.clone(),
                    reason: CooldownReason::AllowedFailsExceeded,
                    failure: FailureKind::RateLimit,
                    duration: ms(5),
                    source: CooldownSource::Router,
                    until: at(9),
                },
            ));
        }
        events.push(ev(
            6,
            EventKind::RequestEnd {
                model: group.clone(),
                final_model_group: group.clone(),
                final_deployment_id: Some(deployment.clone()),
                failure: failed.then_some(FailureKind::RateLimit),
                status: Some(if failed { 429 } else { 200 }),
                attempts: 1,
                retries: 0,
                fallbacks: 0,
                attempted_fallbacks: 0,
                start: at(0),
                stream: None,
            },
        ));
    }
    events
}

fn record(dir: &Path, events: &[RoutingEvent], t0: Instant, own_thread: bool) -> TestResult {
    let mut recorder = Recorder::new(dir, t0, RecorderOptions::default())?;
    if own_thread {
        recorder = recorder.on_own_thread();
    }
    for event in events {
        recorder.emit(event);
    }
    let end = events.last().map_or(t0, |e| e.at);
    recorder.finish(RunMeta {
        scenario: "own-thread".into(),
        seed: 1,
        version: "test".into(),
        end,
    })?;
    Ok(())
}

fn files(dir: &Path) -> Result<Vec<String>, Box<dyn Error>> {
    let mut names: Vec<String> = fs::read_dir(dir)?
        .map(|e| e.map(|e| e.file_name().to_string_lossy().into_owned()))
        .collect::<Result<_, _>>()?;
    names.sort();
    Ok(names)
}

#[test]
fn a_recorder_on_its_own_thread_writes_the_same_bytes() -> TestResult {
    let t0 = Instant::now();
    // 11,200 events (three a request, a cooldown every fifth): ten full hand-overs and a
    // partial last one.
    let events = traffic(t0, 3_500);
    let (here, there) = (
        out_dir("own-thread", "here")?,
        out_dir("own-thread", "there")?,
    );
    record(&here, &events, t0, false)?;
    record(&there, &events, t0, true)?;
    let names = files(&here)?;
    assert_eq!(names, files(&there)?);
    assert!(names.len() >= 11, "{names:?}");
    for name in &names {
        assert_eq!(
            fs::read(here.join(name))?,
            fs::read(there.join(name))?,
            "{name}"
        );
    }
    let requests = fs::read_to_string(there.join("requests.csv"))?;
    assert_eq!(requests.lines().count(), 3_501);
    Ok(())
}

/// The names of this process's threads (Linux: `/proc/self/task/*/comm`).
#[cfg(target_os = "linux")]
fn thread_names() -> Result<Vec<String>, Box<dyn Error>> {
    let mut names = Vec::new();
    for task in fs::read_dir("/proc/self/task")? {
        let comm = fs::read_to_string(task?.path().join("comm"))?;
        names.push(comm.trim().to_string());
    }
    Ok(names)
}

#[cfg(target_os = "linux")]
#[test]
fn the_thread_starts_at_the_first_event() -> TestResult {
    let t0 = Instant::now();
    let events = traffic(t0, 10);
    let recorder = Recorder::new(
        out_dir("own-thread", "started")?,
        t0,
        RecorderOptions::default(),
    )?
    .on_own_thread();
    recorder.emit(&events[0]);
    // A new thread carries its parent's name until it has started and named itself.
    let mut named = false;
    for _ in 0..200 {
        named = thread_names()?.iter().any(|name| name == "recorder");
        if named {
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(named, "{:?}", thread_names()?);
    for event in &events[1..] {
        recorder.emit(event);
    }
    let summary = recorder.finish(RunMeta {
        scenario: "started".into(),
        seed: 1,
        version: "test".into(),
        end: t0 + Duration::from_secs(1),
    })?;
    assert_eq!(summary.requests, 10);
    Ok(())
}

#[test]
fn dropped_unfinished_it_waits_for_its_thread() -> TestResult {
    let t0 = Instant::now();
    let dir = out_dir("own-thread", "dropped")?;
    let recorder = Recorder::new(&dir, t0, RecorderOptions::default())?.on_own_thread();
    for event in traffic(t0, 1_000) {
        recorder.emit(&event);
    }
    // A failed run drops its recorder: the thread folds what it was given and ends, so
    // nothing writes into the folder after this returns.
    drop(recorder);
    let before = fs::read(dir.join("requests.csv"))?;
    std::thread::sleep(Duration::from_millis(20));
    assert_eq!(before, fs::read(dir.join("requests.csv"))?);
    Ok(())
}
