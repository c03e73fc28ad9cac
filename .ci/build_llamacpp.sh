#!/usr/bin/env bash
# Build llama.cpp's command-line tools for CI's real "measure" run, once per machine.
#
# Rule 1: the source is the llama.cpp vendored in the llama-cpp-python sdist on PyPI (a pinned
#         version, so every run measures the same engine: build 0c1e570).
# Rule 2: the binaries go to a cache folder outside the clone; when they are already there the
#         build is skipped, so only the first CI run on a machine pays the 5-10 minutes.
# Rule 3: AMX stays off: -march=native enables it on this machine kind and llama-cli then dies
#         with SIGILL at the first matrix multiply.
# Prints the folder holding the binaries as its last line of stdout; everything else goes to
# stderr (and to build.log in the cache folder).
set -euo pipefail

VERSION="${LLAMA_CPP_PYTHON_VERSION:-0.3.36}"
REVISION="0c1e570"
CACHE="${GGUF_BUDGET_CACHE:-$HOME/.cache/gguf-budget-ci}"
PREFIX="$CACHE/llama.cpp-$REVISION"
BIN="$PREFIX/bin"
TARGETS=(llama-cli llama-completion llama-server)
JOBS="${GGUF_BUDGET_BUILD_JOBS:-2}"

have_all_binaries() {
    local target
    for target in "${TARGETS[@]}"; do
        [[ -x "$BIN/$target" ]] || return 1
    done
}

if have_all_binaries; then
    echo "llama.cpp $REVISION already built in $BIN" >&2
    echo "$BIN"
    exit 0
fi

missing_tools=()
for tool in cmake gcc g++ make; do
    command -v "$tool" >/dev/null || missing_tools+=("$tool")
done
if ((${#missing_tools[@]})); then
    echo "installing build tools (missing: ${missing_tools[*]})" >&2
    SUDO=""
    [[ $(id -u) -eq 0 ]] || SUDO="sudo"
    $SUDO apt-get update -qq >&2
    $SUDO apt-get install -y -qq cmake build-essential >&2
fi

mkdir -p "$PREFIX"
exec 9>"$PREFIX/.lock"
flock 9
if have_all_binaries; then  # another run finished the build while this one waited
    echo "$BIN"
    exit 0
fi

WORK="$PREFIX/work"
rm -rf "$WORK"
mkdir -p "$WORK"
python3 -m pip download -q --no-deps --no-binary llama-cpp-python --dest "$WORK" \
    "llama-cpp-python==$VERSION" >&2
tar -xzf "$WORK"/llama_cpp_python-"$VERSION".tar.gz -C "$WORK"
SRC="$WORK/llama_cpp_python-$VERSION/vendor/llama.cpp"

NO_AMX="-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"
{
    cmake -S "$SRC" -B "$WORK/build" \
        -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=ON -DGGML_CUDA=OFF \
        -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
        -DBUILD_SHARED_LIBS=OFF \
        -DCMAKE_C_FLAGS="$NO_AMX" -DCMAKE_CXX_FLAGS="$NO_AMX"
    cmake --build "$WORK/build" -j "$JOBS" --target "${TARGETS[@]}"
} >"$PREFIX/build.log" 2>&1 || {
    tail -n 40 "$PREFIX/build.log" >&2
    echo "llama.cpp build failed; full log in $PREFIX/build.log" >&2
    exit 1
}

mkdir -p "$BIN.tmp"
for target in "${TARGETS[@]}"; do
    cp "$WORK/build/bin/$target" "$BIN.tmp/"
done
rm -rf "$BIN"
mv "$BIN.tmp" "$BIN"
rm -rf "$WORK"
echo "llama.cpp $REVISION built in $BIN" >&2
echo "$BIN"
