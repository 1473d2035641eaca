#!/usr/bin/env bash
# Checks the deployment material without a cluster:
#   - helm lint --strict of charts/ad-serving, with the default values and each ci/*-values.yaml
#   - helm template with the same values sets (and values that must be refused)
#   - kubectl apply --dry-run=client of each rendering, only when kubectl reaches a cluster
#   - deploy/grafana/*.json parses; deploy/prometheus/rules.yaml parses and passes promtool
#     (when python3 with PyYAML and promtool are installed)
#
# Usage: deploy/check-chart.sh            (helm from $HELM, else from PATH; kubectl from $KUBECTL)
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
chart="$root/charts/ad-serving"
HELM="${HELM:-$(command -v helm || true)}"
KUBECTL="${KUBECTL:-$(command -v kubectl || true)}"

if [[ -z "$HELM" || ! -x "$HELM" ]]; then
  echo "helm not found: set HELM=/path/to/helm or put helm on PATH" >&2
  exit 2
fi

out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
passed=0
failed=0

# check NAME COMMAND...: runs COMMAND, prints its output on failure, counts the result.
check() {
  local name="$1"
  shift
  if "$@" >"$out/log" 2>&1; then
    echo "ok    $name"
    passed=$((passed + 1))
  else
    echo "FAIL  $name"
    sed 's/^/      /' "$out/log"
    failed=$((failed + 1))
  fi
}

# render FILE ARGS...: helm template of the chart with ARGS into FILE.
render() {
  local file="$1"
  shift
  "$HELM" template ad-serving "$chart" --namespace ad-serving "$@" >"$file"
}

# refuse NAME MESSAGE ARGS...: helm template with ARGS must fail, saying MESSAGE.
refuse() {
  local name="$1" message="$2"
  shift 2
  if "$HELM" template ad-serving "$chart" "$@" >"$out/log" 2>&1; then
    echo "FAIL  $name (rendered, expected an error)"
    failed=$((failed + 1))
  elif ! grep -qF -- "$message" "$out/log"; then
    echo "FAIL  $name (failed without saying \"$message\")"
    sed 's/^/      /' "$out/log"
    failed=$((failed + 1))
  else
    echo "ok    $name"
    passed=$((passed + 1))
  fi
}

cluster=""
if [[ -n "$KUBECTL" ]] && "$KUBECTL" version --request-timeout=5s >/dev/null 2>&1; then
  cluster=yes
fi

value_sets=(default)
for f in "$chart"/ci/*-values.yaml; do
  [[ -e "$f" ]] && value_sets+=("$f")
done

for values in "${value_sets[@]}"; do
  args=()
  label=default
  if [[ "$values" != default ]]; then
    args=(-f "$values")
    label="$(basename "$values")"
  fi
  rendered="$out/${label%.yaml}.rendered.yaml"
  check "helm lint ($label)" "$HELM" lint --strict "$chart" "${args[@]}"
  check "helm template ($label)" render "$rendered" "${args[@]}"
  if [[ -n "$cluster" && -s "$rendered" ]]; then
    check "kubectl apply --dry-run=client ($label)" "$KUBECTL" apply --dry-run=client -f "$rendered"
  fi
done
if [[ -z "$cluster" ]]; then
  echo "skip  kubectl apply --dry-run=client (no kubectl or no reachable cluster)"
fi

refuse "refuses embedded database with 2 replicas" "accounts.replicaCount > 1 needs" \
  --set accounts.replicaCount=2
refuse "refuses external database without a URL or Secret" "needs global.database.url or" \
  --set global.database.mode=external
refuse "refuses an unknown database mode" "global.database.mode must be" \
  --set global.database.mode=sqlite

for dashboard in "$here"/grafana/*.json; do
  check "dashboard parses ($(basename "$dashboard"))" node -e 'JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"))' "$dashboard"
done

rules="$here/prometheus/rules.yaml"
if command -v python3 >/dev/null 2>&1 && python3 -c 'import yaml' 2>/dev/null; then
  check "rules parse (rules.yaml)" python3 - "$rules" "$out/rules.yml" <<'PY'
import sys, yaml
doc = yaml.safe_load(open(sys.argv[1]))
assert doc["kind"] == "PrometheusRule", "not a PrometheusRule"
groups = doc["spec"]["groups"]
assert groups and all(g["rules"] for g in groups), "empty rule group"
yaml.safe_dump({"groups": groups}, open(sys.argv[2], "w"), sort_keys=False)
PY
  if command -v promtool >/dev/null 2>&1; then
    check "promtool check rules (rules.yaml)" promtool check rules "$out/rules.yml"
  else
    echo "skip  promtool check rules (promtool not installed)"
  fi
else
  echo "skip  rules parse and promtool (python3 with PyYAML not available)"
fi

echo "check-chart: $passed passed, $failed failed"
[[ "$failed" -eq 0 ]]
