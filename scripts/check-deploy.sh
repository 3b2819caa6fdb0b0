#!/usr/bin/env bash
# Renders every kustomization under deploy/ and validates every object it yields offline against
# the Kubernetes 1.30 OpenAPI schemas (kubectl-validate: field names and types, required fields,
# unknown fields refused); checks the NATS configuration files with nats-server itself. What the
# schemas cannot see (ports, probes, variables and commands against the code) is checked by
# test/deploy-manifests.test.ts. docs/deploy.md says what "validated" covers.
set -euo pipefail
cd "$(dirname "$0")/.."

KUBERNETES_VERSION=1.30
BIN_DIR="${HOME}/.local/bin"
bash scripts/ensure-deploy-tools.sh
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

failed=0
for k in deploy/base deploy/infra/nats deploy/infra/mongodb deploy/overlays/dev deploy/overlays/prod; do
  name=$(echo "$k" | tr / -)
  "${BIN_DIR}/kustomize" build "$k" > "$out/$name.yaml"
  docs=$(grep -c '^kind: ' "$out/$name.yaml")
  # One result per document; a document that is not "Success" prints its reasons.
  "${BIN_DIR}/kubectl-validate" --version "$KUBERNETES_VERSION" -o json "$out/$name.yaml" > "$out/$name.json" || true
  if node -e '
    const [file, docs] = process.argv.slice(1);
    const results = Object.values(JSON.parse(require("fs").readFileSync(file, "utf8"))).flat();
    const bad = results.filter((r) => r.status !== "Success");
    for (const r of bad) console.error(JSON.stringify(r));
    if (results.length !== Number(docs)) console.error(`${results.length} results for ${docs} documents`);
    process.exit(bad.length === 0 && results.length === Number(docs) ? 0 : 1);
  ' "$out/$name.json" "$docs"; then
    echo "$k: $docs objects valid against Kubernetes $KUBERNETES_VERSION"
  else
    echo "$k: INVALID" >&2
    failed=1
  fi
done

nats_server=$(command -v nats-server || echo /usr/sbin/nats-server)
for conf in deploy/infra/nats/nats.conf deploy/overlays/dev/nats.conf; do
  if report=$(POD_NAME=kiln-nats-0 "$nats_server" -t -c "$conf" 2>&1); then
    echo "$conf: valid"
  else
    echo "$conf: INVALID: $report" >&2
    failed=1
  fi
done
exit "$failed"
