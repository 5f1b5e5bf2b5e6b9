#!/usr/bin/env bash
# One nightly leg: `tox -e npu` inside the leg's CANN image ($IMAGE), with this runner's NPUs.
#
# Why not the job's `container:`: its options are fixed before a runner is picked, so every runner of a host would get
# the same /dev/davinci<N>, and inside it ${{ github.workspace }} is the host's path. Here the devices are this
# runner's: $ASCEND_DEVICES (NPU numbers, e.g. "0,1", set in the runner's .env file where several runners share a
# host), else every /dev/davinci<N> of the host; and the workspace is mounted at its own path, so that what the
# container writes under it (the hypothesis example database, reports/, logs/) is where the cache and artifact steps,
# which run on the host, look.
set -euo pipefail
: "${IMAGE:?the CANN image of the leg}" "${GITHUB_WORKSPACE:?}" "${LEG:?the name of the leg}"
: "${TORCHAIR_HYPOTHESIS_DB_DIR:?the example database, relative to the workspace}"

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

name="nightly-${GITHUB_RUN_ID:-local}-${LEG}"
# A cancelled job signals this script; the container would outlive it and hold the NPUs.
trap 'docker rm -f "$name" >/dev/null 2>&1 || true' EXIT INT TERM
mkdir -p "$GITHUB_WORKSPACE/$TORCHAIR_HYPOTHESIS_DB_DIR" "$GITHUB_WORKSPACE/logs"
docker run --rm --name "$name" "${devices[@]}" \
  -v /usr/local/dcmi:/usr/local/dcmi:ro \
  -v /usr/local/bin/npu-smi:/usr/local/bin/npu-smi:ro \
  -v /usr/local/Ascend/driver:/usr/local/Ascend/driver:ro \
  -v "$GITHUB_WORKSPACE:$GITHUB_WORKSPACE" -w "$GITHUB_WORKSPACE" \
  -e CI -e HYPOTHESIS_PROFILE -e TORCH_NPU_VERSION -e TORCH_VERSION -e TORCHAIR_SOC -e PIP_EXTRA_INDEX_URL \
  -e TORCHAIR_HYPOTHESIS_DB="$GITHUB_WORKSPACE/$TORCHAIR_HYPOTHESIS_DB_DIR" \
  -e HOST_IDS="$(id -u):$(id -g)" -e TOX_PIN="${TOX_PIN:?the pinned tox, e.g. tox==4.x}" \
  "$IMAGE" bash -c '
    set -o pipefail
    # the runner owns its workspace again whatever happens: it must clean it for the next job
    trap "chown -R \"\$HOST_IDS\" . || true" EXIT
    source /usr/local/Ascend/ascend-toolkit/set_env.sh
    python3 -m pip install "$TOX_PIN"
    python3 -m tox -e npu -- --junitxml=reports/junit.xml 2>&1 | tee logs/tox-npu.log'
