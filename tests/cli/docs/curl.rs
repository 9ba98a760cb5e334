//! The `curl` of the examples, done by the test itself over a plain TCP connection (so the
//! test needs no curl): `-s`, `-S`, `-N`, `-i`, `-H`, `-d`, `-X`, `--max-time` and one
//! `http://` URL on a loopback host. It prints what curl prints: with `-i` the status line and
//! headers as received, a blank line, then the body (chunked bodies decoded).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

/// What `curl ARGS` prints, or why it could not run.
pub fn curl(args: &[String]) -> Result<String, String> {
    let request = Request::parse(args)?;
    let mut stream = TcpStream::connect(("127.0.0.1", request.port))
        .map_err(|e| format!("connect to 127.0.0.1:{}: {e}", request.port))?;
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .map_err(|e| e.to_string())?;
    stream
        .write_all(&request.bytes())
        .map_err(|e| e.to_string())?;
    let (head, body) = read_response(&mut stream)?;
    let mut out = String::new();
    if request.include {
        out.push_str(&head.replace("\r\n", "\n"));
        out.push('\n');
    }
    out.push_str(&String::from_utf8_lossy(&body));
    Ok(out)
}

struct Request {
    method: String,
    host: String,
    port: u16,
    path: String,
    headers: Vec<String>,
    data: Option<String>,
    include: bool,
}

impl Request {
    fn parse(args: &[String]) -> Result<Self, String> {
        let mut request = Request {
            method: String::new(),
            host: String::new(),
            port: 80,
            path: String::new(),
            headers: Vec::new(),
            data: None,
            include: false,
        };
        let mut url = None;
        let mut args = args.iter();
        while let Some(arg) = args.next() {
            let mut value = || {
                args.next()
                    .cloned()
                    .ok_or(format!("curl: {arg} needs a value"))
            };
            match arg.as_str() {
                "-H" | "--header" => request.headers.push(value()?),
                "-d" | "--data" | "--data-raw" => request.data = Some(value()?),
                "-X" | "--request" => request.method = value()?,
                "--max-time" => drop(value()?),
                "-i" | "--include" => request.include = true,
                "--no-buffer" | "--silent" | "--show-error" => {}
                flags if flags.starts_with('-') && flags.len() > 1 => {
                    for flag in flags[1..].chars() {
                        match flag {
                            'i' => request.include = true,
                            's' | 'S' | 'N' => {}
                            other => return Err(format!("curl: -{other} is not supported here")),
                        }
                    }
                }
                _ if url.is_none() => url = Some(arg.clone()),
                _ => return Err(format!("curl: a second URL {arg}")),
            }
        }
        let url = url.ok_or("curl: no URL")?;
        request.locate(&url)?;
        if request.method.is_empty() {
            request.method = if request.data.is_some() {
                "POST"
            } else {
                "GET"
            }
            .to_string();
        }
        Ok(request)
    }

    /// Host, port and path of `url`; only loopback hosts.
    fn locate(&mut self, url: &str) -> Result<(), String> {
        if url.starts_with("https://") {
            return Err(format!("curl: {url}: only http:// here"));
        }
        let rest = url.strip_prefix("http://").unwrap_or(url);
        let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
        let (host, port) = match authority.rsplit_once(':') {
            Some((host, port)) => (
                host,
                port.parse().map_err(|_| format!("curl: port of {url}"))?,
            ),
            None => (authority, 80),
        };
        if host != "localhost" && host != "127.0.0.1" {
            return Err(format!(
                "curl: {url}: the examples talk to loopback hosts only"
            ));
        }
        self.host = authority.to_string();
        self.port = port;
        self.path = if path.is_empty() {
            "/".to_string()
        } else {
            path.to_string()
        };
        Ok(())
    }

    fn bytes(&self) -> Vec<u8> {
        let mut head = format!(
            "{} {} HTTP/1.1\r\nHost: {}\r\nUser-Agent: curl/8.5.0\r\nAccept: */*\r\n",
            self.method, self.path, self.host
        );
        for header in &self.headers {
            head.push_str(header);
            head.push_str("\r\n");
        }
        let body = self.data.clone().unwrap_or_default();
        if self.data.is_some() {
            let typed = self
                .headers
                .iter()
                .any(|h| h.to_lowercase().starts_with("content-type:"));
            if !typed {
                head.push_str("Content-Type: application/x-www-form-urlencoded\r\n");
            }
            head.push_str(&format!("Content-Length: {}\r\n", body.len()));
        }
        head.push_str("\r\n");
        let mut bytes = head.into_bytes();
        bytes.extend_from_slice(body.as_bytes());
        bytes
    }
}

/// The response's status line and headers (without the blank line) and its decoded body.
fn read_response(stream: &mut TcpStream) -> Result<(String, Vec<u8>), String> {
    let mut buffer = Vec::new();
    let head_end = loop {
        if let Some(at) = find(&buffer, b"\r\n\r\n") {
            break at;
        }
        if !read_more(stream, &mut buffer)? {
            return Err(format!(
                "the connection closed before the headers ended: {buffer:?}"
            ));
        }
    };
    let head = String::from_utf8_lossy(&buffer[..head_end + 2]).to_string();
    let mut body = buffer[head_end + 4..].to_vec();
    let header = |name: &str| {
        head.lines().find_map(|l| {
            let (key, value) = l.split_once(':')?;
            key.trim()
                .eq_ignore_ascii_case(name)
                .then(|| value.trim().to_string())
        })
    };
    if header("transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked")) {
        return Ok((head, read_chunked(stream, body)?));
    }
    match header("content-length") {
        Some(length) => {
            let length: usize = length.parse().map_err(|_| "a bad content-length")?;
            while body.len() < length {
                if !read_more(stream, &mut body)? {
                    return Err("the connection closed inside the body".to_string());
                }
            }
            body.truncate(length);
        }
        None => while read_more(stream, &mut body)? {},
    }
    Ok((head, body))
}

/// A chunked body, given what was already read of it.
fn read_chunked(stream: &mut TcpStream, mut raw: Vec<u8>) -> Result<Vec<u8>, String> {
    let mut body = Vec::new();
    loop {
        let line_end = loop {
            if let Some(at) = find(&raw, b"\r\n") {
                break at;
            }
            if !read_more(stream, &mut raw)? {
                return Ok(body);
            }
        };
        let size_text = String::from_utf8_lossy(&raw[..line_end]).to_string();
        let size = usize::from_str_radix(size_text.split(';').next().unwrap_or("").trim(), 16)
            .map_err(|_| format!("a bad chunk size {size_text:?}"))?;
        if size == 0 {
            return Ok(body);
        }
        while raw.len() < line_end + 2 + size + 2 {
            if !read_more(stream, &mut raw)? {
                body.extend_from_slice(&raw[(line_end + 2).min(raw.len())..]);
                return Ok(body);
            }
        }
        body.extend_from_slice(&raw[line_end + 2..line_end + 2 + size]);
        raw.drain(..line_end + 2 + size + 2);
    }
}

/// Reads more bytes into `buffer`; false at the end of the stream.
fn read_more(stream: &mut TcpStream, buffer: &mut Vec<u8>) -> Result<bool, String> {
    let mut chunk = [0u8; 8192];
    match stream.read(&mut chunk) {
        Ok(0) => Ok(false),
        Ok(n) => {
            buffer.extend_from_slice(&chunk[..n]);
            Ok(true)
        }
        Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => Ok(false),
        Err(e) => Err(format!("reading the response: {e}")),
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}
