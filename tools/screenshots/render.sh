#!/usr/bin/env bash
# Renders PNG screenshots of the main window (with a finished translation and the live panel),
# of the settings dialog (a valid model, and a bad directory with its inline error) and of the
# window with the document queue (rows done, failed with its message, running at 40 % and
# queued), in English and in Simplified Chinese, under Xvfb. Uses `mtdesk gui --screenshots`,
# which keeps its settings and its queue apart from the user's.
#
#   tools/screenshots/render.sh [OUT_DIR]      (default: docs/screenshots)
#   Variables: BUILD_DIR (default: build), MODEL (default: the tiny fixture model, whose output
#   is nonsense text; the bundled demo model when it is there).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${BUILD_DIR:-$root/build}
case $build in /*) ;; *) build=$root/$build ;; esac
out=${1:-$root/docs/screenshots}
mkdir -p "$out"
out=$(cd "$out" && pwd)
if [[ -z ${MODEL:-} ]]; then
    if [[ -f $root/resources/models/mtdesk-demo/config.json ]]; then
        MODEL=$root/resources/models/mtdesk-demo
    else
        MODEL=$root/tests/data/models/hunyuan-gqa-alpha
    fi
fi
# The dialog shows the model's path: render from a neutral copy, not from this checkout's path.
stage=/tmp/mtdesk-screenshots/models
rm -rf "$stage" && mkdir -p "$stage"
cp -r "$MODEL" "$stage/"
MODEL=$stage/$(basename "$MODEL")
binary=$build/app/mtdesk
if [[ ! -x $binary ]]; then
    echo "render.sh: $binary not found; build first (make build, or BUILD_DIR=...)" >&2
    exit 1
fi

# Xvfb, and fonts with Chinese and the other scripts of the language list.
packages=(xvfb xauth fonts-noto-cjk fonts-noto-core)
missing=()
for p in "${packages[@]}"; do
    status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
    [[ $status == "install ok installed" ]] || missing+=("$p")
done
if ((${#missing[@]})); then
    sudo=()
    ((EUID == 0)) || sudo=(sudo)
    echo "render.sh: installing ${missing[*]}"
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends \
        "${missing[@]}" >/dev/null
fi

render() {  # LANGUAGE FROM TO TEXT
    echo "render.sh: $1"
    env -u QT_QPA_PLATFORM LANG=C.UTF-8 OPENBLAS_NUM_THREADS=2 \
        xvfb-run -a -s "-screen 0 1600x1000x24" \
        "$binary" gui --model "$MODEL" --screenshots "$out" --language "$1" \
        --from "$2" --to "$3" --text "$4"
}
render en en zh "Open the file and save your changes."
render zh_CN zh en "今天天气很好。"
ls -l "$out"/*.png
