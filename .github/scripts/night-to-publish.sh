#!/usr/bin/env bash
# Which nightly run a publish is for, and how its legs stand, as GitHub outputs (nightly-publish.yml):
#   run_id       the run: $INPUT_RUN (dispatch), else $EVENT_RUN (the run that completed), else the newest run of
#                $NIGHTLY_WORKFLOW started in the last 24 h and not cancelled (the deadline); empty: nothing to publish
#   head_sha     the commit it ran, for the JUnit check run
#   failed_legs  its leg jobs that failed or timed out; pending_legs: its leg jobs not finished (missing tonight)
set -euo pipefail
: "${GITHUB_REPOSITORY:?}" "${NIGHTLY_WORKFLOW:?the nightly workflow file, e.g. nightly-ascend.yml}"
run="${INPUT_RUN:-${EVENT_RUN:-}}"
if [ -z "$run" ]; then
  since=$(date -u -d '24 hours ago' +%Y-%m-%dT%H:%M:%SZ)
  run=$(gh api "repos/$GITHUB_REPOSITORY/actions/workflows/$NIGHTLY_WORKFLOW/runs?per_page=20" \
    --jq "[.workflow_runs[] | select(.created_at >= \"$since\" and .conclusion != \"cancelled\")][0].id // empty")
fi
if [ -z "$run" ]; then
  echo "::notice::no run of $NIGHTLY_WORKFLOW in the last 24 h: nothing to publish" >&2
  echo "run_id="
  exit 0
fi
sha=$(gh api "repos/$GITHUB_REPOSITORY/actions/runs/$run" --jq .head_sha)
# leg jobs are named "<SoC> · CANN <version> · torch-npu <version>[ · <variant>]"
legs=$(gh api --paginate "repos/$GITHUB_REPOSITORY/actions/runs/$run/jobs" \
  --jq '.jobs[] | select(.name | contains(" · CANN ")) | [.status, (.conclusion // ""), .name] | @tsv')
failed=$(printf '%s\n' "$legs" | awk -F'\t' '$2 == "failure" || $2 == "timed_out" {print $3}' | paste -sd ';' -)
pending=$(printf '%s\n' "$legs" | awk -F'\t' 'NF && $1 != "completed" {print $3}' | paste -sd ';' -)
echo "run_id=$run"
echo "head_sha=$sha"
echo "failed_legs=$failed"
echo "pending_legs=$pending"
