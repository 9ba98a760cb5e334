#!/usr/bin/env python3
"""
LiteLLM Router oracle.

Runs the real ``litellm.Router`` (PyPI ``litellm``, see README.md for the pinned version) against
deployments whose every call consumes one outcome of a per-deployment script, and prints a JSON
trace of what the router did: every attempt (deployment id, model group, outcome), every backoff
wait it asked for, fallback hops, cooldowns set, random draws, the final result, and which
deployments are in cooldown after each request.

No network is used:
  * each deployment's ``litellm_params.model`` is rewritten to ``scripted/<deployment id>``, and
    ``scripted`` is a ``litellm.CustomLLM`` registered through ``litellm.custom_provider_map``, so an
    attempt goes Router -> litellm.acompletion -> ScriptedLLM.acompletion, which raises the real
    litellm exception class (with an httpx.Response carrying Retry-After when asked) or answers;
  * the router's backoff waits go through its host (``litellm.router_python_host.PythonHost.sleep``,
    ``sleep_sync`` for the sync path); the oracle replaces them with a recorder that returns at once
    (``--real-sleep`` keeps the real waits, for wall-clock measurements);
  * the model cost map is read from the package (LITELLM_LOCAL_MODEL_COST_MAP=True).

Usage:
  .venv/bin/python oracle.py scenarios/foo.json            # trace on stdout
  .venv/bin/python oracle.py scenarios/foo.json -o out.json
  .venv/bin/python oracle.py scenarios/foo.json --real-sleep
"""

from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_LOG", "CRITICAL")

import argparse  # noqa: E402
import asyncio  # noqa: E402
import copy  # noqa: E402
import inspect  # noqa: E402
import json  # noqa: E402
import logging  # noqa: E402
import random  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections import defaultdict  # noqa: E402
from contextvars import ContextVar  # noqa: E402
from email.utils import formatdate  # noqa: E402
from importlib.metadata import version as _dist_version  # noqa: E402
from typing import Any  # noqa: E402

import httpx  # noqa: E402
import litellm  # noqa: E402
from litellm import Router  # noqa: E402
from litellm.llms.custom_llm import CustomLLM  # noqa: E402
from litellm.router_python_host import PythonHost  # noqa: E402

for _name in ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy", "litellm"):
    logging.getLogger(_name).setLevel(logging.CRITICAL)
litellm.suppress_debug_info = True
litellm.telemetry = False

PROVIDER = "scripted"
LITELLM_VERSION = _dist_version("litellm")
JITTER = float(getattr(litellm.constants, "JITTER", 0.75))

# Default HTTP status of each scriptable error class (the class sets its own status where it has one).
ERROR_STATUS: dict[str, int] = {
    "RateLimitError": 429,
    "ServiceUnavailableError": 503,
    "InternalServerError": 500,
    "BadGatewayError": 502,
    "ContextWindowExceededError": 400,
    "ContentPolicyViolationError": 400,
    "BadRequestError": 400,
    "AuthenticationError": 401,
    "PermissionDeniedError": 403,
    "NotFoundError": 404,
    "Timeout": 408,
    "UnprocessableEntityError": 422,
    "APIConnectionError": 500,
    "APIError": 500,
}

# Event fields that are measurements, not decisions: dropped so traces are deterministic.
_TIMING_KEYS = frozenset({"pick_seconds", "elapsed", "elapsed_seconds", "latency", "timestamp", "start_time", "end_time"})

_RNG_FUNCS = ("random", "uniform", "randint", "randrange", "choice", "choices", "shuffle", "sample")


def _jsonable(value: Any) -> Any:
    try:
        return json.loads(json.dumps(value, default=str))
    except Exception:  # noqa: BLE001
        return str(value)


def build_exception(spec: dict, deployment_id: str) -> Exception:
    """The litellm exception a scripted outcome names, as a provider call would raise it."""
    name = spec["error"]
    cls = getattr(litellm, name, None) or getattr(litellm.exceptions, name, None)
    if not (isinstance(cls, type) and issubclass(cls, BaseException)):
        raise SystemExit(f"unknown litellm exception class {name!r}")
    status = int(spec.get("status", ERROR_STATUS.get(name, 500)))
    headers = {str(k).lower(): str(v) for k, v in (spec.get("headers") or {}).items()}
    if spec.get("retry_after") is not None:
        headers["retry-after"] = str(spec["retry_after"])
    if spec.get("retry_after_http_date_in") is not None:
        # An HTTP-date that many whole seconds ahead. The header has no fraction, so the error is sent
        # just after a second boundary: the date is then (k - a few ms) ahead, whatever the moment.
        now = time.time()
        time.sleep(1.02 - (now % 1.0))
        headers["retry-after"] = formatdate(time.time() + float(spec["retry_after_http_date_in"]), usegmt=True)
    request = httpx.Request("POST", f"https://{deployment_id}.scripted.invalid/v1/chat/completions")
    response = httpx.Response(status, headers=headers, request=request)
    message = spec.get("message") or f"scripted {name} {status} from {deployment_id}"
    candidates = {
        "message": message,
        "llm_provider": PROVIDER,
        "model": deployment_id,
        "response": response,
        "status_code": status,
        "request": request,
        "exception_status_code": status,
    }
    params = inspect.signature(cls).parameters
    exc = cls(**{k: v for k, v in candidates.items() if k in params})
    if getattr(exc, "status_code", None) != status:
        exc.status_code = status  # e.g. a 529 InternalServerError: the class would say 500
    if headers and "response" not in params:
        # Classes without a response (APIConnectionError): litellm reads these headers instead.
        exc.litellm_response_headers = httpx.Headers(headers)
    return exc


def outcome_summary(spec: dict) -> dict:
    if spec.get("ok", False) or "error" not in spec:
        return {"ok": True}
    out: dict[str, Any] = {"error": spec["error"], "status": int(spec.get("status", ERROR_STATUS.get(spec["error"], 500)))}
    for key in ("retry_after", "retry_after_http_date_in", "headers"):
        if spec.get(key) is not None:
            out[key] = spec[key]
    return out


# Per-request state lives in context variables, so that the requests of a "concurrent" step (run as
# separate asyncio tasks, each with its own context) are traced separately.
_REC: ContextVar[dict | None] = ContextVar("oracle_rec", default=None)
_PENDING_STEP: ContextVar[dict | None] = ContextVar("oracle_pending_step", default=None)
_SERVED_IN_STEP: ContextVar[bool] = ContextVar("oracle_served_in_step", default=False)
_LAST_ATTEMPT: ContextVar[dict | None] = ContextVar("oracle_last_attempt", default=None)


_IN_CONCURRENT: ContextVar[bool] = ContextVar("oracle_in_concurrent", default=False)
_SEQ = [0]


class SeqTimeline(list):
    """The timeline of a request in a concurrent step: each entry gets a global "seq" number, so the
    interleaving of the requests' decisions can be read back."""

    def append(self, entry: Any) -> None:  # type: ignore[override]
        _SEQ[0] += 1
        if isinstance(entry, dict):
            entry["seq"] = _SEQ[0]
        super().append(entry)


def new_timeline() -> list:
    return SeqTimeline() if _IN_CONCURRENT.get() else []


def _ctx_property(var: ContextVar) -> property:
    return property(lambda _self: var.get(), lambda _self, value: var.set(value))


class Oracle:
    rec = _ctx_property(_REC)
    pending_step = _ctx_property(_PENDING_STEP)
    served_in_step = _ctx_property(_SERVED_IN_STEP)
    last_attempt = _ctx_property(_LAST_ATTEMPT)

    def __init__(self, scenario: dict, real_sleep: bool = False, record_rng: bool = True, core_hooks: bool = True):
        self.scenario = scenario
        self.real_sleep = real_sleep
        self.record_rng = record_rng
        self.scripts: dict[str, list[dict]] = {k: list(v) for k, v in (scenario.get("scripts") or {}).items()}
        self.script_pos: dict[str, int] = defaultdict(int)
        self.calls_per_deployment: dict[str, int] = defaultdict(int)
        self.rec: dict | None = None  # the request being traced
        self.pending_step: dict | None = None
        self.served_in_step = False
        self.last_attempt: dict | None = None
        self.core_hooks_installed = False
        self.deployment_ids: list[str] = []
        self._install_provider()
        self.router = self._build_router()
        self._install_sleep()
        if record_rng:
            self._install_rng()
        if core_hooks:
            self._install_core_hooks()

    # ---- setup -----------------------------------------------------------------------------

    def _build_router(self) -> Router:
        kwargs = copy.deepcopy(self.scenario.get("router") or {})
        model_list = kwargs.pop("model_list", None) or self.scenario.get("model_list") or []
        rewritten = []
        for entry in model_list:
            entry = copy.deepcopy(entry)
            lp = entry.setdefault("litellm_params", {})
            mi = entry.setdefault("model_info", {})
            dep_id = mi.get("id") or lp.pop("id", None)
            if not dep_id:
                raise SystemExit(f"deployment of {entry.get('model_name')!r} has no id (model_info.id)")
            lp.pop("id", None)
            mi["id"] = dep_id
            self.route_deployment(dep_id, lp)
            self.deployment_ids.append(dep_id)
            rewritten.append(entry)
        unknown = set(self.scripts) - set(self.deployment_ids)
        if unknown:
            raise SystemExit(f"scripts for unknown deployment ids: {sorted(unknown)}")
        return Router(model_list=rewritten, **kwargs)

    def route_deployment(self, dep_id: str, lp: dict) -> None:
        """Points a deployment at the scripted provider."""
        lp["model"] = f"{PROVIDER}/{dep_id}"
        lp.setdefault("api_key", "scripted-key")

    def _install_provider(self) -> None:
        oracle = self

        class ScriptedLLM(CustomLLM):
            async def acompletion(self, model, messages, *args, **kwargs):  # noqa: ANN001
                return await oracle.serve_async(model, kwargs)

            def completion(self, model, messages, *args, **kwargs):  # noqa: ANN001
                return oracle.serve(model, kwargs)

        litellm.custom_provider_map = [{"provider": PROVIDER, "custom_handler": ScriptedLLM()}]
        # the map is read when litellm sets up custom providers; re-run it in case it ran already
        try:
            litellm.utils.custom_llm_setup()
        except Exception:  # noqa: BLE001
            pass

    def _install_sleep(self) -> None:
        oracle = self
        real_async_sleep = asyncio.sleep
        real_sync_sleep = time.sleep

        async def host_sleep(_host, seconds):  # noqa: ANN001
            oracle.on_sleep(seconds, sync=False)
            if oracle.real_sleep:
                await real_async_sleep(seconds)

        def host_sleep_sync(_host, seconds):  # noqa: ANN001
            oracle.on_sleep(seconds, sync=True)
            if oracle.real_sleep:
                real_sync_sleep(seconds)

        PythonHost.sleep = host_sleep  # type: ignore[method-assign]
        PythonHost.sleep_sync = host_sleep_sync  # type: ignore[method-assign]
        self._real_sync_sleep = real_sync_sleep

    def _install_rng(self) -> None:
        oracle = self
        for name in _RNG_FUNCS:
            original = getattr(random, name)

            def make(name, original):  # noqa: ANN001
                def recorded(*args, **kwargs):  # noqa: ANN002, ANN003
                    value = original(*args, **kwargs)
                    if oracle.rec is not None:
                        caller = sys._getframe(1).f_code.co_name
                        entry = {"type": "rng", "fn": name, "value": _jsonable(value), "caller": caller}
                        if args:
                            entry["args"] = _jsonable(list(args))
                        oracle.rec["timeline"].append(entry)
                        if name == "random":
                            oracle.rec["_last_random"] = value
                    return value

                return recorded

            setattr(random, name, make(name, original))

    def _install_core_hooks(self) -> None:
        """Best effort: read the Rust core's attempt steps and events (litellm.router_rust.core._Driver).
        The oracle works without them; they add retry/fallback indexes and the core's own events."""
        try:
            from litellm.router_rust import core as rust_core

            driver = rust_core._Driver
        except Exception:  # noqa: BLE001
            return
        oracle = self
        orig_take = driver.take_events
        orig_attempt = driver.attempt
        orig_attempt_sync = getattr(driver, "attempt_sync", None)

        def take_events(self_, events):  # noqa: ANN001
            if oracle.rec is not None and isinstance(events, list):
                for event in events:
                    oracle.on_core_event(event)
            return orig_take(self_, events)

        async def attempt(self_, step):  # noqa: ANN001
            oracle.before_attempt(step)
            out = await orig_attempt(self_, step)
            oracle.after_attempt(step, out)
            return out

        def attempt_sync(self_, step):  # noqa: ANN001
            oracle.before_attempt(step)
            out = orig_attempt_sync(self_, step)
            oracle.after_attempt(step, out)
            return out

        driver.take_events = take_events
        driver.attempt = attempt
        if orig_attempt_sync is not None:
            driver.attempt_sync = attempt_sync
        self.core_hooks_installed = True

    # ---- what the hooks record -------------------------------------------------------------

    def next_outcome(self, dep_id: str) -> tuple[dict, int]:
        script = self.scripts.get(dep_id) or [{"ok": True}]
        index = min(self.script_pos[dep_id], len(script) - 1)
        self.script_pos[dep_id] += 1
        return script[index], index

    def serve(self, model: str, kwargs: dict) -> Any:
        spec, dep_id = self.take_attempt(model, kwargs)
        return self.answer(spec, dep_id)

    async def serve_async(self, model: str, kwargs: dict) -> Any:
        """As serve, but an outcome's "delay" (seconds) really passes before it is answered, so that
        the requests of a concurrent step are in flight on the same deployment at the same time."""
        spec, dep_id = self.take_attempt(model, kwargs)
        if spec.get("delay"):
            await asyncio.sleep(float(spec["delay"]))
        return self.answer(spec, dep_id)

    def take_attempt(self, model: str, kwargs: dict) -> tuple[dict, str]:
        dep_id = model.split("/", 1)[1] if model.startswith(PROVIDER + "/") else model
        spec, index = self.next_outcome(dep_id)
        self.calls_per_deployment[dep_id] += 1
        lp = kwargs.get("litellm_params") or {}
        metadata = (lp.get("metadata") or lp.get("litellm_metadata") or {}) if isinstance(lp, dict) else {}
        entry: dict[str, Any] = {
            "type": "attempt",
            "deployment_id": dep_id,
            "model_group": metadata.get("model_group"),
            "script_index": index,
            "outcome": outcome_summary(spec),
        }
        step = self.pending_step
        if step is not None and step.get("deployment_id") == dep_id:
            entry["retry"] = step.get("retry")
            entry["fallback_depth"] = step.get("fallback_depth")
            entry["candidate_ids"] = step.get("candidate_ids")
            if step.get("target_order") is not None:
                entry["order"] = step.get("target_order")
            if step.get("model") != step.get("model_group"):
                entry["requested_as"] = step.get("model")
        if self.rec is not None:
            self.rec["timeline"].append(entry)
            self.rec["_attempts"] += 1
            self.rec.pop("_last_random", None)
        self.served_in_step = True
        self.last_attempt = entry
        return spec, dep_id

    def answer(self, spec: dict, dep_id: str) -> Any:
        if "error" in spec and not spec.get("ok", False):
            raise build_exception(spec, dep_id)
        return litellm.ModelResponse(
            model=dep_id,
            choices=[{"message": {"role": "assistant", "content": spec.get("content", f"ok from {dep_id}")}}],
            usage={"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        )

    def before_attempt(self, step: Any) -> None:
        self.pending_step = dict(step) if isinstance(step, dict) else None
        self.served_in_step = False

    def after_attempt(self, step: Any, out: Any) -> None:
        if self.rec is None:
            return
        core = {}
        if isinstance(out, dict):
            core = {k: out.get(k) for k in ("ok", "kind", "status", "retry_after") if out.get(k) is not None}
        if self.served_in_step and self.last_attempt is not None:
            self.last_attempt["classified"] = core
        else:  # the core's attempt ended before reaching the provider (pre-call refusal)
            s = step if isinstance(step, dict) else {}
            self.rec["timeline"].append(
                {
                    "type": "attempt_not_sent",
                    "deployment_id": s.get("deployment_id"),
                    "model_group": s.get("model_group"),
                    "classified": core,
                    "detail": str(out.get("detail"))[:200] if isinstance(out, dict) else None,
                }
            )
        self.pending_step = None

    def on_sleep(self, seconds: float, sync: bool) -> None:
        if self.rec is None:
            return
        entry: dict[str, Any] = {"type": "sleep", "seconds": round(float(seconds), 9)}
        if sync:
            entry["sync"] = True
        draw = self.rec.pop("_last_random", None)
        if draw is not None and seconds:
            entry["jitter_draw"] = draw
            entry["base_seconds"] = round(float(seconds) - JITTER * draw, 9)
        self.rec["timeline"].append(entry)
        self.rec["waits"].append(entry["seconds"])

    def on_core_event(self, event: Any) -> None:
        if not isinstance(event, dict):
            return
        clean = {k: _jsonable(v) for k, v in event.items() if k not in _TIMING_KEYS}
        self.rec["core_events"].append(clean)
        kind = clean.get("kind")
        if kind == "fallback":
            hop = {"type": "fallback", "from": clean.get("from"), "to": clean.get("to"), "depth": clean.get("depth")}
            if clean.get("order") is not None:
                hop["order"] = clean.get("order")
            self.rec["timeline"].append(hop)
            self.rec["fallback_hops"].append({k: v for k, v in hop.items() if k != "type"})
        elif kind == "cooldown_set":
            self.rec["timeline"].append({"type": "cooldown_set", **{k: v for k, v in clean.items() if k != "kind"}})

    # ---- running ---------------------------------------------------------------------------

    def cooldowns(self) -> dict:
        try:
            active = self.router.health().cooldowns.get_active_cooldowns(self.deployment_ids, None)
        except Exception as error:  # noqa: BLE001
            return {"_error": repr(error)}
        out = {}
        for dep_id, value in active:
            out[dep_id] = {
                "status_code": value.get("status_code"),
                "cooldown_time": value.get("cooldown_time"),
            }
        return dict(sorted(out.items()))

    async def run_request(self, index: int, spec: dict) -> dict:
        spec = dict(spec)
        call = spec.pop("call", "acompletion")
        model = spec.pop("model")
        messages = spec.pop("messages", None) or [{"role": "user", "content": "hello"}]
        spec.pop("note", None)
        spec.pop("expect", None)
        spec.pop("repeat", None)
        kwargs = spec  # everything else goes to the router call (fallbacks, num_retries, ...)
        rec: dict[str, Any] = {
            "index": index,
            "model": model,
            "call": call,
            "kwargs": _jsonable(kwargs),
            "timeline": new_timeline(),
            "core_events": [],
            "fallback_hops": [],
            "waits": [],
            "_attempts": 0,
        }
        self.rec = rec
        started = time.perf_counter()
        try:
            if call == "completion":
                response = await asyncio.to_thread(self.router.completion, model=model, messages=messages, **kwargs)
            else:
                response = await self.router.acompletion(model=model, messages=messages, **kwargs)
            hidden = getattr(response, "_hidden_params", {}) or {}
            headers = hidden.get("additional_headers") or {}
            result: dict[str, Any] = {
                "ok": True,
                "deployment_id": hidden.get("model_id"),
                "model_group": (self.last_attempt or {}).get("model_group"),
            }
            for header in ("x-litellm-attempted-retries", "x-litellm-max-retries", "x-litellm-attempted-fallbacks"):
                if header in headers:
                    result[header] = headers[header]
        except Exception as error:  # noqa: BLE001
            result = {
                "ok": False,
                "exception": type(error).__name__,
                "status": getattr(error, "status_code", None),
                "num_retries": getattr(error, "num_retries", None),
                "max_retries": getattr(error, "max_retries", None),
                "message": str(error)[:400],
            }
        elapsed = time.perf_counter() - started
        self.rec = None
        rec.pop("_last_random", None)
        rec["attempts"] = [
            {k: e[k] for k in ("deployment_id", "model_group", "outcome") if k in e}
            for e in rec["timeline"]
            if e["type"] == "attempt"
        ]
        rec["attempt_count"] = rec.pop("_attempts")
        rec["result"] = result
        rec["cooldowns_after"] = self.cooldowns()
        rec["summary"] = summarize(rec)
        if self.real_sleep:
            rec["wall_seconds"] = round(elapsed, 3)
        return rec

    async def run(self) -> dict:
        random.seed(self.scenario.get("seed", 0))
        out_requests = []
        index = 0
        for group, spec in enumerate(self.scenario.get("requests") or []):
            if "wait" in spec:  # real wall-clock wait: lets cooldowns expire
                self._real_sync_sleep(float(spec["wait"]))
                out_requests.append({"wait": spec["wait"], "cooldowns_after": self.cooldowns()})
                continue
            if "concurrent" in spec:  # requests started together, each in its own task
                specs = list(spec["concurrent"])

                async def one(i: int, s: dict) -> dict:
                    _IN_CONCURRENT.set(True)
                    return await self.run_request(index + i, s)

                recs = await asyncio.gather(*(one(i, s) for i, s in enumerate(specs)))
                for rec in recs:
                    rec["concurrent"] = group
                out_requests.extend(recs)
                index += len(specs)
                continue
            for _ in range(int(spec.get("repeat", 1))):
                out_requests.append(await self.run_request(index, spec))
                index += 1
        return {
            "scenario": self.scenario.get("name"),
            "description": self.scenario.get("description"),
            "expect": self.scenario.get("expect"),
            "observed_when_written": self.scenario.get("observed"),
            "litellm_version": LITELLM_VERSION,
            "core_hooks": self.core_hooks_installed,
            "settings": self.effective_settings(),
            "requests": out_requests,
            "calls_per_deployment": dict(sorted(self.calls_per_deployment.items())),
        }

    def effective_settings(self) -> dict:
        out: dict[str, Any] = {}
        for name in ("num_retries", "max_fallbacks", "retry_after"):
            try:
                out[name] = _jsonable(getattr(self.router, name))
            except Exception:  # noqa: BLE001
                pass
        try:
            settings = self.router.settings()
            for name in ("cooldown_time", "allowed_fails", "routing_strategy", "disable_cooldowns"):
                out[name] = _jsonable(getattr(settings, name, None))
        except Exception:  # noqa: BLE001
            pass
        return out


def summarize(rec: dict) -> str:
    """One line: the attempts, waits and hops in order, then the result."""
    parts = []
    for e in rec["timeline"]:
        t = e["type"]
        if t == "attempt":
            o = e["outcome"]
            what = "ok" if o.get("ok") else str(o.get("status"))
            parts.append(f"{e.get('model_group')}:{e['deployment_id']}={what}")
        elif t == "attempt_not_sent":
            parts.append(f"{e.get('model_group')}:{e.get('deployment_id')}=not-sent")
        elif t == "sleep":
            parts.append(f"wait {e['seconds']:.3g}s")
        elif t == "fallback":
            parts.append(f"fallback {e['from']}->{e['to']}")
    r = rec["result"]
    end = f"OK {r.get('deployment_id')}" if r.get("ok") else f"RAISE {r.get('exception')}({r.get('status')})"
    cooled = ",".join(rec.get("cooldowns_after", {}).keys()) or "-"
    return " | ".join(parts + [end, f"cooldown: {cooled}"])


def dumps(value: Any, indent: int = 0, width: int = 200) -> str:
    """JSON with one short object per line: readable, and diff-friendly line by line."""
    flat = json.dumps(value, default=str)
    if not isinstance(value, (dict, list)) or not value or len(flat) + indent <= width:
        return flat
    pad = " " * (indent + 1)
    if isinstance(value, dict):
        body = ",\n".join(f"{pad}{json.dumps(k)}: {dumps(v, indent + 1, width)}" for k, v in value.items())
        return "{\n" + body + "\n" + " " * indent + "}"
    body = ",\n".join(f"{pad}{dumps(v, indent + 1, width)}" for v in value)
    return "[\n" + body + "\n" + " " * indent + "]"


def record(path: str, **options: Any) -> str:
    """The trace of one scenario file, as text."""
    with open(path) as f:
        scenario = json.load(f)
    scenario.setdefault("name", os.path.splitext(os.path.basename(path))[0])
    oracle = Oracle(scenario, **options)
    return dumps(asyncio.run(oracle.run()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("scenario")
    parser.add_argument("-o", "--out")
    parser.add_argument("--real-sleep", action="store_true", help="really wait the backoff the router asks for")
    parser.add_argument("--no-rng", action="store_true", help="do not record random draws")
    parser.add_argument("--no-core-hooks", action="store_true", help="do not read the Rust core's steps/events")
    args = parser.parse_args()
    text = record(args.scenario, real_sleep=args.real_sleep, record_rng=not args.no_rng, core_hooks=not args.no_core_hooks)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")
    else:
        print(text)


if __name__ == "__main__":
    main()
