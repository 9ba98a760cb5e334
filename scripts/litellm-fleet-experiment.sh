#!/usr/bin/env bash
# Issue 16's fleet experiment against the real LiteLLM 1.110.2 proxy: two OpenAI-compatible
# fake deployments in one model group (`routersim serve`), fleet-a answering 429 with
# `Retry-After: 5` throughout, REQUESTS requests at RATE/s sent round-robin over REPLICAS
# LiteLLM proxies, each with in-process state or (--redis) sharing one Debian redis-server
# through `router_settings.redis_host/redis_port`. Prints the calls each deployment received,
# counted at the provider side (the fake's provider_calls.csv).
#
# --driver drive (default): `routersim drive --target A,B,C` sends the traffic (the scenario's
# uniform arrivals, dealt round-robin) and starts the fake providers in-process; the live report
# goes to OUT/live. --driver python: `routersim serve` + a small Python load loop (how the
# figures in the first notes were measured).
#
#   scripts/litellm-fleet-experiment.sh [--replicas N] [--redis] [--requests N] [--rate R]
#       [--redis-port P] [--monitor] [--out DIR] [--routersim BIN] [--litellm BIN]
#       [--error rate_limit|service_unavailable|...] [--allowed-fails N] [--driver drive|python]
#       [--router litellm|routersim]
#
# --router routersim runs `routersim proxy` replicas on the same emitted config instead of
# LiteLLM's proxy (LiteLLM is then not needed).
#
# --redis without --redis-port starts a redis-server of its own on a free loopback port (and
# stops it); --monitor also records `redis-cli MONITOR` into OUT/monitor.txt. Loopback only;
# bounded (each wait has a deadline; the load stops after REQUESTS); every process it starts is
# stopped on exit. Exit 0 with the counts on stdout; exit 3 when LiteLLM or redis-server is
# missing (the caller may treat that as a skip).
set -euo pipefail
cd "$(dirname "$0")/.."

REPLICAS=1 REDIS=0 REQUESTS=300 RATE=5 REDIS_PORT="" MONITOR=0 OUT="" ERROR=rate_limit ALLOWED_FAILS="" DRIVER=drive ROUTER=litellm
ROUTERSIM=target/debug/routersim
LITELLM=target/litellm-venv/bin/litellm
while [ $# -gt 0 ]; do
  case "$1" in
    --replicas) REPLICAS="$2"; shift 2 ;;
    --redis) REDIS=1; shift ;;
    --requests) REQUESTS="$2"; shift 2 ;;
    --rate) RATE="$2"; shift 2 ;;
    --redis-port) REDIS_PORT="$2"; REDIS=1; shift 2 ;;
    --monitor) MONITOR=1; shift ;;
    --out) OUT="$2"; shift 2 ;;
    --error) ERROR="$2"; shift 2 ;;
    --allowed-fails) ALLOWED_FAILS="$2"; shift 2 ;;
    --driver) DRIVER="$2"; shift 2 ;;
    --router) ROUTER="$2"; shift 2 ;;
    --routersim) ROUTERSIM="$2"; shift 2 ;;
    --litellm) LITELLM="$2"; shift 2 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done
[ -x "$ROUTERSIM" ] || { echo "no routersim at $ROUTERSIM (cargo build)" >&2; exit 2; }
if [ "$ROUTER" = litellm ]; then
  [ -x "$LITELLM" ] || { echo "skip: no LiteLLM proxy at $LITELLM" >&2; exit 3; }
  PY="$(dirname "$LITELLM")/python"
else
  PY=python3
fi
if [ "$REDIS" = 1 ] && [ -z "$REDIS_PORT" ] && ! command -v redis-server >/dev/null; then
  echo "skip: no redis-server (apt-get install redis-server)" >&2; exit 3
fi
OUT="${OUT:-$(mktemp -d /tmp/litellm-fleet.XXXXXX)}"
mkdir -p "$OUT"

PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
}
trap cleanup EXIT

free_port() { "$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
# wait_for SECONDS COMMAND...: polls COMMAND every 0.2 s until it succeeds or the deadline.
wait_for() {
  local deadline=$((SECONDS + $1)); shift
  until "$@" >/dev/null 2>&1; do
    [ "$SECONDS" -lt "$deadline" ] || return 1
    sleep 0.2
  done
}

# The Redis first: its address goes into the scenario's router_settings, and so into the
# emitted proxy config (redis_host/redis_port are LiteLLM Router arguments).
REDIS_KEYS=""
if [ "$REDIS" = 1 ]; then
  if [ -z "$REDIS_PORT" ]; then
    REDIS_PORT=$(free_port)
    redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no \
      >"$OUT/redis.log" 2>&1 &
    PIDS+=("$!")
  fi
  wait_for 10 redis-cli -p "$REDIS_PORT" ping || { echo "redis-server did not start" >&2; exit 1; }
  # A server of the caller's may hold other keys: only this experiment's are removed.
  redis-cli -p "$REDIS_PORT" del deployment:fleet-a:cooldown deployment:fleet-b:cooldown \
    deployment:fleet-a:allowed_fails deployment:fleet-b:allowed_fails >/dev/null
  REDIS_KEYS=$(printf '    redis_host: 127.0.0.1\n    redis_port: %s' "$REDIS_PORT")
fi

# The fake providers: under serve the fault lasts the whole serve (which LiteLLM's start-up
# precedes); under drive the timeline starts once every proxy answers.
if [ "$DRIVER" = drive ]; then
  DURATION="$("$PY" -c "import math,sys; print(math.ceil(float(sys.argv[1]) / float(sys.argv[2])))" "$REQUESTS" "$RATE")s"
else
  DURATION=20m
fi
cat >"$OUT/scenario.yaml" <<EOF
name: litellm-fleet-experiment
seed: 16
duration: $DURATION
router:
  model_list:
    - {model_name: gpt, litellm_params: {model: openai/fleet-a}, model_info: {id: fleet-a}}
    - {model_name: gpt, litellm_params: {model: openai/fleet-b}, model_info: {id: fleet-b}}
  router_settings:
    routing_strategy: simple-shuffle
    num_retries: 2
${ALLOWED_FAILS:+    allowed_fails: $ALLOWED_FAILS}
$REDIS_KEYS
providers:
  fleet-a: {latency: 20ms}
  fleet-b: {latency: 20ms}
faults:
  - {deployment: fleet-a, from: 0s, to: $DURATION, error: $ERROR, probability: 1.0, retry_after: 5s}
traffic:
  - {model: gpt, rate: $RATE/s, to: $DURATION, arrival: uniform, output_tokens: 5}
EOF
KEY="sk-fleet-$$-$RANDOM"
PORTS=()
for i in $(seq 0 $((REPLICAS - 1))); do PORTS+=("$(free_port)"); done
TARGETS=$(printf 'http://127.0.0.1:%s,' "${PORTS[@]}")
TARGETS=${TARGETS%,}
if [ "$DRIVER" = drive ]; then
  "$ROUTERSIM" drive "$OUT/scenario.yaml" --target "$TARGETS" --api-key "$KEY" \
    --emit-litellm-config "$OUT/litellm.yaml" --wait-for-target 180s --drain 30s \
    --max-requests "$REQUESTS" --out "$OUT/live" >"$OUT/drive.out" 2>"$OUT/drive.err" &
  DRIVE=$!
  PIDS+=("$DRIVE")
  CALLS="$OUT/live/provider_calls.csv"
  wait_for 30 test -s "$OUT/litellm.yaml" || { echo "drive did not start" >&2; cat "$OUT/drive.err" >&2; exit 1; }
else
  "$ROUTERSIM" serve "$OUT/scenario.yaml" --emit-litellm-config "$OUT/litellm.yaml" \
    --out "$OUT/provider" >"$OUT/serve.out" 2>"$OUT/serve.err" &
  PIDS+=("$!")
  CALLS="$OUT/provider/provider_calls.csv"
  wait_for 30 test -s "$OUT/litellm.yaml" || { echo "serve did not start" >&2; cat "$OUT/serve.err" >&2; exit 1; }
fi

for i in "${!PORTS[@]}"; do
  port=${PORTS[$i]}
  if [ "$ROUTER" = litellm ]; then
    LITELLM_MASTER_KEY="$KEY" LITELLM_LOCAL_MODEL_COST_MAP=True \
      "$LITELLM" --config "$OUT/litellm.yaml" --host 127.0.0.1 --port "$port" \
      >"$OUT/proxy$i.log" 2>&1 &
  else
    "$ROUTERSIM" proxy --config "$OUT/litellm.yaml" --listen "127.0.0.1:$port" \
      >"$OUT/proxy$i.log" 2>&1 &
  fi
  PIDS+=("$!")
done
for i in "${!PORTS[@]}"; do
  wait_for 180 curl -sf "http://127.0.0.1:${PORTS[$i]}/health/liveliness" \
    || { echo "proxy $i did not start (see $OUT/proxy$i.log)" >&2; exit 1; }
done
if [ "$MONITOR" = 1 ]; then
  redis-cli -p "$REDIS_PORT" monitor >"$OUT/monitor.txt" 2>&1 &
  PIDS+=("$!")
  sleep 0.5
fi
echo "load ($DRIVER): $REQUESTS requests at $RATE/s round-robin over ${#PORTS[@]} proxies (${PORTS[*]}), redis=$REDIS${REDIS_PORT:+ port $REDIS_PORT}" >&2
if [ "$DRIVER" = drive ]; then
  wait "$DRIVE" || { echo "drive failed (see $OUT/drive.err)" >&2; cat "$OUT/drive.err" >&2; exit 1; }
  grep -E '^(requests|live)' "$OUT/drive.out" >&2 || true
else
"$PY" - "$REQUESTS" "$RATE" "$KEY" "$OUT/requests.csv" "${PORTS[@]}" <<'EOF'
import sys, time, json, threading, urllib.request, urllib.error
n, rate, key, out, ports = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5:]
rows, lock = [], threading.Lock()
t0 = time.monotonic()
def one(i):
    port = ports[i % len(ports)]
    body = json.dumps({"model": "gpt", "messages": [{"role": "user", "content": "hi"}]}).encode()
    req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/chat/completions", data=body,
        headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"})
    sent = time.monotonic() - t0
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            status, model_id = r.status, r.headers.get("x-litellm-model-id", "")
    except urllib.error.HTTPError as e:
        status, model_id = e.code, ""
    except Exception as e:
        status, model_id = 0, type(e).__name__
    with lock:
        rows.append((i, i % len(ports), round(sent * 1000), round((time.monotonic() - t0 - sent) * 1000), status, model_id))
threads = []
for i in range(n):
    delay = t0 + i / rate - time.monotonic()
    if delay > 0:
        time.sleep(delay)
    t = threading.Thread(target=one, args=(i,)); t.start(); threads.append(t)
for t in threads:
    t.join(timeout=90)
rows.sort()
with open(out, "w") as f:
    f.write("request,replica,sent_ms,latency_ms,status,model_id\n")
    for r in rows:
        f.write(",".join(map(str, r)) + "\n")
ok = sum(1 for r in rows if r[4] == 200)
print(f"requests: {len(rows)} sent, {ok} ok, {len(rows) - ok} failed", file=sys.stderr)
EOF
fi
cleanup
PIDS=()
wait_for 30 test -s "$CALLS" || { echo "no $CALLS" >&2; exit 1; }
# provider_calls.csv: at_ms,deployment,...; one row per call served.
for d in fleet-a fleet-b; do
  printf '%s %s\n' "$d" "$(awk -F, -v d="$d" 'NR > 1 && $2 == d' "$CALLS" | wc -l)"
done
echo "router $ROUTER replicas $REPLICAS redis $REDIS requests $REQUESTS rate $RATE out $OUT"
