#!/bin/bash
# A device check for a session lent a GPU (not a test; CI has no GPU): the conformance suite against the reference on
# CUDA (dev profile), bench gpt-small cold/warm/eager, and `cuda_probe` (what a warm process imports). From the
# repository root, through the device tool: run(command="bash tests/programs/cuda_check.sh", timeout_s=540); results
# under $OUT. `--static` for the bench: on the device image's torch 2.11 (below the 2.13 floor) a dynamic gpt-small is
# refused (Dynamo 2.11 guards a float attribute with a call). Each step ends by END seconds (505).
set -o pipefail
export PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=dev PYTHONPATH=$PWD/impl:$PWD
PY=${PY:-python3}
DEV=${DEV:-cuda}
END=${END:-505}          # every step is over by this many seconds after the start
OUT=${OUT:-/tmp/gpu-out}; mkdir -p $OUT
SECONDS=0
say() { echo "=== [t=${SECONDS}s] $*"; }
{
say "step 1: info"
timeout 20 nvidia-smi -L
timeout 20 nvidia-smi --query-gpu=name,driver_version,memory.total,memory.used --format=csv
nproc; uname -a
timeout 60 $PY -c "import torch, sys; print('python', sys.version.split()[0], 'torch', torch.__version__, 'cuda', torch.version.cuda, 'is_available', torch.cuda.is_available(), torch.cuda.get_device_name(0) if torch.cuda.is_available() else '')"
timeout 30 $PY -m pip list 2>/dev/null | grep -iE "^(torch|triton|hypothesis|pytest|pytest-xdist|transformers|timm|protobuf|numpy) "
} 2>&1 | tee $OUT/gpu.log

say "step 2: suite" | tee -a $OUT/gpu.log
T2=$SECONDS
if [ "${SUITE_S:-300}" -gt 0 ]; then
# pytest in its own process group, with SIGINT back to default (bash ignores it in background jobs); at the limit
# one SIGINT to the whole group (pytest then writes its summary and the junit XML), after a grace period KILL.
setsid $PY -c "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); os.execvp(sys.argv[1], sys.argv[1:])" $PY -m pytest torchair_conformance --impl torchair_ref -n ${NW:-14} -p no:cacheprovider \
  -v -rfEs --durations=25 --junitxml=$OUT/suite.xml --conformance-json $OUT/conformance.json > $OUT/suite.log 2>&1 &
P=$!
( sleep ${SUITE_S:-300}; echo "=== [watchdog] SIGINT to the group of pytest $P"; kill -INT -- -$P 2>/dev/null && { sleep ${GRACE:-30}; echo "=== [watchdog] KILL group $P"; kill -KILL -- -$P 2>/dev/null; } ) &
W=$!
wait $P; rc=$?
kill $W 2>/dev/null; kill -KILL -- -$P 2>/dev/null
grep -E "^(FAILED|ERROR)|passed|failed" $OUT/suite.log | tail -60
echo "suite rc=$rc wall=$((SECONDS-T2))s" | tee -a $OUT/gpu.log
fi

left=$((END - 110 - SECONDS)); [ $left -gt 200 ] && left=200; [ $left -lt 60 ] && left=$((END - 45 - SECONDS))
say "step 3: bench ${BENCH_MODEL:-gpt-small} ${BENCH_SHAPE:---static}, budget ${left}s" | tee -a $OUT/gpu.log
T3=$SECONDS
if [ $left -ge 40 ]; then
  BD=$(mktemp -d)   # the bench keeps bench-unsaved-*.json in its cwd when interrupted
  (cd $BD && timeout --foreground -s INT -k 15 $left $PY -m torchair_conformance bench --impl torchair_ref --model ${BENCH_MODEL:-gpt-small} --device $DEV \
    --rounds ${ROUNDS:-2} ${BENCH_SHAPE:---static} --baselines eager --no-history --no-overhead --json $OUT/bench.json) 2>&1 | tee $OUT/bench.log
  echo "bench rc=$? wall=$((SECONDS-T3))s" | tee -a $OUT/gpu.log
  for f in $BD/bench-unsaved-*.json; do [ -f "$f" ] && cp "$f" $OUT/bench-unsaved.json; done
fi

left=$((END - SECONDS))
say "step 4: probe tiny cold/warm/eager, ${left}s left" | tee -a $OUT/gpu.log
if [ $left -ge 45 ]; then
  C=$(mktemp -d)
  {
  for m in cold warm warm eager; do
    l=$((END - SECONDS)); [ $l -lt 8 ] && break
    PROBE_SPAWNED=$(date +%s.%N) timeout -k 5 $l $PY -m tests.programs.cuda_probe $m $C/cache tiny $DEV 2>&1 | grep -E "PROBE|Error|error" | head -20
    echo "probe $m rc=${PIPESTATUS[0]}"   # the probe's own exit status, not grep's
  done
  } 2>&1 | tee $OUT/probe.log
fi
say "done" | tee -a $OUT/gpu.log
