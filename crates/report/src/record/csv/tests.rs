//! Tests of `csv`.

use super::*;
use routersim_engine::stream::StreamOutcome;
use std::fs;

/// A trace file in the temp dir, removed when dropped.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.0);
    }
}

fn scratch(name: &str, header: &[&str]) -> Result<(Scratch, CsvOut), ReportError> {
    let path = std::env::temp_dir().join(format!(
        "routersim-schema-{name}-{}.csv",
        std::process::id()
    ));
    let csv = CsvOut::create(path.clone(), header)?;
    Ok((Scratch(path), csv))
}

type Writer<R> = fn(&mut CsvOut, &R) -> io::Result<()>;

/// Runs each column's writer alone: it must write exactly one field, or the header and
/// the rows of the file would disagree from that column on.
fn one_field_each<R>(columns: &[(&str, Writer<R>)], row: &R) -> io::Result<()> {
    let (_scratch, mut w) = scratch("fields", &["x"]).map_err(io::Error::other)?;
    for (name, field) in columns {
        w.out.buf.truncate(w.row_start);
        w.fields = 0;
        field(&mut w, row)?;
        assert_eq!(w.fields, 1, "column {name} wrote {} fields", w.fields);
    }
    Ok(())
}

fn requests() -> [RequestRow<'static>; 3] {
    let plain = RequestRow {
        request_id: Some(7),
        arrival_us: 1_500,
        model: "gpt-4o",
        final_model_group: "gpt-4o",
        final_deployment_id: "a,b",
        outcome: "ok",
        status: Some(200),
        attempts: 2,
        retries: 1,
        fallbacks: 0,
        attempted_fallbacks: 0,
        latency_us: 2_000_001,
        stream: None,
        ttft_us: None,
        routing_failures: "a:429:http_429",
        client_try: None,
        replica: None,
    };
    let streamed = RequestRow {
        request_id: None,
        status: None,
        final_deployment_id: "",
        stream: Some(StreamStats {
            outcome: Some(StreamOutcome::Completed),
            ttft: Some(Duration::from_millis(3)),
            tokens_delivered: 10,
            tokens_billed: 12,
        }),
        ttft_us: Some(3_000),
        ..plain
    };
    let never_opened = RequestRow {
        stream: Some(StreamStats::default()),
        ..plain
    };
    [plain, streamed, never_opened]
}

fn attempts() -> [AttemptRow<'static>; 2] {
    let ok = AttemptRow {
        request_id: Some(1),
        attempt: 1,
        start_us: 0,
        end_us: 250_000,
        model_group: "A",
        deployment_id: "a1",
        outcome: "ok",
        status: Some(200),
        retry_after: None,
        wait: Duration::ZERO,
        fallback_depth: 0,
        replica: None,
    };
    let failed = AttemptRow {
        request_id: None,
        outcome: "rate_limit",
        status: None,
        retry_after: Some(Duration::from_micros(1_234_567)),
        ..ok
    };
    [ok, failed]
}

#[test]
fn digits_match_display() {
    let mut buf = [0u8; 32];
    let powers = (0..20).flat_map(|e| {
        let p = 10u64.pow(e);
        [p - 1, p, p + 1]
    });
    for n in (0..2_000u64).chain(powers).chain([123_456_789, u64::MAX]) {
        let start = digits(&mut buf, 32, n);
        assert_eq!(&buf[start..], n.to_string().as_bytes());
        let mut out = b"x".to_vec();
        n.push_to(&mut out);
        assert_eq!(out, format!("x{n}").as_bytes());
        for us in [
            n,
            n.saturating_mul(1000).saturating_add(7),
            n.saturating_mul(977),
        ] {
            let mut out = b"x".to_vec();
            Ms(us).push_to(&mut out);
            assert_eq!(out, format!("x{}", Ms(us)).as_bytes());
        }
    }
}

/// The rule `needs_quotes` speeds up, a byte at a time.
fn quotes_simply(bytes: &[u8]) -> bool {
    bytes
        .iter()
        .any(|b| matches!(b, b',' | b'"' | b'\r' | b'\n'))
}

/// A field as the byte-by-byte writer wrote it.
fn simple_field(bytes: &[u8]) -> Vec<u8> {
    if !quotes_simply(bytes) {
        return bytes.to_vec();
    }
    let mut out = vec![b'"'];
    for &b in bytes {
        if b == b'"' {
            out.push(b'"');
        }
        out.push(b);
    }
    out.push(b'"');
    out
}

/// Every length to 40 filled with each byte value, alone and with each special byte at
/// every position (so at every offset within a word, and in the overlapping tail).
fn byte_fields() -> impl Iterator<Item = Vec<u8>> {
    (0..=40usize).flat_map(|len| {
        (0..=255u8).flat_map(move |fill| {
            let plain = vec![fill; len];
            let marked = (0..len).flat_map(move |at| {
                [b',', b'"', b'\r', b'\n'].map(|special| {
                    let mut field = vec![fill; len];
                    field[at] = special;
                    field
                })
            });
            std::iter::once(plain).chain(marked)
        })
    })
}

#[test]
fn word_scan_matches_the_byte_rule() {
    for field in byte_fields() {
        assert_eq!(needs_quotes(&field), quotes_simply(&field), "{field:?}");
    }
    let long: Vec<u8> = (0..=255u8).cycle().take(5_000).collect();
    assert!(needs_quotes(&long));
    let plain: Vec<u8> = long
        .iter()
        .map(|&b| if quotes_simply(&[b]) { b'x' } else { b })
        .collect();
    assert!(!needs_quotes(&plain));
}

#[test]
fn plain_fields_are_copied_exactly() {
    for len in 0..=40 {
        let field: Vec<u8> = (0..len).map(|i| b'a' + (i % 26) as u8).collect();
        let mut out = b"row,".to_vec();
        push_plain(&mut out, &field);
        assert_eq!(out, [b"row,".as_slice(), &field].concat());
    }
}

#[test]
fn str_matches_the_byte_by_byte_writer() -> Result<(), Box<dyn std::error::Error>> {
    let (_scratch, mut w) = scratch("quoting", &["x"])?;
    let texts = [
        "",
        "a",
        "ab",
        "abc",
        "gpt-4o",
        "a,b",
        "\"",
        "\"\"",
        "say \"hi\"",
        "line\r\n",
        "héllo, wörld",
        "日本語",
        "日本語,テキスト",
        "✓✓✓✓✓✓✓✓\n",
        "e\u{301}\u{301}\u{301}\u{301}\u{301}",
    ];
    let base = "abcdefgh\u{e9}ijklmnop\u{65e5}qrstuvwxyz0123456789";
    let mut fields: Vec<String> = texts.iter().map(|t| (*t).to_string()).collect();
    for len in 0..base.len() {
        let Some(plain) = base.get(..len) else {
            continue;
        };
        fields.push(plain.to_string());
        for at in 0..=len {
            for special in [',', '"', '\r', '\n'] {
                if let (Some(head), Some(tail)) = (plain.get(..at), plain.get(at..)) {
                    fields.push(format!("{head}{special}{tail}"));
                }
            }
        }
    }
    fields.push("x".repeat(10_000));
    fields.push(format!("{},", "x".repeat(10_000)));
    fields.push(format!("{}\"{}", "é".repeat(3_000), "y".repeat(77)));
    for field in &fields {
        w.out.buf.truncate(w.row_start);
        w.fields = 0;
        w.str(field)?;
        assert_eq!(
            w.out.buf[w.row_start..],
            simple_field(field.as_bytes()),
            "{field:?}"
        );
    }
    Ok(())
}

#[test]
fn every_column_writes_one_field() -> io::Result<()> {
    for row in &requests() {
        one_field_each(REQUESTS_FIELDS, row)?;
    }
    for row in &attempts() {
        one_field_each(ATTEMPTS_FIELDS, row)?;
    }
    Ok(())
}

#[test]
fn rows_read_back_under_their_header() -> Result<(), Box<dyn std::error::Error>> {
    let (scratch, mut w) = scratch("rows", &header(REQUESTS_COLUMNS))?;
    for row in &requests() {
        w.request(row)?;
    }
    w.out.flush()?;
    let text = fs::read_to_string(&scratch.0)?;
    let lines: Vec<&str> = text.lines().skip(1).collect();
    assert_eq!(
        lines,
        [
            "7,1.500,gpt-4o,gpt-4o,\"a,b\",ok,200,2,1,0,2000.001,false,,,,,0,a:429:http_429,",
            ",1.500,gpt-4o,gpt-4o,,ok,,2,1,0,2000.001,true,completed,3.000,10,12,0,a:429:http_429,",
            "7,1.500,gpt-4o,gpt-4o,\"a,b\",ok,200,2,1,0,2000.001,true,,,0,0,0,a:429:http_429,",
        ]
    );
    // The csv crate refuses a record whose length differs from the header's.
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    assert_eq!(reader.headers()?.len(), REQUESTS_COLUMNS.len());
    assert_eq!(reader.records().collect::<Result<Vec<_>, _>>()?.len(), 3);
    Ok(())
}
