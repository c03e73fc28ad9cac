#!/usr/bin/env bash
# Build llama.cpp for CI's real "measure" runs, once per machine: its command-line tools (llama-fit-params
# for llama.cpp's own dry-run projection), and
# llama-cpp-python (the last-resort engine) on the same llama.cpp.
#
# Rule 1: the source is the llama.cpp vendored in the llama-cpp-python sdist on PyPI (a pinned
#         version, so every run measures the same engine: build 0c1e570).
# Rule 2: everything goes to a cache folder outside the clone; what is already there is not
#         built again, so only the first CI run on a machine pays the build (about 5-10 minutes
#         for the tools, 2-3 for the shared library, on 2 idle cores).
# Rule 3: AMX stays off: -march=native enables it on this machine kind and llama-cli then dies
#         with SIGILL at the first matrix multiply.
# Rule 4: llama-cpp-python lives in its own virtual environment in the cache (py/): its Python
#         part is installed without building llama.cpp (LLAMA_BUILD=OFF), and the shared
#         libllama/ggml built here from the same source go into its llama_cpp/lib folder, where
#         the package loads them from.
# Rule 5: the tools are built with llama.cpp's RPC backend (-DGGML_RPC=ON) and its server,
#         ggml-rpc-server: servers on 127.0.0.1 are extra devices, a real multi-device machine here.
# Prints the folder holding the binaries as its last line of stdout (the Python engine is
# py/bin/python beside it); everything else goes to stderr (and to build.log in the cache folder).
set -euo pipefail

VERSION="${LLAMA_CPP_PYTHON_VERSION:-0.3.36}"
REVISION="0c1e570"
CACHE="${GGUF_BUDGET_CACHE:-$HOME/.cache/gguf-budget-ci}"
PREFIX="$CACHE/llama.cpp-$REVISION"
BIN="$PREFIX/bin"
PY="$PREFIX/py"
TARGETS=(llama-cli llama-completion llama-server llama-fit-params ggml-rpc-server)
JOBS="${GGUF_BUDGET_BUILD_JOBS:-2}"
NO_AMX="-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"

have_all_binaries() {
    local target
    for target in "${TARGETS[@]}"; do
        [[ -x "$BIN/$target" ]] || return 1
    done
}

have_python_engine() {
    [[ -x "$PY/bin/python" ]] && "$PY/bin/python" -c "import llama_cpp" 2>/dev/null
}

if have_all_binaries && have_python_engine; then
    echo "llama.cpp $REVISION already built in $BIN (and llama-cpp-python in $PY)" >&2
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

WORK="$PREFIX/work"
rm -rf "$WORK"
mkdir -p "$WORK"
SDIST="$WORK/llama_cpp_python-$VERSION.tar.gz"
SRC="$WORK/llama_cpp_python-$VERSION/vendor/llama.cpp"

fetch_source() {
    [[ -d "$SRC" ]] && return 0
    python3 -m pip download -q --no-deps --no-binary llama-cpp-python --dest "$WORK" \
        "llama-cpp-python==$VERSION" >&2
    tar -xzf "$SDIST" -C "$WORK"
}

# cmake -S source -B build, the options every build here shares, then the caller's.
configure() {
    local build="$1"
    shift
    cmake -S "$SRC" -B "$build" \
        -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=ON -DGGML_CUDA=OFF \
        -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
        -DCMAKE_C_FLAGS="$NO_AMX" -DCMAKE_CXX_FLAGS="$NO_AMX" "$@"
}

failed() {
    tail -n 40 "$PREFIX/build.log" >&2
    echo "llama.cpp build failed ($1); full log in $PREFIX/build.log" >&2
    exit 1
}

build_binaries() {
    {
        configure "$WORK/build" -DBUILD_SHARED_LIBS=OFF -DGGML_RPC=ON
        cmake --build "$WORK/build" -j "$JOBS" --target "${TARGETS[@]}"
    } >"$PREFIX/build.log" 2>&1 || failed "the tools"
    mkdir -p "$BIN.tmp"
    for target in "${TARGETS[@]}"; do
        cp "$WORK/build/bin/$target" "$BIN.tmp/"
    done
    rm -rf "$BIN"
    mv "$BIN.tmp" "$BIN"
    echo "llama.cpp $REVISION built in $BIN" >&2
}

build_python_engine() {
    {
        configure "$WORK/shared" -DBUILD_SHARED_LIBS=ON -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_SERVER=OFF \
            -DCMAKE_BUILD_WITH_INSTALL_RPATH=ON '-DCMAKE_INSTALL_RPATH=$ORIGIN'
        cmake --build "$WORK/shared" -j "$JOBS" --target llama
        rm -rf "$PY"
        python3 -m venv "$PY"
        CMAKE_ARGS="-DLLAMA_BUILD=OFF" "$PY/bin/pip" install -q "$SDIST"
    } >>"$PREFIX/build.log" 2>&1 || failed "llama-cpp-python"
    local lib
    lib="$("$PY/bin/python" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")/llama_cpp/lib"
    mkdir -p "$lib"
    cp -P "$WORK"/shared/bin/*.so* "$lib/"
    have_python_engine || failed "llama_cpp does not import"
    echo "llama-cpp-python $VERSION on llama.cpp $REVISION installed in $PY" >&2
}

have_all_binaries || { fetch_source; build_binaries; }
have_python_engine || { fetch_source; build_python_engine; }
rm -rf "$WORK"
echo "$BIN"
