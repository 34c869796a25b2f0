#!/usr/bin/env bash
# Installs the Debian 12 packages mtdesk builds against, when any is missing.
# Runs apt-get as root (directly, or through sudo when run as a user).
set -euo pipefail

packages=(
    build-essential cmake ninja-build pkg-config
    qt6-base-dev qt6-base-dev-tools qt6-tools-dev qt6-tools-dev-tools qt6-l10n-tools
    qt6-charts-dev qt6-svg-dev libqt6opengl6-dev libgl-dev libxkbcommon-dev
    libfmt-dev nlohmann-json3-dev libpcre2-dev libsentencepiece-dev libicu-dev libopenblas-dev libcld2-dev
    libuchardet-dev libzip-dev libpugixml-dev libpoppler-qt6-dev libcpp-httplib-dev libssl-dev
    qt6-translations-l10n  # Qt's own strings (OK, Cancel, file dialogs) in the UI language
    gettext                # the tests check translated .po files with msgfmt --check
)

missing=()
for p in "${packages[@]}"; do
    status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
    [[ $status == "install ok installed" ]] || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
    exit 0
fi

echo "mtdesk: installing Debian packages: ${missing[*]}"
sudo=()
if ((EUID != 0)); then
    if command -v sudo >/dev/null; then
        sudo=(sudo)
    else
        echo "mtdesk: these packages are missing and I am not root (no sudo): ${missing[*]}" >&2
        exit 1
    fi
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
