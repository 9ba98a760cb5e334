//! `bench --serve`'s floor: the bare hyper server answers exactly the bytes `serve` answered,
//! and the floor rounds measure both servers with no failed call.

use routersim_live::serve::bare::{Recorded, spawn_bare_server};
use routersim_live::serve::bench::{
    FLOOR_CONNECTIONS, FLOOR_PATH, ServeBenchOptions, bench_config, run_serve_bench,
    spawn_wire_server,
};
use std::time::Duration;

fn body(answer: &routersim_live::serve::bare::Answer) -> Vec<u8> {
    answer.frames.iter().flat_map(|f| f.to_vec()).collect()
}

#[test]
fn the_bare_server_answers_the_bytes_serve_answered() {
    let serve = spawn_wire_server(bench_config).unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let local = tokio::task::LocalSet::new();
    let from_serve = local
        .block_on(&runtime, Recorded::fetch(serve.addr, FLOOR_PATH))
        .unwrap();
    let bare = spawn_bare_server(from_serve.clone()).unwrap();
    let from_bare = local
        .block_on(&runtime, Recorded::fetch(bare.addr, FLOOR_PATH))
        .unwrap();
    bare.stop().unwrap();
    serve.stop().unwrap();

    let json = String::from_utf8(body(&from_serve.json)).unwrap();
    assert!(json.contains("\"chat.completion\""), "{json}");
    let sse = String::from_utf8(body(&from_serve.sse)).unwrap();
    assert!(sse.ends_with("data: [DONE]\n\n"), "{sse}");
    // One frame per event: serve's events (a first token, the rest coalesced at 0 ms
    // apart, the finish) and the `[DONE]` line.
    assert_eq!(
        from_serve.sse.frames.len(),
        sse.matches("\n\n").count(),
        "{sse}"
    );
    assert!(from_serve.sse.frames.len() >= 3, "{sse}");
    for (serve, bare) in [
        (&from_serve.json, &from_bare.json),
        (&from_serve.sse, &from_bare.sse),
    ] {
        assert_eq!(bare.status, serve.status);
        assert_eq!(bare.headers, serve.headers);
        assert_eq!(body(bare), body(serve));
        assert_eq!(bare.frames.len(), serve.frames.len());
    }
}

#[test]
fn the_floor_rounds_measure_serve_and_the_bare_server_at_64_and_512_connections() {
    let options = ServeBenchOptions {
        phase: Duration::from_millis(50),
        connections: 2,
        latency_connections: 1,
        streams: 2,
        floor_phase: Duration::from_millis(50),
        rounds: 1,
    };
    let result = run_serve_bench(&options).unwrap();
    let rows: Vec<(bool, usize)> = result
        .floor
        .iter()
        .map(|r| (r.stream, r.connections))
        .collect();
    let expected: Vec<(bool, usize)> = [false, true]
        .into_iter()
        .flat_map(|s| FLOOR_CONNECTIONS.map(|c| (s, c)))
        .collect();
    assert_eq!(rows, expected);
    assert_eq!(FLOOR_CONNECTIONS, [64, 512]);
    for row in &result.floor {
        assert_eq!(row.pair.errors(), 0, "{row:?}");
        assert!(row.pair.base_per_sec() > 0.0 && row.pair.measured_per_sec() > 0.0);
        assert!(row.pair.ratio() > 0.0);
    }
}
