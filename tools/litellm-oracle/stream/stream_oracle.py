#!/usr/bin/env python3
"""
Streaming extension of oracle.py: drives the REAL litellm.Router (1.110.2) with stream=True against
scripted CustomLLM deployments whose `astreaming` yields content chunks and then ends, raises, stalls
or yields nothing. Everything oracle.py records (attempts, waits, core events, cooldowns) is kept;
added per attempt: the messages, max_tokens/response_format and timeout the provider received, and
what its stream did; added per request: every chunk the caller received (time, text, finish_reason,
model_id) and the exception that reached the caller (where and when).

Stream script entries (per deployment; one per call; the last repeats):
  {"chunks": 10}                                   10 content chunks "<dep>:<i> ", finish "stop"
  {"chunks": 10, "error": "ServiceUnavailableError", "after": 0}   raise before the first chunk
  {"chunks": 10, "error": "APIConnectionError", "after": 5}        5 chunks, then raise
  "retry_after": 2 / "headers": {...} beside "error": the raised error's response carries them
  {"chunks": 10, "stall": {"after": 3, "seconds": 3}}              3 chunks, silence, then the rest
  {"chunks": 10, "first_delay": 3}                                 no first chunk for 3 s
  {"chunks": 0}                                                    an empty stream (yields nothing)
  {"role_only_first": true, ...}                                   first yields a role-only delta (no content)
  "honor_timeout": true   the provider behaves like an httpx client: a gap longer than the `timeout`
                          it was given raises httpx.ReadTimeout after `timeout` seconds.
  Non-stream outcomes of oracle.py ({"error": ...} without "chunks") still work for acompletion.

Usage: .venv/bin/python stream_oracle.py scenarios_stream/X.json [-o out.json] [--real-sleep]
"""

from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_LOG", "CRITICAL")

import argparse  # noqa: E402
import asyncio  # noqa: E402
import copy  # noqa: E402
import json  # noqa: E402
import time  # noqa: E402
from typing import Any  # noqa: E402

import sys  # noqa: E402

import httpx  # noqa: E402
import litellm  # noqa: E402
from litellm.integrations.custom_logger import CustomLogger  # noqa: E402
from litellm.llms.custom_llm import CustomLLM  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import oracle as base  # noqa: E402

real_sleep = asyncio.sleep


def _timeout_seconds(value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, httpx.Timeout):
        return value.read
    try:
        return float(value)
    except Exception:  # noqa: BLE001
        return None


def _usage_of(value: Any) -> dict | None:
    if value is None:
        return None
    get = value.get if isinstance(value, dict) else (lambda k: getattr(value, k, None))
    out = {k: get(k) for k in ("prompt_tokens", "completion_tokens", "total_tokens")}
    return out if any(v is not None for v in out.values()) else None


class UsageRecorder(CustomLogger):
    """What LiteLLM logs (bills) per attempt: the success and failure callbacks' usage. A broken
    stream's failure log carries the partial usage of the chunks delivered before the break
    (streaming_handler._record_partial_usage_for_failure -> model_call_details["combined_usage_object"])."""

    def __init__(self, oracle: "StreamOracle") -> None:
        super().__init__()
        self.oracle = oracle

    def _log(self, event: str, kwargs: dict, response_obj: Any) -> None:
        rec = self.oracle.rec
        if rec is None:
            return
        lp = kwargs.get("litellm_params") or {}
        info = (lp.get("model_info") or {}) if isinstance(lp, dict) else {}
        model = str(kwargs.get("model") or "")
        dep_id = info.get("id") or (model.split("/", 1)[1] if model.startswith(base.PROVIDER + "/") else model)
        entry: dict[str, Any] = {"event": event, "deployment_id": dep_id}
        if event == "failure":
            entry["usage"] = _usage_of(kwargs.get("combined_usage_object"))
            exc = kwargs.get("exception")
            if exc is not None:
                entry["exception"] = type(exc).__name__
        else:
            entry["usage"] = _usage_of(getattr(response_obj, "usage", None)) or _usage_of(kwargs.get("combined_usage_object"))
        rec.setdefault("logged", []).append(entry)

    async def async_log_success_event(self, kwargs, response_obj, start_time, end_time):  # noqa: ANN001
        self._log("success", kwargs, response_obj)

    async def async_log_failure_event(self, kwargs, response_obj, start_time, end_time):  # noqa: ANN001
        self._log("failure", kwargs, response_obj)


def _sse(obj: Any) -> bytes:
    return b"data: " + json.dumps(obj).encode() + b"\n\n"


class _WireBody(httpx.AsyncByteStream):
    """The SSE body of one scripted OpenAI-wire attempt (see StreamOracle.wire_handler)."""

    def __init__(self, oracle: "StreamOracle", dep_id: str, spec: dict, log: list) -> None:
        self.oracle, self.dep_id, self.spec, self.log = oracle, dep_id, spec, log

    def _chunk(self, delta: dict, finish: str | None) -> bytes:
        return _sse({"id": f"chatcmpl-{self.dep_id}", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4o",
                     "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})

    async def __aiter__(self):
        # A body is read once, as a socket is: the openai SDK drains response.stream again after
        # [DONE] (openai/_streaming_cleanup.py), which must find nothing left.
        if getattr(self, "_read", False):
            return
        self._read = True
        s, log = self.spec, self.log
        n = int(s.get("chunks", 10))
        if s.get("role_first", True):  # what OpenAI sends first: the role with empty content
            log.append({"t_ms": self.oracle.now_ms(), "yield": "role_only"})
            yield self._chunk({"role": "assistant", "content": ""}, None)
        for i in range(n):
            if s.get("read_error_after") == i:
                log.append({"t_ms": self.oracle.now_ms(), "raised": "httpx.ReadError", "after_chunks": i})
                raise httpx.ReadError("scripted connection reset")
            if s.get("read_timeout_after") == i:
                log.append({"t_ms": self.oracle.now_ms(), "raised": "httpx.ReadTimeout", "after_chunks": i})
                raise httpx.ReadTimeout("scripted read timeout")
            if s.get("error_frame_after") == i:
                log.append({"t_ms": self.oracle.now_ms(), "error_frame": s.get("code", 529), "after_chunks": i})
                yield _sse({"error": {"message": "scripted overloaded", "type": "overloaded_error", "code": s.get("code", 529)}})
                return
            if s.get("truncate_after") == i:
                log.append({"t_ms": self.oracle.now_ms(), "end": "truncated", "after_chunks": i})
                return
            await real_sleep(0.001)
            log.append({"t_ms": self.oracle.now_ms(), "yield": i})
            last = i == n - 1 and not s.get("no_finish")
            yield self._chunk({"content": f"{self.dep_id}:{i} "}, "stop" if last else None)
        log.append({"t_ms": self.oracle.now_ms(), "end": "done"})
        yield b"data: [DONE]\n\n"

    async def aclose(self) -> None:
        pass


class StreamOracle(base.Oracle):
    def __init__(self, *args, **kwargs):
        self.t0 = time.perf_counter()
        scenario = args[0] if args else kwargs["scenario"]
        # Deployments served through litellm's real OpenAI provider (openai SDK + httpx) over an
        # in-memory transport instead of the CustomLLM: for what only that path does (an SSE error
        # frame inside a 200, a ReadError mid-body, a stream cut without [DONE]).
        self.openai_wire = set(scenario.get("openai_wire") or [])
        super().__init__(*args, **kwargs)
        self.usage_recorder = UsageRecorder(self)
        litellm.callbacks = [self.usage_recorder]
        if self.openai_wire:
            litellm.aclient_session = httpx.AsyncClient(transport=httpx.MockTransport(self.wire_handler))

    def route_deployment(self, dep_id: str, lp: dict) -> None:
        if dep_id not in self.openai_wire:
            return super().route_deployment(dep_id, lp)
        lp["model"] = "openai/gpt-4o"
        lp["api_base"] = f"http://{dep_id}.mock/v1"
        lp.setdefault("api_key", "sk-scripted")

    async def wire_handler(self, request: httpx.Request) -> httpx.Response:
        """One OpenAI-wire attempt. Script entries: {"chunks": N} plus one of "error_frame_after": K
        (an SSE {"error": {"code": "code"}} frame inside the 200), "read_error_after": K (httpx.ReadError
        mid-body), "read_timeout_after": K (httpx.ReadTimeout mid-body, as a socket read timeout raises), "truncate_after": K (the body ends without finish_reason or [DONE]), "no_finish": true;
        "role_first": false drops the role-only first chunk OpenAI sends; {"status": 503, "retry_after": 2}
        answers an HTTP error instead of a stream."""
        dep_id = request.url.host.split(".")[0]
        body = json.loads(request.content)
        spec, index = self.next_outcome(dep_id)
        self.calls_per_deployment[dep_id] += 1
        entry: dict[str, Any] = {
            "type": "attempt",
            "t_ms": self.now_ms(),
            "deployment_id": dep_id,
            "model_group": None,
            "wire": "openai",
            "script_index": index,
            "outcome": dict(spec),
            "received": {
                "messages": base._jsonable(body.get("messages")),
                "timeout": None,
                **{k: base._jsonable(body[k]) for k in ("max_tokens", "max_completion_tokens", "response_format") if k in body},
            },
            "stream_log": [],
        }
        step = self.pending_step
        if step is not None and step.get("deployment_id") == dep_id:
            entry["model_group"] = step.get("model_group")
            entry["retry"] = step.get("retry")
            entry["fallback_depth"] = step.get("fallback_depth")
            entry["candidate_ids"] = step.get("candidate_ids")
        if self.rec is not None:
            self.rec["timeline"].append(entry)
            self.rec["_attempts"] += 1
            self.rec.pop("_last_random", None)
        self.served_in_step = True
        self.last_attempt = entry
        if spec.get("status"):
            headers = {"retry-after": str(spec["retry_after"])} if spec.get("retry_after") is not None else {}
            entry["stream_log"].append({"t_ms": self.now_ms(), "http_status": spec["status"]})
            return httpx.Response(int(spec["status"]), json={"error": {"message": "scripted", "type": "x"}}, headers=headers, request=request)
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, stream=_WireBody(self, dep_id, spec, entry["stream_log"]), request=request)

    def now_ms(self) -> int:
        return int(round((time.perf_counter() - self.t0) * 1000))

    def _install_provider(self) -> None:
        oracle = self

        class ScriptedLLM(CustomLLM):
            async def acompletion(self, model, messages, *args, **kwargs):  # noqa: ANN001
                return oracle.serve(model, kwargs)

            def completion(self, model, messages, *args, **kwargs):  # noqa: ANN001
                return oracle.serve(model, kwargs)

            def astreaming(self, model, messages, *args, **kwargs):  # noqa: ANN001
                return oracle.serve_stream(model, messages, kwargs)

        litellm.custom_provider_map = [{"provider": base.PROVIDER, "custom_handler": ScriptedLLM()}]
        try:
            litellm.utils.custom_llm_setup()
        except Exception:  # noqa: BLE001
            pass

    # ---- the scripted stream -------------------------------------------------------------------

    def serve_stream(self, model: str, messages: list, kwargs: dict):
        dep_id = model.split("/", 1)[1] if model.startswith(base.PROVIDER + "/") else model
        spec, index = self.next_outcome(dep_id)
        self.calls_per_deployment[dep_id] += 1
        lp = kwargs.get("litellm_params") or {}
        metadata = (lp.get("metadata") or lp.get("litellm_metadata") or {}) if isinstance(lp, dict) else {}
        optional = kwargs.get("optional_params") or {}
        timeout = _timeout_seconds(kwargs.get("timeout"))
        entry: dict[str, Any] = {
            "type": "attempt",
            "t_ms": self.now_ms(),
            "deployment_id": dep_id,
            "model_group": metadata.get("model_group"),
            "script_index": index,
            "outcome": {k: v for k, v in spec.items()},
            "received": {
                "messages": base._jsonable(messages),
                "timeout": timeout,
                **{k: base._jsonable(optional[k]) for k in ("max_tokens", "max_completion_tokens", "response_format") if k in optional},
            },
            "stream_log": [],
        }
        step = self.pending_step
        if step is not None and step.get("deployment_id") == dep_id:
            entry["retry"] = step.get("retry")
            entry["fallback_depth"] = step.get("fallback_depth")
            entry["candidate_ids"] = step.get("candidate_ids")
        if self.rec is not None:
            self.rec["timeline"].append(entry)
            self.rec["_attempts"] += 1
            self.rec.pop("_last_random", None)
        self.served_in_step = True
        self.last_attempt = entry
        log = entry["stream_log"]
        honor = bool(spec.get("honor_timeout"))

        async def wait(seconds: float, what: str) -> None:
            if honor and timeout is not None and seconds > timeout:
                await real_sleep(timeout)
                log.append({"t_ms": self.now_ms(), "raised": "httpx.ReadTimeout", "during": what})
                raise httpx.ReadTimeout(f"scripted read timeout ({timeout}s) from {dep_id} during {what}")
            await real_sleep(seconds)

        def chunk(i: int, last: bool) -> dict:
            return {
                "text": f"{dep_id}:{i} ",
                "is_finished": last,
                "finish_reason": "stop" if last else "",
                "usage": {"prompt_tokens": 3, "completion_tokens": i + 1, "total_tokens": i + 4} if last else None,
                "index": 0,
            }

        async def gen():
            n = int(spec.get("chunks", 0))
            err = spec.get("error")
            after = spec.get("after", 0)
            stall = spec.get("stall") or {}
            if spec.get("first_delay"):
                log.append({"t_ms": self.now_ms(), "first_delay": spec["first_delay"]})
                await wait(float(spec["first_delay"]), "first chunk")
            if spec.get("role_only_first"):
                log.append({"t_ms": self.now_ms(), "yield": "role_only"})
                yield litellm.ModelResponseStream(choices=[{"index": 0, "delta": {"role": "assistant"}}])
            for i in range(n + 1):
                if err and after == i:
                    raised = {"error": err, "status": spec.get("status", base.ERROR_STATUS.get(err, 500))}
                    raised.update({k: spec[k] for k in ("retry_after", "headers") if spec.get(k) is not None})
                    exc = base.build_exception(raised, dep_id)
                    log.append({"t_ms": self.now_ms(), "raised": type(exc).__name__, "after_chunks": i})
                    raise exc
                if stall and stall.get("after") == i:
                    log.append({"t_ms": self.now_ms(), "stall": stall.get("seconds")})
                    await wait(float(stall["seconds"]), f"stall after {i} chunks")
                if i == n:
                    break
                if spec.get("inter_chunk"):
                    await real_sleep(float(spec["inter_chunk"]))
                log.append({"t_ms": self.now_ms(), "yield": i})
                yield chunk(i, last=(i == n - 1 and not spec.get("no_finish")))
            log.append({"t_ms": self.now_ms(), "end": "normal"})

        return gen()

    # ---- one streamed request ------------------------------------------------------------------

    async def run_request(self, index: int, spec: dict) -> dict:
        if not spec.get("stream"):
            return await super().run_request(index, spec)
        spec = dict(spec)
        model = spec.pop("model")
        messages = spec.pop("messages", None) or [{"role": "user", "content": "hello"}]
        for k in ("note", "expect", "repeat", "call"):
            spec.pop(k, None)
        kwargs = spec
        rec: dict[str, Any] = {
            "index": index,
            "model": model,
            "kwargs": base._jsonable(kwargs),
            "timeline": base.new_timeline(),
            "core_events": [],
            "fallback_hops": [],
            "waits": [],
            "_attempts": 0,
        }
        self.rec = rec
        self.t0 = time.perf_counter()
        received: list[dict] = []
        result: dict[str, Any] = {}
        stream = None
        try:
            stream = await self.router.acompletion(model=model, messages=messages, **kwargs)
            rec["timeline"].append({"type": "acompletion_returned", "t_ms": self.now_ms(), "stream_type": type(stream).__name__})
            async for item in stream:
                hidden = getattr(item, "_hidden_params", {}) or {}
                choice = item.choices[0] if getattr(item, "choices", None) else None
                delta = getattr(choice, "delta", None)
                c = {
                    "t_ms": self.now_ms(),
                    "text": getattr(delta, "content", None),
                    "finish_reason": getattr(choice, "finish_reason", None),
                    "model_id": hidden.get("model_id"),
                }
                if getattr(delta, "role", None):
                    c["role"] = delta.role
                received.append(c)
                rec["timeline"].append({"type": "caller_chunk", **c})
            result = {"ok": True, "t_ms": self.now_ms()}
        except Exception as error:  # noqa: BLE001
            result = {
                "ok": False,
                "raised_from": "acompletion" if stream is None else "iteration",
                "after_chunks": len(received),
                "t_ms": self.now_ms(),
                "exception": type(error).__name__,
                "status": getattr(error, "status_code", None),
                "message": str(error)[:300],
            }
            rec["timeline"].append({"type": "caller_exception", **{k: result[k] for k in ("t_ms", "exception", "status")}})
        hidden = getattr(stream, "_hidden_params", {}) or {}
        headers = hidden.get("additional_headers") or {}
        result["stream_model_id"] = hidden.get("model_id")
        for header in ("x-litellm-attempted-retries", "x-litellm-max-retries", "x-litellm-attempted-fallbacks"):
            if header in headers:
                result[header] = headers[header]
        await real_sleep(0.2)  # let background stream-outcome recordings (cooldowns, usage logs) land
        self.rec = None
        # logging callbacks run in the background: keep their entries in a stable order
        rec["logged"] = sorted(rec.get("logged", []), key=lambda e: json.dumps(e, sort_keys=True))
        rec.pop("_last_random", None)
        rec["attempts"] = [
            {k: e[k] for k in ("deployment_id", "model_group") if k in e}
            | {"stream_log": e.get("stream_log"), "messages_received": len(e["received"]["messages"]) if "received" in e else None}
            for e in rec["timeline"]
            if e["type"] == "attempt"
        ]
        rec["attempt_count"] = rec.pop("_attempts")
        rec["caller_text"] = "".join(c["text"] or "" for c in received)
        rec["caller_chunks"] = len(received)
        rec["result"] = result
        rec["cooldowns_after"] = self.cooldowns()
        rec["summary"] = stream_summary(rec)
        return rec


def stream_summary(rec: dict) -> str:
    parts = []
    for e in rec["timeline"]:
        t = e["type"]
        if t == "attempt":
            what = []
            for s in e.get("stream_log") or []:
                if "raised" in s:
                    what.append(f"raise {s['raised']}@{s.get('after_chunks', s.get('during'))}")
                elif "stall" in s:
                    what.append(f"stall {s['stall']}s")
                elif "error_frame" in s:
                    what.append(f"error frame {s['error_frame']}@{s.get('after_chunks')}")
                elif "http_status" in s:
                    what.append(f"HTTP {s['http_status']}")
                elif s.get("end") == "truncated":
                    what.append("cut")
                elif s.get("end"):
                    what.append("end")
            ys = sum(1 for s in e.get("stream_log") or [] if "yield" in s)
            if e.get("wire"):
                what.append(e["wire"])
            pre = " +prefill" if any(m.get("role") == "assistant" for m in e["received"]["messages"]) else ""
            parts.append(f"{e.get('model_group')}:{e['deployment_id']}[{ys} chunks {','.join(what)}{pre}]")
        elif t == "sleep":
            parts.append(f"wait {e['seconds']:.3g}s")
        elif t == "fallback":
            parts.append(f"fallback {e['from']}->{e['to']}")
    r = rec["result"]
    got = f"caller got {rec['caller_chunks']} chunks"
    end = "OK" if r.get("ok") else f"RAISE {r.get('exception')}({r.get('status')}) from {r.get('raised_from')} after {r.get('after_chunks')} chunks"
    cooled = ",".join(rec.get("cooldowns_after", {}).keys()) or "-"
    return " | ".join(parts + [got, end + f" @{r.get('t_ms')}ms", f"cooldown: {cooled}"])


def record(path: str, real_sleep: bool = False) -> str:
    """The trace of one streamed scenario file, as text."""
    with open(path) as f:
        scenario = json.load(f)
    scenario.setdefault("name", os.path.splitext(os.path.basename(path))[0])
    o = StreamOracle(scenario, real_sleep=real_sleep)
    trace = asyncio.run(o.run())
    trace["litellm_env"] = {k: os.environ.get(k) for k in ("LITELLM_MAX_STREAMING_DURATION_SECONDS",)}
    return base.dumps(trace)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("scenario")
    parser.add_argument("-o", "--out")
    parser.add_argument("--real-sleep", action="store_true", help="really wait the backoff the router asks for (the recorder returns at once, without a turn of the event loop)")
    args = parser.parse_args()
    text = record(args.scenario, real_sleep=args.real_sleep)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")
    else:
        print(text)


if __name__ == "__main__":
    main()
