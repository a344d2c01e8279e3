#!/usr/bin/env bash
# Bench: the prompt layout on a real prefix cache. Starts vLLM with automatic prefix caching on a
# small open model, then sends bench/layout.py's cases (b: 4k-token texts x 8 criteria, c: 20k-token
# transcripts x 8 criteria) in today's layout (rubric-first) and the planned one, and prints for each
# prefill tokens/s (prompt tokens the server computed, not served from its cache), judgments/s and
# the cached share vLLM reports (usage.prompt_tokens_details, --enable-prompt-tokens-details).
#
#   bash bench/layout_gpu.sh [SCALE]      # SCALE: share of each case's texts, default 0.05
#
# Needs an NVIDIA GPU and `pip install vllm` (not one of rubricflow's dependencies). Environment:
# LAYOUT_GPU_MODEL (default Qwen/Qwen2.5-0.5B-Instruct, ~1 GB, 32k context), LAYOUT_GPU_PORT (8011).
set -euo pipefail

SCALE="${1:-0.05}"
MODEL="${LAYOUT_GPU_MODEL:-Qwen/Qwen2.5-0.5B-Instruct}"
PORT="${LAYOUT_GPU_PORT:-8011}"
HERE="$(cd "$(dirname "$0")" && pwd)"

if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
    echo "bench/layout_gpu.sh needs a GPU (nvidia-smi finds none); on a CPU run: python bench/layout.py" >&2
    exit 2
fi
if ! python -c "import vllm" >/dev/null 2>&1; then
    echo "bench/layout_gpu.sh needs vLLM: pip install vllm" >&2
    exit 2
fi

LOG="$(mktemp -t layout-gpu-vllm.XXXXXX.log)"
# --max-model-len fits case c's 20k-token transcripts with the rubric and the answer
python -m vllm.entrypoints.openai.api_server --model "$MODEL" --port "$PORT" --host 127.0.0.1 \
    --enable-prefix-caching --enable-prompt-tokens-details --max-model-len 32768 \
    --gpu-memory-utilization 0.85 >"$LOG" 2>&1 &
VLLM_PID=$!
trap 'kill "$VLLM_PID" 2>/dev/null || true; wait "$VLLM_PID" 2>/dev/null || true' EXIT

for _ in $(seq 1 300); do  # the model's download and load: up to 10 minutes
    if curl -sf "http://127.0.0.1:$PORT/v1/models" >/dev/null; then break; fi
    if ! kill -0 "$VLLM_PID" 2>/dev/null; then
        echo "vLLM exited before it served; its log ($LOG):" >&2
        tail -n 40 "$LOG" >&2
        exit 1
    fi
    sleep 2
done
curl -sf "http://127.0.0.1:$PORT/v1/models" >/dev/null || { echo "vLLM did not answer in 10 minutes ($LOG)" >&2; exit 1; }

echo "vLLM $(python -c 'import vllm; print(vllm.__version__)') serving $MODEL with prefix caching; scale $SCALE"
cd "$HERE"
python layout.py --base-url "http://127.0.0.1:$PORT/v1" --model "$MODEL" --cases b,c --scale "$SCALE" --concurrency 32
