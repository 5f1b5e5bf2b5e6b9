#!/usr/bin/env bash
# One nightly leg: `tox -e npu` inside the leg's container image ($IMAGE), with this runner's NPUs, network settings
# and pip cache.
#
# Why not the job's `container:`: its options are fixed before a runner is picked, so every runner of a host would get
# the same /dev/davinci<N>, and inside it ${{ github.workspace }} is the host's path. Here the devices are this
# runner's: $ASCEND_DEVICES (NPU numbers, e.g. "0,1", set in the runner's .env file where several runners share a
# host), else every /dev/davinci<N> of the host; and the workspace is mounted at its own path, so that what the
# container writes under it (the hypothesis example database, reports/, logs/) is where the cache and artifact steps,
# which run on the host, look.
#
# What the runner knows about its network reaches the container: every PIP_* variable (index, extra index, trusted
# host, timeout, ...), the proxies in both spellings (HTTP_PROXY/http_proxy, HTTPS_PROXY, NO_PROXY, ALL_PROXY; one
# spelling set on the runner is passed in both), CA bundles (REQUESTS_CA_BUNDLE, SSL_CERT_FILE, SSL_CERT_DIR,
# CURL_CA_BUNDLE), and a pip.conf: $PIP_CONFIG_FILE, else the runner user's pip.conf, else /etc/pip.conf. A file named
# by one of them is mounted read-only at its own path. pip's cache is a host folder per leg image and pins
# ($PIP_CACHE_KEY under $TORCHAIR_PIP_CACHE_ROOT, default $RUNNER_TOOL_CACHE or ~/.cache), so a night downloads no
# package file an earlier night of the same image and pins downloaded; folders unused for 30 days are removed.
set -euo pipefail
: "${IMAGE:?the container image of the leg}" "${GITHUB_WORKSPACE:?}" "${LEG:?the name of the leg}"
: "${TORCHAIR_HYPOTHESIS_DB_DIR:?the example database, relative to the workspace}"
: "${PIP_CACHE_KEY:?the leg's pip cache key (the matrix's pip_cache)}"

devices=()
if [ -n "${ASCEND_DEVICES:-}" ]; then
  for n in ${ASCEND_DEVICES//,/ }; do devices+=(--device "/dev/davinci$n"); done
else
  for d in /dev/davinci[0-9]*; do
    if [ -e "$d" ]; then devices+=(--device "$d"); fi
  done
fi
if [ ${#devices[@]} -eq 0 ]; then
  echo "::error::runner ${RUNNER_NAME:-?} has no /dev/davinci<N>: is the Ascend driver loaded (npu-smi info)?"
  exit 1
fi
for d in /dev/davinci_manager /dev/devmm_svm /dev/hisi_hdc; do devices+=(--device "$d"); done

# The repository's index with torch's CPU builds (x86_64), added to whatever extra index the runner already has.
if [ -n "${TORCH_CPU_INDEX_URL:-}" ]; then
  export PIP_EXTRA_INDEX_URL="${PIP_EXTRA_INDEX_URL:+$PIP_EXTRA_INDEX_URL }$TORCH_CPU_INDEX_URL"
fi
passed=(-e CI -e HYPOTHESIS_PROFILE -e TORCH_NPU_VERSION -e TORCH_VERSION -e TORCHAIR_SOC -e TORCHAIR_LEG_VARIANT)
mounts=()
mount_file() {  # a file or folder one of the passed variables names, read-only at its own path
  if [ -e "$1" ]; then mounts+=(-v "$1:$1:ro"); fi
}
for var in $(compgen -e); do
  case "$var" in
    PIP_CACHE_DIR) ;;  # the leg's own cache, below
    PIP_*|HTTP_PROXY|HTTPS_PROXY|NO_PROXY|ALL_PROXY|http_proxy|https_proxy|no_proxy|all_proxy|\
    REQUESTS_CA_BUNDLE|SSL_CERT_FILE|SSL_CERT_DIR|CURL_CA_BUNDLE|CANN_SET_ENV)
      passed+=(-e "$var")
      case "$var" in
        PIP_CONFIG_FILE|PIP_CERT|PIP_CLIENT_CERT|REQUESTS_CA_BUNDLE|SSL_CERT_FILE|SSL_CERT_DIR|CURL_CA_BUNDLE)
          mount_file "${!var}";;
      esac;;
  esac
done
for pair in HTTP_PROXY:http_proxy HTTPS_PROXY:https_proxy NO_PROXY:no_proxy ALL_PROXY:all_proxy; do
  upper=${pair%%:*} lower=${pair##*:}
  if [ -n "${!upper:-}" ] && [ -z "${!lower:-}" ]; then passed+=(-e "$lower=${!upper}"); fi
  if [ -n "${!lower:-}" ] && [ -z "${!upper:-}" ]; then passed+=(-e "$upper=${!lower}"); fi
done
if [ -z "${PIP_CONFIG_FILE:-}" ]; then
  for conf in "${XDG_CONFIG_HOME:-$HOME/.config}/pip/pip.conf" "$HOME/.pip/pip.conf" /etc/pip.conf; do
    if [ -f "$conf" ]; then
      mounts+=(-v "$conf:/run/torchair-leg/pip.conf:ro")
      passed+=(-e PIP_CONFIG_FILE=/run/torchair-leg/pip.conf)
      break
    fi
  done
fi

cache_root="${TORCHAIR_PIP_CACHE_ROOT:-${RUNNER_TOOL_CACHE:-$HOME/.cache}/torchair-nightly-pip}"
cache="$cache_root/$PIP_CACHE_KEY"
mkdir -p "$cache"
touch "$cache"
find "$cache_root" -mindepth 1 -maxdepth 1 -type d -name 'pip-*' -mtime +30 -exec rm -rf {} + 2>/dev/null || true
mounts+=(-v "$cache:/run/torchair-leg/pip-cache")
passed+=(-e PIP_CACHE_DIR=/run/torchair-leg/pip-cache)

name="nightly-${GITHUB_RUN_ID:-local}-${LEG}"
# A cancelled job signals this script; the container would outlive it and hold the NPUs.
trap 'docker rm -f "$name" >/dev/null 2>&1 || true' EXIT INT TERM
mkdir -p "$GITHUB_WORKSPACE/$TORCHAIR_HYPOTHESIS_DB_DIR" "$GITHUB_WORKSPACE/logs"
docker run --rm --name "$name" "${devices[@]}" \
  -v /usr/local/dcmi:/usr/local/dcmi:ro \
  -v /usr/local/bin/npu-smi:/usr/local/bin/npu-smi:ro \
  -v /usr/local/Ascend/driver:/usr/local/Ascend/driver:ro \
  -v "$GITHUB_WORKSPACE:$GITHUB_WORKSPACE" -w "$GITHUB_WORKSPACE" "${mounts[@]}" "${passed[@]}" \
  -e TORCHAIR_HYPOTHESIS_DB="$GITHUB_WORKSPACE/$TORCHAIR_HYPOTHESIS_DB_DIR" \
  -e HOST_IDS="$(id -u):$(id -g)" -e TOX_PIN="${TOX_PIN:?the pinned tox, e.g. tox==4.x}" \
  "$IMAGE" bash -c '
    set -o pipefail
    # the runner owns its workspace and its pip cache again whatever happens: it cleans and prunes them
    trap "chown -R \"\$HOST_IDS\" . /run/torchair-leg/pip-cache || true" EXIT
    # CANN 8 installs its environment script under ascend-toolkit/, CANN 9 under cann/
    for set_env in ${CANN_SET_ENV:-} /usr/local/Ascend/ascend-toolkit/set_env.sh /usr/local/Ascend/cann/set_env.sh; do
      if [ -f "$set_env" ]; then source "$set_env"; break; fi
    done
    python3 -m pip install "$TOX_PIN"
    python3 -m tox -e npu -- --junitxml=reports/junit.xml 2>&1 | tee logs/tox-npu.log'
