#!/usr/bin/env bash
# Build llama.cpp's Vulkan backend for real GPU-backend runs: llama-completion with -DGGML_VULKAN=ON,
# run on Mesa's software Vulkan driver (lavapipe), a CPU-type device that llama.cpp uses only when
# GGML_VK_VISIBLE_DEVICES names it. Only llama-completion: llama-cli and llama-server also build
# the multimodal library and the server (measured here: the shaders and ggml-vulkan took 14 minutes
# on 2 shared cores, llama-completion was linked after 48; llama-server was not done after 58).
#
# Rule 1: the source is the same pinned llama.cpp as .ci/build_llamacpp.sh (build 0c1e570, from the
#         llama-cpp-python sdist), copied into a work folder and patched there, never in place.
# Rule 2: its own cache folder, llama.cpp-<revision>-vulkan beside the CPU build, keyed like it:
#         what is there is not built again. The shader generation (vulkan-shaders-gen running glslc
#         on every shader variant) and the generated shader source are the slow part.
# Rule 3: Debian 12's Vulkan headers (1.3.239) predate VK_EXT_layer_settings; the block of
#         ggml_vk_instance_init that builds its LayerSettingsCreateInfoEXT is guarded with
#         #ifdef VK_EXT_layer_settings (without it the instance is created with no pNext chain,
#         which is what llama.cpp asks for anyway when no validation layer is installed).
# Rule 4: AMX stays off, as in the CPU build (SIGILL at the first matrix multiply otherwise).
# Rule 5: without glslc, the Vulkan or SPIR-V headers it installs them (glslc, libvulkan-dev,
#         spirv-headers, mesa-vulkan-drivers) when it runs as root with apt-get, and otherwise prints one line and
#         exits 2, so a caller can go on without the Vulkan runs.
# Prints the folder holding the binaries as its last line of stdout; everything else goes to stderr
# (and to build.log in the cache folder, with the build's wall time in seconds as its last line).
set -euo pipefail

VERSION="${LLAMA_CPP_PYTHON_VERSION:-0.3.36}"
REVISION="0c1e570"
CACHE="${GGUF_BUDGET_CACHE:-$HOME/.cache/gguf-budget-ci}"
PREFIX="$CACHE/llama.cpp-$REVISION-vulkan"
BIN="$PREFIX/bin"
TARGETS=(llama-completion)
JOBS="${GGUF_BUDGET_BUILD_JOBS:-2}"
NO_AMX="-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"

have_all_binaries() {
    local target
    for target in "${TARGETS[@]}"; do
        [[ -x "$BIN/$target" ]] || return 1
    done
}

have_vulkan_sdk() {
    command -v glslc >/dev/null && [[ -f /usr/include/vulkan/vulkan.hpp ]] \
        && [[ -d /usr/share/cmake/SPIRV-Headers || -d /usr/lib/cmake/SPIRV-Headers ]] \
        && compgen -G "/usr/share/vulkan/icd.d/lvp_icd*.json" >/dev/null
}

if have_all_binaries; then
    echo "llama.cpp $REVISION (Vulkan) already built in $BIN" >&2
    echo "$BIN"
    exit 0
fi

if ! have_vulkan_sdk; then
    if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
        echo "installing glslc, libvulkan-dev, spirv-headers and mesa-vulkan-drivers" >&2
        apt-get update -qq >&2
        apt-get install -y -qq glslc libvulkan-dev spirv-headers mesa-vulkan-drivers cmake build-essential >&2
    fi
    if ! have_vulkan_sdk; then
        echo "no glslc/Vulkan or SPIR-V headers/lavapipe here (and no root apt-get to install them): Vulkan build skipped" >&2
        exit 2
    fi
fi

mkdir -p "$PREFIX"
exec 9>"$PREFIX/.lock"
flock 9

WORK="$PREFIX/work"
rm -rf "$WORK"
mkdir -p "$WORK"
SDIST="$WORK/llama_cpp_python-$VERSION.tar.gz"
SRC="$WORK/llama_cpp_python-$VERSION/vendor/llama.cpp"
VK_SOURCE="$SRC/ggml/src/ggml-vulkan/ggml-vulkan.cpp"

failed() {
    tail -n 40 "$PREFIX/build.log" >&2
    echo "llama.cpp Vulkan build failed ($1); full log in $PREFIX/build.log" >&2
    exit 1
}

python3 -m pip download -q --no-deps --no-binary llama-cpp-python --dest "$WORK" \
    "llama-cpp-python==$VERSION" >&2
tar -xzf "$SDIST" -C "$WORK"

# Rule 3: guard the layer-settings block (from its VkBool32 to the InstanceCreateInfo it feeds).
python3 - "$VK_SOURCE" <<'PY'
import sys
path = sys.argv[1]
text = open(path).read()
start = "    VkBool32 enable_best_practice = layer_settings;\n"
end = ("    vk::InstanceCreateInfo instance_create_info(vk::InstanceCreateFlags{}, &app_info, layers, "
       "extensions, &layer_setting_info);\n")
head, found, rest = text.partition(start)
block, found_end, tail = rest.partition(end)
if not found or not found_end:
    sys.exit("ggml-vulkan.cpp: the layer-settings block was not found")
guarded = ("#ifdef VK_EXT_layer_settings\n" + start + block + end + "#else\n"
           "    vk::InstanceCreateInfo instance_create_info(vk::InstanceCreateFlags{}, &app_info, layers, "
           "extensions);\n#endif\n")
open(path, "w").write(head + guarded + tail)
PY

started=$(date +%s)
{
    nice -n 10 cmake -S "$SRC" -B "$WORK/build" \
        -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=ON -DGGML_CUDA=OFF -DGGML_VULKAN=ON \
        -DBUILD_SHARED_LIBS=OFF -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_TESTS=OFF \
        -DLLAMA_BUILD_EXAMPLES=OFF -DCMAKE_C_FLAGS="$NO_AMX" -DCMAKE_CXX_FLAGS="$NO_AMX" \
        && nice -n 10 cmake --build "$WORK/build" -j "$JOBS" --target "${TARGETS[@]}" \
        && echo "build wall time: $(($(date +%s) - started)) s"
} >"$PREFIX/build.log" 2>&1 || failed "the tools"
mkdir -p "$BIN.tmp"
for target in "${TARGETS[@]}"; do
    cp "$WORK/build/bin/$target" "$BIN.tmp/"
done
rm -rf "$BIN"
mv "$BIN.tmp" "$BIN"
rm -rf "$WORK"
echo "llama.cpp $REVISION (Vulkan) built in $BIN in $(($(date +%s) - started)) s" >&2
echo "$BIN"
